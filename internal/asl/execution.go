package asl

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Execution is one running (or finished) execution.
type Execution struct {
	ID        string
	Name      string
	StartTime time.Time

	engine    *Engine
	sm        *StateMachine
	smName    string
	smID      string
	input     any
	inputSize int // jsonSize(input)
	onEvent   func(Event)
	durable   *Durable
	mock      TaskMock      // StartOptions.Mock
	maxWait   time.Duration // StartOptions.MaxWait
	capped    time.Duration // StartOptions.MaxDuration, when it ends the run before TimeoutSeconds would
	cancel    context.CancelFunc
	root      context.Context // the run's context: cancelled only when the execution is stopped or times out

	// Distributed Map states (maprun.go): the buckets they read and
	// write, who runs their children, and how often each has opened a map
	// run (its run's id).
	buckets   Buckets
	mapRuns   MapRunner
	mapRunMu  sync.Mutex
	mapRunSeq map[string]int

	// TestState's (StartOptions.Test, Variables, Context).
	test        *TestHooks
	vars0       *varScope // the execution's own scope, with its variables at the start
	ctxOverride map[string]any

	order       sync.Mutex // held while an event is numbered and streamed
	keepHistory bool
	hist        history                     // the kept history, compact (see histEvent)
	emitted     atomic.Int64                // events emitted, kept or not
	transitions atomic.Int64                // states entered (see runMachineSized)
	overLimit   atomic.Pointer[StatesError] // set once the history quota is reached
	// lazy is set once a Task result is kept as text (raw.go) or an
	// overlay made (overlay.go): until then no value of the run holds one,
	// and plain walks nothing.
	lazy atomic.Bool

	done   chan struct{}
	result *Result
	// parked is where the run parked (Durable.Park), set by its goroutine
	// before it unwinds with errParked.
	parked *Parked

	// The clock of the events: wall0 (Unix nanoseconds) read with mono0,
	// from which a monotonic reading gives each event's wall time at half
	// the cost of reading both clocks.
	wall0  int64
	mono0  time.Time
	lastTS int64 // the latest streamed event's timestamp (under order)

	// The context object's Execution and StateMachine members are the same
	// for every state: built once, shared (values are never mutated).
	ctxOnce            sync.Once
	ctxExec, ctxSMInfo map[string]any
}

// Stop aborts a running execution.
func (x *Execution) Stop() { x.cancel() }

// Done is closed when the execution has finished.
func (x *Execution) Done() <-chan struct{} { return x.done }

// Wait blocks until the execution finishes or ctx ends.
func (x *Execution) Wait(ctx context.Context) (*Result, error) {
	select {
	case <-x.done:
		return x.result, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// History returns a copy of the events recorded so far.
func (x *Execution) History() []Event {
	if !x.keepHistory {
		return nil
	}
	return x.hist.events(int(x.emitted.Load()))
}

// MaxHistoryEvents is Step Functions' quota on the events of one execution's
// history. Reaching it fails the execution with States.Runtime; the final
// ExecutionFailed event is the last one, so no history exceeds the quota.
// Events are counted as they are emitted, whoever records or streams them.
const MaxHistoryEvents = 25000

// emit records a non-terminal history event. Once the quota is reached it
// records nothing more and stops the run; run reports the failure.
func (x *Execution) emit(ev Event) int {
	id, _ := x.record(newHist(evOther, nil, nil, &ev), 0, false)
	return id
}

// emitState records one of the common events of state st in frame fr,
// with data as its Input (or Output, for the types that carry one). It
// returns the event's id and its timestamp (0 when the clock was not read).
func (x *Execution) emitState(typ evType, st *State, fr *frame, data any) (int, int64) {
	return x.record(newHist(typ, st, fr, data), 0, false)
}

// plain returns v without lazy values in it (raw.go, overlay.go), for what
// reads values without knowing them: intrinsic functions, JSONata, the
// variables.
func (x *Execution) plain(v any) any {
	if !x.lazy.Load() {
		return v
	}
	return deepResolve(v)
}

// markLazy records that the run now holds a lazy value. The flag is read
// far more often than set: it is written only once.
func (x *Execution) markLazy() {
	if !x.lazy.Load() {
		x.lazy.Store(true)
	}
}

// clock returns the wall time in Unix nanoseconds.
func (x *Execution) clock() int64 {
	if c := x.engine.clock; c != nil {
		return x.wall0 + int64(c.Now().Sub(x.mono0))
	}
	return x.wall0 + int64(time.Since(x.mono0))
}

// recording reports whether events are kept or streamed: otherwise they
// are only counted, and nothing need be built for them.
func (x *Execution) recording() bool { return x.keepHistory || x.onEvent != nil }

// record numbers h, keeps it and hands it to OnEvent. Parallel branches and
// Map iterations emit concurrently: without OnEvent they do not wait on
// each other (see history); with it, OnEvent sees events one at a time, in
// ID order, with timestamps that never decrease.
//
// at is a clock reading (Unix nanoseconds) the caller took for the event,
// or 0: the clock is read here when the event is kept or streamed.
func (x *Execution) record(h histEvent, at int64, terminal bool) (int, int64) {
	if x.onEvent != nil {
		x.order.Lock()
		defer x.order.Unlock()
	}
	ts := at
	if ts == 0 && x.recording() {
		ts = x.clock()
	}
	id, ok := x.number(terminal)
	if !ok {
		return 0, 0
	}
	// An event nobody keeps or streams is only counted (for the quota, the
	// transitions and the ids causes cite): no clock read, no copy.
	if x.onEvent != nil {
		ts = max(ts, x.lastTS)
		x.lastTS = ts
	}
	h.setClock(ts - x.wall0)
	if x.keepHistory {
		x.hist.put(id, h)
	}
	if x.onEvent != nil {
		x.onEvent(h.event(id, x.wall0))
	}
	return id, ts
}

// number hands out the next event id. Once the quota is reached it hands
// out no more but the terminal event's, and stops the run; run reports the
// failure.
func (x *Execution) number(terminal bool) (int, bool) {
	for {
		n := x.emitted.Load()
		if !terminal {
			if x.overLimit.Load() != nil {
				return 0, false
			}
			if n >= MaxHistoryEvents-1 {
				if x.overLimit.CompareAndSwap(nil, newError(ErrRuntime, "execution history exceeded %d events (Step Functions quota)", MaxHistoryEvents)) {
					x.cancel()
				}
				return 0, false
			}
		}
		if x.emitted.CompareAndSwap(n, n+1) {
			return int(n + 1), true
		}
	}
}

// aborted reports whether err ended a run because a sibling Parallel
// branch or Map iteration failed: the run was cancelled while the
// execution itself goes on (a stopped execution ends with
// ExecutionAborted alone).
func (x *Execution) aborted(err error) bool {
	return errors.Is(err, context.Canceled) && x.root.Err() == nil
}

// abortable reports whether a state of st's type can be under way when its
// run is cancelled: Step Functions then records <Type>StateAborted. The
// others complete as soon as they are entered.
func (st *State) abortable() bool {
	switch st.Type {
	case "Task", "Wait", "Map", "Parallel":
		return true
	}
	return false
}

// historyLimit returns the quota failure, if the run reached it.
func (x *Execution) historyLimit() *StatesError { return x.overLimit.Load() }

func (x *Execution) run(ctx context.Context) {
	defer close(x.done)
	x.root = ctx
	x.record(newHist(evExecutionStarted, nil, nil, x.input), 0, false)
	out, err := x.runMachineSized(ctx, x.sm, x.input, x.inputSize, rootFrame, x.vars0)
	x.result = x.conclude(ctx, out, err)
}

// conclude records the execution's final event and returns its result. It
// is run's tail, kept out of run's frame: run's frame lies under every
// state for as long as the execution lasts, and the terminal events built
// here took 800 bytes of it, enough to keep a waiting execution's
// goroutine stack from shrinking to 8 KiB (see BenchmarkWaitingExecutions
// in internal/control).
//
//go:noinline
func (x *Execution) conclude(ctx context.Context, out any, err error) *Result {
	res := &Result{}
	switch limit := x.historyLimit(); {
	case err == errParked: // not finished: nothing to record
		res.Status, res.Parked = StatusRunning, x.parked
	case limit != nil:
		res.Status, res.Error, res.Cause = StatusFailed, limit.Name, limit.Cause
		x.recordTerminal(Event{Type: "ExecutionFailed", Error: limit.Name, Cause: limit.Cause})
	case err == nil:
		b, merr := marshalJSON(out)
		if merr != nil {
			res.Status, res.Error, res.Cause = StatusFailed, ErrRuntime, merr.Error()
			break
		}
		res.Status, res.Output = StatusSucceeded, b
		x.record(newHist(evExecutionSucceeded, nil, nil, out), 0, true)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		res.Status, res.Error = StatusTimedOut, ErrTimeout
		res.Cause = fmt.Sprintf("the execution ran longer than its TimeoutSeconds (%d)", x.sm.TimeoutSeconds)
		if x.capped > 0 {
			res.Cause = fmt.Sprintf("the execution ran longer than the %s it may last", x.capped)
		}
		x.recordTerminal(Event{Type: "ExecutionTimedOut", Error: res.Error, Cause: res.Cause})
	case errors.Is(ctx.Err(), context.Canceled):
		res.Status, res.Error, res.Cause = StatusAborted, "States.Aborted", "the execution was stopped"
		x.recordTerminal(Event{Type: "ExecutionAborted"})
	default:
		se := toStatesError(err)
		res.Status, res.Error, res.Cause = StatusFailed, se.Name, se.Cause
		x.recordTerminal(Event{Type: "ExecutionFailed", Error: se.Name, Cause: se.Cause})
	}
	// The history is complete: the result shares it (never written again);
	// Result.History builds the events when asked.
	if x.keepHistory {
		res.hist, res.events = &x.hist, int(x.emitted.Load())
	}
	res.Transitions = int(x.transitions.Load())
	return res
}

// deadline is when the run times out (zero: never): TimeoutSeconds after
// the start (or opts.TimeoutFrom), or opts.MaxDuration after the start if
// that comes first.
func (x *Execution) deadline(opts StartOptions) time.Time {
	var at time.Time
	if x.sm.TimeoutSeconds > 0 {
		from := x.StartTime
		if !opts.TimeoutFrom.IsZero() {
			from = opts.TimeoutFrom
		}
		at = from.Add(time.Duration(x.sm.TimeoutSeconds) * time.Second)
	}
	if opts.MaxDuration > 0 {
		if capped := x.StartTime.Add(opts.MaxDuration); at.IsZero() || capped.Before(at) {
			at, x.capped = capped, opts.MaxDuration
		}
	}
	return at
}

// recordTerminal records the execution's final event.
func (x *Execution) recordTerminal(ev Event) { x.record(newHist(evOther, nil, nil, &ev), 0, true) }

// toStatesError gives any error an ASL name: a *StatesError keeps its own.
func toStatesError(err error) *StatesError {
	var se *StatesError
	if errors.As(err, &se) {
		return se
	}
	return &StatesError{Name: ErrRuntime, Cause: err.Error()}
}

// frame locates a nested machine run: item index of Map state, or branch
// index of Parallel state, inside parent (nil for the execution's run).
// Its scope ("Fan/branch[1]", "Each/item[3]/Inner/item[0]") is written the
// first time an event or a durable hook needs it: a Map's items, which
// seldom do, cost no string.
type frame struct {
	parent *frame
	state  string
	index  int
	text   atomic.Pointer[string]
	branch bool // a Parallel branch, not a Map item
}

var rootFrame = &frame{}

func (f *frame) child(state string, index int, branch bool) *frame {
	return &frame{parent: f, state: state, index: index, branch: branch}
}

// scope returns the frame's scope ("" for the execution's own run).
func (f *frame) scope() string {
	if f.parent == nil {
		return ""
	}
	if p := f.text.Load(); p != nil {
		return *p
	}
	kind := "/item["
	if f.branch {
		kind = "/branch["
	}
	s := f.state + kind + strconv.Itoa(f.index) + "]"
	if outer := f.parent.scope(); outer != "" {
		s = outer + "/" + s
	}
	f.text.Store(&s)
	return s
}

// runMachine runs sm from StartAt with vs as its workflow-local variable
// scope.
func (x *Execution) runMachine(ctx context.Context, sm *StateMachine, input any, fr *frame, vs *varScope) (any, error) {
	return x.runMachineSized(ctx, sm, input, sizeUnknown, fr, vs)
}

// runMachineSized is runMachine given a bound on the input's size (see
// size.go), which it carries from state to state.
func (x *Execution) runMachineSized(ctx context.Context, sm *StateMachine, input any, size int, fr *frame, vs *varScope) (any, error) {
	return x.runMachineWith(ctx, new(stateRun), sm, input, size, fr, vs)
}

// runMachineWith is runMachineSized with r as the run's stateRun: one
// stateRun serves the states of a run one after another, nothing keeps it
// once its state has ended (a Task's handler gets a context of its own),
// so runs that follow one another (a Map's items in order) can share one.
func (x *Execution) runMachineWith(ctx context.Context, r *stateRun, sm *StateMachine, input any, size int, fr *frame, vs *varScope) (any, error) {
	name := sm.StartAt
	// States entered (their StateEntered recorded) are counted here and
	// added once, so that concurrent iterations do not share a counter.
	entered := 0
	defer func() { x.transitions.Add(int64(entered)) }()
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		st := sm.States[name]
		out, next, outSize, err := x.runState(ctx, r, st, input, size, fr, vs)
		if r.eventID != 0 {
			entered++
		}
		if err != nil {
			if r.eventID != 0 && x.aborted(err) && st.abortable() {
				x.emitAborted(st, fr)
			}
			return nil, err
		}
		if next == "" {
			return out, nil
		}
		input, name, size = out, next, outSize
	}
}

// emitAborted records that st, under way in fr, was aborted. It is kept
// out of runMachineWith's frame, which lies under every waiting Task (see
// Execution.conclude): an Event is 250 bytes.
//
//go:noinline
func (x *Execution) emitAborted(st *State, fr *frame) {
	x.emit(Event{Type: st.Type + "StateAborted", State: st.Name, Scope: fr.scope()})
}

// stateRun carries what one attempt of a state needs.
type stateRun struct {
	ctx      context.Context // for JSONata evaluation
	x        *Execution
	st       *State
	fr       *frame
	vars     *varScope
	eventID  int               // the id of the StateEntered event
	exitedAt int64             // the clock reading of the StateExited event (0 if not read)
	assigned map[string]string // variables the state assigned, as JSON text
	entered  time.Time
	retry    int
	token    string
	mapItem  *mapItem
	// stateCtx, when set, is the context object's State member, shared by
	// the items of a Map (built for this attempt; cleared after it).
	stateCtx map[string]any

	// Bounds on payload sizes (size.go): the state input's, the current
	// attempt's result's and its output's; sizeUnknown when not known.
	inSize, resultSize, outSize int
}

type mapItem struct {
	index int
	value any
}

// context builds the context object ($$) for this state attempt.
func (r *stateRun) context() any {
	x := r.x
	if x.ctxOverride != nil && r.fr == rootFrame {
		return x.ctxOverride
	}
	x.ctxOnce.Do(func() {
		x.ctxExec = map[string]any{
			"Id":           x.ID,
			"Name":         x.Name,
			"Input":        x.input,
			"StartTime":    formatTime(x.StartTime),
			"RoleArn":      "arn:aws:iam::000000000000:role/local",
			"RedriveCount": int64(0),
		}
		x.ctxSMInfo = map[string]any{"Id": x.smID, "Name": x.smName}
	})
	state := r.stateCtx
	if state == nil {
		state = r.stateContext()
	}
	c := map[string]any{
		"Execution":    x.ctxExec,
		"StateMachine": x.ctxSMInfo,
		"State":        state,
	}
	if r.token != "" {
		c["Task"] = map[string]any{"Token": r.token}
	}
	if r.mapItem != nil {
		c["Map"] = map[string]any{"Item": map[string]any{"Index": int64(r.mapItem.index), "Value": r.mapItem.value}}
	}
	return c
}

// contextMember resolves a context path of names (simple) to one of the
// members states usually read, without building the context object: the
// Map item, the task token, the state's name and retry count. ok is false
// for any other path, which the caller resolves on the whole object.
func (r *stateRun) contextMember(simple []any) (v any, found, ok bool) {
	if r.x.ctxOverride != nil {
		return nil, false, false // read from the given object
	}
	if len(simple) == 3 && simple[0] == "Map" && simple[1] == "Item" {
		if r.mapItem == nil {
			return nil, false, true // no "Map" member outside a Map's items
		}
		switch simple[2] {
		case "Value":
			return r.mapItem.value, true, true
		case "Index":
			return boxInt(int64(r.mapItem.index)), true, true
		}
		return nil, false, true
	}
	if len(simple) == 2 {
		switch {
		case simple[0] == "Task" && simple[1] == "Token":
			if r.token == "" {
				return nil, false, true
			}
			return r.token, true, true
		case simple[0] == "State" && simple[1] == "Name":
			return r.st.Name, true, true
		case simple[0] == "State" && simple[1] == "RetryCount":
			return int64(r.retry), true, true
		}
	}
	return nil, false, false
}

// stateContext builds the context object's State member.
func (r *stateRun) stateContext() map[string]any {
	return map[string]any{
		"Name":        r.st.Name,
		"EnteredTime": formatTime(r.entered),
		"RetryCount":  int64(r.retry),
	}
}

func formatTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

func (r *stateRun) scope(input any) *scope {
	return &scope{input: input, vars: r.vars, run: r}
}

// runState runs st with r, which it resets first.
func (x *Execution) runState(ctx context.Context, r *stateRun, st *State, input any, inSize int, fr *frame, vs *varScope) (any, string, int, error) {
	// The state is entered the instant the previous one of this run exited
	// (nothing happens between them): its event takes that exit's clock
	// reading rather than reading the clock again.
	at := r.exitedAt
	*r = stateRun{ctx: ctx, x: x, st: st, fr: fr, vars: vs, inSize: inSize, resultSize: sizeUnknown, outSize: sizeUnknown}
	h := newHist(st.entered, st, fr, input)
	if st.entered == evOther {
		h.data = &Event{Type: st.Type + "StateEntered", State: st.Name, Scope: fr.scope(), Input: input}
	}
	id, ts := x.record(h, at, false)
	r.eventID = id
	if ts != 0 { // the state was entered when its event was recorded
		r.entered = time.Unix(0, ts)
	} else {
		r.entered = x.engine.now()
	}
	out, next, err := r.run(ctx, input)
	if err != nil {
		return nil, "", sizeUnknown, r.locate(err)
	}
	return out, next, r.outSize, nil
}

// locate gives the causes of the errors Step Functions reports with the
// failing state ("An error occurred while executing the state 'S' (entered
// at the event id #N). …") that prefix, once, where they arise.
func (r *stateRun) locate(err error) error {
	var se *StatesError
	if !errors.As(err, &se) || se.located {
		return err
	}
	switch se.Name {
	case ErrRuntime, ErrQueryEvaluationError, ErrDataLimitExceeded:
	default:
		return err
	}
	if r.x.test != nil && se.Name == ErrRuntime {
		// TestState answers a States.Runtime with the state's own words:
		// recorded on AWS (LocalStack snapshot
		// test_state/test_state_context_object.snapshot.json,
		// test_state_map_context_object), no prefix. Its other errors keep
		// the execution's form: no recording shows them.
		return err
	}
	located := &StatesError{Name: se.Name, Cause: fmt.Sprintf("An error occurred while executing the state '%s' (entered at the event id #%d). %s", r.st.Name, r.eventID, se.Cause), located: true}
	if se.Name == ErrQueryEvaluationError {
		// Step Functions records a JSONata evaluation failure as its own
		// event, between the state's entry and what its failure causes.
		r.x.emit(Event{Type: "EvaluationFailed", State: r.st.Name, Scope: r.fr.scope(), Error: located.Name, Cause: located.Cause, Location: se.location})
	}
	return located
}

func (r *stateRun) run(ctx context.Context, input any) (any, string, error) {
	st := r.st
	var (
		out  any
		next string
		err  error
	)
	switch {
	case st.jsonata && st.Type == "Pass":
		out, err = r.jsonataPass(ctx, input)
		next = st.Next
	case st.jsonata && st.Type == "Succeed":
		out, err = r.jsonataOutput(r.jsonataEnv(ctx, input, nil), st.ja.Output, nil, input)
	case st.jsonata && st.Type == "Choice":
		out, next, err = r.jsonataChoice(ctx, input)
	case st.jsonata && st.Type == "Fail":
		return nil, "", r.jsonataFail(input)
	case st.Type == "Pass":
		out, err = r.pass(input)
		next = st.Next
	case st.Type == "Choice":
		out, next, err = r.choice(input)
	case st.Type == "Wait": // both query languages
		out, err = r.wait(ctx, input)
		next = st.Next
	case st.Type == "Succeed":
		out, err = r.succeed(input)
	case st.Type == "Fail":
		return nil, "", r.fail(input)
	case st.Type == "Task", st.Type == "Parallel", st.Type == "Map": // both query languages
		out, next, err = r.withRetry(ctx, input)
	default:
		err = newError(ErrRuntime, "state %q has unsupported type %q", st.Name, st.Type)
	}
	return r.checkOutput(out, next, err)
}

// checkOutput enforces the payload limit on a state's output and records
// its exit.
func (r *stateRun) checkOutput(out any, next string, err error) (any, string, error) {
	if err != nil {
		return nil, "", err
	}
	st := r.st
	if verifySizeBounds && within(r.outSize) {
		if n := jsonSize(out); n > r.outSize {
			panic(fmt.Sprintf("asl: state %q: output of %d bytes over its size bound %d", st.Name, n, r.outSize))
		}
	}
	if !within(r.outSize) { // the bound does not prove it fits: measure
		n := jsonSize(out)
		if n > MaxPayloadBytes {
			return nil, "", newError(ErrDataLimitExceeded, "The state/task '%s' returned a result with a size exceeding the maximum number of bytes service limit.", st.Name)
		}
		r.outSize = n
	}
	h := newHist(st.exited, st, r.fr, out)
	if r.assigned != nil || st.exited == evOther {
		h = newHist(evOther, nil, nil, &Event{Type: st.Type + "StateExited", State: st.Name, Scope: r.fr.scope(), Output: out, AssignedVariables: r.assigned})
	}
	_, r.exitedAt = r.x.record(h, 0, false)
	return out, next, nil
}

// applyInputPath selects the effective input. A null InputPath yields {}.
func (r *stateRun) applyInputPath(input any) (any, error) {
	ip := r.st.InputPath
	var v any = map[string]any{}
	switch {
	case ip.null:
	case ip.p.wholeInput(): // passed on as it is, a kept result unread (raw.go)
		v = input
	default:
		var ok bool
		if v, ok = r.scope(input).find(ip.p); !ok {
			return nil, newError(ErrRuntime, "Invalid path '%s' : No results for path: %s", ip.p.raw, ip.p.normalized())
		}
	}
	if r.x.test != nil {
		r.inspect("afterInputPath", v)
	}
	return v, nil
}

func (r *stateRun) applyOutputPath(v any) (any, error) {
	op := r.st.OutputPath
	if op.null {
		return map[string]any{}, nil
	}
	if op.p.wholeInput() {
		return v, nil
	}
	out, ok := r.scope(v).find(op.p)
	if !ok {
		return nil, newError(ErrRuntime, "Invalid path '%s' : No results for path: %s", op.p.raw, op.p.normalized())
	}
	return out, nil
}

// applyResultPath combines the raw state input with the result.
func (r *stateRun) applyResultPath(rp optPath, input, result any) (any, error) {
	if rp.null {
		return input, nil
	}
	overlays := !r.x.engine.eager
	if overlays && !rp.p.identity {
		r.x.markLazy()
	}
	out, err := rp.p.set(input, result, overlays)
	if err != nil {
		return nil, newError(ErrResultPathMatchFailure, "state %q: unable to apply ResultPath %q to the state input: %v", r.st.Name, rp.p.raw, err)
	}
	return out, nil
}

// effectiveInput applies InputPath then Parameters.
func (r *stateRun) effectiveInput(input any) (any, error) {
	if r.st.jsonata {
		return r.jsonataArguments(input)
	}
	v, err := r.applyInputPath(input)
	if err != nil {
		return nil, err
	}
	if r.st.Parameters != nil {
		if v, err = r.st.Parameters.eval(r.scope(v)); err != nil {
			return nil, err
		}
	}
	r.inspect("afterParameters", v)
	return v, nil
}

// finish applies ResultSelector, ResultPath and OutputPath to a result.
// Assign sees the same result as ResultSelector (the raw result); its
// values are assigned once the output is known.
func (r *stateRun) finish(input, result any) (any, error) {
	if r.st.jsonata {
		return r.jsonataFinish(input, result)
	}
	commit, err := r.jsonPathAssign(r.st.Assign, result)
	if err != nil {
		return nil, err
	}
	resultSize := r.resultSize
	if r.st.ResultSelector != nil {
		sel, err := r.st.ResultSelector.eval(r.scope(result))
		if err != nil {
			return nil, err
		}
		result, resultSize = sel, jsonSize(sel)
	}
	r.inspect("afterResultSelector", result)
	out, err := r.applyResultPath(r.st.ResultPath, input, result)
	if err != nil {
		return nil, err
	}
	r.inspect("afterResultPath", out)
	out, err = r.applyOutputPath(out)
	if err != nil {
		return nil, err
	}
	if err := commit(); err != nil {
		return nil, err
	}
	r.outSize = selectBound(r.st.OutputPath, resultPathBound(r.st.ResultPath, r.inSize, resultSize))
	return out, nil
}
