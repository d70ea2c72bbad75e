package sfnapi_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/veredicto/veredicto/internal/asl/asltest"
	"github.com/veredicto/veredicto/internal/control"
	"github.com/veredicto/veredicto/internal/httpapi/apitest"
	"github.com/veredicto/veredicto/internal/sfnapi"
)

// FlakyError is what a flaky handler fails with the first time.
type FlakyError struct{}

func (*FlakyError) Error() string { return "not yet" }

// calls counts a test's handler invocations, by handler and payload.
type calls struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *calls) add(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[key]++
	return c.n[key]
}

func (c *calls) get(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[key]
}

// redrivePeer is a server whose CountFunction counts its calls by payload
// and whose FlakyFunction fails the first call for each payload, then
// succeeds; its engine runs on clock.
func redrivePeer(t *testing.T, clock *asltest.Clock) (*peer, *calls) {
	return redrivePeerWith(t, control.Config{Clock: clock})
}

// redrivePeerWith is redrivePeer with cfg's other settings.
func redrivePeerWith(t *testing.T, cfg control.Config) (*peer, *calls) {
	t.Helper()
	c := &calls{}
	tokens := make(chan string, 16)
	reg := registry(tokens)
	reg.Register("CountFunction", func(_ context.Context, in json.RawMessage) (json.RawMessage, error) {
		return json.Marshal(c.add("count " + string(in)))
	})
	reg.Register("FlakyFunction", func(_ context.Context, in json.RawMessage) (json.RawMessage, error) {
		if c.add("flaky "+string(in)) == 1 {
			return nil, &FlakyError{}
		}
		return in, nil
	})
	cfg.Dir, cfg.Registry = t.TempDir(), reg
	mgr, err := control.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mgr.Close)
	srv := apitest.Serve(t, sfnapi.New(mgr, sfnapi.Options{}), nil)
	return &peer{url: srv.URL, client: srv.SFN(srv.Operator(t)), mgr: mgr, tokens: tokens, srv: srv}, c
}

func describe(t *testing.T, c *sfn.Client, arn string) *sfn.DescribeExecutionOutput {
	t.Helper()
	out, err := c.DescribeExecution(context.Background(), &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
	if err != nil {
		t.Fatalf("DescribeExecution: %v", err)
	}
	return out
}

func redriveOf(t *testing.T, c *sfn.Client, arn, token string) (*sfn.RedriveExecutionOutput, error) {
	t.Helper()
	in := &sfn.RedriveExecutionInput{ExecutionArn: aws.String(arn)}
	if token != "" {
		in.ClientToken = aws.String(token)
	}
	return c.RedriveExecution(context.Background(), in)
}

// eventTypes is a history's event types, one line.
func eventTypes(events []types.HistoryEvent) string {
	var out []string
	for _, ev := range events {
		out = append(out, string(ev.Type))
	}
	return strings.Join(out, " ")
}

// TestRedriveResumesAtTheFailedState: a redriven execution runs again
// from the Task that failed — which succeeds this time — without running
// the Task before it again; its history goes on after an ExecutionRedriven
// event; DescribeExecution and ListExecutions report the redrive as Step
// Functions does, and RedriveExecution refuses what it refuses.
func TestRedriveResumesAtTheFailedState(t *testing.T) {
	ctx := context.Background()
	clock := asltest.NewClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	p, n := redrivePeer(t, clock)
	c := p.client
	smARN := p.create(t, "Flaky", `{"StartAt":"Prepare","States":{
	  "Prepare":{"Type":"Task","Resource":"${CountFunctionArn}","ResultPath":"$.count","Next":"Flaky"},
	  "Flaky":{"Type":"Task","Resource":"${FlakyFunctionArn}","Next":"Done"},
	  "Done":{"Type":"Pass","End":true}}}`)
	arn := p.start(t, smARN, "first", `{"tenant":"acme"}`)
	failed := closed(t, c, arn)
	if failed.Status != types.ExecutionStatusFailed || aws.ToString(failed.Error) != "FlakyError" ||
		failed.RedriveStatus != types.ExecutionRedriveStatusRedrivable || failed.RedriveCount == nil || *failed.RedriveCount != 0 || failed.RedriveStatusReason != nil {
		t.Fatalf("the first run: %s %s, redrive %s %v %v", failed.Status, aws.ToString(failed.Error), failed.RedriveStatus, failed.RedriveCount, failed.RedriveStatusReason)
	}

	clock.Advance(time.Minute)
	rd, err := redriveOf(t, c, arn, "token-1")
	if err != nil {
		t.Fatalf("RedriveExecution: %v", err)
	}
	if !rd.RedriveDate.Equal(clock.Now().Truncate(time.Millisecond)) {
		t.Errorf("redriveDate %v, want %v", rd.RedriveDate, clock.Now())
	}
	out := closed(t, c, arn)
	if out.Status != types.ExecutionStatusSucceeded || aws.ToString(out.Output) != `{"count":1,"tenant":"acme"}` {
		t.Fatalf("after the redrive: %s %s (%s)", out.Status, aws.ToString(out.Output), aws.ToString(out.Cause))
	}
	if aws.ToInt32(out.RedriveCount) != 1 || !out.RedriveDate.Equal(*rd.RedriveDate) || out.RedriveStatus != types.ExecutionRedriveStatusNotRedrivable ||
		aws.ToString(out.RedriveStatusReason) != "Execution is SUCCEEDED and cannot be redriven" || !out.StartDate.Equal(*failed.StartDate) {
		t.Errorf("DescribeExecution after the redrive: count %v date %v status %s reason %q start %v",
			aws.ToInt32(out.RedriveCount), out.RedriveDate, out.RedriveStatus, aws.ToString(out.RedriveStatusReason), out.StartDate)
	}
	if prepare, flaky := n.get(`count {"tenant":"acme"}`), n.get(`flaky {"count":1,"tenant":"acme"}`); prepare != 1 || flaky != 2 {
		t.Errorf("Prepare ran %d times and Flaky %d, want once and twice", prepare, flaky)
	}
	events := history(t, c, arn)
	want := "ExecutionStarted TaskStateEntered LambdaFunctionScheduled LambdaFunctionStarted LambdaFunctionSucceeded TaskStateExited " +
		"TaskStateEntered LambdaFunctionScheduled LambdaFunctionStarted LambdaFunctionFailed ExecutionFailed " +
		"ExecutionRedriven LambdaFunctionScheduled LambdaFunctionStarted LambdaFunctionSucceeded TaskStateExited PassStateEntered PassStateExited ExecutionSucceeded"
	if got := eventTypes(events); got != want {
		t.Errorf("history\n got %s\nwant %s", got, want)
	}
	for i, ev := range events {
		if ev.Id != int64(i+1) || i > 0 && (ev.PreviousEventId < 1 || ev.PreviousEventId >= ev.Id) {
			t.Errorf("event %d: id %d previous %d", i+1, ev.Id, ev.PreviousEventId)
		}
		if ev.Type == types.HistoryEventTypeExecutionRedriven && (ev.ExecutionRedrivenEventDetails == nil || aws.ToInt32(ev.ExecutionRedrivenEventDetails.RedriveCount) != 1) {
			t.Errorf("ExecutionRedriven details %+v", ev.ExecutionRedrivenEventDetails)
		}
	}

	// The same clientToken answers with the same redrive; another is refused.
	if again, err := redriveOf(t, c, arn, "token-1"); err != nil || !again.RedriveDate.Equal(*rd.RedriveDate) {
		t.Errorf("the same clientToken again: %v %v, want the first redrive's date", again, err)
	}
	_, err = redriveOf(t, c, arn, "token-2")
	wantCode(t, "redriving a SUCCEEDED execution", err, "ExecutionNotRedrivable", "Execution is SUCCEEDED and cannot be redriven")
	_, err = redriveOf(t, c, strings.Replace(arn, ":first", ":nobody", 1), "")
	wantCode(t, "redriving a missing execution", err, "ExecutionDoesNotExist", "")
	_, err = c.RedriveExecution(ctx, &sfn.RedriveExecutionInput{ExecutionArn: aws.String(arn), ClientToken: aws.String("with space")})
	wantCode(t, "a clientToken with a space", err, "ValidationException", "clientToken")

	// Only its own tenant's key redrives it; to another it does not exist.
	bravo := p.srv.SFN(p.srv.Tenant(t, "bravo"))
	second := p.start(t, smARN, "second", `{"tenant":"acme","n":2}`)
	closed(t, c, second)
	_, errOther := redriveOf(t, bravo, second, "")
	_, errMissing := redriveOf(t, bravo, strings.Replace(second, ":second", ":zzzzzz", 1), "")
	if code(errOther) != control.CodeExecutionDoesNotExist || strings.Replace(errOther.Error(), ":second", ":zzzzzz", -1) != errMissing.Error() {
		t.Errorf("bravo redrives acme's execution: %v; a missing one: %v", errOther, errMissing)
	}

	// ListExecutions reports and filters redrives.
	for filter, want := range map[types.ExecutionRedriveFilter]string{types.ExecutionRedriveFilterRedriven: "first", types.ExecutionRedriveFilterNotRedriven: "second"} {
		l, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(smARN), RedriveFilter: filter})
		if err != nil || len(l.Executions) != 1 || aws.ToString(l.Executions[0].Name) != want {
			t.Fatalf("ListExecutions %s: %+v %v, want %s", filter, l, err, want)
		}
		if x := l.Executions[0]; want == "first" && (aws.ToInt32(x.RedriveCount) != 1 || x.RedriveDate == nil) {
			t.Errorf("the redriven execution listed: count %v date %v", x.RedriveCount, x.RedriveDate)
		}
	}

	// Fourteen days after its end, an execution is no longer redrivable.
	clock.Advance(15 * 24 * time.Hour)
	if d := describe(t, c, second); d.RedriveStatus != types.ExecutionRedriveStatusNotRedrivable || aws.ToString(d.RedriveStatusReason) != "Execution redrivable period exceeded" {
		t.Errorf("fifteen days later: %s %q", d.RedriveStatus, aws.ToString(d.RedriveStatusReason))
	}
	_, err = redriveOf(t, c, second, "")
	wantCode(t, "a redrive fifteen days later", err, "ExecutionNotRedrivable", "Execution redrivable period exceeded")
}

// TestRedriveMapAndParallel: a redrive runs again only the Map iterations
// and Parallel branches that failed.
func TestRedriveMapAndParallel(t *testing.T) {
	p, n := redrivePeer(t, asltest.NewClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)))
	c := p.client
	smARN := p.create(t, "Fan", `{"StartAt":"Each","States":{
	  "Each":{"Type":"Map","ItemsPath":"$.items","MaxConcurrency":1,"Next":"Both","ItemProcessor":{"StartAt":"Count","States":{
	    "Count":{"Type":"Task","Resource":"${CountFunctionArn}","ResultPath":"$.count","Next":"Check"},
	    "Check":{"Type":"Choice","Choices":[{"Variable":"$.flaky","BooleanEquals":true,"Next":"Flaky"}],"Default":"Fine"},
	    "Flaky":{"Type":"Task","Resource":"${FlakyFunctionArn}","End":true},
	    "Fine":{"Type":"Pass","End":true}}}},
	  "Both":{"Type":"Parallel","End":true,"Branches":[
	    {"StartAt":"Steady","States":{"Steady":{"Type":"Task","Resource":"${CountFunctionArn}","Parameters":{"branch":"steady"},"End":true}}},
	    {"StartAt":"Shaky","States":{"Shaky":{"Type":"Task","Resource":"${FlakyFunctionArn}","Parameters":{"branch":"shaky"},"End":true}}}]}}}`)
	arn := p.start(t, smARN, "fan", `{"items":[{"i":1,"flaky":false},{"i":2,"flaky":true},{"i":3,"flaky":false}]}`)
	if out := closed(t, c, arn); out.Status != types.ExecutionStatusFailed || aws.ToString(out.Error) != "FlakyError" {
		t.Fatalf("the first run: %s %s %s, want the flaky item failing", out.Status, aws.ToString(out.Error), aws.ToString(out.Cause))
	}
	if _, err := redriveOf(t, c, arn, ""); err != nil {
		t.Fatal(err)
	}
	if out := closed(t, c, arn); out.Status != types.ExecutionStatusFailed || aws.ToString(out.Error) != "FlakyError" {
		t.Fatalf("the first redrive: %s %s %s, want the Parallel's flaky branch failing", out.Status, aws.ToString(out.Error), aws.ToString(out.Cause))
	}
	if _, err := redriveOf(t, c, arn, ""); err != nil {
		t.Fatal(err)
	}
	out := closed(t, c, arn)
	if out.Status != types.ExecutionStatusSucceeded || aws.ToInt32(out.RedriveCount) != 2 {
		t.Fatalf("the second redrive: %s (%s) count %d", out.Status, aws.ToString(out.Cause), aws.ToInt32(out.RedriveCount))
	}
	for _, item := range []string{`{"flaky":false,"i":1}`, `{"flaky":true,"i":2}`, `{"flaky":false,"i":3}`, `{"branch":"steady"}`} {
		if got := n.get("count " + item); got != 1 {
			t.Errorf("Count ran %d times for %s, want once", got, item)
		}
	}
	for key, want := range map[string]int{`flaky {"count":1,"flaky":true,"i":2}`: 2, `flaky {"branch":"shaky"}`: 2} {
		if got := n.get(key); got != want {
			t.Errorf("%s: %d calls, want %d", key, got, want)
		}
	}
	events := history(t, c, arn)
	redriven := 0
	for _, ev := range events {
		if ev.Type == types.HistoryEventTypeExecutionRedriven {
			redriven++
			if got := aws.ToInt32(ev.ExecutionRedrivenEventDetails.RedriveCount); got != int32(redriven) {
				t.Errorf("ExecutionRedriven %d says redriveCount %d", redriven, got)
			}
		}
	}
	if started := strings.Count(eventTypes(events), "MapIterationStarted"); redriven != 2 || started != 4 {
		t.Errorf("%d ExecutionRedriven and %d MapIterationStarted events, want 2 and 4 (one at a time: the first, the failed one twice, the third once)", redriven, started)
	}
}

// TestRedriveAborted: a stopped execution is redriven at the Task it was
// waiting in, which waits for a new token; a running one is not
// redrivable.
func TestRedriveAborted(t *testing.T) {
	p, _ := redrivePeer(t, asltest.NewClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)))
	ctx := context.Background()
	smARN := p.create(t, "Callback", callbackDef(3600))
	arn := p.start(t, smARN, "stopped", `{}`)
	old := p.token(t)
	if d := describe(t, p.client, arn); d.RedriveStatus != types.ExecutionRedriveStatusNotRedrivable || aws.ToString(d.RedriveStatusReason) != "Execution is RUNNING and cannot be redriven" {
		t.Errorf("a running execution: %s %q", d.RedriveStatus, aws.ToString(d.RedriveStatusReason))
	}
	_, err := redriveOf(t, p.client, arn, "")
	wantCode(t, "redriving a RUNNING execution", err, "ExecutionNotRedrivable", "Execution is RUNNING and cannot be redriven")
	if _, err := p.client.StopExecution(ctx, &sfn.StopExecutionInput{ExecutionArn: aws.String(arn), Error: aws.String("Halt")}); err != nil {
		t.Fatal(err)
	}
	if d := closed(t, p.client, arn); d.Status != types.ExecutionStatusAborted {
		t.Fatalf("stopped: %s", d.Status)
	}
	if _, err := redriveOf(t, p.client, arn, ""); err != nil {
		t.Fatal(err)
	}
	tok := p.token(t)
	if tok == old {
		t.Fatal("the redriven Task waits on the aborted attempt's token")
	}
	if _, err := p.client.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(tok), Output: aws.String(`{"approved":true}`)}); err != nil {
		t.Fatal(err)
	}
	out := closed(t, p.client, arn)
	if out.Status != types.ExecutionStatusSucceeded || !strings.Contains(aws.ToString(out.Output), `"path":"approved"`) || out.Error != nil {
		t.Errorf("the redriven execution: %s %s error %v", out.Status, aws.ToString(out.Output), out.Error)
	}
	if got := strings.Join(entered(history(t, p.client, arn)), " "); got != "Prepare Ask Done" {
		t.Errorf("states entered %s, want each once: Prepare Ask Done", got)
	}
}
