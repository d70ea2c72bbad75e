package asl

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/asl/asltest"
	"github.com/veredicto/veredicto/internal/poll"
)

var _ Clock = (*asltest.Clock)(nil)

// clockStart is where the tests' clocks start.
var clockStart = time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)

// awaitTimers waits until the engine has armed exactly the timers due at
// the given offsets from clockStart, so that the test moves the clock only
// once the engine waits on it.
func awaitTimers(t *testing.T, clk *asltest.Clock, due ...time.Duration) {
	t.Helper()
	poll.Until(t, 10*time.Second, func() bool {
		pending := clk.Pending()
		if len(pending) != len(due) {
			return false
		}
		for i, d := range due {
			if !pending[i].Equal(clockStart.Add(d)) {
				return false
			}
		}
		return true
	}, "the engine's timers")
}

// runAdvancing runs def on a clock that, whenever the execution waits on
// a timer, moves on to it at once: for sequential machines whose Retry
// delays or Waits are not what the test is about.
func runAdvancing(t *testing.T, reg *Registry, def, input string) *Result {
	t.Helper()
	return runAdvancingWith(t, reg, def, input, StartOptions{Name: "test"})
}

// runAdvancingWith is runAdvancing with the execution's options.
func runAdvancingWith(t *testing.T, reg *Registry, def, input string, opts StartOptions) *Result {
	t.Helper()
	clk := asltest.NewClock(clockStart)
	x, err := New(reg, WithClock(clk)).Start(context.Background(), mustParse(t, def), json.RawMessage(input), opts)
	if err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 20*time.Second, func() bool {
		if pending := clk.Pending(); len(pending) > 0 {
			clk.Advance(pending[0].Sub(clk.Now()))
		}
		select {
		case <-x.Done():
			return true
		default:
			return false
		}
	}, "the execution to finish")
	res, err := x.Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A deadline on another clock ends when that clock reaches it, with
// context.DeadlineExceeded, and so do the contexts derived from it; it
// ends with the parent, or when cancelled, as context.WithDeadline does.
func TestWithDeadlineFollowsTheEnginesClock(t *testing.T) {
	clk := asltest.NewClock(clockStart)
	e := New(NewRegistry(), WithClock(clk))
	ended := func(ctx context.Context) bool {
		select {
		case <-ctx.Done():
			return true
		default:
			return false
		}
	}

	ctx, cancel := e.withDeadline(context.Background(), clockStart.Add(time.Second))
	defer cancel()
	child, cancelChild := context.WithCancel(ctx)
	defer cancelChild()
	if d, ok := ctx.Deadline(); !ok || !d.Equal(clockStart.Add(time.Second)) {
		t.Errorf("Deadline() = %v %v, want %v", d, ok, clockStart.Add(time.Second))
	}
	clk.Advance(999 * time.Millisecond)
	if ended(ctx) || ctx.Err() != nil {
		t.Fatalf("ended before its deadline: %v", ctx.Err())
	}
	clk.Advance(time.Millisecond)
	<-ctx.Done()
	<-child.Done()
	if ctx.Err() != context.DeadlineExceeded || child.Err() != context.DeadlineExceeded {
		t.Errorf("errors %v and (derived) %v, want context.DeadlineExceeded", ctx.Err(), child.Err())
	}
	if !errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		t.Errorf("cause %v", context.Cause(ctx))
	}

	ctx, cancel = e.withDeadline(context.Background(), clockStart.Add(time.Hour))
	cancel()
	if ctx.Err() != context.Canceled || len(clk.Pending()) != 0 {
		t.Errorf("cancelled: %v with %d timers left, want context.Canceled and none", ctx.Err(), len(clk.Pending()))
	}

	parent, cancelParent := context.WithCancel(context.Background())
	ctx, cancel = e.withDeadline(parent, clockStart.Add(time.Hour))
	defer cancel()
	cancelParent()
	<-ctx.Done()
	if ctx.Err() != context.Canceled {
		t.Errorf("after the parent's end: %v, want context.Canceled", ctx.Err())
	}

	ctx, cancel = e.withDeadline(context.Background(), clk.Now())
	defer cancel()
	if ctx.Err() != context.DeadlineExceeded {
		t.Errorf("a deadline already past: %v, want context.DeadlineExceeded", ctx.Err())
	}

	armed := len(clk.Pending())
	early, cancelEarly := e.withDeadline(context.Background(), clk.Now().Add(time.Minute))
	defer cancelEarly()
	later, cancelLater := e.withDeadline(early, clk.Now().Add(time.Hour))
	defer cancelLater()
	if d, _ := later.Deadline(); !d.Equal(clk.Now().Add(time.Minute)) || len(clk.Pending()) != armed+1 {
		t.Errorf("a later deadline under an earlier one: deadline %v, %d new timers; want the parent's and its timer alone", d, len(clk.Pending())-armed)
	}
}

// On another clock than the real one, a Wait lasts until that clock has
// moved on by its time, and the history's timestamps are that clock's.
func TestWaitFollowsTheEnginesClock(t *testing.T) {
	clk := asltest.NewClock(clockStart)
	def := `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":3600,"Next":"P"},"P":{"Type":"Pass","End":true}}}`
	x, err := New(NewRegistry(), WithClock(clk)).Start(context.Background(), mustParse(t, def), json.RawMessage(`{}`), StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	awaitTimers(t, clk, time.Hour)
	clk.Advance(time.Hour - time.Nanosecond)
	select {
	case <-x.Done():
		t.Fatal("the Wait ended before its hour")
	case <-time.After(10 * time.Millisecond): // nothing happens before the hour: a short look, not a timing
	}
	clk.Advance(time.Nanosecond)
	res, err := x.Wait(context.Background())
	if err != nil || res.Status != StatusSucceeded {
		t.Fatalf("run: %v %+v", err, res)
	}
	if !x.StartTime.Equal(clockStart) {
		t.Errorf("start time %v, want the clock's %v", x.StartTime, clockStart)
	}
	h := res.History()
	if first, last := h[0].Timestamp, h[len(h)-1].Timestamp; !first.Equal(clockStart) || !last.Equal(clockStart.Add(time.Hour)) {
		t.Errorf("history from %v to %v, want %v to an hour later", first, last, clockStart)
	}
}

// MaxDuration ends an execution that would outlive it, TimeoutSeconds or
// not, as TIMED_OUT; TimeoutFrom moves where TimeoutSeconds counts from.
func TestMaxDurationAndTimeoutFrom(t *testing.T) {
	long := `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":3600,"End":true}}}`
	bounded := `{"TimeoutSeconds":60,"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":3600,"End":true}}}`
	for _, tt := range []struct {
		name, def  string
		opts       StartOptions
		timer, end time.Duration // the deadline's timer, and when the run ends
		cause      string
	}{
		{"capped", long, StartOptions{MaxDuration: 5 * time.Minute}, 5 * time.Minute, 5 * time.Minute, "longer than the 5m0s it may last"},
		{"TimeoutSeconds first", bounded, StartOptions{MaxDuration: 5 * time.Minute}, time.Minute, time.Minute, "TimeoutSeconds (60)"},
		{"counted from later", bounded, StartOptions{TimeoutFrom: clockStart.Add(10 * time.Minute)}, 11 * time.Minute, 11 * time.Minute, "TimeoutSeconds (60)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clk := asltest.NewClock(clockStart)
			tt.opts.Name = "x"
			x, err := New(NewRegistry(), WithClock(clk)).Start(context.Background(), mustParse(t, tt.def), json.RawMessage(`{}`), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			awaitTimers(t, clk, tt.timer, time.Hour)
			clk.Advance(tt.end)
			res, err := x.Wait(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != StatusTimedOut || res.Error != ErrTimeout || !strings.Contains(res.Cause, tt.cause) {
				t.Errorf("got %s %s %q, want TIMED_OUT States.Timeout naming %q", res.Status, res.Error, res.Cause, tt.cause)
			}
		})
	}
}
