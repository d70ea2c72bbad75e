package sfnapi_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/control"
	"github.com/veredicto/veredicto/internal/httpapi/apitest"
	"github.com/veredicto/veredicto/internal/sfnapi"
)

// says is a definition whose output is {"v": v}: which definition ran.
func says(v string) string {
	return fmt.Sprintf(`{"StartAt":"S","States":{"S":{"Type":"Pass","Result":%q,"ResultPath":"$.v","End":true}}}`, v)
}

func route(arn string, weight int32) types.RoutingConfigurationListItem {
	return types.RoutingConfigurationListItem{StateMachineVersionArn: aws.String(arn), Weight: weight}
}

// wantCode fails t unless err is the API error code, with a message that
// contains msg.
func wantCode(t *testing.T, what string, err error, want, msg string) {
	t.Helper()
	if got := code(err); got != want || !strings.Contains(fmt.Sprint(err), msg) {
		t.Errorf("%s: %v, want %s saying %q", what, err, want, msg)
	}
}

// peerOn is a server on the control folder dir, closed when the test
// ends or by its close, after which another may open the folder.
func peerOn(t *testing.T, dir string) *peer {
	t.Helper()
	tokens := make(chan string, 4)
	mgr, err := control.Open(context.Background(), control.Config{Dir: dir, Registry: registry(tokens)})
	if err != nil {
		t.Fatal(err)
	}
	srv := apitest.Serve(t, sfnapi.New(mgr, sfnapi.Options{}), nil)
	t.Cleanup(mgr.Close)
	return &peer{url: srv.URL, client: srv.SFN(srv.Operator(t)), mgr: mgr, tokens: tokens, srv: srv}
}

// close stops the peer's server and its manager.
func (p *peer) close() {
	p.srv.Close()
	p.mgr.Close()
}

// TestVersionsAndAliases: versions are numbered snapshots a start can
// name; aliases route to one or two of them; both follow Step Functions'
// rules and errors, and survive a restart.
func TestVersionsAndAliases(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := peerOn(t, dir)
	c := p.client

	created, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("Versioned"), Definition: aws.String(says("one")),
		RoleArn: aws.String(role), Publish: true, VersionDescription: aws.String("the first")})
	if err != nil {
		t.Fatal(err)
	}
	smARN := aws.ToString(created.StateMachineArn)
	v1 := aws.ToString(created.StateMachineVersionArn)
	if v1 != smARN+":1" {
		t.Fatalf("version ARN %s, want %s:1", v1, smARN)
	}
	d1, err := c.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(v1)})
	if err != nil || aws.ToString(d1.StateMachineArn) != v1 || aws.ToString(d1.Name) != "Versioned" || aws.ToString(d1.Description) != "the first" || d1.RevisionId != nil {
		t.Errorf("DescribeStateMachine of v1: %+v %v", d1, err)
	}

	upd, err := c.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: aws.String(smARN), Definition: aws.String(says("two")), Publish: true})
	if err != nil {
		t.Fatal(err)
	}
	v2, rev2 := aws.ToString(upd.StateMachineVersionArn), aws.ToString(upd.RevisionId)
	if v2 != smARN+":2" || rev2 == "" {
		t.Fatalf("update with publish: version %s revision %q", v2, rev2)
	}
	if d, err := c.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(smARN)}); err != nil || aws.ToString(d.RevisionId) != rev2 {
		t.Errorf("the machine's revision after the update: %v %v, want %s", d.RevisionId, err, rev2)
	}
	// Publishing the same revision again answers with its version.
	again, err := c.PublishStateMachineVersion(ctx, &sfn.PublishStateMachineVersionInput{StateMachineArn: aws.String(smARN), RevisionId: aws.String(rev2)})
	if err != nil || aws.ToString(again.StateMachineVersionArn) != v2 {
		t.Errorf("publishing revision %s again: %v %v, want %s", rev2, again, err, v2)
	}
	if _, err := c.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: aws.String(smARN), Definition: aws.String(says("three"))}); err != nil {
		t.Fatal(err)
	}
	_, err = c.PublishStateMachineVersion(ctx, &sfn.PublishStateMachineVersionInput{StateMachineArn: aws.String(smARN), RevisionId: aws.String(rev2)})
	wantCode(t, "publishing a stale revision", err, "ConflictException", "Failed to publish the State Machine version for revision "+rev2+". The current State Machine revision is ")
	_, err = c.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: aws.String(smARN), Definition: aws.String(says("x")), VersionDescription: aws.String("d")})
	wantCode(t, "a description without publish", err, "ValidationException", "Version description can only be set when publish is true")
	_, err = c.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: aws.String(v2), Definition: aws.String(says("x"))})
	wantCode(t, "updating a version", err, "StateMachineDoesNotExist", "State Machine Does Not Exist: '"+v2+"'")

	list, err := c.ListStateMachineVersions(ctx, &sfn.ListStateMachineVersionsInput{StateMachineArn: aws.String(smARN)})
	if err != nil || len(list.StateMachineVersions) != 2 || aws.ToString(list.StateMachineVersions[0].StateMachineVersionArn) != v2 {
		t.Errorf("ListStateMachineVersions: %+v %v, want v2 then v1", list, err)
	}
	page, err := c.ListStateMachineVersions(ctx, &sfn.ListStateMachineVersionsInput{StateMachineArn: aws.String(smARN), MaxResults: 1})
	if err != nil || len(page.StateMachineVersions) != 1 || page.NextToken == nil {
		t.Fatalf("a page of one version: %+v %v", page, err)
	}
	if rest, err := c.ListStateMachineVersions(ctx, &sfn.ListStateMachineVersionsInput{StateMachineArn: aws.String(smARN), NextToken: page.NextToken}); err != nil ||
		len(rest.StateMachineVersions) != 1 || aws.ToString(rest.StateMachineVersions[0].StateMachineVersionArn) != v1 {
		t.Errorf("the next page: %+v %v, want v1", rest, err)
	}

	// A start on a version runs its definition and says which it ran.
	xv := p.start(t, v1, "through-v1", `{}`)
	if out := closed(t, c, xv); aws.ToString(out.Output) != `{"v":"one"}` || aws.ToString(out.StateMachineVersionArn) != v1 ||
		out.StateMachineAliasArn != nil || aws.ToString(out.StateMachineArn) != smARN {
		t.Errorf("an execution of v1: output %s version %v alias %v machine %s", aws.ToString(out.Output), aws.ToString(out.StateMachineVersionArn), out.StateMachineAliasArn, aws.ToString(out.StateMachineArn))
	}
	if out := closed(t, c, p.start(t, smARN, "unqualified", `{}`)); aws.ToString(out.Output) != `{"v":"three"}` || out.StateMachineVersionArn != nil {
		t.Errorf("an execution of the machine: output %s version %v, want the current definition and no version", aws.ToString(out.Output), out.StateMachineVersionArn)
	}

	// Aliases.
	al, err := c.CreateStateMachineAlias(ctx, &sfn.CreateStateMachineAliasInput{Name: aws.String("PROD"), Description: aws.String("live"),
		RoutingConfiguration: []types.RoutingConfigurationListItem{route(v1, 100)}})
	if err != nil {
		t.Fatal(err)
	}
	prod := aws.ToString(al.StateMachineAliasArn)
	if prod != smARN+":PROD" {
		t.Fatalf("alias ARN %s", prod)
	}
	if same, err := c.CreateStateMachineAlias(ctx, &sfn.CreateStateMachineAliasInput{Name: aws.String("PROD"), Description: aws.String("live"),
		RoutingConfiguration: []types.RoutingConfigurationListItem{route(v1, 100)}}); err != nil || aws.ToString(same.StateMachineAliasArn) != prod {
		t.Errorf("the same alias again: %v %v, want it back", same, err)
	}
	xa := p.start(t, prod, "through-prod", `{}`)
	if out := closed(t, c, xa); aws.ToString(out.Output) != `{"v":"one"}` || aws.ToString(out.StateMachineVersionArn) != v1 || aws.ToString(out.StateMachineAliasArn) != prod {
		t.Errorf("an execution through PROD: output %s version %s alias %s", aws.ToString(out.Output), aws.ToString(out.StateMachineVersionArn), aws.ToString(out.StateMachineAliasArn))
	}
	for arn, want := range map[string][]string{v1: {"through-prod", "through-v1"}, prod: {"through-prod"}} {
		l, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(arn)})
		var names []string
		for _, x := range l.Executions {
			names = append(names, aws.ToString(x.Name))
		}
		if err != nil || strings.Join(names, " ") != strings.Join(want, " ") {
			t.Errorf("ListExecutions of %s: %v %v, want %v", arn, names, err, want)
		}
	}
	if _, err := c.UpdateStateMachineAlias(ctx, &sfn.UpdateStateMachineAliasInput{StateMachineAliasArn: aws.String(prod),
		RoutingConfiguration: []types.RoutingConfigurationListItem{route(v2, 100)}}); err != nil {
		t.Fatal(err)
	}
	da, err := c.DescribeStateMachineAlias(ctx, &sfn.DescribeStateMachineAliasInput{StateMachineAliasArn: aws.String(prod)})
	if err != nil || aws.ToString(da.Name) != "PROD" || aws.ToString(da.Description) != "live" || len(da.RoutingConfiguration) != 1 ||
		aws.ToString(da.RoutingConfiguration[0].StateMachineVersionArn) != v2 || da.UpdateDate.Before(*da.CreationDate) {
		t.Errorf("DescribeStateMachineAlias after the update: %+v %v", da, err)
	}
	if out := closed(t, c, p.start(t, prod, "after-update", `{}`)); aws.ToString(out.Output) != `{"v":"two"}` {
		t.Errorf("through PROD after its update: %s, want version 2's", aws.ToString(out.Output))
	}
	_, err = c.DeleteStateMachineVersion(ctx, &sfn.DeleteStateMachineVersionInput{StateMachineVersionArn: aws.String(v2)})
	wantCode(t, "deleting a version an alias routes to", err, "ConflictException",
		"Version to be deleted must not be referenced by an alias. Current list of aliases referencing this version: [PROD]")
	if _, err := c.DeleteStateMachineVersion(ctx, &sfn.DeleteStateMachineVersionInput{StateMachineVersionArn: aws.String(v1)}); err != nil {
		t.Errorf("deleting v1: %v", err)
	}
	if _, err := c.DeleteStateMachineVersion(ctx, &sfn.DeleteStateMachineVersionInput{StateMachineVersionArn: aws.String(v1)}); err != nil {
		t.Errorf("deleting v1 again: %v, want no error", err)
	}
	_, err = c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(v1)})
	wantCode(t, "a start on a deleted version", err, "StateMachineDoesNotExist", v1)

	for _, tt := range []struct {
		name    string
		routing []types.RoutingConfigurationListItem
		alias   string
		code    string
		msg     string
	}{
		{"three versions", []types.RoutingConfigurationListItem{route(v2, 50), route(v2, 30), route(v2, 20)}, "A", "ValidationException", "Member must have length less than or equal to 2"},
		{"the same version twice", []types.RoutingConfigurationListItem{route(v2, 50), route(v2, 50)}, "A", "ValidationException", "Routing configuration must contain distinct state machine version ARNs. Received: [" + v2 + ", " + v2 + "]"},
		{"a machine ARN", []types.RoutingConfigurationListItem{route(smARN, 100)}, "A", "ValidationException", "Routing configuration must contain state machine version ARNs. Received: [" + smARN + "]"},
		{"a weight over 100", []types.RoutingConfigurationListItem{route(v2, 101)}, "A", "ValidationException", "Value '101' at 'routingConfiguration.1.member.weight' failed to satisfy constraint: Member must have value less than or equal to 100"},
		{"weights under 100", []types.RoutingConfigurationListItem{route(v2, 70), route(smARN+":9", 29)}, "A", "ValidationException", "Sum of routing configuration weights must equal 100. Received: [70, 29]"},
		{"a missing version", []types.RoutingConfigurationListItem{route(smARN+":9", 100)}, "A", "ResourceNotFound", "Request references a resource that does not exist."},
		{"a digits-only name", []types.RoutingConfigurationListItem{route(v2, 100)}, "123", "ValidationException", "Value '123' at 'name' failed to satisfy constraint: Member must satisfy regular expression pattern"},
		{"a name with a space", []types.RoutingConfigurationListItem{route(v2, 100)}, "INVALID ALIAS", "ValidationException", "Value 'INVALID ALIAS' at 'name'"},
		{"PROD routed elsewhere", []types.RoutingConfigurationListItem{route(v2, 100)}, "PROD", "ConflictException", "Failed to create alias because an alias with the same name and a different routing configuration already exists."},
	} {
		_, err := c.CreateStateMachineAlias(ctx, &sfn.CreateStateMachineAliasInput{Name: aws.String(tt.alias), RoutingConfiguration: tt.routing})
		wantCode(t, tt.name, err, tt.code, tt.msg)
	}
	_, err = c.UpdateStateMachineAlias(ctx, &sfn.UpdateStateMachineAliasInput{StateMachineAliasArn: aws.String(smARN + ":NOPE"), Description: aws.String("x")})
	wantCode(t, "updating a missing alias", err, "ResourceNotFound", "Request references a resource that does not exist.")
	if _, err := c.DeleteStateMachineAlias(ctx, &sfn.DeleteStateMachineAliasInput{StateMachineAliasArn: aws.String(smARN + ":NOPE")}); err != nil {
		t.Errorf("deleting a missing alias: %v, want no error", err)
	}

	// After a restart: the versions, the alias and the numbering.
	p.close()
	c = peerOn(t, dir).client
	if da, err := c.DescribeStateMachineAlias(ctx, &sfn.DescribeStateMachineAliasInput{StateMachineAliasArn: aws.String(prod)}); err != nil || aws.ToString(da.RoutingConfiguration[0].StateMachineVersionArn) != v2 {
		t.Errorf("PROD after a restart: %+v %v", da, err)
	}
	v3, err := c.PublishStateMachineVersion(ctx, &sfn.PublishStateMachineVersionInput{StateMachineArn: aws.String(smARN), Description: aws.String("three")})
	if err != nil || aws.ToString(v3.StateMachineVersionArn) != smARN+":3" {
		t.Errorf("a version published after a restart: %v %v, want number 3", v3, err)
	}
	if al, err := c.ListStateMachineAliases(ctx, &sfn.ListStateMachineAliasesInput{StateMachineArn: aws.String(v2)}); err != nil || len(al.StateMachineAliases) != 1 {
		t.Errorf("the aliases of v2: %+v %v, want PROD", al, err)
	}
	if _, err := c.DeleteStateMachine(ctx, &sfn.DeleteStateMachineInput{StateMachineArn: aws.String(smARN)}); err != nil {
		t.Fatal(err)
	}
	_, err = c.DescribeStateMachineAlias(ctx, &sfn.DescribeStateMachineAliasInput{StateMachineAliasArn: aws.String(prod)})
	wantCode(t, "an alias of a deleted machine", err, "ResourceNotFound", "")
	_, err = c.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(v2)})
	wantCode(t, "a version of a deleted machine", err, "StateMachineDoesNotExist", "")
}

// TestAliasRoutesByWeight: an alias that gives 80 % of its starts to one
// version and 20 % to another splits 1 000 starts about so. The count of
// the first is binomial (n = 1000, p = 0.8); the test allows five
// standard deviations either way, which a fair split leaves less than
// once in a million runs, and the randomness is seeded, so the run is the
// same every time.
func TestAliasRoutesByWeight(t *testing.T) {
	p := newPeerWith(t, control.Config{RouteSource: rand.NewPCG(33, 80)})
	ctx := context.Background()
	created, err := p.client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("Split"), Definition: aws.String(says("a")),
		RoleArn: aws.String(role), Publish: true})
	if err != nil {
		t.Fatal(err)
	}
	smARN, va := aws.ToString(created.StateMachineArn), aws.ToString(created.StateMachineVersionArn)
	upd, err := p.client.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: aws.String(smARN), Definition: aws.String(says("b")), Publish: true})
	if err != nil {
		t.Fatal(err)
	}
	vb := aws.ToString(upd.StateMachineVersionArn)
	al, err := p.client.CreateStateMachineAlias(ctx, &sfn.CreateStateMachineAliasInput{Name: aws.String("canary"),
		RoutingConfiguration: []types.RoutingConfigurationListItem{route(va, 80), route(vb, 20)}})
	if err != nil {
		t.Fatal(err)
	}
	const n, share = 1000, 0.8
	for i := range n {
		if _, err := p.client.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: al.StateMachineAliasArn, Name: aws.String(fmt.Sprint("s", i))}); err != nil {
			t.Fatal(err)
		}
	}
	count := func(arn string) int {
		total := 0
		pages := sfn.NewListExecutionsPaginator(p.client, &sfn.ListExecutionsInput{StateMachineArn: aws.String(arn), MaxResults: 1000})
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			total += len(page.Executions)
		}
		return total
	}
	a, b := count(va), count(vb)
	sd := math.Sqrt(n * share * (1 - share))
	if a+b != n || math.Abs(float64(a)-n*share) > 5*sd {
		t.Errorf("%d starts went to the 80 %% version and %d to the 20 %% one; want %d ± %.0f of %d", a, b, int(n*share), 5*sd, n)
	}
	t.Logf("80/20 alias: %d/%d over %d starts (expected %d ± %.1f per standard deviation)", a, b, n, int(n*share), sd)
}

// TestVersionsTenantScope: a tenant's key reads versions and aliases and
// starts through them, its executions its own; publishing and routing are
// the operator's.
func TestVersionsTenantScope(t *testing.T) {
	ctx := context.Background()
	p := newPeer(t)
	acme, bravo := p.srv.SFN(p.srv.Tenant(t, "acme")), p.srv.SFN(p.srv.Tenant(t, "bravo"))
	created, err := p.client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("Shared"), Definition: aws.String(says("s")),
		RoleArn: aws.String(role), Publish: true})
	if err != nil {
		t.Fatal(err)
	}
	smARN, v1 := aws.ToString(created.StateMachineArn), aws.ToString(created.StateMachineVersionArn)
	al, err := p.client.CreateStateMachineAlias(ctx, &sfn.CreateStateMachineAliasInput{Name: aws.String("live"), RoutingConfiguration: []types.RoutingConfigurationListItem{route(v1, 100)}})
	if err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]func() error{
		"PublishStateMachineVersion": func() error {
			_, err := acme.PublishStateMachineVersion(ctx, &sfn.PublishStateMachineVersionInput{StateMachineArn: aws.String(smARN)})
			return err
		},
		"DeleteStateMachineVersion": func() error {
			_, err := acme.DeleteStateMachineVersion(ctx, &sfn.DeleteStateMachineVersionInput{StateMachineVersionArn: aws.String(v1)})
			return err
		},
		"CreateStateMachineAlias": func() error {
			_, err := acme.CreateStateMachineAlias(ctx, &sfn.CreateStateMachineAliasInput{Name: aws.String("mine"), RoutingConfiguration: []types.RoutingConfigurationListItem{route(v1, 100)}})
			return err
		},
		"UpdateStateMachineAlias": func() error {
			_, err := acme.UpdateStateMachineAlias(ctx, &sfn.UpdateStateMachineAliasInput{StateMachineAliasArn: al.StateMachineAliasArn, Description: aws.String("x")})
			return err
		},
		"DeleteStateMachineAlias": func() error {
			_, err := acme.DeleteStateMachineAlias(ctx, &sfn.DeleteStateMachineAliasInput{StateMachineAliasArn: al.StateMachineAliasArn})
			return err
		},
	} {
		if err := call(); code(err) != auth.CodeAccessDenied {
			t.Errorf("a tenant's %s: %v, want AccessDenied", name, err)
		}
	}
	if _, err := acme.DescribeStateMachineAlias(ctx, &sfn.DescribeStateMachineAliasInput{StateMachineAliasArn: al.StateMachineAliasArn}); err != nil {
		t.Errorf("a tenant describes an alias: %v", err)
	}
	if _, err := acme.ListStateMachineVersions(ctx, &sfn.ListStateMachineVersionsInput{StateMachineArn: aws.String(smARN)}); err != nil {
		t.Errorf("a tenant lists versions: %v", err)
	}
	x, err := acme.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: al.StateMachineAliasArn, Name: aws.String("a1")})
	if err != nil {
		t.Fatal(err)
	}
	if out := closed(t, acme, aws.ToString(x.ExecutionArn)); !strings.Contains(aws.ToString(out.Output), `"tenant":"acme"`) {
		t.Errorf("a tenant's start through an alias: %s", aws.ToString(out.Output))
	}
	_, errOther := bravo.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: x.ExecutionArn})
	_, errMissing := bravo.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(strings.Replace(aws.ToString(x.ExecutionArn), ":a1", ":zz", 1))})
	if code(errOther) != control.CodeExecutionDoesNotExist || strings.Replace(errOther.Error(), ":a1", ":zz", -1) != errMissing.Error() {
		t.Errorf("bravo describes acme's execution through an alias: %v; a missing one: %v", errOther, errMissing)
	}
	if l, err := bravo.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: al.StateMachineAliasArn}); err != nil || len(l.Executions) != 0 {
		t.Errorf("bravo lists the alias's executions: %+v %v, want none", l, err)
	}
}
