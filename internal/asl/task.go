package asl

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/lambda/messages"

	"github.com/veredicto/veredicto/internal/asl/taskinfo"
)

// taskOutcome is what SendTaskSuccess / SendTaskFailure deliver.
type taskOutcome struct {
	output any
	err    *StatesError
}

func (r *stateRun) task(ctx context.Context, input any) (any, error) {
	st := r.st
	base := strings.TrimSuffix(st.Resource, waitForTaskToken)
	callback := base != st.Resource
	// An activity's Task waits on its token as a callback does: the
	// handler queues it for a worker (see WithActivities).
	activity := r.x.engine.activity(st)
	callback = callback || activity
	durable := r.x.durable
	var call Call // for the durable hooks: its scope is written only for them
	if durable != nil {
		call = Call{Scope: r.fr.scope(), State: st.Name, Attempt: r.retry + 1}
	}
	if callback {
		if durable != nil && durable.Token != nil {
			r.token = durable.Token(call)
		} else {
			r.token = newToken()
		}
	}
	// A Parameters object is written straight to the handler's input text
	// (see taskInput); otherwise the payload is built, then encoded.
	var (
		in       json.RawMessage
		recorded json.RawMessage
		eff      any
		err      error
	)
	if base != lambdaInvoke && !st.jsonata && st.Parameters != nil && st.Parameters.kind == tmplObject && r.x.test == nil {
		in, recorded, eff, err = r.taskInput(input)
	} else {
		eff, err = r.effectiveInput(input)
	}
	if err != nil {
		return nil, err
	}
	if m, ok := r.mocked(); ok {
		return r.mockedTask(input, m)
	}
	binding, payload := bindingName(base), eff
	if base == lambdaInvoke {
		params, _ := resolve(eff).(map[string]any)
		fn, _ := params["FunctionName"].(string)
		if fn == "" {
			return nil, newError(ErrRuntime, "state %q: lambda:invoke needs Parameters.FunctionName", st.Name)
		}
		binding = bindingName(fn)
		payload = params["Payload"]
		if payload == nil {
			payload = map[string]any{}
		}
	}
	// A mocked state calls nothing: its answers come from the mock.
	mocked := r.x.mock != nil && r.x.mock.Mocks(st.Name)
	var h Handler
	switch {
	case mocked && activity:
		// Step Functions Local's words: a worker, not a mock, answers it.
		return nil, newError(ErrRuntime, "Activity state cannot be mocked. Please remove mocks mapped for all activity state in the mock config file.")
	case activity:
		h = r.x.engine.activities
	case !mocked:
		if h, err = r.handler(base, binding); err != nil {
			return nil, err
		}
	}

	var timeoutExpr, heartbeatExpr *jvalue
	if st.jsonata {
		timeoutExpr, heartbeatExpr = st.ja.Timeout, st.ja.Heartbeat
	}
	timeout, err := r.seconds(ctx, input, "TimeoutSeconds", st.TimeoutSeconds, timeoutExpr, st.TimeoutSecondsPath)
	if err != nil {
		return nil, err
	}
	// Only a .waitForTaskToken task hears from its worker between its start
	// and its end (SendTaskHeartbeat): HeartbeatSeconds bounds the silence.
	var heartbeat time.Duration
	if callback {
		if heartbeat, err = r.seconds(ctx, input, "HeartbeatSeconds", st.HeartbeatSeconds, heartbeatExpr, st.HeartbeatSecondsPath); err != nil {
			return nil, err
		}
	}
	var wait *waiter
	if callback {
		wait = r.x.engine.register(r.token)
		defer r.x.engine.unregister(r.token, wait)
	}
	// Asked after the token is registered, so a SendTask* the hook has not
	// seen finds the task waiting.
	var replay TaskReplay
	if durable != nil && durable.Task != nil {
		replay = durable.Task(call)
	}
	// Looked up as the attempt is scheduled; a replay that finds it
	// scheduled already goes on with its history.
	if activity && !replay.Done && replay.Scheduled.IsZero() && r.x.engine.activityMissing(r.x.ID, st.Resource) {
		return nil, MissingActivity(st.Resource)
	}
	tctx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		deadline := r.x.engine.now().Add(timeout)
		if !replay.Scheduled.IsZero() {
			deadline = replay.Scheduled.Add(timeout)
		}
		tctx, cancel = r.x.engine.withDeadline(ctx, deadline)
	}
	defer cancel()
	// Each attempt's handler gets a context of its own, so a context a
	// handler kept is never rewritten; the attempt also holds the history's
	// copy of its input text, so that recording it allocates nothing more.
	att := &taskAttempt{taskContext: taskContext{Context: tctx, x: r.x, st: st, attempt: r.retry + 1, token: r.token}, input: recorded}
	// Step Functions records a service integration's resolved Parameters
	// (a lambda:invoke's FunctionName and Payload), a function's input.
	scheduled := payload
	if base == lambdaInvoke {
		scheduled = eff
	}
	sched := newHist(evTaskScheduled, st, r.fr, scheduled)
	if in != nil {
		sched.data, sched.meta = &att.input, sched.meta|histText
	} else if in, err = marshalJSON(payload); err != nil {
		return nil, newError(ErrRuntime, "state %q: cannot encode the task input: %v", st.Name, err)
	}
	// The compact event is a first attempt's, with the state's own
	// TimeoutSeconds and HeartbeatSeconds; others are kept whole.
	if (att.attempt > 1 || !st.staticTimeouts()) && r.x.recording() {
		ev := &Event{Type: "TaskScheduled", State: st.Name, Scope: r.fr.scope(), Resource: st.Resource, Attempt: att.attempt, Input: scheduled,
			TimeoutSeconds: int64(timeout / time.Second), HeartbeatSeconds: int64(heartbeat / time.Second)}
		if sched.meta&histText != 0 {
			if ev.Input, err = parseJSON(in); err != nil { // never: the engine wrote the text
				return nil, newError(ErrRuntime, "state %q: the task input is not JSON: %v", st.Name, err)
			}
		}
		sched = newHist(evOther, nil, nil, ev)
	}
	_, at := r.x.record(sched, 0, false)
	// Step Functions reports the call's start apart from its scheduling
	// (TaskStarted, or LambdaFunctionStarted for a function ARN); a replay
	// emits it again, as it emits the outcome. The handler is called at
	// once: the scheduling's clock reading serves both. An activity's
	// start is a worker taking it, which the caller records.
	if !activity {
		r.x.record(newHist(evTaskStarted, st, r.fr, nil), at, false)
	}
	if mocked {
		return r.mockAnswer(ctx, tctx, input, &replay, timeout)
	}
	if replay.Done {
		return r.replayed(input, replay)
	}
	var (
		raw  json.RawMessage
		herr error
	)
	// A callback's handler that had answered before a restart (or before
	// the execution parked) handed its token out: it is not invoked again.
	if !replay.Submitted || !callback || activity {
		raw, herr = invoke(&att.taskContext, h, in)
	}
	var se *StatesError
	if activity && errors.As(herr, &se) && se.Name == ErrRuntime {
		if replay.Scheduled.IsZero() {
			// The activity went away after the lookup: it fails the
			// execution as a missing one does, with no event of the
			// task's own.
			return nil, se
		}
		// Scheduled before (a restart, a parked task woken) and deleted
		// since: no worker can take it, and it waits on until its
		// TimeoutSeconds or HeartbeatSeconds, as it did before the
		// restart (DeleteActivity).
		herr = nil
	}
	if herr == nil && !callback {
		result, size, perr := r.taskResult(raw)
		if perr != nil {
			herr = &StatesError{Name: ErrRuntime, Cause: fmt.Sprintf("the handler of %q returned invalid JSON: %v", binding, perr)}
		} else {
			if base == lambdaInvoke {
				result = map[string]any{"ExecutedVersion": "$LATEST", "Payload": result, "StatusCode": int64(200)}
				size += len(`{"ExecutedVersion":"$LATEST","Payload":,"StatusCode":200}`)
			}
			if size > MaxPayloadBytes {
				return nil, newError(ErrDataLimitExceeded, "The state/task '%s' returned a result with a size exceeding the maximum number of bytes service limit.", st.Resource)
			}
			r.resultSize = size
			r.x.emitState(evTaskSucceeded, st, r.fr, result)
			if r.x.test != nil {
				r.inspect("result", result)
			}
			return r.finish(input, result)
		}
	}
	var result any
	if herr == nil { // callback: wait for SendTaskSuccess / SendTaskFailure
		if !activity {
			r.x.emitState(evTaskSubmitted, st, r.fr, r.submitted(raw, base == lambdaInvoke))
		}
		result, herr = wait.wait(tctx, r, heartbeat, !activity, replay.Beat)
	}
	if herr == errParked {
		return nil, herr
	}
	if herr != nil {
		return nil, r.taskFailed(ctx, tctx, herr, timeout)
	}
	r.x.emitState(evTaskSucceeded, st, r.fr, result)
	return r.finish(input, result)
}

// handler is the handler that serves a Task's binding: kept out of task's
// frame, which lies under a waiting Task for as long as it waits.
//
//go:noinline
func (r *stateRun) handler(resource, binding string) (Handler, error) {
	h, err := r.x.engine.registry.resolve(resource, binding)
	switch {
	case err != nil:
		return nil, newError(ErrRuntime, "state %q: %v", r.st.Name, err)
	case h == nil:
		return nil, newError(ErrRuntime, "state %q: no handler is registered for %q", r.st.Name, binding)
	}
	return h, nil
}

// staticTimeouts reports whether a Task's TimeoutSeconds and
// HeartbeatSeconds are the numbers its definition states (no …Path, no
// JSONata expression).
func (st *State) staticTimeouts() bool {
	if st.TimeoutSecondsPath != nil || st.HeartbeatSecondsPath != nil {
		return false
	}
	return !st.jsonata || st.ja == nil || (st.ja.Timeout == nil && st.ja.Heartbeat == nil)
}

// submitted is a .waitForTaskToken Task's TaskSubmitted output: what its
// handler returned, as the service call's response (a lambda:invoke's
// {ExecutedVersion, Payload, StatusCode}); nil when no one records it, or
// when the handler's answer is not JSON (the token, not the answer, ends
// the task).
func (r *stateRun) submitted(raw []byte, lambda bool) any {
	if !r.x.recording() {
		return nil
	}
	v, _, _, err := parseData(raw, false)
	if err != nil {
		v = nil
	}
	if lambda {
		return map[string]any{"ExecutedVersion": "$LATEST", "Payload": v, "StatusCode": int64(200)}
	}
	return v
}

// taskFailed records how the Task's attempt (whose context is tctx) failed
// with herr and returns the error the state fails with. An attempt whose
// TimeoutSeconds had run out when it failed timed out, whatever error its
// handler gave up with: Step Functions stops waiting at the deadline, so a
// Lambda's own name for the failure (TransientError) reaches nobody. It is
// task's tail, kept out of task's frame, which lies under a waiting Task
// for as long as it waits (see Execution.conclude).
func (r *stateRun) taskFailed(ctx, tctx context.Context, herr error, timeout time.Duration) error {
	st := r.st
	late := timeout > 0 && tctx.Err() == context.DeadlineExceeded
	var se *StatesError
	switch {
	case errors.As(herr, &se) && se.Heartbeat:
		r.x.emit(Event{Type: "TaskTimedOut", State: st.Name, Scope: r.fr.scope(), Error: se.Name, Heartbeat: true})
		return se
	case (late || errors.Is(herr, context.DeadlineExceeded)) && ctx.Err() == nil:
		se = timedOut(false)
		r.x.emit(Event{Type: "TaskTimedOut", State: st.Name, Scope: r.fr.scope(), Error: se.Name})
		return se
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.As(herr, &se):
		// engine-made, sent with SendTaskFailure, or declared by the
		// handler with its exact name and cause
	default:
		name := ErrorName(herr)
		cause, _ := marshalJSON(map[string]any{"errorMessage": herr.Error(), "errorType": name})
		se = &StatesError{Name: name, Cause: string(cause)}
	}
	r.x.emit(Event{Type: "TaskFailed", State: st.Name, Scope: r.fr.scope(), Error: se.Name, Cause: se.Cause})
	return se
}

// taskInput renders a Task's Parameters object straight to the handler's
// input text, without building the object: in is that text and recorded a
// copy of it for the history (both share one allocation; in's capacity ends
// where it does, so a handler appending to its input cannot reach the
// copy). When the encoder declines a value, in is nil and eff is the
// rendered object, for the general path.
func (r *stateRun) taskInput(input any) (in, recorded json.RawMessage, eff any, err error) {
	v, err := r.applyInputPath(input)
	if err != nil {
		return nil, nil, nil, err
	}
	record := r.x.recording()
	copies := 1
	if record {
		copies = 2
	}
	text, obj, err := r.st.Parameters.encodeObject(r.scope(v), copies)
	if err != nil || text == nil {
		return nil, nil, obj, err
	}
	if !record {
		return text, nil, nil, nil
	}
	n := len(text) / 2
	return text[:n:n], text[n:], nil, nil
}

// taskResult is a handler's output as a value and its size: kept as text
// when it is a canonical object or array and the state is a JSONPath one
// (raw.go; JSONata states read their result in any case), otherwise
// parsed.
func (r *stateRun) taskResult(raw []byte) (any, int, error) {
	lazy := !r.st.jsonata && !r.x.engine.eager
	if lazy {
		if rj := newRaw(raw); rj != nil {
			r.x.markLazy()
			return rj, len(rj.text), nil
		}
	}
	v, n, made, err := parseData(raw, lazy)
	if made {
		r.x.markLazy()
	}
	return v, n, err
}

// parseData parses a payload (empty means null) and measures it: exactly
// as jsonSize would, without walking it again when parseFast read it. With
// objects, small objects are overlays (parseFastMode); made reports
// whether it made one.
func parseData(raw []byte, objects bool) (v any, size int, made bool, err error) {
	if len(raw) == 0 {
		return nil, jsonSize(nil), false, nil
	}
	if v, n, made, ok := parseFastMode(string(raw), objects); ok && n != sizeUnknown {
		return v, n, made, nil
	}
	if v, err = parseJSON(raw); err != nil {
		return nil, 0, false, err
	}
	return v, jsonSize(v), false, nil
}

// TaskInfo describes the Task attempt a handler is serving
// (internal/asl/taskinfo, which handlers read without linking the engine).
type TaskInfo = taskinfo.Info

type taskInfoKey = taskinfo.Key

// taskAttempt is one attempt of a Task: its handler's context and, when the
// history records it as text, a copy of its input.
type taskAttempt struct {
	taskContext
	input json.RawMessage
}

// taskContext carries the TaskInfo to the handler: context.WithValue with
// one allocation instead of two, the TaskInfo made only if asked for.
type taskContext struct {
	context.Context
	x       *Execution
	st      *State
	attempt int
	token   string
}

func (c *taskContext) Value(key any) any {
	if _, ok := key.(taskInfoKey); ok {
		return TaskInfo{ExecutionID: c.x.ID, State: c.st.Name, Resource: c.st.Resource, Attempt: c.attempt, Token: c.token}
	}
	return c.Context.Value(key)
}

// TaskFromContext returns the Task attempt a handler was invoked for by the
// local engine (false under Lambda, where lambdacontext carries the request).
func TaskFromContext(ctx context.Context) (TaskInfo, bool) {
	return taskinfo.From(ctx)
}

// invoke calls a handler, turning a panic into an error the way the Lambda
// runtime reports one (lambdaPanicResponse): the Type of a
// messages.InvokeResponse_Error value, otherwise the name of the panic
// value's type, a pointer by its element name.
func invoke(ctx context.Context, h Handler, in json.RawMessage) (out json.RawMessage, err error) {
	defer func() {
		if p := recover(); p != nil {
			var name string
			if ir, ok := p.(messages.InvokeResponse_Error); ok {
				name = ir.Type
			} else if t := reflect.TypeOf(p); t.Kind() == reflect.Pointer {
				name = t.Elem().Name()
			} else {
				name = t.Name()
			}
			err = &StatesError{Name: name, Cause: fmt.Sprintf("handler panicked: %v", p)}
		}
	}()
	return h(ctx, in)
}

// Task tokens.

func newToken() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err)) // never happens on supported platforms
	}
	return hex.EncodeToString(b[:])
}

// waiter is a .waitForTaskToken task waiting for its outcome and, with
// HeartbeatSeconds, for heartbeats.
type waiter struct {
	done chan taskOutcome
	beat chan struct{}
}

func (e *Engine) register(token string) *waiter {
	w := &waiter{done: make(chan taskOutcome, 1), beat: make(chan struct{}, 1)}
	e.mu.Lock()
	e.pending[token] = w
	e.mu.Unlock()
	return w
}

// wait waits for the task's outcome, or ctx's end, or (heartbeat > 0) for
// a gap of more than heartbeat between heartbeats (on the engine's clock),
// counted from beat if set, else from the start of the wait when armed,
// else from the first heartbeat (an activity's worker taking its task):
// a States.Timeout marked Heartbeat. A run that may park (stateRun.parks) asks to
// once it has waited Durable.ParkAfter, and returns errParked if it does.
func (w *waiter) wait(ctx context.Context, r *stateRun, heartbeat time.Duration, armed bool, beat time.Time) (any, error) {
	e := r.x.engine
	var expired <-chan time.Time
	stop := func() bool { return false }
	if heartbeat > 0 && (armed || !beat.IsZero()) {
		if beat.IsZero() {
			beat = e.now()
		}
		expired, stop = e.timer(heartbeat - e.now().Sub(beat))
	}
	defer func() { stop() }()
	var grace <-chan time.Time
	if r.parks() {
		if after := r.x.durable.ParkAfter; after > 0 {
			t := time.NewTimer(after)
			defer t.Stop()
			grace = t.C
		} else if w.parkTask(ctx, r, heartbeat, beat) {
			return nil, errParked
		}
	}
	for {
		select {
		case o := <-w.done:
			if o.err != nil {
				return nil, o.err
			}
			return o.output, nil
		case <-w.beat:
			if heartbeat > 0 {
				stop()
				beat = e.now()
				expired, stop = e.timer(heartbeat)
			}
		case <-expired:
			return nil, timedOut(true)
		case <-grace:
			grace = nil
			if w.parkTask(ctx, r, heartbeat, beat) {
				return nil, errParked
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// seconds evaluates a Task's duration field (TimeoutSeconds or
// HeartbeatSeconds): its literal value n, its JSONata expression ja, or its
// …Path; zero when none is set.
func (r *stateRun) seconds(ctx context.Context, input any, field string, n int64, ja *jvalue, p *path) (time.Duration, error) {
	if ja != nil {
		v, err := r.jsonataInt(r.jsonataEnv(ctx, input, nil), ja, field, 1)
		if err != nil {
			return 0, err
		}
		n = v
	}
	if p != nil {
		v, found := r.scope(input).lookup(p)
		if !found {
			return 0, newError(ErrRuntime, "Invalid path '%s' : No results for path: %s", p.raw, p.normalized())
		}
		i, isInt := asInt(v)
		if !isInt || i <= 0 {
			return 0, newError(ErrRuntime, "Expected non-negative integer for %sPath, got '%s' instead.", field, plainText(v))
		}
		n = i
	}
	return time.Duration(n) * time.Second, nil
}

// unregister forgets w, the waiter of token, unless the token waits with
// another one: a parked execution resumed by replay registers its token
// again, maybe before its first run's goroutine is gone.
func (e *Engine) unregister(token string, w *waiter) {
	e.mu.Lock()
	if e.pending[token] == w {
		delete(e.pending, token)
	}
	e.mu.Unlock()
}

// TaskTimedOut is returned by SendTaskSuccess and SendTaskFailure for a token
// that is unknown, already used, or whose task has ended (the name Step
// Functions gives this error).
type TaskTimedOut struct{ Token string }

func (e *TaskTimedOut) Error() string {
	return "task token is unknown or its task is no longer waiting"
}

func (e *Engine) deliver(token string, o taskOutcome) error {
	e.mu.Lock()
	w, ok := e.pending[token]
	if ok {
		delete(e.pending, token)
	}
	e.mu.Unlock()
	if !ok {
		return &TaskTimedOut{Token: token}
	}
	w.done <- o
	return nil
}

// SendTaskHeartbeat tells the waiting Task whose $$.Task.Token is token
// that its worker is alive: its HeartbeatSeconds count again from now.
func (e *Engine) SendTaskHeartbeat(token string) error {
	e.mu.Lock()
	w, ok := e.pending[token]
	e.mu.Unlock()
	if !ok {
		return &TaskTimedOut{Token: token}
	}
	select {
	case w.beat <- struct{}{}:
	default: // a heartbeat is already on its way
	}
	return nil
}

// SendTaskSuccess completes the waiting Task whose $$.Task.Token is token
// with output as its result.
func (e *Engine) SendTaskSuccess(token string, output json.RawMessage) error {
	v, err := parseJSON(output)
	if err != nil {
		return fmt.Errorf("send task success: output is not valid JSON: %w", err)
	}
	return e.deliver(token, taskOutcome{output: v})
}

// SendTaskFailure fails the waiting Task whose $$.Task.Token is token with
// the given error name and cause.
func (e *Engine) SendTaskFailure(token, errName, cause string) error {
	if errName == "" {
		errName = ErrTaskFailed
	}
	return e.deliver(token, taskOutcome{err: &StatesError{Name: errName, Cause: cause}})
}
