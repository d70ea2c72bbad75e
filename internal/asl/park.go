package asl

import (
	"context"
	"errors"
	"time"
)

// Parking (Durable.Park). An execution that can only wait — in a Wait
// state or on a Task's token — needs nothing of the engine while it
// waits: its history says where it is, and a replay brings it back there
// without invoking what had completed. A parked execution's goroutine
// returns instead of waiting, unwinding its states with errParked, and
// its caller keeps a record of the wait (Parked) to resume it from.

// errParked unwinds a parked execution's goroutine: every state on the
// way passes it up as it is (no Retry or Catch matches it, no event is
// recorded for it), and conclude makes it a Result with Parked set.
var errParked = errors.New("asl: the execution parked")

// parks reports whether this state may park its execution: it is one of
// the execution's own states (a Parallel branch's or a Map iteration's
// siblings may still be running), the caller parks executions, and a
// replay resumes the execution exactly (StateMachine.replayable).
func (r *stateRun) parks() bool {
	d := r.x.durable
	return d != nil && d.Park != nil && r.fr == rootFrame && r.x.sm.replayable()
}

// park asks Durable.Park to park the execution at p, whose Wake it brings
// forward to ctx's deadline (the Task's TimeoutSeconds, the execution's);
// it reports whether the execution parked. A run whose context has ended,
// or whose time (a deadline, a heartbeat's) has come, does not park: it
// is about to go on.
func (r *stateRun) park(ctx context.Context, p Parked) bool {
	if ctx.Err() != nil {
		return false
	}
	if deadline, ok := ctx.Deadline(); ok && (p.Wake.IsZero() || deadline.Before(p.Wake)) {
		p.Wake = deadline
	}
	now := r.x.engine.now()
	if !p.Wake.IsZero() && !p.Wake.After(now) || p.Heartbeat > 0 && !p.Beat.IsZero() && !p.Beat.Add(p.Heartbeat).After(now) {
		return false
	}
	if !r.x.durable.Park(p) {
		return false
	}
	r.x.parked = &p
	return true
}

// sleepOrPark waits d (until until) on the engine's clock, or parks the
// execution when it may and has longer than ParkAfter to wait. It is kept
// out of wait's frame, as the Task's helpers are (see Execution.conclude).
//
//go:noinline
func (r *stateRun) sleepOrPark(ctx context.Context, d time.Duration, until time.Time) error {
	if r.parks() && d > r.x.durable.ParkAfter && r.park(ctx, Parked{State: r.st.Name, Wake: until}) {
		return errParked
	}
	return r.x.engine.sleep(ctx, d)
}

// parkTask asks to park the execution while its Task waits on w, with
// HeartbeatSeconds heartbeat counted from beat; not when its outcome has
// already come.
//
//go:noinline
func (w *waiter) parkTask(ctx context.Context, r *stateRun, heartbeat time.Duration, beat time.Time) bool {
	if len(w.done) > 0 {
		return false
	}
	p := Parked{State: r.st.Name, Token: r.token, Activity: r.x.engine.activity(r.st)}
	if heartbeat > 0 {
		p.Heartbeat, p.Beat = heartbeat, beat
	}
	return r.park(ctx, p)
}
