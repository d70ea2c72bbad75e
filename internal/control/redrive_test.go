package control

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/asl"
)

// GateError is what GateFunction fails with the first time.
type GateError struct{}

func (*GateError) Error() string { return "closed" }

// redrivable counts in Check, fails once in Gate, then waits for a token
// in Ask.
const redrivable = `{"StartAt":"Check","States":{
  "Check":{"Type":"Task","Resource":"${CountFunctionArn}","ResultPath":"$.count","Next":"Gate"},
  "Gate":{"Type":"Task","Resource":"${GateFunctionArn}","ResultPath":"$.gate","Next":"Ask"},
  "Ask":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken",
         "Parameters":{"FunctionName":"NotifyFunction","Payload":{"token.$":"$$.Task.Token"}},"ResultPath":"$.answer","Next":"Done"},
  "Done":{"Type":"Pass","End":true}}}`

// gated is a fixture whose GateFunction fails its first call.
func gated() (*fixture, *atomic.Int32) {
	f := newFixture()
	var gate atomic.Int32
	f.reg.Register("GateFunction", func(context.Context, json.RawMessage) (json.RawMessage, error) {
		if gate.Add(1) == 1 {
			return nil, &GateError{}
		}
		return json.RawMessage(`"open"`), nil
	})
	return f, &gate
}

// historyOf is an execution's whole history.
func historyOf(t *testing.T, m *Manager, arn string) []HistoryEvent {
	t.Helper()
	events, _, err := m.History(context.Background(), arn, "", 1000, false)
	if err != nil {
		t.Fatal(err)
	}
	return events
}

// eachOnce fails t unless the history numbers its events in order, holds
// want events of type typ, and OnHistory saw each event once.
func eachOnce(t *testing.T, f *fixture, events []HistoryEvent, typ string, want int) {
	t.Helper()
	n := 0
	for i, ev := range events {
		if ev.ID != i+1 {
			t.Errorf("event %d has id %d", i+1, ev.ID)
		}
		if ev.Type == typ {
			n++
		}
	}
	f.mu.Lock()
	seen := len(f.events)
	f.mu.Unlock()
	if n != want || seen != len(events) {
		t.Errorf("%d %s events, OnHistory saw %d of %d events: want %d, each event once", n, typ, seen, len(events), want)
	}
}

// TestRedriveIsDurable: an execution that failed before a restart is
// redriven after it; the redriven run, stopped by another restart while it
// waits for a task token, resumes where it was: the token still answers,
// no Task that completed runs again, and the redrive is recorded once. A
// clientToken still names its redrive after the restarts.
func TestRedriveIsDurable(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	f, gate := gated()
	m := f.open(t, dir)
	x := f.start(t, m, "Gated", redrivable, "g1")
	if got := waitClosed(t, m, x.ARN); got.Status != asl.StatusFailed || got.Error != "GateError" || got.Redrive.Status != Redrivable {
		t.Fatalf("the first run: %s %s, redrive %+v", got.Status, got.Error, got.Redrive)
	}
	m.Close()

	m = f.open(t, dir)
	at, err := m.RedriveExecution(ctx, x.ARN, "once")
	if err != nil {
		t.Fatal(err)
	}
	tok := f.token(t)
	m.Close()

	m = f.open(t, dir)
	defer m.Close()
	if got, err := m.DescribeExecution(ctx, x.ARN); err != nil || got.Status != asl.StatusRunning || got.Redrive.Count != 1 || !got.Redrive.Date.Equal(at) {
		t.Fatalf("after a restart mid-redrive: %+v %v", got, err)
	}
	if err := m.SendTaskSuccess(ctx, tok, `{"ok":true}`); err != nil {
		t.Fatalf("the redriven Task's token after a restart: %v", err)
	}
	got := waitClosed(t, m, x.ARN)
	if got.Status != asl.StatusSucceeded || !strings.Contains(string(got.Output), `"count":1`) || !strings.Contains(string(got.Output), `"gate":"open"`) {
		t.Fatalf("the redriven execution: %s %s (%s)", got.Status, got.Output, got.Cause)
	}
	if c, g := f.counted.Load(), gate.Load(); c != 1 || g != 2 {
		t.Errorf("Check ran %d times and Gate %d, want once and twice", c, g)
	}
	eachOnce(t, f, historyOf(t, m, x.ARN), "ExecutionRedriven", 1)
	if again, err := m.RedriveExecution(ctx, x.ARN, "once"); err != nil || !again.Equal(at) {
		t.Errorf("the redrive's clientToken after the restarts: %v %v, want %v", again, err, at)
	}
}

// TestRedriveRecordedBeforeItsEvent: a redrive whose ExecutionRedriven
// event could not be written (a full disk) is RUNNING, as its metadata
// says; the next start writes the event, once, and runs it.
func TestRedriveRecordedBeforeItsEvent(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	f, gate := gated()
	var d fullDisk
	f.disk = d.disk()
	m := f.open(t, dir)
	x := f.start(t, m, "Gated", redrivable, "g1")
	waitClosed(t, m, x.ARN)
	d.set(func(_ string, l *line) bool { return l != nil && l.Event != nil && l.Event.Type == "ExecutionRedriven" })
	if _, err := m.RedriveExecution(ctx, x.ARN, ""); err != nil {
		t.Fatal(err)
	}
	if got := waitStalled(t, m, x.ARN); got.Status != asl.StatusRunning || !strings.Contains(got.Cause, "no space left on device") {
		t.Fatalf("a redrive whose event was not written: %s %q", got.Status, got.Cause)
	}
	if g := gate.Load(); g != 1 {
		t.Errorf("Gate ran %d times before the redrive was in the history, want once", g)
	}
	m.Close()

	f.disk = disk{}
	m = f.open(t, dir)
	defer m.Close()
	tok := f.token(t)
	if err := m.SendTaskSuccess(ctx, tok, `{}`); err != nil {
		t.Fatal(err)
	}
	if got := waitClosed(t, m, x.ARN); got.Status != asl.StatusSucceeded || got.Redrive.Count != 1 {
		t.Fatalf("after the restart: %s, redrive %+v", got.Status, got.Redrive)
	}
	eachOnce(t, f, historyOf(t, m, x.ARN), "ExecutionRedriven", 1)
}

// TestOldRecordsLoad: a data folder written before versions, Express
// machines and redrives (no revision, version number, logging or redrive
// fields) loads as it did; its failed execution is redrivable, and its
// machine takes versions.
func TestOldRecordsLoad(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	def, _ := json.Marshal(redrivable)
	write := func(path, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	arn := ExecutionARN("Old", "o1")
	write(filepath.Join(dir, "statemachines", "Old.json"), `{"stateMachineArn":"`+StateMachineARN("Old")+`","name":"Old","definition":`+string(def)+
		`,"roleArn":"arn:aws:iam::000000000000:role/r","type":"STANDARD","creationDate":"2026-11-20T10:00:00Z"}`)
	write(filepath.Join(dir, "executions", "Old", "o1", "meta.json"), `{"executionArn":"`+arn+`","stateMachineArn":"`+StateMachineARN("Old")+
		`","name":"o1","tenant":"acme","status":"FAILED","definition":`+string(def)+`,"input":{"tenant":"acme"},"error":"GateError",`+
		`"startDate":"2026-11-20T10:00:00Z","stopDate":"2026-11-20T10:00:01Z"}`)
	write(filepath.Join(dir, "executions", "Old", "o1", "history.jsonl"), strings.Join([]string{
		`{"event":{"id":1,"timestamp":"2026-11-20T10:00:00Z","type":"ExecutionStarted","input":{"tenant":"acme"}}}`,
		`{"event":{"id":2,"timestamp":"2026-11-20T10:00:00Z","type":"TaskStateEntered","state":"Check","input":{"tenant":"acme"}},"prev":1}`,
		`{"event":{"id":3,"timestamp":"2026-11-20T10:00:00Z","type":"TaskScheduled","state":"Check","resource":"${CountFunctionArn}","input":{"tenant":"acme"}},"prev":2}`,
		`{"event":{"id":4,"timestamp":"2026-11-20T10:00:00Z","type":"TaskStarted","state":"Check"},"prev":3}`,
		`{"event":{"id":5,"timestamp":"2026-11-20T10:00:00Z","type":"TaskSucceeded","state":"Check","output":7},"prev":4}`,
		`{"event":{"id":6,"timestamp":"2026-11-20T10:00:00Z","type":"TaskStateExited","state":"Check","output":{"count":7,"tenant":"acme"}},"prev":5}`,
		`{"event":{"id":7,"timestamp":"2026-11-20T10:00:00Z","type":"TaskStateEntered","state":"Gate","input":{"count":7,"tenant":"acme"}},"prev":6}`,
		`{"event":{"id":8,"timestamp":"2026-11-20T10:00:00Z","type":"TaskScheduled","state":"Gate","resource":"${GateFunctionArn}","input":{"count":7,"tenant":"acme"}},"prev":7}`,
		`{"event":{"id":9,"timestamp":"2026-11-20T10:00:00Z","type":"TaskStarted","state":"Gate"},"prev":8}`,
		`{"event":{"id":10,"timestamp":"2026-11-20T10:00:01Z","type":"TaskFailed","state":"Gate","error":"GateError","cause":"closed"},"prev":9}`,
		`{"event":{"id":11,"timestamp":"2026-11-20T10:00:01Z","type":"ExecutionFailed","error":"GateError","cause":"closed"},"prev":10}`,
	}, "\n")+"\n")

	f, gate := gated()
	gate.Store(1) // it failed once already
	m, err := Open(ctx, Config{Dir: dir, Registry: f.reg, Now: func() time.Time { return time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatalf("Open on an old data folder: %v", err)
	}
	defer m.Close()
	if sm, err := m.DescribeStateMachine(ctx, StateMachineARN("Old")); err != nil || sm.RevisionID != "" {
		t.Errorf("the old machine: %+v %v", sm, err)
	}
	x, err := m.DescribeExecution(ctx, arn)
	if err != nil || x.Status != asl.StatusFailed || x.Redrive.Status != Redrivable || x.Redrive.Count != 0 || x.VersionARN != "" {
		t.Fatalf("the old execution: %+v %v", x, err)
	}
	if _, err := m.RedriveExecution(ctx, arn, ""); err != nil {
		t.Fatal(err)
	}
	if err := m.SendTaskSuccess(ctx, f.token(t), `{}`); err != nil {
		t.Fatal(err)
	}
	if got := waitClosed(t, m, arn); got.Status != asl.StatusSucceeded || !strings.Contains(string(got.Output), `"count":7`) {
		t.Errorf("the old execution redriven: %s %s (%s)", got.Status, got.Output, got.Cause)
	}
	if c := f.counted.Load(); c != 0 {
		t.Errorf("Check ran %d times on the redrive, want its recorded result", c)
	}
	if v, err := m.PublishStateMachineVersion(ctx, StateMachineARN("Old"), "INITIAL", ""); err != nil || v.Number != 1 {
		t.Errorf("a version of the old machine: %+v %v", v, err)
	}
}
