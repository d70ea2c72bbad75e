package control

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/asl/asltest"
	"github.com/veredicto/veredicto/internal/poll"
)

const (
	// napping waits an hour, then succeeds.
	napping = `{"StartAt":"Prepare","States":{
	  "Prepare":{"Type":"Pass","Result":"ready","ResultPath":"$.prepared","Next":"Nap"},
	  "Nap":{"Type":"Wait","Seconds":3600,"Next":"Done"},
	  "Done":{"Type":"Pass","End":true}}}`
	// asking waits on a token (at most a day), its timeouts caught.
	asking = `{"StartAt":"Prepare","States":{
	  "Prepare":{"Type":"Pass","Result":"ready","ResultPath":"$.prepared","Next":"Ask"},
	  "Ask":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken",%s
	    "Parameters":{"FunctionName":"NotifyFunction","Payload":{"token.$":"$$.Task.Token"}},"ResultPath":"$.answer",
	    "Catch":[{"ErrorEquals":["States.Timeout"],"ResultPath":"$.late","Next":"Late"}],"Next":"Done"},
	  "Late":{"Type":"Pass","End":true},
	  "Done":{"Type":"Pass","End":true}}}`
)

// askingWith is asking with the Task's timeout fields (`"TimeoutSeconds":60,`).
func askingWith(fields string) string { return fmt.Sprintf(asking, fields) }

// parkingFixture opens managers that park executions at once, on a clock
// the test moves, logging into log.
type parkingFixture struct {
	*fixture
	clock *asltest.Clock
	log   syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newParkingFixture() *parkingFixture {
	f := newFixture()
	f.tokens = make(chan string, 1000)
	return &parkingFixture{fixture: f, clock: asltest.NewClock(time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC))}
}

func (p *parkingFixture) open(t *testing.T, dir string) *Manager {
	t.Helper()
	m, err := Open(context.Background(), Config{Dir: dir, Registry: p.reg, Clock: p.clock, ParkAfter: -1,
		Logger: slog.New(slog.NewTextHandler(&p.log, nil))})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return m
}

// parkedCount is how many executions are parked, their goroutines gone.
func parkedCount(m *Manager) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, e := range m.execs {
		if e.park != nil && e.x == nil {
			n++
		}
	}
	return n
}

func awaitParked(t *testing.T, m *Manager, n int) {
	t.Helper()
	poll.Until(t, 30*time.Second, func() bool { return parkedCount(m) == n }, fmt.Sprintf("%d executions to park", n))
}

// entered lists the states an execution's history enters, and checks its
// event ids run 1, 2, 3… (nothing lost or recorded twice).
func entered(t *testing.T, m *Manager, arn string) string {
	t.Helper()
	events, _, err := m.History(context.Background(), arn, "", 1000, false)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i, ev := range events {
		if ev.ID != i+1 {
			t.Errorf("event %d of %s has id %d", i+1, arn, ev.ID)
		}
		if strings.HasSuffix(ev.Type, "StateEntered") {
			names = append(names, ev.State)
		}
	}
	return strings.Join(names, " ")
}

// A parked execution holds no goroutine: starting executions that wait
// (on a Wait state, on a token) leaves the goroutine count where it was
// once they have parked.
func TestParkedExecutionsHoldNoGoroutine(t *testing.T) {
	const n = 40
	p := newParkingFixture()
	m := p.open(t, t.TempDir())
	defer m.Close()
	ctx := context.Background()
	for name, def := range map[string]string{"Nap": napping, "Ask": askingWith("")} {
		if _, err := m.CreateStateMachine(ctx, name, def, "", ""); err != nil {
			t.Fatal(err)
		}
	}
	before := runtime.NumGoroutine()
	for i := range n {
		for _, machine := range []string{"Nap", "Ask"} {
			if _, err := m.StartExecution(ctx, StateMachineARN(machine), fmt.Sprintf("x%d", i), `{"tenant":"acme"}`); err != nil {
				t.Fatal(err)
			}
		}
	}
	awaitParked(t, m, 2*n)
	var now int
	if !poll.Within(10*time.Second, func() bool { now = runtime.NumGoroutine(); return now <= before+2 }) {
		t.Errorf("%d goroutines with %d executions parked, %d before they started: parked executions hold goroutines", now, 2*n, before)
	}
	m.mu.Lock()
	tokens := len(m.tokens)
	m.mu.Unlock()
	if tokens != 0 {
		t.Errorf("%d tokens held for runs, want none: the parked records hold them", tokens)
	}
}

// A parked Wait wakes at its time, on the manager's clock, and not
// before; the execution goes on from there, each state entered once.
func TestParkedWaitWakesAtItsTime(t *testing.T) {
	p := newParkingFixture()
	m := p.open(t, t.TempDir())
	defer m.Close()
	start := p.clock.Now()
	x := startAcme(t, m, "Nap", napping, "n1")
	awaitParked(t, m, 1)
	pending := func() []time.Time { return p.clock.Pending() }
	poll.Until(t, 10*time.Second, func() bool { ps := pending(); return len(ps) == 1 && ps[0].Equal(start.Add(time.Hour)) }, "one timer, at the Wait's end")
	p.clock.Advance(59 * time.Minute)
	if d, _ := m.DescribeExecution(context.Background(), x.ARN); d.Status != asl.StatusRunning || parkedCount(m) != 1 {
		t.Fatalf("a minute before its time: %s, %d parked", d.Status, parkedCount(m))
	}
	p.clock.Advance(time.Minute)
	if got := waitClosed(t, m, x.ARN); got.Status != asl.StatusSucceeded || string(got.Output) != `{"prepared":"ready","tenant":"acme"}` {
		t.Fatalf("%s %s (%s)", got.Status, got.Output, got.Cause)
	}
	if got, want := entered(t, m, x.ARN), "Prepare Nap Done"; got != want {
		t.Errorf("states entered %s, want %s", got, want)
	}
}

// A parked Task resumes on its token and completes: its handler is not
// invoked again, and the history holds each event once.
func TestParkedTokenResumesAndCompletes(t *testing.T) {
	p := newParkingFixture()
	m := p.open(t, t.TempDir())
	defer m.Close()
	ctx := context.Background()
	x := startAcme(t, m, "Ask", askingWith(`"TimeoutSeconds":86400,`), "a1")
	tok := p.token(t)
	awaitParked(t, m, 1)
	if state, err := m.TokenState(ctx, tok); err != nil || state != "Ask" {
		t.Errorf("TokenState of the parked Task: %q, %v", state, err)
	}
	if err := m.SendTaskHeartbeat(ctx, tok); err != nil {
		t.Errorf("SendTaskHeartbeat to the parked Task: %v", err)
	}
	if err := m.SendTaskSuccess(ctx, tok, `{"ok":true}`); err != nil {
		t.Fatalf("SendTaskSuccess: %v", err)
	}
	got := waitClosed(t, m, x.ARN)
	if got.Status != asl.StatusSucceeded || string(got.Output) != `{"answer":{"ok":true},"prepared":"ready","tenant":"acme"}` {
		t.Fatalf("%s %s (%s)", got.Status, got.Output, got.Cause)
	}
	select {
	case again := <-p.tokens:
		t.Errorf("the handler was invoked again (%s)", again)
	default:
	}
	if got, want := entered(t, m, x.ARN), "Prepare Ask Done"; got != want {
		t.Errorf("states entered %s, want %s", got, want)
	}
	if err := m.SendTaskSuccess(ctx, tok, `{}`); code(err) != CodeTaskTimedOut {
		t.Errorf("its token once used: %v, want TaskTimedOut", err)
	}
}

// StopExecution closes a parked execution (no replay: ExecutionAborted
// follows its last event), and its token is no longer accepted.
func TestStopParked(t *testing.T) {
	p := newParkingFixture()
	m := p.open(t, t.TempDir())
	defer m.Close()
	ctx := context.Background()
	asked := startAcme(t, m, "Ask", askingWith(""), "a1")
	tok := p.token(t)
	napped := startAcme(t, m, "Nap", napping, "n1")
	awaitParked(t, m, 2)
	for _, arn := range []string{asked.ARN, napped.ARN} {
		if _, err := m.StopExecution(ctx, arn, "Operator.Stop", "no longer needed"); err != nil {
			t.Fatalf("StopExecution: %v", err)
		}
		got, err := m.DescribeExecution(ctx, arn)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != asl.StatusAborted || got.Error != "Operator.Stop" || got.Cause != "no longer needed" {
			t.Errorf("%s: %s %s %s, want ABORTED with the stop's error and cause", arn, got.Status, got.Error, got.Cause)
		}
		events, _, err := m.History(ctx, arn, "", 100, false)
		if err != nil {
			t.Fatal(err)
		}
		last := events[len(events)-1]
		if last.Type != "ExecutionAborted" || last.Error != "Operator.Stop" || last.PreviousID != last.ID-1 {
			t.Errorf("%s ends with %+v, want ExecutionAborted after its last event", arn, last)
		}
	}
	if err := m.SendTaskSuccess(ctx, tok, `{}`); code(err) != CodeTaskTimedOut {
		t.Errorf("the stopped execution's token: %v, want TaskTimedOut", err)
	}
	poll.Until(t, 10*time.Second, func() bool { return len(p.clock.Pending()) == 0 }, "no timer armed once the parked executions stopped")
}

// A parked Task's TimeoutSeconds and HeartbeatSeconds still end it, and
// a heartbeat sent while it is parked moves its count; the execution's
// own TimeoutSeconds ends a parked Wait.
func TestParkedTimeouts(t *testing.T) {
	late := func(t *testing.T, m *Manager, arn, want string) {
		t.Helper()
		got := waitClosed(t, m, arn)
		if got.Status != asl.StatusSucceeded || !strings.Contains(string(got.Output), want) {
			t.Errorf("%s %s, want the %s caught", got.Status, got.Output, want)
		}
	}
	t.Run("TimeoutSeconds", func(t *testing.T) {
		p := newParkingFixture()
		m := p.open(t, t.TempDir())
		defer m.Close()
		x := startAcme(t, m, "Ask", askingWith(`"TimeoutSeconds":60,`), "a1")
		awaitParked(t, m, 1)
		p.clock.Advance(59 * time.Second)
		if parkedCount(m) != 1 {
			t.Fatal("resumed before its timeout")
		}
		p.clock.Advance(time.Second)
		late(t, m, x.ARN, `"Error":"States.Timeout"`)
	})
	t.Run("HeartbeatSeconds", func(t *testing.T) {
		p := newParkingFixture()
		m := p.open(t, t.TempDir())
		defer m.Close()
		ctx := context.Background()
		start := p.clock.Now()
		x := startAcme(t, m, "Ask", askingWith(`"TimeoutSeconds":3600,"HeartbeatSeconds":10,`), "a1")
		tok := p.token(t)
		awaitParked(t, m, 1)
		p.clock.Advance(6 * time.Second)
		if err := m.SendTaskHeartbeat(ctx, tok); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, 10*time.Second, func() bool {
			ps := p.clock.Pending()
			return len(ps) == 1 && ps[0].Equal(start.Add(16*time.Second))
		}, "the heartbeat's deadline to move to 16 s")
		p.clock.Advance(6 * time.Second) // 12 s: 6 s after the heartbeat
		if parkedCount(m) != 1 {
			t.Fatal("timed out though it had a heartbeat 6 s ago")
		}
		p.clock.Advance(4 * time.Second)
		late(t, m, x.ARN, `"Error":"States.Timeout"`) // as AWS records a heartbeat's timeout
	})
	t.Run("the execution's TimeoutSeconds", func(t *testing.T) {
		p := newParkingFixture()
		m := p.open(t, t.TempDir())
		defer m.Close()
		x := startAcme(t, m, "Nap", strings.Replace(napping, `{"StartAt"`, `{"TimeoutSeconds":120,"StartAt"`, 1), "n1")
		awaitParked(t, m, 1)
		p.clock.Advance(2 * time.Minute)
		if got := waitClosed(t, m, x.ARN); got.Status != asl.StatusTimedOut {
			t.Errorf("%s %s, want TIMED_OUT", got.Status, got.Cause)
		}
	})
}

// An activity task parks while it waits for a worker: a worker takes it
// from the queue (ActivityStarted recorded, the execution still parked,
// its heartbeat count started) and answers it.
func TestParkedActivity(t *testing.T) {
	p := newParkingFixture()
	m := p.open(t, t.TempDir())
	defer m.Close()
	ctx := context.Background()
	act, err := m.CreateActivity(ctx, "resize", "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	def := strings.Replace(activityMachine(act.ARN), `"ResultPath"`, `"HeartbeatSeconds":30,"ResultPath"`, 1)
	x := startAcme(t, m, "Resizer", def, "r1")
	awaitParked(t, m, 1)
	queuedTasks(t, m, 1, "the parked execution's task to stay queued")
	if n := len(p.clock.Pending()); n != 0 {
		t.Errorf("%d timers armed for a task no worker took, want none", n)
	}
	task := received(t, pollAsync(m, ctx, act.ARN, "w1", ""))
	if task.Token == "" {
		t.Fatal("no task")
	}
	if parkedCount(m) != 1 {
		t.Error("taking its task resumed the parked execution")
	}
	poll.Until(t, 10*time.Second, func() bool { return len(p.clock.Pending()) == 1 }, "the heartbeat's deadline")
	if err := m.SendTaskSuccess(ctx, task.Token, `{"w":1}`); err != nil {
		t.Fatal(err)
	}
	if got := waitClosed(t, m, x.ARN); got.Status != asl.StatusSucceeded || string(got.Output) != `{"resized":{"w":1},"tenant":"acme"}` {
		t.Errorf("%s %s (%s)", got.Status, got.Output, got.Cause)
	}
	events, _, err := m.History(ctx, x.ARN, "", 100, false)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, ev := range events {
		types = append(types, ev.Type)
	}
	if got, want := strings.Join(types, " "), "ExecutionStarted TaskStateEntered TaskScheduled ActivityStarted TaskSucceeded TaskStateExited ExecutionSucceeded"; got != want {
		t.Errorf("history\n got %s\nwant %s", got, want)
	}
}

// Parked executions survive a restart without being replayed at Open
// (indexed from parked.json): still waiting, their tokens accepted, their
// Waits waking at their time.
func TestParkedExecutionsSurviveARestart(t *testing.T) {
	const n = 5
	p := newParkingFixture()
	dir := t.TempDir()
	m := p.open(t, dir)
	var asked, napped []Execution
	for i := range n {
		asked = append(asked, startAcme(t, m, "Ask", askingWith(""), fmt.Sprintf("a%d", i)))
		napped = append(napped, startAcme(t, m, "Nap", napping, fmt.Sprintf("n%d", i)))
	}
	tokens := map[string]string{}
	for range n {
		tok := p.token(t)
		arn, _ := tokenExecution(tok)
		tokens[arn] = tok
	}
	awaitParked(t, m, 2*n)
	m.Close()

	m = p.open(t, dir)
	defer m.Close()
	if parkedCount(m) != 2*n {
		t.Errorf("%d executions parked after the restart, want %d", parkedCount(m), 2*n)
	}
	if strings.Contains(p.log.String(), "resuming execution") {
		t.Errorf("Open replayed parked executions:\n%s", p.log.String())
	}
	ctx := context.Background()
	for _, x := range asked {
		if err := m.SendTaskSuccess(ctx, tokens[x.ARN], `{"ok":true}`); err != nil {
			t.Fatalf("SendTaskSuccess after the restart: %v", err)
		}
	}
	p.clock.Advance(time.Hour)
	for _, x := range append(asked, napped...) {
		if got := waitClosed(t, m, x.ARN); got.Status != asl.StatusSucceeded {
			t.Errorf("%s: %s %s", x.Name, got.Status, got.Cause)
		}
	}
	if got := entered(t, m, asked[0].ARN); got != "Prepare Ask Done" {
		t.Errorf("states entered %s", got)
	}
}

// TestParkedAnswerRaces answers tokens while their Tasks park (ParkAfter
// of a millisecond): every answer reaches its execution exactly once.
func TestParkedAnswerRaces(t *testing.T) {
	const n = 30
	f := newFixture()
	f.tokens = make(chan string, n)
	m, err := Open(context.Background(), Config{Dir: t.TempDir(), Registry: f.reg, ParkAfter: time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx := context.Background()
	if _, err := m.CreateStateMachine(ctx, "Ask", askingWith(""), "", ""); err != nil {
		t.Fatal(err)
	}
	var arns []string
	for i := range n {
		x, err := m.StartExecution(ctx, StateMachineARN("Ask"), fmt.Sprintf("r%d", i), `{"tenant":"acme"}`)
		if err != nil {
			t.Fatal(err)
		}
		arns = append(arns, x.ARN)
	}
	var wg sync.WaitGroup
	for range n {
		tok := f.token(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := m.SendTaskSuccess(ctx, tok, `{"ok":true}`); err != nil {
				t.Errorf("SendTaskSuccess: %v", err)
			}
		}()
	}
	wg.Wait()
	for _, arn := range arns {
		if got := waitClosed(t, m, arn); got.Status != asl.StatusSucceeded {
			t.Errorf("%s: %s %s", arn, got.Status, got.Cause)
		}
		if got := entered(t, m, arn); got != "Prepare Ask Done" {
			t.Errorf("%s entered %s", arn, got)
		}
	}
}

// TestResumedRunKeepsItsHandle: an execution parks before the start that
// launched it has attached its run, and an answer resumes it in that
// window. The resumed run is the one attached once the first launch goes
// on (a parked run's handle replaced it before), so StopExecution stops
// it at once.
func TestResumedRunKeepsItsHandle(t *testing.T) {
	p := newParkingFixture()
	entered, release := make(chan struct{}, 1), make(chan struct{})
	defer close(release)
	p.reg.Register("HoldFunction", func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
		entered <- struct{}{}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-release:
			return json.RawMessage(`{}`), nil
		}
	})
	m := p.open(t, t.TempDir())
	defer m.Close()
	ctx := context.Background()
	def := `{"StartAt":"Ask","States":{
	  "Ask":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken",
	    "Parameters":{"FunctionName":"NotifyFunction","Payload":{"token.$":"$$.Task.Token"}},"ResultPath":"$.answer","Next":"Hold"},
	  "Hold":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"HoldFunction"},"End":true}}}`
	if _, err := m.CreateStateMachine(ctx, "Race", def, "", ""); err != nil {
		t.Fatal(err)
	}
	first := true
	m.afterStart = func(string) {
		if !first {
			return // the resumed run's launch
		}
		first = false
		// the first run parks on its token; answered, the execution
		// resumes and its new run reaches Hold, all before this launch
		// attaches its run
		tok := p.token(t)
		awaitParked(t, m, 1)
		if err := m.SendTaskSuccess(ctx, tok, `{"ok":true}`); err != nil {
			t.Errorf("SendTaskSuccess: %v", err)
		}
		select {
		case <-entered:
		case <-time.After(30 * time.Second):
			t.Error("the resumed run never reached Hold")
		}
	}
	x, err := m.StartExecution(ctx, StateMachineARN("Race"), "r1", `{"tenant":"acme"}`)
	if err != nil {
		t.Fatal(err)
	}
	stopped := make(chan error, 1)
	go func() {
		_, err := m.StopExecution(ctx, x.ARN, "Race", "stopped while it holds")
		stopped <- err
	}()
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(8 * time.Second): // stopWait (10 s) is what a lost handle costs
		t.Fatal("StopExecution found no run to stop: the resumed run lost its handle")
	}
	if got := waitClosed(t, m, x.ARN); got.Status != asl.StatusAborted {
		t.Errorf("after the stop: %s, want ABORTED", got.Status)
	}
}

// TestNoRunStartsOnceCloseBegan: an answer that claimed a parked execution
// just before Close began does not start a run Close would not wait for:
// the execution stays RUNNING with no run, for the next start to resume.
func TestNoRunStartsOnceCloseBegan(t *testing.T) {
	p := newParkingFixture()
	m := p.open(t, t.TempDir())
	defer m.Close()
	x := startAcme(t, m, "Ask", askingWith(""), "c1")
	tok := p.token(t)
	awaitParked(t, m, 1)
	m.mu.Lock()
	e := m.execs[x.ARN]
	m.mu.Unlock()
	err := m.unpark(e, func(rec *recorder) error {
		m.mu.Lock()
		m.closed = true // Close begins between the claim and the run
		m.mu.Unlock()
		return rec.resolve(tok, resolution{Token: tok, Output: json.RawMessage(`{"ok":true}`)})
	})
	if err != nil {
		t.Fatal(err)
	}
	// A run launched now would be attached or, already done, have settled.
	m.mu.Lock()
	status, attached := e.status, e.x != nil
	m.mu.Unlock()
	if status != asl.StatusRunning || attached {
		t.Errorf("the execution is %s (run attached: %v); want RUNNING with no run, for the next start", status, attached)
	}
}

// A heartbeat timeout is recorded as States.Timeout (as on AWS) yet a
// Catch of States.HeartbeatTimeout catches it: after a restart, the replay
// of the recorded TaskTimedOut catches it again, and the execution goes on
// where it was.
func TestHeartbeatTimeoutReplaysAsCaught(t *testing.T) {
	p := newParkingFixture()
	dir := t.TempDir()
	m := p.open(t, dir)
	def := `{"StartAt":"Ask","States":{
	  "Ask":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken","HeartbeatSeconds":10,
	    "Parameters":{"FunctionName":"NotifyFunction","Payload":{"token.$":"$$.Task.Token"}},
	    "Catch":[{"ErrorEquals":["States.HeartbeatTimeout"],"ResultPath":"$.late","Next":"Hold"}],"End":true},
	  "Hold":{"Type":"Wait","Seconds":3600,"End":true}}}`
	x := startAcme(t, m, "Beat", def, "b1")
	p.token(t)
	awaitParked(t, m, 1)
	p.clock.Advance(10 * time.Second)
	poll.Until(t, 10*time.Second, func() bool { return strings.HasSuffix(entered(t, m, x.ARN), "Hold") }, "the timeout caught")
	awaitParked(t, m, 1)
	m.Close()

	m = p.open(t, dir)
	defer m.Close()
	awaitParked(t, m, 1)
	p.clock.Advance(time.Hour)
	got := waitClosed(t, m, x.ARN)
	if got.Status != asl.StatusSucceeded || !strings.Contains(string(got.Output), `"late":{"Cause":"","Error":"States.Timeout"}`) {
		t.Errorf("%s %s %s %s, want the heartbeat timeout caught", got.Status, got.Output, got.Error, got.Cause)
	}
	if states := entered(t, m, x.ARN); states != "Ask Hold" {
		t.Errorf("states entered: %s, want Ask Hold", states)
	}
}
