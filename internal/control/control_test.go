package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/poll"

	"github.com/veredicto/veredicto/internal/asl"
)

const resumable = `{"StartAt":"Prepare","States":{
  "Prepare":{"Type":"Pass","Result":"ready","ResultPath":"$.prepared","Next":"Check"},
  "Check":{"Type":"Task","Resource":"${CountFunctionArn}","ResultPath":"$.count","Next":"Pause"},
  "Pause":{"Type":"Wait","Seconds":1,"Next":"Ask"},
  "Ask":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken",
         "Parameters":{"FunctionName":"NotifyFunction","Payload":{"token.$":"$$.Task.Token"}},"ResultPath":"$.answer","Next":"Done"},
  "Done":{"Type":"Pass","End":true}}}`

type fixture struct {
	counted atomic.Int32
	tokens  chan string
	reg     *asl.Registry
	disk    disk // the managers' durable writes (zero: the real ones)
	// parkAfter is the managers' Config.ParkAfter (zero: the default).
	parkAfter time.Duration
	mocks     MockSource // the managers' mock configuration

	mu     sync.Mutex
	events []asl.Event // passed to OnHistory, across restarts
	final  []Status
}

func newFixture() *fixture {
	f := &fixture{tokens: make(chan string, 4), reg: asl.NewRegistry()}
	f.reg.Register("CountFunction", func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return json.Marshal(f.counted.Add(1))
	})
	f.reg.Register("NotifyFunction", func(_ context.Context, in json.RawMessage) (json.RawMessage, error) {
		var p struct{ Token string }
		if err := json.Unmarshal(in, &p); err != nil {
			return nil, err
		}
		f.tokens <- p.Token
		return nil, nil
	})
	return f
}

func (f *fixture) open(t *testing.T, dir string) *Manager {
	t.Helper()
	m, err := Open(context.Background(), Config{Dir: dir, Registry: f.reg, disk: f.disk, Mocks: f.mocks, ParkAfter: f.parkAfter,
		OnHistory: func(tenant, arn string, ev asl.Event) {
			f.mu.Lock()
			defer f.mu.Unlock()
			if tenant != "acme" {
				panic("OnHistory got tenant " + tenant)
			}
			f.events = append(f.events, ev)
		},
		OnStatus: func(s Status) {
			f.mu.Lock()
			defer f.mu.Unlock()
			if s.Status != asl.StatusRunning {
				f.final = append(f.final, s)
			}
		},
	})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return m
}

func (f *fixture) token(t *testing.T) string {
	t.Helper()
	select {
	case tok := <-f.tokens:
		return tok
	case <-time.After(30 * time.Second):
		t.Fatal("no token reached the handler")
		return ""
	}
}

// start creates the state machine (again: the same definition is the
// same machine) and starts an execution of it for tenant acme.
func (f *fixture) start(t *testing.T, m *Manager, machine, def, name string) Execution {
	t.Helper()
	return startAcme(t, m, machine, def, name)
}

// waitUntil describes an execution until done says it is what the test
// waits for (what, for the failure message), and returns it.
func waitUntil(t *testing.T, m *Manager, arn, what string, done func(Execution) bool) Execution {
	t.Helper()
	var x Execution
	poll.Until(t, 30*time.Second, func() bool {
		var err error
		if x, err = m.DescribeExecution(context.Background(), arn); err != nil {
			t.Fatal(err)
		}
		return done(x)
	}, arn+" "+what)
	return x
}

func waitClosed(t *testing.T, m *Manager, arn string) Execution {
	t.Helper()
	return waitUntil(t, m, arn, "closed", func(x Execution) bool { return x.Status != asl.StatusRunning })
}

// TestResume stops the manager while an execution waits on a task token
// and opens a new one on the same folder: the completed Task is not invoked
// again, the token still waits and is accepted, and the history holds each
// event once.
func TestResume(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	f := newFixture()
	m := f.open(t, dir)
	x := f.start(t, m, "Resumable", resumable, "r1")
	tok := f.token(t)
	m.Close()

	m = f.open(t, dir)
	defer m.Close()
	// accepted at once, whether or not the replay has reached the Task yet
	if err := m.SendTaskSuccess(ctx, tok, `{"ok":true}`); err != nil {
		t.Fatalf("SendTaskSuccess after restart: %v", err)
	}
	got := waitClosed(t, m, x.ARN)
	if got.Status != asl.StatusSucceeded {
		t.Fatalf("status %s (%s: %s)", got.Status, got.Error, got.Cause)
	}
	select { // a resumed callback Task may have been re-invoked: with its recorded token
	case again := <-f.tokens:
		if again != tok {
			t.Errorf("resumed callback got token %q, want the recorded %q", again, tok)
		}
	default:
	}
	if want := `{"answer":{"ok":true},"count":1,"prepared":"ready","tenant":"acme"}`; string(got.Output) != want {
		t.Errorf("output %s, want %s", got.Output, want)
	}
	if n := f.counted.Load(); n != 1 {
		t.Errorf("the completed Task was invoked %d times, want 1", n)
	}
	events, _, err := m.History(ctx, x.ARN, "", 1000, false)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i, ev := range events {
		if ev.ID != i+1 {
			t.Errorf("event %d has id %d", i+1, ev.ID)
		}
		if strings.HasSuffix(ev.Type, "StateEntered") {
			names = append(names, ev.State)
		}
	}
	if got, want := strings.Join(names, " "), "Prepare Check Pause Ask Done"; got != want {
		t.Errorf("states entered %s, want %s", got, want)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.events) != len(events) {
		t.Errorf("OnHistory saw %d events, the history has %d", len(f.events), len(events))
	}
	for i, ev := range f.events {
		if ev.ID != i+1 {
			t.Errorf("OnHistory event %d has id %d", i+1, ev.ID)
		}
	}
	if len(f.final) != 1 || f.final[0].Status != asl.StatusSucceeded || f.final[0].Tenant != "acme" {
		t.Errorf("OnStatus final %+v", f.final)
	}
}

// TestResumeResolvedBeforeRecorded replays a SendTaskSuccess that was
// accepted (recorded) before a crash whose outcome event never made it to
// the history.
func TestResumeResolvedBeforeRecorded(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	f := newFixture()
	m := f.open(t, dir)
	x := f.start(t, m, "Resumable", resumable, "r2")
	tok := f.token(t)
	m.Close()
	// what SendTaskSuccess records first, as if the process died right after
	hist := filepath.Join(dir, "executions", "Resumable", "r2", "history.jsonl")
	b, _ := json.Marshal(line{Resolved: &resolution{Token: tok, Output: json.RawMessage(`{"late":true}`)}})
	fh, err := os.OpenFile(hist, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	fh.Write(append(b, '\n'))
	// and half a record cut by the crash
	fh.WriteString(`{"event":{"id":99,"ty`)
	fh.Close()

	m = f.open(t, dir)
	defer m.Close()
	got := waitClosed(t, m, x.ARN)
	if got.Status != asl.StatusSucceeded || !strings.Contains(string(got.Output), `"answer":{"late":true}`) {
		t.Errorf("status %s output %s", got.Status, got.Output)
	}
	err = m.SendTaskSuccess(ctx, tok, `{}`)
	var ce *Error
	if !errors.As(err, &ce) || ce.Code != CodeTaskTimedOut {
		t.Errorf("token used before the crash: %v, want TaskTimedOut", err)
	}
}

func TestValidName(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"run-1", true}, {"a_b.c", true}, {strings.Repeat("x", 80), true},
		{"", false}, {strings.Repeat("x", 81), false}, {"a b", false}, {"a:b", false}, {"a/b", false},
		{"..", false}, {"a\x01", false}, {"a*", false}, {"a$b", false},
		{"acción", true}, {"a\xffb", false}, {"a\xe2\x82", false},
	}
	for _, tt := range tests {
		if got := ValidName(tt.name); got != tt.want {
			t.Errorf("ValidName(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestResumeMap resumes an execution whose Map iterations each wait on a
// token: every iteration keeps its own token, no completed Task runs again,
// and each state of each iteration is entered once.
func TestResumeMap(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	f := newFixture()
	f.tokens = make(chan string, 16)
	def := `{"StartAt":"Each","States":{"Each":{"Type":"Map","ItemsPath":"$.items","MaxConcurrency":3,"End":true,
	  "ItemProcessor":{"StartAt":"Check","States":{
	    "Check":{"Type":"Task","Resource":"${CountFunctionArn}","ResultPath":"$.count","Next":"Ask"},
	    "Ask":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken",
	           "Parameters":{"FunctionName":"NotifyFunction","Payload":{"token.$":"$$.Task.Token"}},"ResultPath":null,"End":true}}}}}}`
	m := f.open(t, dir)
	if _, err := m.CreateStateMachine(ctx, "Fan", def, "", ""); err != nil {
		t.Fatal(err)
	}
	x, err := m.StartExecution(ctx, StateMachineARN("Fan"), "f1", `{"tenant":"acme","items":[{"i":1},{"i":2},{"i":3}]}`)
	if err != nil {
		t.Fatal(err)
	}
	tokens := map[string]bool{}
	for range 3 {
		tokens[f.token(t)] = true
	}
	m.Close()
	if len(tokens) != 3 {
		t.Fatalf("%d distinct tokens, want 3", len(tokens))
	}

	m = f.open(t, dir)
	defer m.Close()
	for tok := range tokens {
		if err := m.SendTaskSuccess(ctx, tok, `{}`); err != nil {
			t.Fatalf("SendTaskSuccess: %v", err)
		}
	}
	got := waitClosed(t, m, x.ARN)
	if got.Status != asl.StatusSucceeded {
		t.Fatalf("status %s (%s: %s)", got.Status, got.Error, got.Cause)
	}
	if n := f.counted.Load(); n != 3 {
		t.Errorf("Check ran %d times, want 3 (once per item)", n)
	}
	events, _, err := m.History(ctx, x.ARN, "", 1000, false)
	if err != nil {
		t.Fatal(err)
	}
	entered := map[string]int{}
	for i, ev := range events {
		if ev.ID != i+1 {
			t.Errorf("event %d has id %d", i+1, ev.ID)
		}
		if strings.HasSuffix(ev.Type, "StateEntered") || ev.Type == "MapIterationStarted" {
			entered[ev.Type+" "+ev.Scope+" "+ev.State+fmt.Sprint(ev.Index)]++
		}
	}
	if len(entered) != 1+3+3*2 { // the Map, 3 iterations, 2 states in each
		t.Errorf("%d distinct entries, want 10: %v", len(entered), entered)
	}
	for k, n := range entered {
		if n != 1 {
			t.Errorf("%s happened %d times, want once", k, n)
		}
	}
}

// TestPreviousEventOfANestedScope: the first event inside a Map iteration
// follows that iteration's MapIterationStarted, and the first event of
// each Parallel branch follows the ParallelStateStarted, never whatever a
// sibling recorded last.
func TestPreviousEventOfANestedScope(t *testing.T) {
	ctx := context.Background()
	f := newFixture()
	m := f.open(t, t.TempDir())
	defer m.Close()
	def := `{"StartAt":"P","States":{
	  "P":{"Type":"Parallel","Branches":[
	    {"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.xs","ItemProcessor":{"StartAt":"I","States":{
	      "I":{"Type":"Pass","Next":"J"},"J":{"Type":"Pass","End":true}}},"End":true}}},
	    {"StartAt":"B","States":{"B":{"Type":"Pass","End":true}}}],"End":true}}}`
	if _, err := m.CreateStateMachine(ctx, "Nested", def, "", ""); err != nil {
		t.Fatal(err)
	}
	x, err := m.StartExecution(ctx, StateMachineARN("Nested"), "n1", `{"tenant":"acme","xs":[1,2,3,4,5,6]}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := waitClosed(t, m, x.ARN); got.Status != asl.StatusSucceeded {
		t.Fatalf("status %s (%s)", got.Status, got.Cause)
	}
	events, _, err := m.History(ctx, x.ARN, "", 1000, false)
	if err != nil {
		t.Fatal(err)
	}
	started := map[string]int{} // scope → the id of the event that started it
	firstSeen := map[string]bool{}
	checked := 0
	for _, ev := range events {
		switch {
		case ev.Type == "ParallelStateStarted":
			started["P/branch[0]"], started["P/branch[1]"] = ev.ID, ev.ID
		case ev.Type == "MapIterationStarted":
			started[fmt.Sprintf("P/branch[0]/M/item[%d]", *ev.Index)] = ev.ID
		case ev.Scope != "" && strings.HasSuffix(ev.Type, "StateEntered") && !firstSeen[ev.Scope]:
			firstSeen[ev.Scope] = true
			checked++
			if want := started[ev.Scope]; ev.PreviousID != want {
				t.Errorf("first event of %s (%s #%d) follows #%d, want #%d", ev.Scope, ev.Type, ev.ID, ev.PreviousID, want)
			}
		}
	}
	if checked != 8 {
		t.Errorf("checked %d scopes, want 8 (2 branches, 6 items)", checked)
	}
	// an iteration's end follows the iteration's own last event
	last := map[string]int{}
	for _, ev := range events {
		if ev.Scope != "" {
			last[ev.Scope] = ev.ID
		}
		if ev.Type == "MapIterationSucceeded" {
			if want := last[fmt.Sprintf("P/branch[0]/M/item[%d]", *ev.Index)]; ev.PreviousID != want {
				t.Errorf("MapIterationSucceeded #%d (item %d) follows #%d, want #%d", ev.ID, *ev.Index, ev.PreviousID, want)
			}
		}
	}
}

// TestReverseHistoryPagesHoldWhileItRuns: a reverse page's token goes on
// from where that page ended even when the execution has recorded more
// events since, and a token serves only the direction that made it.
func TestReverseHistoryPagesHoldWhileItRuns(t *testing.T) {
	ctx := context.Background()
	f := newFixture()
	m := f.open(t, t.TempDir())
	defer m.Close()
	if _, err := m.CreateStateMachine(ctx, "Resumable", resumable, "", ""); err != nil {
		t.Fatal(err)
	}
	x, err := m.StartExecution(ctx, StateMachineARN("Resumable"), "p1", `{"tenant":"acme"}`)
	if err != nil {
		t.Fatal(err)
	}
	tok := f.token(t) // waiting: its history so far is fixed
	first, next, err := m.History(ctx, x.ARN, "", 3, true)
	if err != nil || len(first) != 3 || next == "" {
		t.Fatalf("first reverse page: %d events, next %q, %v", len(first), next, err)
	}
	if err := m.SendTaskSuccess(ctx, tok, `{"ok":true}`); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, m, x.ARN) // more events recorded after the first page
	second, _, err := m.History(ctx, x.ARN, next, 3, true)
	if err != nil || len(second) == 0 || second[0].ID != first[2].ID-1 {
		t.Errorf("second reverse page starts at %v (%v), want id %d", second, err, first[2].ID-1)
	}
	if _, _, err := m.History(ctx, x.ARN, next, 3, false); err == nil {
		t.Error("a reverse token was taken for a forward page")
	}
}
