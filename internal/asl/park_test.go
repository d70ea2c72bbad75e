package asl

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/asl/asltest"
	"github.com/veredicto/veredicto/internal/poll"
)

// parkings records what Durable.Park was asked, and answers with park.
type parkings struct {
	mu   sync.Mutex
	got  []Parked
	park bool
}

func (p *parkings) hook(at Parked) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.got = append(p.got, at)
	return p.park
}

func (p *parkings) asked() []Parked {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Parked(nil), p.got...)
}

// parkingRun starts def with input {} on an engine with reg, on a clock
// the test moves, its Durable.Park answered with park.
func parkingRun(t *testing.T, reg *Registry, def string, park bool) (*asltest.Clock, *Engine, *parkings, *Execution) {
	t.Helper()
	clk := asltest.NewClock(clockStart)
	eng := New(reg, WithClock(clk))
	parks := &parkings{park: park}
	x, err := eng.Start(context.Background(), mustParse(t, def), json.RawMessage(`{}`), StartOptions{Durable: &Durable{Park: parks.hook}})
	if err != nil {
		t.Fatal(err)
	}
	return clk, eng, parks, x
}

// finished waits for x's end.
func finished(t *testing.T, x *Execution) *Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := x.Wait(ctx)
	if err != nil {
		t.Fatalf("the execution did not return: %v", err)
	}
	return res
}

func typesOf(res *Result) string {
	var types []string
	for _, ev := range res.History() {
		types = append(types, ev.Type)
	}
	return strings.Join(types, " ")
}

// A Wait of the execution's own parks it: its goroutine returns, nothing
// is recorded after the Wait's entry, and Parked says when it must run
// again (the Wait's end, or the execution's deadline if that comes
// first). Its replay, with the Wait's recorded start, goes on from there
// once the time has come.
func TestParkedWaitReturnsAndResumes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout string
		wake    time.Duration
	}{
		{"the Wait's end", "", time.Hour},
		{"the execution's deadline", `"TimeoutSeconds":600,`, 10 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			def := `{` + tc.timeout + `"StartAt":"Pause","States":{"Pause":{"Type":"Wait","Seconds":3600,"Next":"Done"},"Done":{"Type":"Pass","End":true}}}`
			clk, eng, parks, x := parkingRun(t, NewRegistry(), def, true)
			res := finished(t, x)
			if res.Status != StatusRunning || res.Parked == nil {
				t.Fatalf("status %s, parked %+v: want RUNNING and parked", res.Status, res.Parked)
			}
			if got, want := *res.Parked, (Parked{State: "Pause", Wake: clockStart.Add(tc.wake)}); got != want {
				t.Errorf("parked %+v, want %+v", got, want)
			}
			if got, want := typesOf(res), "ExecutionStarted WaitStateEntered"; got != want {
				t.Errorf("history %s, want %s", got, want)
			}
			poll.Until(t, 10*time.Second, func() bool { return len(clk.Pending()) == 0 }, "the parked execution to leave no timer armed")

			clk.Advance(time.Hour)
			again, err := eng.Start(context.Background(), mustParse(t, def), json.RawMessage(`{}`), StartOptions{StartTime: clockStart,
				Durable: &Durable{Park: parks.hook, WaitStart: func(Call) (time.Time, bool) { return clockStart, true }}})
			if err != nil {
				t.Fatal(err)
			}
			res = finished(t, again)
			want := StatusSucceeded
			if tc.timeout != "" {
				want = StatusTimedOut
			}
			if res.Status != want {
				t.Errorf("replayed: %s %s %s, want %s", res.Status, res.Error, res.Cause, want)
			}
			if n := len(parks.asked()); n != 1 {
				t.Errorf("Park asked %d times, want once (the replay had nothing left to wait)", n)
			}
		})
	}
}

// A waiting Task parks with its token, its deadline and its heartbeat
// count; replayed as Submitted, its handler is not invoked again and its
// token completes it. One whose silence had outlasted HeartbeatSeconds
// when it parked times out as soon as it is replayed.
func TestParkedTaskResumesOnItsToken(t *testing.T) {
	def := `{"StartAt":"Ask","States":{"Ask":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken",
	  "Parameters":{"FunctionName":"${AskFunctionArn}","Payload":{"Token.$":"$$.Task.Token"}},"TimeoutSeconds":600,"HeartbeatSeconds":60,
	  "ResultPath":"$.answer","Catch":[{"ErrorEquals":["States.Timeout"],"ResultPath":"$.lost","Next":"Lost"}],"End":true},
	  "Lost":{"Type":"Pass","End":true}}}`
	tokens := make(chan string, 4)
	reg := NewRegistry()
	reg.Register("AskFunction", tokenHandler(tokens))
	clk := asltest.NewClock(clockStart)
	eng := New(reg, WithClock(clk))
	sm := mustParse(t, def)
	parks := &parkings{park: true}
	const tok = "recorded-token"
	durable := func(rep TaskReplay) *Durable {
		return &Durable{Park: parks.hook, Token: func(Call) string { return tok }, Task: func(Call) TaskReplay { return rep }}
	}
	x, err := eng.Start(context.Background(), sm, json.RawMessage(`{}`), StartOptions{Durable: durable(TaskReplay{})})
	if err != nil {
		t.Fatal(err)
	}
	res := finished(t, x)
	if res.Parked == nil {
		t.Fatalf("status %s, not parked", res.Status)
	}
	want := Parked{State: "Ask", Token: tok, Wake: clockStart.Add(10 * time.Minute), Heartbeat: time.Minute, Beat: clockStart}
	if *res.Parked != want {
		t.Errorf("parked %+v, want %+v", *res.Parked, want)
	}
	if got := <-tokens; got != tok {
		t.Errorf("handler got %q", got)
	}
	if got, want := typesOf(res), "ExecutionStarted TaskStateEntered TaskScheduled TaskStarted TaskSubmitted"; got != want {
		t.Errorf("history %s, want %s", got, want)
	}
	if err := eng.SendTaskSuccess(tok, json.RawMessage(`{}`)); err == nil {
		t.Error("the parked Task's token is still waiting in the engine")
	}

	t.Run("answered", func(t *testing.T) {
		parks.park = false // the replay waits in place
		clk.Advance(30 * time.Second)
		again, err := eng.Start(context.Background(), sm, json.RawMessage(`{}`), StartOptions{Durable: durable(TaskReplay{Submitted: true, Scheduled: clockStart, Beat: clockStart})})
		if err != nil {
			t.Fatal(err)
		}
		if err := waitSend(eng, tok, `{"ok":true}`); err != nil {
			t.Fatal(err)
		}
		res := finished(t, again)
		if res.Status != StatusSucceeded || string(res.Output) != `{"answer":{"ok":true}}` {
			t.Errorf("%s %s, want SUCCEEDED with the answer", res.Status, res.Output)
		}
		select {
		case got := <-tokens:
			t.Errorf("the handler was invoked again (%s)", got)
		default:
		}
	})
	t.Run("silent too long", func(t *testing.T) {
		parks.park = false
		clk.Advance(time.Minute) // 90 s since the last heartbeat
		again, err := eng.Start(context.Background(), sm, json.RawMessage(`{}`), StartOptions{Durable: durable(TaskReplay{Submitted: true, Scheduled: clockStart, Beat: clockStart})})
		if err != nil {
			t.Fatal(err)
		}
		res := finished(t, again)
		if res.Status != StatusSucceeded || !strings.Contains(string(res.Output), `"Error":"States.Timeout"`) {
			t.Errorf("%s %s, want the heartbeat timeout caught", res.Status, res.Output)
		}
	})
}

// waitSend sends the task success once the token waits in the engine.
func waitSend(eng *Engine, tok, out string) error {
	var err error
	for range 1000 {
		if err = eng.SendTaskSuccess(tok, json.RawMessage(out)); err == nil {
			return nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	return err
}

// Only the execution's own states park: a Wait inside a Parallel branch
// keeps its goroutine (its sibling branches may still be running), and a
// Park that declines leaves the Task waiting in place.
func TestParkOnlyWhereNothingElseRuns(t *testing.T) {
	def := `{"StartAt":"Fan","States":{"Fan":{"Type":"Parallel","Next":"Ask","Branches":[
	    {"StartAt":"Nap","States":{"Nap":{"Type":"Wait","Seconds":60,"End":true}}}]},
	  "Ask":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken",
	    "Parameters":{"FunctionName":"${AskFunctionArn}","Payload":{"Token.$":"$$.Task.Token"}},"End":true}}}`
	tokens := make(chan string, 1)
	reg := NewRegistry()
	reg.Register("AskFunction", tokenHandler(tokens))
	clk, eng, parks, x := parkingRun(t, reg, def, false)
	awaitTimers(t, clk, time.Minute)
	clk.Advance(time.Minute)
	tok := <-tokens
	poll.Until(t, 10*time.Second, func() bool { return len(parks.asked()) > 0 }, "Park to be asked")
	if err := waitSend(eng, tok, `{}`); err != nil {
		t.Fatal(err)
	}
	if res := finished(t, x); res.Status != StatusSucceeded {
		t.Fatalf("%s %s %s", res.Status, res.Error, res.Cause)
	}
	asked := parks.asked()
	if len(asked) != 1 || asked[0].State != "Ask" || asked[0].Token != tok {
		t.Errorf("Park asked %+v, want once, for Ask's token", asked)
	}
}

// A definition that draws on randomness or the clock does not park: a
// replay would draw different values than the run it resumes.
func TestNoParkWhereAReplayDrawsAnew(t *testing.T) {
	for _, expr := range []string{`"id.$":"States.UUID()"`, `"at.$":"$$.State.EnteredTime"`} {
		def := `{"StartAt":"Id","States":{"Id":{"Type":"Pass","Parameters":{` + expr + `},"Next":"Pause"},
		  "Pause":{"Type":"Wait","Seconds":3600,"End":true}}}`
		clk, _, parks, x := parkingRun(t, NewRegistry(), def, true)
		awaitTimers(t, clk, time.Hour)
		clk.Advance(time.Hour)
		if res := finished(t, x); res.Status != StatusSucceeded || len(parks.asked()) != 0 {
			t.Errorf("%s: %s, Park asked %d times, want it never asked", expr, res.Status, len(parks.asked()))
		}
	}
}
