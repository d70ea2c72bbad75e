package sfnapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/asl/asltest"
	"github.com/veredicto/veredicto/internal/control"
	"github.com/veredicto/veredicto/internal/poll"
	"github.com/veredicto/veredicto/internal/sfnapi"
)

// logLine is a line of an execution log, as CloudWatch Logs holds it.
type logLine struct {
	ID, Type, PreviousEventID, ExecutionARN, RedriveCount, Timestamp string
	Details                                                          map[string]any
}

func (l *logLine) UnmarshalJSON(b []byte) error {
	var raw struct {
		ID           string         `json:"id"`
		Type         string         `json:"type"`
		Details      map[string]any `json:"details"`
		Previous     string         `json:"previous_event_id"`
		Timestamp    string         `json:"event_timestamp"`
		ExecutionARN string         `json:"execution_arn"`
		RedriveCount string         `json:"redrive_count"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*l = logLine{ID: raw.ID, Type: raw.Type, PreviousEventID: raw.Previous, ExecutionARN: raw.ExecutionARN, RedriveCount: raw.RedriveCount,
		Timestamp: raw.Timestamp, Details: raw.Details}
	return nil
}

// readLog reads a log file's lines (none when it does not exist).
func readLog(t *testing.T, path string) []logLine {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []logLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l logLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		out = append(out, l)
	}
	return out
}

func logTypes(lines []logLine, arn string) string {
	var out []string
	for _, l := range lines {
		if arn == "" || l.ExecutionARN == arn {
			out = append(out, l.Type)
		}
	}
	return strings.Join(out, " ")
}

// logs is a log destination: the value AWS requires, whatever it names.
func logs(level types.LogLevel, data bool) *types.LoggingConfiguration {
	return &types.LoggingConfiguration{Level: level, IncludeExecutionData: data, Destinations: []types.LogDestination{{
		CloudWatchLogsLogGroup: &types.CloudWatchLogsLogGroup{LogGroupArn: aws.String("arn:aws:logs:us-east-1:000000000000:log-group:/aws/vendedlogs/states/x:*")}}}}
}

// TestExpress: an Express machine runs as Step Functions runs one.
// StartSyncExecution answers with the outcome; StartExecution with an
// :express: ARN that no operation on one execution takes, and
// ListExecutions refuses the machine; what ran is in the machine's log, as
// its loggingConfiguration says.
func TestExpress(t *testing.T) {
	ctx := context.Background()
	logDir := t.TempDir()
	p := newPeerWith(t, control.Config{ExecutionLog: sfnapi.NewLogs(logDir, 0, nil).Write})
	c := p.client
	echo := `{"StartAt":"Prepare","States":{"Prepare":{"Type":"Pass","Result":"ready","ResultPath":"$.prepared","Next":"Echo"},
	  "Echo":{"Type":"Task","Resource":"${EchoFunctionArn}","End":true}}}`
	boom := `{"StartAt":"Boom","States":{"Boom":{"Type":"Task","Resource":"${BoomFunctionArn}","End":true}}}`
	create := func(name, def string, lc *types.LoggingConfiguration) string {
		t.Helper()
		out, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String(name), Definition: aws.String(def), RoleArn: aws.String(role),
			Type: types.StateMachineTypeExpress, LoggingConfiguration: lc})
		if err != nil {
			t.Fatalf("CreateStateMachine %s: %v", name, err)
		}
		return aws.ToString(out.StateMachineArn)
	}
	fast := create("Fast", echo, logs(types.LogLevelAll, true))

	out, err := c.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{StateMachineArn: aws.String(fast), Name: aws.String("s1"), Input: aws.String(`{"tenant":"acme","k":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	arn := aws.ToString(out.ExecutionArn)
	if !strings.HasPrefix(arn, "arn:aws:states:us-east-1:000000000000:express:Fast:s1:") || len(strings.Split(arn, ":")) != 9 {
		t.Errorf("express execution ARN %s", arn)
	}
	if out.Status != types.SyncExecutionStatusSucceeded || aws.ToString(out.Output) != `{"k":1,"prepared":"ready","tenant":"acme"}` ||
		aws.ToString(out.Name) != "s1" || aws.ToString(out.StateMachineArn) != fast || out.StopDate.Before(*out.StartDate) ||
		out.BillingDetails == nil || out.BillingDetails.BilledDurationInMilliseconds < 100 || out.BillingDetails.BilledMemoryUsedInMB != 64 {
		t.Errorf("StartSyncExecution: %s %s, name %s, billing %+v", out.Status, aws.ToString(out.Output), aws.ToString(out.Name), out.BillingDetails)
	}
	path := sfnapi.LogPath(logDir, "acme", "Fast")
	lines := readLog(t, path)
	if got, want := logTypes(lines, arn), "ExecutionStarted PassStateEntered PassStateExited TaskStateEntered LambdaFunctionScheduled LambdaFunctionStarted LambdaFunctionSucceeded TaskStateExited ExecutionSucceeded"; got != want {
		t.Errorf("the log of %s:\n got %s\nwant %s", arn, got, want)
	}
	for i, l := range lines {
		if l.ID != strconv.Itoa(i+1) || l.RedriveCount != "0" || l.Timestamp == "" || l.ExecutionARN != arn {
			t.Errorf("log line %d: %+v", i+1, l)
		}
	}
	if d := lines[0].Details; d["roleArn"] != role || !sameJSON(fmt.Sprint(d["input"]), `{"tenant":"acme","k":1}`) {
		t.Errorf("ExecutionStarted details %v, want the role and the input", d)
	}

	failing := create("Failing", boom, logs(types.LogLevelError, false))
	out, err = c.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{StateMachineArn: aws.String(failing), Input: aws.String(`{"tenant":"acme"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != types.SyncExecutionStatusFailed || aws.ToString(out.Error) != "BoomError" || out.Output != nil {
		t.Errorf("a failing Express execution: %s %s %s output %v", out.Status, aws.ToString(out.Error), aws.ToString(out.Cause), out.Output)
	}
	failed := readLog(t, sfnapi.LogPath(logDir, "acme", "Failing"))
	if got := logTypes(failed, ""); got != "LambdaFunctionFailed ExecutionFailed" {
		t.Errorf("an ERROR log: %s, want the failures only", got)
	}
	for _, l := range failed {
		if _, ok := l.Details["input"]; ok {
			t.Errorf("a log without execution data holds input: %v", l.Details)
		}
	}

	// StartExecution runs it apart; no operation on one execution takes it.
	started, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(fast), Name: aws.String("a1"), Input: aws.String(`{"tenant":"acme"}`)})
	if err != nil {
		t.Fatal(err)
	}
	async := aws.ToString(started.ExecutionArn)
	if !strings.Contains(async, ":express:Fast:a1:") {
		t.Errorf("StartExecution of an Express machine: %s", async)
	}
	poll.Until(t, 10*time.Second, func() bool {
		return strings.HasSuffix(logTypes(readLog(t, path), async), "ExecutionSucceeded")
	}, "the asynchronous Express execution's end in its log")
	const express = "Invalid Arn: 'Resource type not valid in this context: express'"
	_, err = c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(async)})
	wantCode(t, "DescribeExecution of an Express execution", err, "InvalidArn", express)
	_, err = c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(async)})
	wantCode(t, "GetExecutionHistory of an Express execution", err, "InvalidArn", express)
	_, err = c.StopExecution(ctx, &sfn.StopExecutionInput{ExecutionArn: aws.String(async)})
	wantCode(t, "StopExecution of an Express execution", err, "InvalidArn", express)
	_, err = c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(fast)})
	wantCode(t, "ListExecutions of an Express machine", err, "StateMachineTypeNotSupported", "This operation is not supported by this type of state machine")

	// StartSyncExecution is for Express machines only.
	standard := p.create(t, "Standard", echo)
	_, err = c.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{StateMachineArn: aws.String(standard)})
	wantCode(t, "StartSyncExecution of a Standard machine", err, "StateMachineTypeNotSupported", "This operation is not supported by this type of state machine")

	// What an Express machine may not hold, refused as Step Functions refuses it.
	for _, tt := range []struct{ name, def, msg string }{
		{"callback", callbackDef(60), "Express state machine does not support '.waitForTaskToken' service integration  at /States/Ask/Resource"},
		{"sync", `{"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[{"StartAt":"Run","States":{"Run":{"Type":"Task",
			"Resource":"arn:aws:states:::states:startExecution.sync:2","Parameters":{"StateMachineArn":"x"},"End":true}}}]}}}`,
			"Express state machine does not support '.sync' service integration at /States/P/Branches/0/States/Run/Resource"},
	} {
		_, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("Bad" + tt.name), Definition: aws.String(tt.def), RoleArn: aws.String(role),
			Type: types.StateMachineTypeExpress})
		wantCode(t, "an Express machine with a "+tt.name+" Task", err, "InvalidDefinition", "Invalid State Machine Definition: 'SCHEMA_VALIDATION_FAILED: "+tt.msg+"'")
	}
	_, err = c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("NoDestination"), Definition: aws.String(echo), RoleArn: aws.String(role),
		Type: types.StateMachineTypeExpress, LoggingConfiguration: &types.LoggingConfiguration{Level: types.LogLevelAll}})
	wantCode(t, "logging without a destination", err, "InvalidLoggingConfiguration", "Invalid Logging Configuration: Must specify exactly one Log Destination.")

	// A tenant's key runs its own, logged under its tenant.
	bravo := p.srv.SFN(p.srv.Tenant(t, "bravo"))
	if out, err := bravo.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{StateMachineArn: aws.String(fast), Input: aws.String(`{}`)}); err != nil ||
		aws.ToString(out.Output) != `{"prepared":"ready","tenant":"bravo"}` {
		t.Errorf("a tenant's synchronous start: %v %v", out, err)
	}
	if _, err := bravo.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{StateMachineArn: aws.String(fast), Input: aws.String(`{"tenant":"acme"}`)}); code(err) != control.CodeInvalidExecutionInput {
		t.Errorf("bravo starts with acme's input: %v", err)
	}
	if got := logTypes(readLog(t, sfnapi.LogPath(logDir, "bravo", "Fast")), ""); !strings.HasSuffix(got, "ExecutionSucceeded") {
		t.Errorf("bravo's log of Fast: %s", got)
	}

	// Logging turned off by an update: nothing more is logged.
	if _, err := c.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: aws.String(fast), LoggingConfiguration: &types.LoggingConfiguration{Level: types.LogLevelOff}}); err != nil {
		t.Fatal(err)
	}
	before := len(readLog(t, path))
	if _, err := c.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{StateMachineArn: aws.String(fast), Input: aws.String(`{"tenant":"acme"}`)}); err != nil {
		t.Fatal(err)
	}
	if after := len(readLog(t, path)); after != before {
		t.Errorf("logging OFF: the log grew from %d to %d lines", before, after)
	}
}

func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// eventOf is a history event numbered id.
func eventOf(id int) asl.Event {
	return asl.Event{ID: id, Type: "PassStateEntered", State: "S", Timestamp: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Input: map[string]any{"i": id}}
}

// TestExpressLastsFiveMinutes: an Express execution still running five
// minutes after its start is TIMED_OUT, whatever its definition says. The
// engine runs on a clock the test moves.
func TestExpressLastsFiveMinutes(t *testing.T) {
	clock := asltest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	p := newPeerWith(t, control.Config{Clock: clock})
	ctx := context.Background()
	out, err := p.client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("Slow"), RoleArn: aws.String(role), Type: types.StateMachineTypeExpress,
		Definition: aws.String(`{"TimeoutSeconds":3600,"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":600,"End":true}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *sfn.StartSyncExecutionOutput, 1)
	go func() {
		res, err := p.client.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{StateMachineArn: out.StateMachineArn})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	limit := clock.Now().Add(control.MaxExpressDuration)
	poll.Until(t, 10*time.Second, func() bool {
		ps := clock.Pending()
		return len(ps) == 2 && ps[0].Equal(limit)
	}, "the five-minute limit's timer")
	clock.Advance(control.MaxExpressDuration)
	select {
	case res := <-done:
		if res == nil || res.Status != types.SyncExecutionStatusTimedOut || aws.ToString(res.Error) != "States.Timeout" {
			t.Errorf("an Express execution past five minutes: %+v", res)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("StartSyncExecution did not answer once five minutes had passed")
	}
}

// TestLogsAreBounded: a log that would pass its limit is rotated, so a
// machine's logs never take more than twice the limit.
func TestLogsAreBounded(t *testing.T) {
	dir := t.TempDir()
	const limit = 2000
	l := sfnapi.NewLogs(dir, limit, nil)
	for i := range 100 {
		l.Write(control.LogEvent{Tenant: "../escape", StateMachineName: "M", ExecutionARN: "arn", Logging: control.LoggingConfiguration{Level: control.LogAll},
			Event: control.HistoryEvent{Event: eventOf(i + 1)}})
	}
	path := sfnapi.LogPath(dir, "../escape", "M")
	if rel, err := filepath.Rel(dir, path); err != nil || strings.HasPrefix(rel, "..") {
		t.Fatalf("a tenant named ../escape logs to %s, outside %s", path, dir)
	}
	total := 0
	for _, f := range []string{path, path + ".1"} {
		info, err := os.Stat(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if info.Size() > limit {
			t.Errorf("%s holds %d bytes, over the %d-byte limit", f, info.Size(), limit)
		}
		total += len(readLog(t, f))
	}
	if last := readLog(t, path); len(last) == 0 || last[len(last)-1].ID != "100" {
		t.Errorf("the current log does not end with the last event: %+v", last)
	}
	if total >= 100 {
		t.Errorf("%d lines kept of 100: the log was not rotated", total)
	}
}

// TestStandardLogs: a Standard machine that logs writes its history to
// the same log, each event once, and the events after a redrive say so.
func TestStandardLogs(t *testing.T) {
	ctx := context.Background()
	logDir := t.TempDir()
	p, _ := redrivePeerWith(t, control.Config{ExecutionLog: sfnapi.NewLogs(logDir, 0, nil).Write})
	out, err := p.client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("Logged"), RoleArn: aws.String(role),
		LoggingConfiguration: logs(types.LogLevelAll, false),
		Definition:           aws.String(`{"StartAt":"Flaky","States":{"Flaky":{"Type":"Task","Resource":"${FlakyFunctionArn}","End":true}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	arn := p.start(t, aws.ToString(out.StateMachineArn), "l1", `{"tenant":"acme"}`)
	closed(t, p.client, arn)
	if _, err := redriveOf(t, p.client, arn, ""); err != nil {
		t.Fatal(err)
	}
	if x := closed(t, p.client, arn); x.Status != types.ExecutionStatusSucceeded {
		t.Fatalf("the redriven execution: %s", x.Status)
	}
	lines := readLog(t, sfnapi.LogPath(logDir, "acme", "Logged"))
	if got, want := logTypes(lines, arn), eventTypes(history(t, p.client, arn)); got != want {
		t.Errorf("the log of a Standard execution:\n got %s\nwant %s (its history)", got, want)
	}
	want := "0"
	for _, l := range lines {
		if l.Type == "ExecutionRedriven" {
			want = "1"
		}
		if l.RedriveCount != want {
			t.Errorf("log line %s %s: redrive_count %s, want %s", l.ID, l.Type, l.RedriveCount, want)
		}
	}
}
