package sfnapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/poll"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/smithy-go"

	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/control"
	"github.com/veredicto/veredicto/internal/httpapi/apitest"
	"github.com/veredicto/veredicto/internal/sfnapi"
)

// code is the AWS error code of err ("" for none).
func code(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// TestTenantKeys: a tenant's key acts in its tenant only, and another
// tenant's execution or task answers exactly as a missing one; state
// machines are the operator's.
func TestTenantKeys(t *testing.T) {
	ctx := context.Background()
	tokens := make(chan string, 16)
	mgr, err := control.Open(ctx, control.Config{Dir: t.TempDir(), Registry: registry(tokens)})
	if err != nil {
		t.Fatal(err)
	}
	defer mgr.Close()
	guarded := map[string]bool{}
	srv := apitest.Serve(t, sfnapi.New(mgr, sfnapi.Options{Guard: func(_ context.Context, p auth.Principal, token string) error {
		if guarded[token] && p.Name != "confirmations" {
			return &control.Error{Code: control.CodeInvalidToken, Message: "Invalid Token: 'resolve it through the confirmations'"}
		}
		return nil
	}}), nil)
	op, acme, bravo := srv.SFN(srv.Operator(t)), srv.SFN(srv.Tenant(t, "acme")), srv.SFN(srv.Tenant(t, "bravo"))
	p := &peer{client: op, mgr: mgr, tokens: tokens}
	smARN := p.create(t, "Callback", callbackDef(3600))

	// Starts: the key's tenant is the execution's.
	x, err := acme.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smARN), Name: aws.String("a1"), Input: aws.String(`{"k":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	tok := p.token(t)
	d, err := acme.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: x.ExecutionArn})
	if err != nil || aws.ToString(d.Input) != `{"tenant":"acme","k":1}` {
		t.Errorf("a tenant's start: input %s %v, want its tenant recorded in it", aws.ToString(d.Input), err)
	}
	// Go's JSON decoding matches "Tenant" and "TENANT" to "tenant" and
	// takes the last: each would have run as bravo.
	for _, in := range []string{`{"tenant":"bravo"}`, `[1]`, `{"tenant":"acme","tenant":"bravo"}`, `{"tenant":7}`,
		`{"Tenant":"bravo"}`, `{"TENANT":"bravo"}`, `{"tenant":"acme","Tenant":"bravo"}`, `{"Tenant":"acme"}`} {
		_, err := acme.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smARN), Name: aws.String("bad"), Input: aws.String(in)})
		if code(err) != control.CodeInvalidExecutionInput {
			t.Errorf("acme starts with %s: %v, want InvalidExecutionInput", in, err)
		}
	}

	// Another tenant's execution is a missing one, byte for byte.
	missing := strings.Replace(aws.ToString(x.ExecutionArn), ":a1", ":nobody", 1)
	_, errMissing := bravo.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(missing)})
	_, errOther := bravo.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: x.ExecutionArn})
	if code(errOther) != control.CodeExecutionDoesNotExist || strings.Replace(errOther.Error(), ":a1", ":nobody", -1) != errMissing.Error() {
		t.Errorf("bravo describes acme's: %v; a missing one: %v", errOther, errMissing)
	}
	if _, err := bravo.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: x.ExecutionArn}); code(err) != control.CodeExecutionDoesNotExist {
		t.Errorf("bravo reads acme's history: %v", err)
	}
	if _, err := bravo.StopExecution(ctx, &sfn.StopExecutionInput{ExecutionArn: x.ExecutionArn}); code(err) != control.CodeExecutionDoesNotExist {
		t.Errorf("bravo stops acme's: %v", err)
	}
	if _, err := bravo.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(tok), Output: aws.String(`{}`)}); code(err) != control.CodeTaskDoesNotExist {
		t.Errorf("bravo answers acme's task: %v", err)
	}
	if l, err := bravo.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(smARN)}); err != nil || len(l.Executions) != 0 {
		t.Errorf("bravo lists %+v %v, want none", l, err)
	}
	if l, err := acme.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(smARN)}); err != nil || len(l.Executions) != 1 {
		t.Errorf("acme lists %+v %v, want its one", l, err)
	}
	if l, err := op.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(smARN)}); err != nil || len(l.Executions) != 1 {
		t.Errorf("the operator lists %+v %v, want every tenant's", l, err)
	}

	// State machines are the operator's to manage; tenants may read them.
	if _, err := acme.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("Mine"), Definition: aws.String(callbackDef(1)), RoleArn: aws.String(role)}); code(err) != auth.CodeAccessDenied {
		t.Errorf("a tenant creates a state machine: %v", err)
	}
	if _, err := acme.DeleteStateMachine(ctx, &sfn.DeleteStateMachineInput{StateMachineArn: aws.String(smARN)}); code(err) != auth.CodeAccessDenied {
		t.Errorf("a tenant deletes a state machine: %v", err)
	}
	if _, err := acme.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(smARN)}); err != nil {
		t.Errorf("a tenant describes a state machine: %v", err)
	}

	// The guard keeps a token for its service.
	guarded[tok] = true
	if _, err := acme.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(tok), Output: aws.String(`{"approved":true}`)}); code(err) != control.CodeInvalidToken {
		t.Errorf("a guarded token answered by its tenant: %v", err)
	}
	if _, err := op.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(tok), Output: aws.String(`{"approved":true}`)}); code(err) != control.CodeInvalidToken {
		t.Errorf("a guarded token answered by an operator: %v", err)
	}
	if _, err := acme.SendTaskHeartbeat(ctx, &sfn.SendTaskHeartbeatInput{TaskToken: aws.String(tok)}); err != nil {
		t.Errorf("a heartbeat on a guarded token: %v", err)
	}
	if d, _ := op.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: x.ExecutionArn}); d.Status != "RUNNING" {
		t.Errorf("a refused answer moved the execution: %s", d.Status)
	}
}

// TestUnsignedAndUnknown: no signature, a replayed signature and an unknown key are refused in
// AWS's words, before any operation runs.
func TestUnsignedAndUnknown(t *testing.T) {
	mgr, err := control.Open(context.Background(), control.Config{Dir: t.TempDir(), Registry: asl.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	defer mgr.Close()
	srv := apitest.Serve(t, sfnapi.New(mgr, sfnapi.Options{}), nil)
	r, _ := http.NewRequest("POST", srv.URL+"/", strings.NewReader(`{}`))
	r.Header.Set("X-Amz-Target", "AWSStepFunctions.ListStateMachines")
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("X-Amzn-ErrorType") != auth.CodeMissingAuthenticationToken {
		t.Errorf("unsigned: %d %s", resp.StatusCode, resp.Header.Get("X-Amzn-ErrorType"))
	}
	// A request signed 16 minutes ago and replayed now.
	old, _ := http.NewRequest("POST", srv.URL+"/", strings.NewReader(`{}`))
	old.Header.Set("X-Amz-Target", "AWSStepFunctions.ListStateMachines")
	old.Header.Set("Content-Type", sfnapi.ContentType)
	apitest.SignAt(t, old, []byte(`{}`), srv.Operator(t), "states", time.Now().Add(-16*time.Minute))
	resp, err = http.DefaultClient.Do(old)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("X-Amzn-ErrorType") != auth.CodeInvalidSignature {
		t.Errorf("replayed after 16 minutes: %d %s", resp.StatusCode, resp.Header.Get("X-Amzn-ErrorType"))
	}
	stranger := apitest.SFN(srv.URL, auth.Key{AccessKeyID: "VKIASTRANGERSTRANGER", SecretAccessKey: strings.Repeat("s", 40)})
	if _, err := stranger.ListStateMachines(context.Background(), &sfn.ListStateMachinesInput{}); code(err) != auth.CodeUnrecognizedClient {
		t.Errorf("an unknown key: %v", err)
	}
}

// TestDamagedExecution: an execution whose metadata was damaged while the
// server was down is named to the operator and to its tenant as a
// ValidationException (no SDK retries it), is another tenant's missing
// one, keeps its name, and is listed as DAMAGED.
func TestDamagedExecution(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	tokens := make(chan string, 16)
	mgr, err := control.Open(ctx, control.Config{Dir: dir, Registry: registry(tokens)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mgr.CreateStateMachine(ctx, "Echo", `{"StartAt":"E","States":{"E":{"Type":"Pass","End":true}}}`, role, ""); err != nil {
		t.Fatal(err)
	}
	x, err := mgr.StartExecution(ctx, control.StateMachineARN("Echo"), "e1", `{"tenant":"acme"}`)
	if err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 30*time.Second, func() bool {
		d, _ := mgr.DescribeExecution(ctx, x.ARN)
		return d.Status != "RUNNING"
	}, "the execution to end")
	mgr.Close()
	if err := os.WriteFile(filepath.Join(dir, "executions", "Echo", "e1", "meta.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	mgr, err = control.Open(ctx, control.Config{Dir: dir, Registry: registry(tokens)})
	if err != nil {
		t.Fatal(err)
	}
	defer mgr.Close()
	srv := apitest.Serve(t, sfnapi.New(mgr, sfnapi.Options{}), nil)
	op, acme, bravo := srv.SFN(srv.Operator(t)), srv.SFN(srv.Tenant(t, "acme")), srv.SFN(srv.Tenant(t, "bravo"))
	for name, c := range map[string]*sfn.Client{"operator": op, "its tenant": acme} {
		_, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(x.ARN)})
		if code(err) != control.CodeValidation || !strings.Contains(err.Error(), "is damaged") {
			t.Errorf("%s describes it: %v, want a ValidationException naming the damage", name, err)
		}
	}
	if _, err := bravo.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(x.ARN)}); code(err) != control.CodeExecutionDoesNotExist {
		t.Errorf("another tenant describes it: %v, want ExecutionDoesNotExist", err)
	}
	if _, err := acme.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(control.StateMachineARN("Echo")), Name: aws.String("e1")}); code(err) != control.CodeExecutionAlreadyExists {
		t.Errorf("its name again: %v, want ExecutionAlreadyExists", err)
	}
	l, err := op.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(control.StateMachineARN("Echo")), StatusFilter: control.StatusDamaged})
	if err != nil || len(l.Executions) != 1 || l.Executions[0].Status != control.StatusDamaged {
		t.Errorf("listed as damaged: %+v %v", l, err)
	}
}

// TestTenantPagesCountNoOtherTenant: a state machine's executions are
// listed to a tenant as if the others' did not exist: paged one at a
// time, bravo gets its own and nothing else; acme, with none, gets no
// page and no token; a token is opaque and bound to its tenant, so a
// position cannot be guessed (a count of everyone's executions) nor
// borrowed.
func TestTenantPagesCountNoOtherTenant(t *testing.T) {
	ctx := context.Background()
	p, op, acme, bravo := tenantRig(t, t.TempDir())
	smARN := p.create(t, "Callback", callbackDef(3600))
	for i := range 6 {
		c, name := bravo, fmt.Sprintf("b%d", i)
		if i == 3 {
			c, name = op, "op" // another tenant's ("default") in the middle
		}
		if _, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smARN), Name: aws.String(name)}); err != nil {
			t.Fatal(err)
		}
	}
	list := func(c *sfn.Client, token *string) (*sfn.ListExecutionsOutput, error) {
		return c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(smARN), MaxResults: 1, NextToken: token})
	}
	var names []string
	var bravoToken *string
	for page, err := list(bravo, nil); ; page, err = list(bravo, page.NextToken) {
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Executions) != 1 {
			t.Fatalf("bravo's page of one: %d executions", len(page.Executions))
		}
		names = append(names, aws.ToString(page.Executions[0].Name))
		if page.NextToken == nil {
			break
		}
		bravoToken = page.NextToken
		if _, err := strconv.Atoi(aws.ToString(page.NextToken)); err == nil {
			t.Errorf("bravo's token %q is a position anyone can read", aws.ToString(page.NextToken))
		}
	}
	if got := strings.Join(names, " "); got != "b5 b4 b2 b1 b0" {
		t.Errorf("bravo's pages %q, want its five, newest first", got)
	}
	if page, err := list(acme, nil); err != nil || len(page.Executions) != 0 || page.NextToken != nil {
		t.Errorf("acme, with none: %+v %v; want no execution and no token", page, err)
	}
	for _, token := range []string{"3", "0", "100", aws.ToString(bravoToken)} {
		_, err := list(acme, aws.String(token))
		if code(err) != control.CodeInvalidToken {
			t.Errorf("acme pages from %q: %v, want InvalidToken", token, err)
		}
	}
}

// TestAnotherTenantsExecutionIsDecidedFromMemory: whether a caller may
// see an execution is decided before its files are read, so another
// tenant's answers as a missing one even when its metadata cannot be
// read (it answered 500 to the other tenant alone, and more slowly).
func TestAnotherTenantsExecutionIsDecidedFromMemory(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p, _, acme, bravo := tenantRig(t, dir)
	smARN := p.create(t, "Callback", callbackDef(3600))
	x, err := acme.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smARN), Name: aws.String("a1")})
	if err != nil {
		t.Fatal(err)
	}
	p.token(t)
	meta := filepath.Join(dir, "executions", "Callback", "a1", "meta.json")
	if err := os.Remove(meta); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(meta, 0o755); err != nil { // unreadable as a file
		t.Fatal(err)
	}
	_, err = bravo.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: x.ExecutionArn})
	if code(err) != control.CodeExecutionDoesNotExist {
		t.Errorf("bravo describes acme's, whose metadata cannot be read: %v, want ExecutionDoesNotExist", err)
	}
	if _, err := bravo.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: x.ExecutionArn}); code(err) != control.CodeExecutionDoesNotExist {
		t.Errorf("bravo reads acme's history: %v, want ExecutionDoesNotExist", err)
	}
}

// tenantRig serves a manager in dir through the Step Functions API and
// returns its peer and clients signing as the operator, acme and bravo.
func tenantRig(t *testing.T, dir string) (p *peer, op, acme, bravo *sfn.Client) {
	t.Helper()
	tokens := make(chan string, 16)
	mgr, err := control.Open(context.Background(), control.Config{Dir: dir, Registry: registry(tokens)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mgr.Close)
	srv := apitest.Serve(t, sfnapi.New(mgr, sfnapi.Options{}), nil)
	op, acme, bravo = srv.SFN(srv.Operator(t)), srv.SFN(srv.Tenant(t, "acme")), srv.SFN(srv.Tenant(t, "bravo"))
	return &peer{client: op, mgr: mgr, tokens: tokens}, op, acme, bravo
}
