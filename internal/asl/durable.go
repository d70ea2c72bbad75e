package asl

import "time"

// Durable lets a caller persist an execution as it runs and resume it after
// a restart by deterministic replay: the caller re-runs the definition from
// the recorded input, and these hooks hand back what the history recorded so
// that a Task that had completed is not invoked again, a Wait keeps its
// original start and a .waitForTaskToken Task keeps its token. Events the
// replay emits again are the caller's to recognise (OnEvent sees them all).
//
// Every hook is called with the identity of one state attempt. Calls for the
// same (Scope, State) come in execution order, so the n-th call for a state
// in a scope matches the n-th record of it in the history. Hooks are called
// from the execution's goroutines and must be safe for concurrent use.
// Any nil hook keeps the engine's default behaviour.
type Durable struct {
	// Token returns the task token for a .waitForTaskToken attempt
	// (default: a random one). The caller should persist it before
	// returning, since the handler passes it on.
	Token func(Call) string
	// Task is asked before a Task attempt invokes its handler. A replay
	// with Done set is the attempt's recorded outcome: the handler is not
	// invoked and the engine emits the same events as the first time.
	Task func(Call) TaskReplay
	// WaitStart returns when a Wait state's occurrence began in the
	// recorded history (ok false for one that had not begun), so a resumed
	// Wait sleeps only for its remaining time.
	WaitStart func(Call) (time.Time, bool)
}

// Call identifies one state attempt: the state, its scope (Parallel branch or
// Map iteration, as in Event.Scope) and, for a Task, the attempt number (1 for
// the first, 2 for the first retry…).
type Call struct {
	Scope   string
	State   string
	Attempt int
}

// TaskReplay is what a Durable.Task hook knows about a Task attempt.
type TaskReplay struct {
	// Done reports a recorded outcome: Output on success, Err on failure.
	Done   bool
	Output any
	Err    *StatesError
	// TimedOut replays a recorded TaskTimedOut (Err is then the
	// States.Timeout error).
	TimedOut bool
	// Scheduled, when set for an attempt without an outcome, is when it was
	// first scheduled: its TimeoutSeconds counts from then.
	Scheduled time.Time
}

// replayed emits a Task attempt's recorded outcome, as the attempt emitted
// it the first time, and returns it.
func (r *stateRun) replayed(input any, rep TaskReplay) (any, error) {
	ev := Event{State: r.st.Name, Scope: r.fr.scope()}
	switch {
	case rep.TimedOut:
		se := rep.Err
		if se == nil {
			se = newError(ErrTimeout, "state %q did not finish within its TimeoutSeconds", r.st.Name)
		}
		ev.Type, ev.Error, ev.Cause = "TaskTimedOut", se.Name, se.Cause
		r.x.emit(ev)
		return nil, se
	case rep.Err != nil:
		ev.Type, ev.Error, ev.Cause = "TaskFailed", rep.Err.Name, rep.Err.Cause
		r.x.emit(ev)
		return nil, rep.Err
	}
	r.x.emitState(evTaskSucceeded, r.st, r.fr, rep.Output)
	return r.finish(input, rep.Output)
}
