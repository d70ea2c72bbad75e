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

	// Park, when set, is asked whether the execution may park where it
	// can only wait (see Parked); true parks it. The caller then holds
	// the execution as a record and resumes it, when its token is
	// answered or its time comes, by replaying its history through the
	// hooks above. It is called from the execution's goroutine.
	Park func(Parked) bool
	// ParkAfter is how long a waiting Task waits for its outcome (real
	// time, whatever the engine's clock) before Park is asked, so that a
	// token answered at once costs no replay; a Wait with longer than
	// ParkAfter to go asks at once. Zero or less asks at once.
	ParkAfter time.Duration
}

// Parked is where a parked execution waits: what its caller must keep
// and watch so as to resume it. An execution parks only where nothing
// else of it runs: a Wait state or a waiting Task (.waitForTaskToken, an
// activity) of its own states, not inside a Parallel branch or a Map
// iteration, whose siblings may still run (those keep their goroutine).
//
// A parked execution holds no goroutine, timer or channel of the
// engine's: its goroutine has returned (OnDone gets a Result with Parked
// set and status RUNNING) without recording anything, and its history
// ends where it waits.
type Parked struct {
	State string
	// Token is the waiting Task's token ("" for a Wait).
	Token string
	// Wake is when the execution must run again though no one answers:
	// the Wait's end, or the Task's or the execution's deadline, the
	// earliest (zero: none, only its token or a stop ends the wait).
	Wake time.Time
	// Heartbeat is the waiting Task's HeartbeatSeconds (0: none) and Beat
	// when its count began: the last heartbeat, or the start of the wait
	// (zero: not yet, an activity no worker has taken). Heartbeats that
	// come while it is parked move Beat; Beat+Heartbeat is a deadline as
	// Wake is.
	Heartbeat time.Duration
	Beat      time.Time
	// Activity is set for an activity's Task.
	Activity bool
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
	// Submitted, for a .waitForTaskToken attempt without an outcome,
	// reports that its handler had answered (TaskSubmitted is recorded):
	// its token is out, so the handler is not invoked again and the Task
	// waits for the token, as Step Functions never invokes it twice.
	Submitted bool
	// Beat, when set for a waiting attempt with HeartbeatSeconds, is when
	// its heartbeat count began (see Parked.Beat): a resumed Task times
	// out when its silence already lasted that long, and an activity a
	// worker had taken counts from it.
	Beat time.Time
}

// replayed emits a Task attempt's recorded outcome, as the attempt emitted
// it the first time, and returns it.
func (r *stateRun) replayed(input any, rep TaskReplay) (any, error) {
	ev := Event{State: r.st.Name, Scope: r.fr.scope()}
	switch {
	case rep.TimedOut:
		se := rep.Err
		if se == nil {
			se = timedOut(false)
		}
		ev.Type, ev.Error, ev.Cause, ev.Heartbeat = "TaskTimedOut", se.Name, se.Cause, se.Heartbeat
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
