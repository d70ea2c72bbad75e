package asl

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	mrand "math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"time"
)

// MaxPayloadBytes is Step Functions' limit on the payload passed between
// states (256 KiB). Exceeding it fails with States.DataLimitExceeded.
const MaxPayloadBytes = 256 * 1024

// inlineMapConcurrency is how many iterations an inline Map with
// MaxConcurrency 0 runs at once (Step Functions' inline-mode ceiling).
const inlineMapConcurrency = 40

// Execution statuses, as Step Functions names them.
const (
	StatusRunning   = "RUNNING"
	StatusSucceeded = "SUCCEEDED"
	StatusFailed    = "FAILED"
	StatusTimedOut  = "TIMED_OUT"
	StatusAborted   = "ABORTED"
)

// Engine runs state machines in-process, binding Task states to the handlers
// of its Registry. It is safe for concurrent use; one Engine can run many
// executions at once.
type Engine struct {
	registry *Registry
	logger   *slog.Logger
	now      func() time.Time

	mu      sync.Mutex
	pending map[string]chan taskOutcome // task tokens awaiting SendTask*
}

// Option configures an Engine.
type Option func(*Engine)

// WithLogger sets the engine's logger (default: slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(e *Engine) { e.logger = l } }

// WithClock replaces time.Now for event timestamps and the context object.
func WithClock(now func() time.Time) Option { return func(e *Engine) { e.now = now } }

// New returns an engine that dispatches Task states through reg.
func New(reg *Registry, opts ...Option) *Engine {
	e := &Engine{registry: reg, logger: slog.Default(), now: time.Now, pending: map[string]chan taskOutcome{}}
	for _, o := range opts {
		o(e)
	}
	return e
}

// StartOptions are per-execution settings.
type StartOptions struct {
	// Name is the execution name (default: a random id).
	Name string
	// StateMachineName names the machine in $$.StateMachine and ARNs.
	StateMachineName string
	// OnEvent, when set, is called with every history event as it is
	// recorded (for progress display). It must not block for long.
	OnEvent func(Event)
}

// Result is the outcome of a finished execution.
type Result struct {
	Status      string          `json:"status"`
	Output      json.RawMessage `json:"output,omitempty"`
	Error       string          `json:"error,omitempty"`
	Cause       string          `json:"cause,omitempty"`
	History     []Event         `json:"-"`
	Transitions int             `json:"transitions"`
}

// Execution is one running (or finished) execution.
type Execution struct {
	ID        string
	Name      string
	StartTime time.Time

	engine  *Engine
	sm      *StateMachine
	smName  string
	input   any
	onEvent func(Event)
	cancel  context.CancelFunc

	mu     sync.Mutex
	events []Event

	done   chan struct{}
	result *Result
}

// Check reports every Task resource of sm (including inside Parallel
// branches and Map processors) that the registry cannot serve.
func (e *Engine) Check(sm *StateMachine) error {
	var errs []error
	walkStates(sm, func(st *State) {
		if st.Type != "Task" {
			return
		}
		name, ok := staticBinding(st)
		if !ok {
			return // FunctionName chosen at run time
		}
		if _, found := e.registry.lookup(name); !found {
			errs = append(errs, &UnboundError{State: st.Name, Resource: st.Resource, Binding: name})
		}
	})
	return errors.Join(errs...)
}

func walkStates(sm *StateMachine, fn func(*State)) {
	for _, name := range sm.order {
		st := sm.States[name]
		fn(st)
		for _, b := range st.Branches {
			walkStates(b, fn)
		}
		if st.Processor != nil {
			walkStates(st.Processor, fn)
		}
	}
}

// staticBinding is the registry name a Task resolves to when it is known
// before running.
func staticBinding(st *State) (string, bool) {
	res := strings.TrimSuffix(st.Resource, waitForTaskToken)
	if res != lambdaInvoke {
		return bindingName(res), true
	}
	if st.Parameters == nil {
		return "", true
	}
	if st.Parameters.kind == tmplLiteral {
		if m, ok := st.Parameters.literal.(map[string]any); ok {
			if fn, ok := m["FunctionName"].(string); ok {
				return bindingName(fn), true
			}
		}
		return "", true
	}
	for _, f := range st.Parameters.fields {
		if f.raw == "FunctionName" && f.value.kind == tmplLiteral {
			if fn, ok := f.value.literal.(string); ok {
				return bindingName(fn), true
			}
		}
	}
	return "", false
}

// Run starts an execution and waits for it to finish.
func (e *Engine) Run(ctx context.Context, sm *StateMachine, input json.RawMessage, opts StartOptions) (*Result, error) {
	x, err := e.Start(ctx, sm, input, opts)
	if err != nil {
		return nil, err
	}
	return x.Wait(ctx)
}

// Start validates the input and the bindings and starts an execution in the
// background. Errors returned here mean no execution was started.
func (e *Engine) Start(ctx context.Context, sm *StateMachine, input json.RawMessage, opts StartOptions) (*Execution, error) {
	if err := e.Check(sm); err != nil {
		return nil, err
	}
	if len(strings.TrimSpace(string(input))) == 0 {
		input = json.RawMessage("{}")
	}
	in, err := parseJSON(input)
	if err != nil {
		return nil, fmt.Errorf("execution input is not valid JSON: %w", err)
	}
	if n := jsonSize(in); n > MaxPayloadBytes {
		return nil, fmt.Errorf("execution input is %d bytes, over the %d-byte limit", n, MaxPayloadBytes)
	}
	name := opts.Name
	if name == "" {
		name = newToken()[:32]
	}
	smName := opts.StateMachineName
	if smName == "" {
		smName = "local"
	}
	x := &Execution{
		ID:        fmt.Sprintf("arn:aws:states:local:000000000000:execution:%s:%s", smName, name),
		Name:      name,
		StartTime: e.now().UTC(),
		engine:    e,
		sm:        sm,
		smName:    smName,
		input:     in,
		onEvent:   opts.OnEvent,
		done:      make(chan struct{}),
	}
	// The execution outlives the caller's request context only by the
	// caller's choice: cancelling ctx aborts it.
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	if sm.TimeoutSeconds > 0 {
		runCtx, cancel = context.WithTimeout(context.WithoutCancel(ctx), time.Duration(sm.TimeoutSeconds)*time.Second)
	}
	x.cancel = cancel
	stop := context.AfterFunc(ctx, cancel)
	go func() {
		defer stop()
		defer cancel()
		x.run(runCtx)
	}()
	return x, nil
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
	x.mu.Lock()
	defer x.mu.Unlock()
	return append([]Event(nil), x.events...)
}

func (x *Execution) emit(ev Event) {
	ev.Timestamp = x.engine.now()
	x.mu.Lock()
	ev.ID = len(x.events) + 1
	x.events = append(x.events, ev)
	x.mu.Unlock()
	if x.onEvent != nil {
		x.onEvent(ev)
	}
}

func (x *Execution) run(ctx context.Context) {
	defer close(x.done)
	x.emit(Event{Type: "ExecutionStarted", Input: x.input})
	out, err := x.runMachine(ctx, x.sm, x.input, rootFrame)
	res := &Result{}
	switch {
	case err == nil:
		b, merr := marshalJSON(out)
		if merr != nil {
			res.Status, res.Error, res.Cause = StatusFailed, ErrRuntime, merr.Error()
			break
		}
		res.Status, res.Output = StatusSucceeded, b
		x.emit(Event{Type: "ExecutionSucceeded", Output: out})
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		res.Status, res.Error = StatusTimedOut, ErrTimeout
		res.Cause = fmt.Sprintf("the execution ran longer than its TimeoutSeconds (%d)", x.sm.TimeoutSeconds)
		x.emit(Event{Type: "ExecutionTimedOut", Error: res.Error, Cause: res.Cause})
	case errors.Is(ctx.Err(), context.Canceled):
		res.Status, res.Error, res.Cause = StatusAborted, "States.Aborted", "the execution was stopped"
		x.emit(Event{Type: "ExecutionAborted"})
	default:
		se := toStatesError(err)
		res.Status, res.Error, res.Cause = StatusFailed, se.Name, se.Cause
		x.emit(Event{Type: "ExecutionFailed", Error: se.Name, Cause: se.Cause})
	}
	res.History = x.History()
	res.Transitions = Transitions(res.History)
	x.result = res
}

// toStatesError gives any error an ASL name: a *StatesError keeps its own.
func toStatesError(err error) *StatesError {
	var se *StatesError
	if errors.As(err, &se) {
		return se
	}
	return &StatesError{Name: ErrRuntime, Cause: err.Error()}
}

// frame locates a nested machine run (a Parallel branch or Map iteration).
type frame struct {
	scope string
}

var rootFrame = &frame{}

func (f *frame) child(s string) *frame {
	if f.scope == "" {
		return &frame{scope: s}
	}
	return &frame{scope: f.scope + "/" + s}
}

func (x *Execution) runMachine(ctx context.Context, sm *StateMachine, input any, fr *frame) (any, error) {
	name := sm.StartAt
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		st := sm.States[name]
		out, next, err := x.runState(ctx, st, input, fr)
		if err != nil {
			return nil, err
		}
		if next == "" {
			return out, nil
		}
		input, name = out, next
	}
}

// stateRun carries what one attempt of a state needs.
type stateRun struct {
	x       *Execution
	st      *State
	fr      *frame
	entered time.Time
	retry   int
	token   string
	mapItem *mapItem
}

type mapItem struct {
	index int
	value any
}

// context builds the context object ($$) for this state attempt.
func (r *stateRun) context() any {
	x := r.x
	state := map[string]any{
		"Name":        r.st.Name,
		"EnteredTime": formatTime(r.entered),
		"RetryCount":  int64(r.retry),
	}
	c := map[string]any{
		"Execution": map[string]any{
			"Id":           x.ID,
			"Name":         x.Name,
			"Input":        x.input,
			"StartTime":    formatTime(x.StartTime),
			"RoleArn":      "arn:aws:iam::000000000000:role/local",
			"RedriveCount": int64(0),
		},
		"StateMachine": map[string]any{
			"Id":   "arn:aws:states:local:000000000000:stateMachine:" + x.smName,
			"Name": x.smName,
		},
		"State": state,
	}
	if r.token != "" {
		c["Task"] = map[string]any{"Token": r.token}
	}
	if r.mapItem != nil {
		c["Map"] = map[string]any{"Item": map[string]any{"Index": int64(r.mapItem.index), "Value": r.mapItem.value}}
	}
	return c
}

func formatTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

func (r *stateRun) scope(input any) *scope {
	var cached any
	return &scope{input: input, context: func() any {
		if cached == nil {
			cached = r.context()
		}
		return cached
	}}
}

func (x *Execution) runState(ctx context.Context, st *State, input any, fr *frame) (any, string, error) {
	r := &stateRun{x: x, st: st, fr: fr, entered: x.engine.now()}
	x.emit(Event{Type: st.Type + "StateEntered", State: st.Name, Scope: fr.scope, Input: input})

	var (
		out  any
		next string
		err  error
	)
	switch st.Type {
	case "Pass":
		out, err = r.pass(input)
		next = st.Next
	case "Choice":
		out, next, err = r.choice(input)
	case "Wait":
		out, err = r.wait(ctx, input)
		next = st.Next
	case "Succeed":
		out, err = r.succeed(input)
	case "Fail":
		err = r.fail(input)
		if err != nil {
			return nil, "", err
		}
	case "Task", "Parallel", "Map":
		out, next, err = r.withRetry(ctx, input)
	default:
		err = newError(ErrRuntime, "state %q has unsupported type %q", st.Name, st.Type)
	}
	if err != nil {
		return nil, "", err
	}
	if n := jsonSize(out); n > MaxPayloadBytes {
		return nil, "", newError(ErrDataLimitExceeded, "the output of state %q is %d bytes, over the %d-byte limit between states", st.Name, n, MaxPayloadBytes)
	}
	x.emit(Event{Type: st.Type + "StateExited", State: st.Name, Scope: fr.scope, Output: out})
	return out, next, nil
}

// applyInputPath selects the effective input. A null InputPath yields {}.
func (r *stateRun) applyInputPath(input any) (any, error) {
	ip := r.st.InputPath
	if ip.null {
		return map[string]any{}, nil
	}
	v, ok := r.scope(input).lookup(ip.p)
	if !ok {
		return nil, newError(ErrRuntime, "an error occurred while executing the state %q: invalid InputPath %q: the path selects nothing in the state input", r.st.Name, ip.p.raw)
	}
	return v, nil
}

func (r *stateRun) applyOutputPath(v any) (any, error) {
	op := r.st.OutputPath
	if op.null {
		return map[string]any{}, nil
	}
	out, ok := r.scope(v).lookup(op.p)
	if !ok {
		return nil, newError(ErrRuntime, "an error occurred while executing the state %q: invalid OutputPath %q: the path selects nothing in the state output", r.st.Name, op.p.raw)
	}
	return out, nil
}

// applyResultPath combines the raw state input with the result.
func (r *stateRun) applyResultPath(rp optPath, input, result any) (any, error) {
	if rp.null {
		return input, nil
	}
	out, err := rp.p.set(input, result)
	if err != nil {
		return nil, newError(ErrResultPathMatchFailure, "state %q: unable to apply ResultPath %q to the state input: %v", r.st.Name, rp.p.raw, err)
	}
	return out, nil
}

// effectiveInput applies InputPath then Parameters.
func (r *stateRun) effectiveInput(input any) (any, error) {
	v, err := r.applyInputPath(input)
	if err != nil {
		return nil, err
	}
	if r.st.Parameters != nil {
		return r.st.Parameters.eval(r.scope(v))
	}
	return v, nil
}

// finish applies ResultSelector, ResultPath and OutputPath to a result.
func (r *stateRun) finish(input, result any) (any, error) {
	if r.st.ResultSelector != nil {
		sel, err := r.st.ResultSelector.eval(r.scope(result))
		if err != nil {
			return nil, err
		}
		result = sel
	}
	out, err := r.applyResultPath(r.st.ResultPath, input, result)
	if err != nil {
		return nil, err
	}
	return r.applyOutputPath(out)
}

func (r *stateRun) pass(input any) (any, error) {
	eff, err := r.effectiveInput(input)
	if err != nil {
		return nil, err
	}
	result := eff
	if r.st.hasResult {
		result = r.st.Result
	}
	return r.finish(input, result)
}

func (r *stateRun) succeed(input any) (any, error) {
	v, err := r.applyInputPath(input)
	if err != nil {
		return nil, err
	}
	return r.applyOutputPath(v)
}

func (r *stateRun) choice(input any) (any, string, error) {
	v, err := r.applyInputPath(input)
	if err != nil {
		return nil, "", err
	}
	sc := r.scope(v)
	next := ""
	for _, rule := range r.st.Choices {
		ok, err := rule.match(sc)
		if err != nil {
			return nil, "", err
		}
		if ok {
			next = rule.Next
			break
		}
	}
	if next == "" {
		next = r.st.Default
	}
	if next == "" {
		return nil, "", newError(ErrNoChoiceMatched, "no Choice rule of state %q matched the input and it has no Default", r.st.Name)
	}
	out, err := r.applyOutputPath(v)
	return out, next, err
}

func (r *stateRun) wait(ctx context.Context, input any) (any, error) {
	v, err := r.applyInputPath(input)
	if err != nil {
		return nil, err
	}
	st := r.st
	var until time.Time
	now := r.x.engine.now()
	switch {
	case st.hasSeconds:
		until = now.Add(time.Duration(st.Seconds) * time.Second)
	case st.hasTimestamp:
		until = st.Timestamp
	case st.SecondsPath != nil:
		raw, ok := r.scope(v).lookup(st.SecondsPath)
		n, isInt := asInt(raw)
		if !ok || !isInt || n < 0 {
			return nil, newError(ErrRuntime, "state %q: SecondsPath %q must select a non-negative integer, got %s", st.Name, st.SecondsPath.raw, describe(raw, ok))
		}
		until = now.Add(time.Duration(n) * time.Second)
	case st.TimestampPath != nil:
		raw, ok := r.scope(v).lookup(st.TimestampPath)
		s, isStr := raw.(string)
		ts, perr := time.Parse(time.RFC3339Nano, s)
		if !ok || !isStr || perr != nil {
			return nil, newError(ErrRuntime, "state %q: TimestampPath %q must select an RFC3339 timestamp, got %s", st.Name, st.TimestampPath.raw, describe(raw, ok))
		}
		until = ts
	}
	if d := until.Sub(now); d > 0 {
		if err := sleep(ctx, d); err != nil {
			return nil, err
		}
	}
	return r.applyOutputPath(v)
}

func describe(v any, found bool) string {
	if !found {
		return "nothing"
	}
	b, err := marshalJSON(v)
	if err != nil || len(b) > 80 {
		return typeName(v)
	}
	return string(b)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *stateRun) fail(input any) error {
	st := r.st
	name, cause := st.Error, st.Cause
	sc := r.scope(input)
	if st.ErrorPath != nil {
		v, err := st.ErrorPath.eval(sc)
		if err != nil {
			return err
		}
		s, ok := v.(string)
		if !ok {
			return newError(ErrRuntime, "state %q: ErrorPath must produce a string, got %s", st.Name, typeName(v))
		}
		name = s
	}
	if st.CausePath != nil {
		v, err := st.CausePath.eval(sc)
		if err != nil {
			return err
		}
		s, ok := v.(string)
		if !ok {
			return newError(ErrRuntime, "state %q: CausePath must produce a string, got %s", st.Name, typeName(v))
		}
		cause = s
	}
	return &StatesError{Name: name, Cause: cause}
}

// withRetry runs a Task, Parallel or Map state with its Retry and Catch.
func (r *stateRun) withRetry(ctx context.Context, input any) (any, string, error) {
	st := r.st
	attempts := make([]int, len(st.Retry))
	for {
		var (
			out any
			err error
		)
		switch st.Type {
		case "Task":
			out, err = r.task(ctx, input)
		case "Parallel":
			out, err = r.parallel(ctx, input)
		case "Map":
			out, err = r.mapState(ctx, input)
		}
		if err == nil {
			return out, st.Next, nil
		}
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		se := toStatesError(err)
		if i := matchIndex(st.Retry, se.Name); i >= 0 && attempts[i] < st.Retry[i].MaxAttempts {
			rt := st.Retry[i]
			delay := rt.IntervalSeconds * math.Pow(rt.BackoffRate, float64(attempts[i]))
			if rt.MaxDelaySeconds > 0 && delay > rt.MaxDelaySeconds {
				delay = rt.MaxDelaySeconds
			}
			if rt.JitterFull {
				delay = mrand.Float64() * delay
			}
			attempts[i]++
			r.retry++
			r.x.engine.logger.DebugContext(ctx, "retrying state", "state", st.Name, "error", se.Name, "attempt", r.retry)
			if err := sleep(ctx, time.Duration(delay*float64(time.Second))); err != nil {
				return nil, "", err
			}
			r.entered = r.x.engine.now()
			continue
		}
		for _, c := range st.Catch {
			if !errorMatches(c.ErrorEquals, se.Name) {
				continue
			}
			errOut := map[string]any{"Error": se.Name, "Cause": se.Cause}
			out, perr := r.applyResultPath(c.ResultPath, input, errOut)
			if perr != nil {
				return nil, "", perr
			}
			return out, c.Next, nil
		}
		return nil, "", se
	}
}

func matchIndex(rs []*retrier, name string) int {
	for i, rt := range rs {
		if errorMatches(rt.ErrorEquals, name) {
			return i
		}
	}
	return -1
}

// errorMatches applies ErrorEquals: exact names, States.ALL (any error but
// the terminal States.Runtime and States.DataLimitExceeded) and
// States.TaskFailed (any of those but States.Timeout).
func errorMatches(list []string, name string) bool {
	terminal := name == ErrRuntime || name == ErrDataLimitExceeded
	for _, e := range list {
		switch {
		case e == name && name != ErrRuntime:
			return true
		case e == ErrAll && !terminal:
			return true
		case e == ErrTaskFailed && !terminal && name != ErrTimeout:
			return true
		}
	}
	return false
}

// taskOutcome is what SendTaskSuccess / SendTaskFailure deliver.
type taskOutcome struct {
	output any
	err    *StatesError
}

func (r *stateRun) task(ctx context.Context, input any) (any, error) {
	st := r.st
	base := strings.TrimSuffix(st.Resource, waitForTaskToken)
	callback := base != st.Resource
	if callback {
		r.token = newToken()
	}
	eff, err := r.effectiveInput(input)
	if err != nil {
		return nil, err
	}
	binding, payload := bindingName(base), eff
	if base == lambdaInvoke {
		params, _ := eff.(map[string]any)
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
	h, ok := r.x.engine.registry.lookup(binding)
	if !ok {
		return nil, newError(ErrRuntime, "state %q: no handler is registered for %q", st.Name, binding)
	}

	timeout := time.Duration(st.TimeoutSeconds) * time.Second
	if st.TimeoutSecondsPath != nil {
		v, found := r.scope(input).lookup(st.TimeoutSecondsPath)
		n, isInt := asInt(v)
		if !found || !isInt || n <= 0 {
			return nil, newError(ErrRuntime, "state %q: TimeoutSecondsPath %q must select a positive integer, got %s", st.Name, st.TimeoutSecondsPath.raw, describe(v, found))
		}
		timeout = time.Duration(n) * time.Second
	}
	tctx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		tctx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()

	var wait chan taskOutcome
	if callback {
		wait = r.x.engine.register(r.token)
		defer r.x.engine.unregister(r.token)
	}
	in, err := marshalJSON(payload)
	if err != nil {
		return nil, newError(ErrRuntime, "state %q: cannot encode the task input: %v", st.Name, err)
	}
	r.x.emit(Event{Type: "TaskScheduled", State: st.Name, Scope: r.fr.scope, Resource: st.Resource, Attempt: r.retry + 1, Input: payload})
	info := TaskInfo{ExecutionID: r.x.ID, State: st.Name, Resource: st.Resource, Attempt: r.retry + 1, Token: r.token}
	raw, herr := invoke(context.WithValue(tctx, taskInfoKey{}, info), h, in)
	if herr == nil && !callback {
		result, perr := parseJSON(raw)
		if len(raw) == 0 {
			result, perr = nil, nil
		}
		if perr != nil {
			herr = &StatesError{Name: ErrRuntime, Cause: fmt.Sprintf("the handler of %q returned invalid JSON: %v", binding, perr)}
		} else {
			if base == lambdaInvoke {
				result = map[string]any{"ExecutedVersion": "$LATEST", "Payload": result, "StatusCode": int64(200)}
			}
			if n := jsonSize(result); n > MaxPayloadBytes {
				return nil, newError(ErrDataLimitExceeded, "the result of task %q is %d bytes, over the %d-byte limit", st.Name, n, MaxPayloadBytes)
			}
			r.x.emit(Event{Type: "TaskSucceeded", State: st.Name, Scope: r.fr.scope, Output: result})
			return r.finish(input, result)
		}
	}
	var result any
	if herr == nil { // callback: wait for SendTaskSuccess / SendTaskFailure
		select {
		case o := <-wait:
			if o.err != nil {
				herr = o.err
			} else {
				result = o.output
			}
		case <-tctx.Done():
			herr = tctx.Err()
		}
	}
	if herr != nil {
		var se *StatesError
		switch {
		case errors.Is(herr, context.DeadlineExceeded) && ctx.Err() == nil:
			se = newError(ErrTimeout, "state %q did not finish within %s", st.Name, timeout)
			r.x.emit(Event{Type: "TaskTimedOut", State: st.Name, Scope: r.fr.scope, Error: se.Name, Cause: se.Cause})
			return nil, se
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.As(herr, &se):
			// engine-made, sent with SendTaskFailure, or declared by the
			// handler with its exact name and cause
		default:
			name := ErrorName(herr)
			cause, _ := marshalJSON(map[string]any{"errorMessage": herr.Error(), "errorType": name})
			se = &StatesError{Name: name, Cause: string(cause)}
		}
		r.x.emit(Event{Type: "TaskFailed", State: st.Name, Scope: r.fr.scope, Error: se.Name, Cause: se.Cause})
		return nil, se
	}
	r.x.emit(Event{Type: "TaskSucceeded", State: st.Name, Scope: r.fr.scope, Output: result})
	return r.finish(input, result)
}

// TaskInfo describes the Task attempt a handler is serving.
type TaskInfo struct {
	ExecutionID string
	State       string
	Resource    string
	Attempt     int    // 1 for the first attempt, 2 for the first retry…
	Token       string // the task token of a .waitForTaskToken task
}

type taskInfoKey struct{}

// TaskFromContext returns the Task attempt a handler was invoked for by the
// local engine (false under Lambda, where lambdacontext carries the request).
func TaskFromContext(ctx context.Context) (TaskInfo, bool) {
	ti, ok := ctx.Value(taskInfoKey{}).(TaskInfo)
	return ti, ok
}

// invoke calls a handler, turning a panic into an error the way the Lambda
// runtime reports one (named after the panic value's type).
func invoke(ctx context.Context, h Handler, in json.RawMessage) (out json.RawMessage, err error) {
	defer func() {
		if p := recover(); p != nil {
			t := reflect.TypeOf(p)
			name := "panic"
			if t != nil {
				if t.Kind() == reflect.Pointer {
					t = t.Elem()
				}
				name = t.Name()
			}
			err = &StatesError{Name: name, Cause: fmt.Sprintf("handler panicked: %v", p)}
		}
	}()
	return h(ctx, in)
}

func (r *stateRun) parallel(ctx context.Context, input any) (any, error) {
	st := r.st
	eff, err := r.effectiveInput(input)
	if err != nil {
		return nil, err
	}
	r.x.emit(Event{Type: "ParallelStateStarted", State: st.Name, Scope: r.fr.scope, Length: intPtr(len(st.Branches))})
	results := make([]any, len(st.Branches))
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
	)
	for i, b := range st.Branches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := r.x.runMachine(bctx, b, eff, r.fr.child(fmt.Sprintf("%s/branch[%d]", st.Name, i)))
			if err != nil {
				once.Do(func() { firstErr = err; cancel() })
				return
			}
			results[i] = out
		}()
	}
	wg.Wait()
	if firstErr != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		se := toStatesError(firstErr)
		r.x.emit(Event{Type: "ParallelStateFailed", State: st.Name, Scope: r.fr.scope, Error: se.Name, Cause: se.Cause})
		return nil, se
	}
	r.x.emit(Event{Type: "ParallelStateSucceeded", State: st.Name, Scope: r.fr.scope})
	return r.finish(input, results)
}

func (r *stateRun) mapState(ctx context.Context, input any) (any, error) {
	st := r.st
	eff, err := r.applyInputPath(input)
	if err != nil {
		return nil, err
	}
	itemsPath := st.ItemsPath
	if itemsPath == nil {
		itemsPath = rootPath
	}
	raw, ok := r.scope(eff).lookup(itemsPath)
	items, isArr := raw.([]any)
	if !ok || !isArr {
		return nil, newError(ErrRuntime, "state %q: ItemsPath %q must select an array, got %s", st.Name, itemsPath.raw, describe(raw, ok))
	}
	limit := int(st.MaxConcurrency)
	if st.MaxConcurrencyPath != nil {
		v, found := r.scope(eff).lookup(st.MaxConcurrencyPath)
		n, isInt := asInt(v)
		if !found || !isInt || n < 0 {
			return nil, newError(ErrRuntime, "state %q: MaxConcurrencyPath %q must select a non-negative integer, got %s", st.Name, st.MaxConcurrencyPath.raw, describe(v, found))
		}
		limit = int(n)
	}
	if limit <= 0 || limit > inlineMapConcurrency {
		limit = min(inlineMapConcurrency, max(limit, 0))
		if limit == 0 {
			limit = inlineMapConcurrency
		}
	}
	limit = min(limit, max(len(items), 1))

	// Item inputs are computed up front so a selector error fails the state
	// before any iteration runs.
	inputs := make([]any, len(items))
	for i, it := range items {
		if st.ItemSelector == nil {
			inputs[i] = it
			continue
		}
		ir := *r
		ir.mapItem = &mapItem{index: i, value: it}
		v, err := st.ItemSelector.eval(ir.scope(eff))
		if err != nil {
			return nil, err
		}
		inputs[i] = v
	}

	r.x.emit(Event{Type: "MapStateStarted", State: st.Name, Scope: r.fr.scope, Length: intPtr(len(items))})
	results := make([]any, len(items))
	mctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
		next     = make(chan int)
	)
	for w := 0; w < limit; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fr := r.fr.child(fmt.Sprintf("%s/item[%d]", st.Name, i))
				r.x.emit(Event{Type: "MapIterationStarted", State: st.Name, Scope: r.fr.scope, Index: intPtr(i)})
				out, err := r.x.runMachine(mctx, st.Processor, inputs[i], fr)
				if err != nil {
					se := toStatesError(err)
					r.x.emit(Event{Type: "MapIterationFailed", State: st.Name, Scope: r.fr.scope, Index: intPtr(i), Error: se.Name, Cause: se.Cause})
					once.Do(func() { firstErr = err; cancel() })
					continue
				}
				results[i] = out
				r.x.emit(Event{Type: "MapIterationSucceeded", State: st.Name, Scope: r.fr.scope, Index: intPtr(i)})
			}
		}()
	}
feed:
	for i := range items {
		select {
		case next <- i:
		case <-mctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		se := toStatesError(firstErr)
		r.x.emit(Event{Type: "MapStateFailed", State: st.Name, Scope: r.fr.scope, Error: se.Name, Cause: se.Cause})
		return nil, se
	}
	r.x.emit(Event{Type: "MapStateSucceeded", State: st.Name, Scope: r.fr.scope})
	return r.finish(input, results)
}

// Task tokens.

func newToken() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err)) // never happens on supported platforms
	}
	return hex.EncodeToString(b[:])
}

func (e *Engine) register(token string) chan taskOutcome {
	ch := make(chan taskOutcome, 1)
	e.mu.Lock()
	e.pending[token] = ch
	e.mu.Unlock()
	return ch
}

func (e *Engine) unregister(token string) {
	e.mu.Lock()
	delete(e.pending, token)
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
	ch, ok := e.pending[token]
	if ok {
		delete(e.pending, token)
	}
	e.mu.Unlock()
	if !ok {
		return &TaskTimedOut{Token: token}
	}
	ch <- o
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
