package sfnapi_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/smithy-go"

	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/asl/asltest"
	"github.com/veredicto/veredicto/internal/control"
	"github.com/veredicto/veredicto/internal/httpapi/apitest"
	"github.com/veredicto/veredicto/internal/poll"
	"github.com/veredicto/veredicto/internal/sfnapi"
)

// BoomError is a handler error; its type name is the ASL error name.
type BoomError struct{}

func (*BoomError) Error() string { return "boom" }

// peer is a server under test and the real sfn client pointed at it.
type peer struct {
	url    string
	client *sfn.Client
	mgr    *control.Manager
	tokens chan string // tokens the Notify handler received
	srv    *apitest.Server
}

func registry(tokens chan string) *asl.Registry {
	reg := asl.NewRegistry()
	reg.Register("EchoFunction", func(_ context.Context, in json.RawMessage) (json.RawMessage, error) { return in, nil })
	reg.Register("BoomFunction", func(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, &BoomError{} })
	// HangFunction never answers: its Task ends at its TimeoutSeconds.
	reg.Register("HangFunction", func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	reg.Register("NotifyFunction", func(_ context.Context, in json.RawMessage) (json.RawMessage, error) {
		var p struct {
			Token string `json:"token"`
		}
		if err := json.Unmarshal(in, &p); err != nil {
			return nil, err
		}
		tokens <- p.Token
		return nil, nil
	})
	return reg
}

func newPeer(t testing.TB) *peer { return newPeerWith(t, control.Config{}) }

// newPeerWith is newPeer with cfg's other settings (a clock).
func newPeerWith(t testing.TB, cfg control.Config) *peer {
	t.Helper()
	tokens := make(chan string, 16)
	cfg.Dir, cfg.Registry = t.TempDir(), registry(tokens)
	mgr, err := control.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := apitest.Serve(t, sfnapi.New(mgr, sfnapi.Options{}), nil)
	t.Cleanup(mgr.Close)
	return &peer{url: srv.URL, client: srv.SFN(srv.Operator(t)), mgr: mgr, tokens: tokens, srv: srv}
}

const role = "arn:aws:iam::000000000000:role/test"

// callbackDef waits for a token on NotifyFunction, with a Catch for a
// rejection and for a timeout.
func callbackDef(timeout int) string {
	return fmt.Sprintf(`{"StartAt":"Prepare","States":{
	  "Prepare":{"Type":"Pass","Result":"ready","ResultPath":"$.prepared","Next":"Ask"},
	  "Ask":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken","TimeoutSeconds":%d,
	         "Parameters":{"FunctionName":"NotifyFunction","Payload":{"token.$":"$$.Task.Token"}},
	         "ResultPath":"$.answer",
	         "Catch":[{"ErrorEquals":["ConfirmationRejected"],"ResultPath":"$.rejected","Next":"Rejected"},
	                  {"ErrorEquals":["States.Timeout"],"ResultPath":"$.late","Next":"Late"}],
	         "Next":"Done"},
	  "Rejected":{"Type":"Pass","Result":"rejected","ResultPath":"$.path","End":true},
	  "Late":{"Type":"Pass","Result":"late","ResultPath":"$.path","End":true},
	  "Done":{"Type":"Pass","Result":"approved","ResultPath":"$.path","End":true}}}`, timeout)
}

// A worker that keeps sending heartbeats through the API keeps its task
// alive past HeartbeatSeconds; one that stops is timed out. The engine
// runs on a clock the test moves.
func TestHeartbeatsKeepAWaitingTaskAlive(t *testing.T) {
	clock := asltest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	p := newPeerWith(t, control.Config{Clock: clock})
	ctx := context.Background()
	def := strings.Replace(callbackDef(3600), `"TimeoutSeconds":3600,`, `"TimeoutSeconds":3600,"HeartbeatSeconds":1,`, 1)
	smARN := p.create(t, "Beating", def)
	// armed waits until the earliest timer fires at `at`: the heartbeat's,
	// re-armed by the last heartbeat.
	armed := func(at time.Time) {
		t.Helper()
		poll.Until(t, 10*time.Second, func() bool {
			ps := clock.Pending()
			return len(ps) > 0 && ps[0].Equal(at)
		}, "the heartbeat timer at "+at.String())
	}

	alive := p.start(t, smARN, "alive", `{"tenant":"acme"}`)
	tok := p.token(t)
	armed(clock.Now().Add(time.Second))
	for range 4 { // 1.6 s of work, never 1 s without a heartbeat
		clock.Advance(400 * time.Millisecond)
		if _, err := p.client.SendTaskHeartbeat(ctx, &sfn.SendTaskHeartbeatInput{TaskToken: aws.String(tok)}); err != nil {
			t.Fatalf("SendTaskHeartbeat: %v", err)
		}
		armed(clock.Now().Add(time.Second))
	}
	if _, err := p.client.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(tok), Output: aws.String(`{"approved":true}`)}); err != nil {
		t.Fatalf("SendTaskSuccess: %v", err)
	}
	if out := closed(t, p.client, alive); !strings.Contains(aws.ToString(out.Output), `"path":"approved"`) {
		t.Errorf("beating worker: %s %s", out.Status, aws.ToString(out.Output))
	}

	silent := p.start(t, smARN, "silent", `{"tenant":"acme"}`)
	p.token(t)
	armed(clock.Now().Add(time.Second))
	clock.Advance(time.Second)
	out := closed(t, p.client, silent)
	if got := aws.ToString(out.Output); !strings.Contains(got, `"path":"late"`) || !strings.Contains(got, `"Error":"States.Timeout"`) {
		t.Errorf("silent worker: %s %s, want the heartbeat timeout caught as late", out.Status, got)
	}
}

func (p *peer) create(t *testing.T, name, def string) string {
	t.Helper()
	out, err := p.client.CreateStateMachine(context.Background(), &sfn.CreateStateMachineInput{Name: aws.String(name), Definition: aws.String(def), RoleArn: aws.String(role)})
	if err != nil {
		t.Fatalf("CreateStateMachine %s: %v", name, err)
	}
	return aws.ToString(out.StateMachineArn)
}

func (p *peer) start(t *testing.T, smARN, name, input string) string {
	t.Helper()
	out, err := p.client.StartExecution(context.Background(), &sfn.StartExecutionInput{StateMachineArn: aws.String(smARN), Name: aws.String(name), Input: aws.String(input)})
	if err != nil {
		t.Fatalf("StartExecution %s: %v", name, err)
	}
	return aws.ToString(out.ExecutionArn)
}

func (p *peer) token(t *testing.T) string {
	t.Helper()
	select {
	case tok := <-p.tokens:
		return tok
	case <-time.After(30 * time.Second):
		t.Fatal("no task token reached the handler")
		return ""
	}
}

// closed waits until the execution is no longer RUNNING.
func closed(t *testing.T, c *sfn.Client, arn string) *sfn.DescribeExecutionOutput {
	t.Helper()
	var out *sfn.DescribeExecutionOutput
	poll.Until(t, 30*time.Second, func() bool {
		var err error
		if out, err = c.DescribeExecution(context.Background(), &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)}); err != nil {
			t.Fatalf("DescribeExecution: %v", err)
		}
		return out.Status != types.ExecutionStatusRunning
	}, "execution "+arn+" to end")
	return out
}

func history(t *testing.T, c *sfn.Client, arn string) []types.HistoryEvent {
	t.Helper()
	var all []types.HistoryEvent
	p := sfn.NewGetExecutionHistoryPaginator(c, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn), MaxResults: 7})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("GetExecutionHistory: %v", err)
		}
		all = append(all, page.Events...)
	}
	return all
}

func entered(events []types.HistoryEvent) []string {
	var out []string
	for _, ev := range events {
		if ev.StateEnteredEventDetails != nil {
			out = append(out, aws.ToString(ev.StateEnteredEventDetails.Name))
		}
	}
	return out
}

func TestLifecycle(t *testing.T) {
	p := newPeer(t)
	ctx := context.Background()
	smARN := p.create(t, "Callback", callbackDef(3600))
	if want := "arn:aws:states:us-east-1:000000000000:stateMachine:Callback"; smARN != want {
		t.Errorf("state machine ARN %s, want %s", smARN, want)
	}
	d, err := p.client.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(smARN)})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(d.Name) != "Callback" || d.Status != types.StateMachineStatusActive || aws.ToString(d.Definition) != callbackDef(3600) {
		t.Errorf("DescribeStateMachine: name %s status %s, definition kept %v", aws.ToString(d.Name), d.Status, aws.ToString(d.Definition) == callbackDef(3600))
	}

	arn := p.start(t, smARN, "run-1", `{"tenant":"acme"}`)
	again := p.start(t, smARN, "run-1", `{"tenant":"acme"}`)
	if again != arn {
		t.Errorf("a repeated start of a running execution returned %s, want %s", again, arn)
	}
	_, err = p.client.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smARN), Name: aws.String("run-1"), Input: aws.String(`{"tenant":"other"}`)})
	var exists *types.ExecutionAlreadyExists
	if !errors.As(err, &exists) {
		t.Errorf("same name, other input: %v, want ExecutionAlreadyExists", err)
	}
	tok := p.token(t)
	if _, err := p.client.SendTaskHeartbeat(ctx, &sfn.SendTaskHeartbeatInput{TaskToken: aws.String(tok)}); err != nil {
		t.Errorf("SendTaskHeartbeat: %v", err)
	}
	if _, err := p.client.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(tok), Output: aws.String(`{"approved":true}`)}); err != nil {
		t.Fatalf("SendTaskSuccess: %v", err)
	}
	out := closed(t, p.client, arn)
	if out.Status != types.ExecutionStatusSucceeded {
		t.Fatalf("status %s (%s: %s), want SUCCEEDED", out.Status, aws.ToString(out.Error), aws.ToString(out.Cause))
	}
	if got, want := aws.ToString(out.Output), `{"answer":{"approved":true},"path":"approved","prepared":"ready","tenant":"acme"}`; got != want {
		t.Errorf("output %s, want %s", got, want)
	}
	if out.StopDate == nil || out.StartDate == nil || out.StopDate.Before(*out.StartDate) {
		t.Errorf("start %v, stop %v", out.StartDate, out.StopDate)
	}
	// the token is used up; a closed execution's name cannot be reused
	_, err = p.client.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(tok), Output: aws.String(`{}`)})
	var timedOut *types.TaskTimedOut
	if !errors.As(err, &timedOut) {
		t.Errorf("second SendTaskSuccess: %v, want TaskTimedOut", err)
	}
	_, err = p.client.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smARN), Name: aws.String("run-1"), Input: aws.String(`{"tenant":"acme"}`)})
	if !errors.As(err, &exists) {
		t.Errorf("restart of a closed execution: %v, want ExecutionAlreadyExists", err)
	}

	events := history(t, p.client, arn)
	var types_ []string
	for i, ev := range events {
		types_ = append(types_, string(ev.Type))
		if ev.Id != int64(i+1) {
			t.Errorf("event %d has id %d", i, ev.Id)
		}
		if ev.Timestamp == nil || ev.Timestamp.Year() < 2020 {
			t.Errorf("event %d timestamp %v", ev.Id, ev.Timestamp)
		}
		if i > 0 && (ev.PreviousEventId < 1 || ev.PreviousEventId >= ev.Id) {
			t.Errorf("event %d previousEventId %d", ev.Id, ev.PreviousEventId)
		}
	}
	want := "ExecutionStarted PassStateEntered PassStateExited TaskStateEntered TaskScheduled TaskStarted TaskSubmitted TaskSucceeded TaskStateExited PassStateEntered PassStateExited ExecutionSucceeded"
	if got := strings.Join(types_, " "); got != want {
		t.Errorf("history\n got %s\nwant %s", got, want)
	}
	for _, ev := range events {
		switch ev.Type {
		case types.HistoryEventTypeExecutionStarted:
			if d := ev.ExecutionStartedEventDetails; d == nil || aws.ToString(d.Input) != `{"tenant":"acme"}` || aws.ToString(d.RoleArn) != role {
				t.Errorf("ExecutionStarted details %+v", d)
			}
		case types.HistoryEventTypeTaskScheduled:
			d := ev.TaskScheduledEventDetails
			if d == nil || aws.ToString(d.ResourceType) != "lambda" || aws.ToString(d.Resource) != "invoke.waitForTaskToken" || !strings.Contains(aws.ToString(d.Parameters), tok) {
				t.Errorf("TaskScheduled details %+v", d)
			}
			// the resolved Parameters, and the state's TimeoutSeconds
			if p := aws.ToString(d.Parameters); !strings.Contains(p, `"FunctionName":"NotifyFunction"`) || !strings.Contains(p, `"Payload":{`) || aws.ToInt64(d.TimeoutInSeconds) != 3600 {
				t.Errorf("TaskScheduled parameters %s, timeoutInSeconds %d", p, aws.ToInt64(d.TimeoutInSeconds))
			}
		case types.HistoryEventTypeTaskStarted:
			if d := ev.TaskStartedEventDetails; d == nil || aws.ToString(d.ResourceType) != "lambda" || aws.ToString(d.Resource) != "invoke.waitForTaskToken" {
				t.Errorf("TaskStarted details %+v", d)
			}
		case types.HistoryEventTypeTaskSubmitted:
			// the handler's answer, as lambda:invoke's response
			if d := ev.TaskSubmittedEventDetails; d == nil || aws.ToString(d.Resource) != "invoke.waitForTaskToken" || !strings.Contains(aws.ToString(d.Output), `"StatusCode":200`) {
				t.Errorf("TaskSubmitted details %+v", d)
			}
		case types.HistoryEventTypeTaskSucceeded:
			if d := ev.TaskSucceededEventDetails; d == nil || aws.ToString(d.Output) != `{"approved":true}` || aws.ToString(d.Resource) != "invoke.waitForTaskToken" {
				t.Errorf("TaskSucceeded details %+v", d)
			}
		}
	}
	if got := strings.Join(entered(events), " "); got != "Prepare Ask Done" {
		t.Errorf("states entered %s, want Prepare Ask Done", got)
	}

	// without execution data: no input or output in any event
	lean, err := p.client.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn), IncludeExecutionData: aws.Bool(false)})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range lean.Events {
		if d := ev.StateEnteredEventDetails; d != nil && d.Input != nil {
			t.Errorf("event %d carries input %s with includeExecutionData false", ev.Id, aws.ToString(d.Input))
		}
		if d := ev.ExecutionStartedEventDetails; d != nil && d.Input != nil {
			t.Errorf("ExecutionStarted carries input with includeExecutionData false")
		}
	}

	// newest first, in pages
	rev, err := p.client.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn), ReverseOrder: true, MaxResults: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(rev.Events) != 3 || rev.Events[0].Id != int64(len(events)) || rev.NextToken == nil {
		t.Errorf("reverse page: %d events, first id %d, next %v", len(rev.Events), rev.Events[0].Id, rev.NextToken)
	}

	list, err := p.client.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(smARN), StatusFilter: types.ExecutionStatusSucceeded})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Executions) != 1 || aws.ToString(list.Executions[0].ExecutionArn) != arn {
		t.Errorf("ListExecutions: %+v", list.Executions)
	}
	sms, err := p.client.ListStateMachines(ctx, &sfn.ListStateMachinesInput{})
	if err != nil || len(sms.StateMachines) != 1 {
		t.Errorf("ListStateMachines: %v, %d machines", err, len(sms.StateMachines))
	}
	if _, err := p.client.DeleteStateMachine(ctx, &sfn.DeleteStateMachineInput{StateMachineArn: aws.String(smARN)}); err != nil {
		t.Fatal(err)
	}
	_, err = p.client.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(smARN)})
	var gone *types.StateMachineDoesNotExist
	if !errors.As(err, &gone) {
		t.Errorf("DescribeStateMachine after delete: %v", err)
	}
}

// TestCallbackOutcomes resolves a waitForTaskToken Task every way it can end.
func TestCallbackOutcomes(t *testing.T) {
	p := newPeer(t)
	ctx := context.Background()
	waiting := p.create(t, "Waiting", callbackDef(3600))
	short := p.create(t, "Short", callbackDef(1))
	tests := []struct {
		name    string
		machine string
		resolve func(tok string) error
		status  types.ExecutionStatus
		path    string
	}{
		{"success", waiting, func(tok string) error {
			_, err := p.client.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(tok), Output: aws.String(`{"approved":true}`)})
			return err
		}, types.ExecutionStatusSucceeded, "approved"},
		{"failure caught", waiting, func(tok string) error {
			_, err := p.client.SendTaskFailure(ctx, &sfn.SendTaskFailureInput{TaskToken: aws.String(tok), Error: aws.String("ConfirmationRejected"), Cause: aws.String("no")})
			return err
		}, types.ExecutionStatusSucceeded, "rejected"},
		{"timeout caught", short, func(string) error { return nil }, types.ExecutionStatusSucceeded, "late"},
		{"failure uncaught", waiting, func(tok string) error {
			_, err := p.client.SendTaskFailure(ctx, &sfn.SendTaskFailureInput{TaskToken: aws.String(tok), Error: aws.String("Other"), Cause: aws.String("why")})
			return err
		}, types.ExecutionStatusFailed, ""},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			arn := p.start(t, tt.machine, fmt.Sprintf("case-%d", i), `{}`)
			if err := tt.resolve(p.token(t)); err != nil {
				t.Fatalf("resolve: %v", err)
			}
			out := closed(t, p.client, arn)
			if out.Status != tt.status {
				t.Fatalf("status %s (%s), want %s", out.Status, aws.ToString(out.Cause), tt.status)
			}
			if tt.path == "" {
				if aws.ToString(out.Error) != "Other" || aws.ToString(out.Cause) != "why" {
					t.Errorf("error %s cause %s, want Other / why", aws.ToString(out.Error), aws.ToString(out.Cause))
				}
				return
			}
			var o struct{ Path string }
			json.Unmarshal([]byte(aws.ToString(out.Output)), &o)
			if o.Path != tt.path {
				t.Errorf("path %q, want %q (output %s)", o.Path, tt.path, aws.ToString(out.Output))
			}
		})
	}
}

func TestStopExecution(t *testing.T) {
	p := newPeer(t)
	ctx := context.Background()
	arn := p.start(t, p.create(t, "Stoppable", callbackDef(3600)), "stop-me", `{}`)
	tok := p.token(t)
	if _, err := p.client.StopExecution(ctx, &sfn.StopExecutionInput{ExecutionArn: aws.String(arn), Error: aws.String("Operator"), Cause: aws.String("not needed")}); err != nil {
		t.Fatal(err)
	}
	out := closed(t, p.client, arn)
	if out.Status != types.ExecutionStatusAborted || aws.ToString(out.Error) != "Operator" || aws.ToString(out.Cause) != "not needed" {
		t.Errorf("after stop: %s %s %s", out.Status, aws.ToString(out.Error), aws.ToString(out.Cause))
	}
	events := history(t, p.client, arn)
	last := events[len(events)-1]
	if last.Type != types.HistoryEventTypeExecutionAborted || last.ExecutionAbortedEventDetails == nil || aws.ToString(last.ExecutionAbortedEventDetails.Error) != "Operator" {
		t.Errorf("last event %s %+v", last.Type, last.ExecutionAbortedEventDetails)
	}
	_, err := p.client.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(tok), Output: aws.String(`{}`)})
	var timedOut *types.TaskTimedOut
	if !errors.As(err, &timedOut) {
		t.Errorf("token of a stopped execution: %v, want TaskTimedOut", err)
	}
}

func TestTestState(t *testing.T) {
	p := newPeer(t)
	tests := []struct {
		name, def, input string
		status           types.TestExecutionStatus
		output, next     string
		errName          string
	}{
		{"pass", `{"Type":"Pass","Result":{"x":1},"ResultPath":"$.r","Next":"After"}`, `{"a":1}`, types.TestExecutionStatusSucceeded, `{"a":1,"r":{"x":1}}`, "After", ""},
		{"choice", `{"Type":"Choice","Choices":[{"Variable":"$.n","NumericGreaterThan":1,"Next":"Big"}],"Default":"Small"}`, `{"n":2}`, types.TestExecutionStatusSucceeded, `{"n":2}`, "Big", ""},
		{"task", `{"Type":"Task","Resource":"${EchoFunctionArn}","End":true}`, `{"e":true}`, types.TestExecutionStatusSucceeded, `{"e":true}`, "", ""},
		{"caught", `{"Type":"Task","Resource":"${BoomFunctionArn}","Catch":[{"ErrorEquals":["BoomError"],"Next":"Fallback"}],"End":true}`, `{}`, types.TestExecutionStatusCaughtError, ``, "Fallback", "BoomError"},
		{"retriable", `{"Type":"Task","Resource":"${BoomFunctionArn}","Retry":[{"ErrorEquals":["States.ALL"]}],"End":true}`, `{}`, types.TestExecutionStatusRetriable, "", "", "BoomError"},
		{"failed", `{"Type":"Fail","Error":"Nope","Cause":"c"}`, `{}`, types.TestExecutionStatusFailed, "", "", "Nope"},
		// Longer than TestState's five minutes: answered at once, not waited on.
		{"wait past the limit", `{"Type":"Wait","Seconds":99999999,"End":true}`, `{}`, types.TestExecutionStatusFailed, "", "", "States.Timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := p.client.TestState(context.Background(), &sfn.TestStateInput{Definition: aws.String(tt.def), Input: aws.String(tt.input), RoleArn: aws.String(role)})
			if err != nil {
				t.Fatalf("TestState: %v", err)
			}
			if out.Status != tt.status || aws.ToString(out.NextState) != tt.next || aws.ToString(out.Error) != tt.errName {
				t.Errorf("got status %s next %q error %q, want %s %q %q", out.Status, aws.ToString(out.NextState), aws.ToString(out.Error), tt.status, tt.next, tt.errName)
			}
			if tt.output != "" && aws.ToString(out.Output) != tt.output {
				t.Errorf("output %s, want %s", aws.ToString(out.Output), tt.output)
			}
		})
	}
}

// TestErrors checks each refusal reaches the sfn client as the typed error
// the SDK decodes from the AWS error shape.
func TestErrors(t *testing.T) {
	p := newPeer(t)
	ctx := context.Background()
	smARN := p.create(t, "Echo", `{"StartAt":"E","States":{"E":{"Type":"Task","Resource":"${EchoFunctionArn}","End":true}}}`)
	missingExec := "arn:aws:states:us-east-1:000000000000:execution:Echo:nope"
	unknownToken := "v1." + strings.Repeat("A", 10) + "." + strings.Repeat("0", 32)
	goneToken := "v1." + base64.RawURLEncoding.EncodeToString([]byte(missingExec)) + "." + strings.Repeat("0", 32)
	tests := []struct {
		name string
		call func() error
		code string
		msg  string // a part of the message
	}{
		{"bad execution arn", func() error {
			_, err := p.client.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String("not-an-arn")})
			return err
		}, "InvalidArn", "not-an-arn"},
		{"machine arn as execution", func() error {
			_, err := p.client.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(smARN)})
			return err
		}, "InvalidArn", ""},
		{"missing execution", func() error {
			_, err := p.client.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(missingExec)})
			return err
		}, "ExecutionDoesNotExist", missingExec},
		{"missing machine", func() error {
			_, err := p.client.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smARN + "X")})
			return err
		}, "StateMachineDoesNotExist", smARN + "X"},
		{"invalid definition", func() error {
			_, err := p.client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("Bad"), RoleArn: aws.String(role),
				Definition: aws.String(`{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"Nowhere"}}}`)})
			return err
		}, "InvalidDefinition", "Nowhere"},
		{"role not an ARN", func() error {
			_, err := p.client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("NoRole"), RoleArn: aws.String("notanarn"),
				Definition: aws.String(`{"StartAt":"A","States":{"A":{"Type":"Pass","End":true}}}`)})
			return err
		}, "InvalidArn", "notanarn"},
		{"test-state role not an ARN", func() error {
			_, err := p.client.TestState(ctx, &sfn.TestStateInput{RoleArn: aws.String("notanarn"), Definition: aws.String(`{"Type":"Pass","End":true}`)})
			return err
		}, "InvalidArn", "notanarn"},
		{"stop with an over-long error", func() error {
			_, err := p.client.StopExecution(ctx, &sfn.StopExecutionInput{ExecutionArn: aws.String(strings.Replace(smARN, ":stateMachine:", ":execution:", 1) + ":x"),
				Error: aws.String(strings.Repeat("E", 257))})
			return err
		}, "ValidationException", "'error'"},
		{"test-state of a callback task", func() error { // nothing could answer its token: refused at once, not waited on
			_, err := p.client.TestState(ctx, &sfn.TestStateInput{RoleArn: aws.String(role), Definition: aws.String(
				`{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken","Parameters":{"FunctionName":"NotifyFunction","Payload":{"token.$":"$$.Task.Token"}},"End":true}`)})
			return err
		}, "ValidationException", ".waitForTaskToken"},
		{"unbound task", func() error {
			_, err := p.client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("Unbound"), RoleArn: aws.String(role),
				Definition: aws.String(`{"StartAt":"Call","States":{"Call":{"Type":"Task","Resource":"${NoSuchFunctionArn}","End":true}}}`)})
			return err
		}, "InvalidDefinition", `state "Call"`},
		{"bad name", func() error {
			_, err := p.client.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smARN), Name: aws.String("a b")})
			return err
		}, "InvalidName", ""},
		{"input not JSON", func() error {
			_, err := p.client.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smARN), Input: aws.String("{")})
			return err
		}, "InvalidExecutionInput", ""},
		{"input number out of range", func() error {
			_, err := p.client.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smARN), Input: aws.String(`{"a":1e400}`)})
			return err
		}, "InvalidExecutionInput", "1e400 is beyond the range of a double"},
		{"definition number out of range", func() error {
			_, err := p.client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("Inf"), RoleArn: aws.String(role),
				Definition: aws.String(`{"StartAt":"A","States":{"A":{"Type":"Pass","Result":{"v":-1e999},"End":true}}}`)})
			return err
		}, "InvalidDefinition", "beyond the range"},
		{"oversized input", func() error {
			big := `{"x":"` + strings.Repeat("a", asl.MaxPayloadBytes) + `"}`
			_, err := p.client.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smARN), Input: aws.String(big)})
			return err
		}, "ValidationException", "262144"},
		{"malformed token", func() error {
			_, err := p.client.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String("garbage"), Output: aws.String("{}")})
			return err
		}, "InvalidToken", ""},
		{"unknown token", func() error {
			_, err := p.client.SendTaskFailure(ctx, &sfn.SendTaskFailureInput{TaskToken: aws.String(unknownToken)})
			return err
		}, "InvalidToken", ""},
		{"token of no execution", func() error {
			_, err := p.client.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(goneToken), Output: aws.String("{}")})
			return err
		}, "TaskDoesNotExist", ""},
		{"bad page token", func() error {
			_, err := p.client.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(smARN), NextToken: aws.String("zzz")})
			return err
		}, "InvalidToken", "zzz"},
		{"page too large", func() error {
			_, err := p.client.ListStateMachines(ctx, &sfn.ListStateMachinesInput{MaxResults: 5000})
			return err
		}, "ValidationException", "maxResults"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			var ae smithy.APIError
			if !errors.As(err, &ae) {
				t.Fatalf("got %v, want API error %s", err, tt.code)
			}
			if ae.ErrorCode() != tt.code || !strings.Contains(ae.ErrorMessage(), tt.msg) {
				t.Errorf("got %s %q, want %s containing %q", ae.ErrorCode(), ae.ErrorMessage(), tt.code, tt.msg)
			}
		})
	}
}

// TestRawProtocol sends what no SDK would: the server answers each with an
// AWS-shaped error and keeps serving.
func TestRawProtocol(t *testing.T) {
	p := newPeer(t)
	tests := []struct {
		name, target, body string
		status             int
		code               string
	}{
		{"malformed JSON", "AWSStepFunctions.ListStateMachines", `{"maxResults":`, 400, "SerializationException"},
		{"wrong field type", "AWSStepFunctions.DescribeExecution", `{"executionArn":7}`, 400, "SerializationException"},
		{"unknown operation", "AWSStepFunctions.DoSomething", `{}`, 400, "UnknownOperationException"},
		{"no target", "", `{}`, 400, "UnknownOperationException"},
		{"other service", "DynamoDB_20120810.ListTables", `{}`, 400, "UnknownOperationException"},
		{"missing field", "AWSStepFunctions.DescribeExecution", `{}`, 400, "ValidationException"},
		{"test state over raw protocol", "AWSStepFunctions.TestState", `{"definition":"{\"Type\":\"Pass\",\"End\":true}","input":"{\"a\":1}"}`, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := p.post(t, tt.target, tt.body)
			if status != tt.status {
				t.Errorf("HTTP %d, want %d (%v)", status, tt.status, body)
			}
			if tt.code != "" && (body["__type"] != tt.code || body["message"] == "") {
				t.Errorf("body %v, want __type %s and a message", body, tt.code)
			}
			if tt.code == "" && body["status"] != "SUCCEEDED" {
				t.Errorf("body %v, want status SUCCEEDED", body)
			}
		})
	}
	if _, err := p.client.ListStateMachines(context.Background(), &sfn.ListStateMachinesInput{}); err != nil {
		t.Errorf("the server stopped serving after bad requests: %v", err)
	}
}

// post sends body as the operation target (none when "") and returns the
// HTTP status and the decoded JSON answer.
func (p *peer) post(t *testing.T, target, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, p.url+"/", strings.NewReader(body))
	req.Header.Set("Content-Type", sfnapi.ContentType)
	if target != "" {
		req.Header.Set("X-Amz-Target", target)
	}
	apitest.Sign(t, req, []byte(body), p.srv.Operator(t), "states")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("response is not JSON: %v", err)
	}
	return resp.StatusCode, out
}

// TestNamesAreValidUTF8: a name whose JSON holds invalid UTF-8 bytes, or
// an escaped surrogate with no partner, is InvalidName, as Step Functions
// answers, not a name repaired with U+FFFD; a name spelling any character
// validly, escaped or not, is taken.
func TestNamesAreValidUTF8(t *testing.T) {
	p := newPeer(t)
	smARN := p.create(t, "Echo", `{"StartAt":"E","States":{"E":{"Type":"Task","Resource":"${EchoFunctionArn}","End":true}}}`)
	tests := []struct {
		name, field string // field: the JSON string's body, as sent
		valid       bool
	}{
		{"invalid byte", "r-\xff", false},
		{"truncated sequence", "r-\xe2\x82", false},
		{"lone high surrogate", `r-\ud800x`, false},
		{"lone low surrogate", `r-\udc00`, false},
		{"high surrogate before another escape", `r-\ud83d\u0041`, false},
		{"accented", "r-acción", true},
		{"escaped pair", `r-\ud83d\ude00`, true},
		{"escaped replacement character", `r-\ufffd`, true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			field := tt.field + "-" + fmt.Sprint(i) // a name of its own
			for _, op := range []struct{ target, body string }{
				{"AWSStepFunctions.StartExecution", `{"stateMachineArn":"` + smARN + `","name":"` + field + `"}`},
				{"AWSStepFunctions.CreateStateMachine", `{"name":"` + field + `","roleArn":"` + role + `","definition":"{\"StartAt\":\"P\",\"States\":{\"P\":{\"Type\":\"Pass\",\"End\":true}}}"}`},
			} {
				status, body := p.post(t, op.target, op.body)
				switch {
				case tt.valid && status != http.StatusOK:
					t.Errorf("%s: HTTP %d %v, want 200", op.target, status, body)
				case !tt.valid && (status != http.StatusBadRequest || body["__type"] != "InvalidName"):
					t.Errorf("%s: HTTP %d %v, want 400 InvalidName", op.target, status, body)
				}
			}
		})
	}
}

// A JSONata evaluation failure reaches GetExecutionHistory as AWS shapes it:
// an EvaluationFailed event with the state, the field and the cause.
func TestEvaluationFailedInTheHistory(t *testing.T) {
	p := newPeer(t)
	def := `{"QueryLanguage":"JSONata","StartAt":"P","States":{"P":{"Type":"Pass","Output":{"error":"{% $nothing %}"},"End":true}}}`
	arn := p.start(t, p.create(t, "Evaluates", def), "eval-1", `{"tenant":"acme"}`)
	if out := closed(t, p.client, arn); out.Status != types.ExecutionStatusFailed || aws.ToString(out.Error) != "States.QueryEvaluationError" {
		t.Fatalf("status %s %s", out.Status, aws.ToString(out.Error))
	}
	for _, ev := range history(t, p.client, arn) {
		if ev.Type != types.HistoryEventTypeEvaluationFailed {
			continue
		}
		d := ev.EvaluationFailedEventDetails
		if d == nil || aws.ToString(d.State) != "P" || aws.ToString(d.Location) != "Output/error" ||
			aws.ToString(d.Error) != "States.QueryEvaluationError" || !strings.Contains(aws.ToString(d.Cause), "(entered at the event id #2)") {
			t.Errorf("EvaluationFailed details %+v", d)
		}
		return
	}
	t.Error("no EvaluationFailed event in the history")
}

// TestUpdateStateMachine: update-state-machine replaces the definition
// (and role) for the executions started after it, while one already
// waiting goes on with the definition it started with; the update survives
// a restart, and every bad request is refused by name.
func TestUpdateStateMachine(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := peerOn(t, dir)
	tokens := p.tokens
	smARN := p.create(t, "Evolving", callbackDef(3600))
	waiting := p.start(t, smARN, "before", `{}`)
	tok := p.token(t)

	echo := `{"StartAt":"E","States":{"E":{"Type":"Task","Resource":"${EchoFunctionArn}","End":true}}}`
	newRole := "arn:aws:iam::000000000000:role/updated"
	if _, err := p.client.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: aws.String(smARN),
		Definition: aws.String(echo), RoleArn: aws.String(newRole)}); err != nil {
		t.Fatalf("UpdateStateMachine: %v", err)
	}
	if out := closed(t, p.client, p.start(t, smARN, "after", `{"v":1}`)); out.Status != types.ExecutionStatusSucceeded || aws.ToString(out.Output) != `{"v":1}` {
		t.Errorf("an execution started after the update: %s %s, want the new definition's echo", out.Status, aws.ToString(out.Output))
	}
	if _, err := p.client.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(tok), Output: aws.String(`{"approved":true}`)}); err != nil {
		t.Fatalf("the execution started before the update lost its task: %v", err)
	}
	if out := closed(t, p.client, waiting); !strings.Contains(aws.ToString(out.Output), `"approved":true`) {
		t.Errorf("the execution started before the update: %s %s", out.Status, aws.ToString(out.Output))
	}

	for _, tt := range []struct {
		name string
		in   *sfn.UpdateStateMachineInput
		code string
	}{
		{"nothing to update", &sfn.UpdateStateMachineInput{StateMachineArn: aws.String(smARN)}, "MissingRequiredParameter"},
		{"bad definition", &sfn.UpdateStateMachineInput{StateMachineArn: aws.String(smARN), Definition: aws.String(`{"StartAt":"X","States":{}}`)}, "InvalidDefinition"},
		{"bad role", &sfn.UpdateStateMachineInput{StateMachineArn: aws.String(smARN), RoleArn: aws.String("role")}, "InvalidArn"},
		{"missing machine", &sfn.UpdateStateMachineInput{StateMachineArn: aws.String(strings.Replace(smARN, "Evolving", "Nope", 1)), Definition: aws.String(echo)}, "StateMachineDoesNotExist"},
	} {
		_, err := p.client.UpdateStateMachine(ctx, tt.in)
		var ae smithy.APIError
		if !errors.As(err, &ae) || ae.ErrorCode() != tt.code {
			t.Errorf("%s: %v, want %s", tt.name, err, tt.code)
		}
	}

	p.close()
	mgr, err := control.Open(ctx, control.Config{Dir: dir, Registry: registry(tokens)})
	if err != nil {
		t.Fatal(err)
	}
	defer mgr.Close()
	d, err := mgr.DescribeStateMachine(ctx, smARN)
	if err != nil || d.Definition != echo || d.RoleARN != newRole {
		t.Errorf("after a restart: %+v, %v; want the updated definition and role", d, err)
	}
	if _, err := mgr.RegisterStateMachine("FromTemplate", echo); err != nil {
		t.Fatal(err)
	}
	var ce *control.Error
	if _, err := mgr.UpdateStateMachine(ctx, control.StateMachineARN("FromTemplate"), callbackDef(1), ""); !errors.As(err, &ce) || !strings.Contains(ce.Message, "template") {
		t.Errorf("updating a template's machine: %v, want a refusal naming the template", err)
	}
}
