package asl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// MaxPayloadBytes is Step Functions' limit on the payload passed between
// states (256 KiB). Exceeding it fails with States.DataLimitExceeded.
const MaxPayloadBytes = 256 * 1024

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
	// clock is the engine's time (WithClock); nil is the real clock, read
	// and waited on directly. now is its Now.
	clock Clock
	now   func() time.Time
	// eager makes no lazy values: it parses every Task result and the
	// input into maps, builds payload objects as maps and copies every
	// object ResultPath sets into (tests compare it with the lazy values
	// of raw.go and overlay.go).
	eager bool
	// activities serves Task states whose Resource is an activity ARN
	// (WithActivities); nil leaves them unbound. activityExists (nil:
	// all do) tells whether an activity exists when its Task runs.
	activities     Handler
	activityExists func(execution, arn string) bool

	mu      sync.Mutex
	pending map[string]*waiter // task tokens awaiting SendTask*
}

// Option configures an Engine.
type Option func(*Engine)

// WithLogger sets the engine's logger (default: slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(e *Engine) { e.logger = l } }

// New returns an engine that dispatches Task states through reg.
func New(reg *Registry, opts ...Option) *Engine {
	e := &Engine{registry: reg, logger: slog.Default(), now: time.Now, pending: map[string]*waiter{}}
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
	// recorded (for progress display, streaming), one event at a time and
	// in ID order. It must not block for long.
	OnEvent func(Event)

	// ExecutionARN and StateMachineARN, when set, are the ids the context
	// object reports ($$.Execution.Id, $$.StateMachine.Id) instead of local
	// ones derived from the names.
	ExecutionARN    string
	StateMachineARN string
	// StartTime, when set, is the execution's recorded start: a resumed
	// execution keeps its $$.Execution.StartTime, and its TimeoutSeconds
	// counts from then.
	StartTime time.Time
	// Durable, when set, resumes a recorded execution (see Durable).
	Durable *Durable
	// OnDone, when set, is called with the result once the execution has
	// finished, from the execution's goroutine (so a caller tracking many
	// executions needs no goroutine of its own per execution).
	OnDone func(*Result)
	// DiscardHistory keeps no events in memory (Result.History returns nil):
	// for a caller that records them from OnEvent, so that many long-lived
	// executions cost little memory.
	DiscardHistory bool
	// MaxWait, when set, bounds every Wait state: one that would wait
	// longer fails the execution at once with States.Timeout, instead of
	// sleeping toward an end the caller will not wait for (TestState's
	// five-minute limit).
	MaxWait time.Duration
	// MaxDuration, when set, bounds the execution whatever its
	// TimeoutSeconds: past it the execution is TIMED_OUT (an Express
	// workflow's five minutes).
	MaxDuration time.Duration
	// TimeoutFrom, when set, is when the machine's TimeoutSeconds starts
	// counting, instead of the start: a redriven execution's counts from
	// its redrive.
	TimeoutFrom time.Time
	// Mock, when set, answers the Tasks of the states it mocks in place of
	// their handlers (a mock configuration's test case, see TaskMock).
	Mock TaskMock
	// Buckets, when set, is what a Distributed Map's ItemReader and
	// ResultWriter reach (without: they fail, naming why).
	Buckets Buckets
	// MapRuns, when set, runs the children of Distributed Map states
	// (without: in-process on this engine, unrecorded).
	MapRuns MapRunner
	// Variables, when set, are the execution's variables as it starts
	// (TestState's variables).
	Variables map[string]any
	// Context, when set, is the context object ($$, $states.context) of
	// the execution's own states instead of the one built for them
	// (TestState's context).
	Context map[string]any
	// Test, when set, runs the execution as TestState runs its state
	// (teststate.go).
	Test *TestHooks
}

// Result is the outcome of a finished execution.
type Result struct {
	Status      string          `json:"status"`
	Output      json.RawMessage `json:"output,omitempty"`
	Error       string          `json:"error,omitempty"`
	Cause       string          `json:"cause,omitempty"`
	Transitions int             `json:"transitions"`
	// Parked, when set, reports that the execution parked (Durable.Park)
	// rather than finished: Status is RUNNING and nothing more was
	// recorded.
	Parked *Parked `json:"-"`

	hist   *history // the kept history (nil with DiscardHistory)
	events int      // how many events it holds
}

// History returns the execution's history events in order (nil when the
// execution ran with DiscardHistory). Each call builds a new slice.
func (r *Result) History() []Event {
	if r.hist == nil {
		return nil
	}
	return r.hist.events(r.events)
}

// Check reports every Task resource of sm (including inside Parallel
// branches and Map processors) that the registry cannot serve.
func (e *Engine) Check(sm *StateMachine) error { return e.check(sm, nil) }

// check is Check for an execution whose mock answers the states it mocks:
// those need no handler.
func (e *Engine) check(sm *StateMachine, mock TaskMock) error {
	if e.registry != nil && sm.checkedWith.Load() == e.registry {
		return nil
	}
	var errs []error
	walkStates(sm, func(st *State) {
		if st.Type != "Task" || e.activity(st) || (mock != nil && mock.Mocks(st.Name)) {
			return
		}
		name, ok := staticBinding(st)
		if !ok {
			return // FunctionName chosen at run time
		}
		if h, err := e.registry.resolve(strings.TrimSuffix(st.Resource, waitForTaskToken), name); h == nil {
			errs = append(errs, &UnboundError{State: st.Name, Resource: st.Resource, Binding: name, Reason: err})
		}
	})
	if len(errs) == 0 && e.registry != nil && mock == nil {
		sm.checkedWith.Store(e.registry)
	}
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
	if st.jsonata {
		return jsonataBinding(st)
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
//
// When ctx can never be cancelled (Done returns nil) the execution runs on
// the calling goroutine: Wait could only return once it finished anyway,
// and handing it to another goroutine costs a thread wake-up per execution,
// which on a busy machine with GOMAXPROCS > 1 can take longer than a short
// execution itself.
func (e *Engine) Run(ctx context.Context, sm *StateMachine, input json.RawMessage, opts StartOptions) (*Result, error) {
	if ctx.Done() == nil {
		x, body, err := e.prepare(ctx, sm, input, opts)
		if err != nil {
			return nil, err
		}
		body()
		return x.result, nil
	}
	x, err := e.Start(ctx, sm, input, opts)
	if err != nil {
		return nil, err
	}
	return x.Wait(ctx)
}

// Start validates the input and the bindings and starts an execution in the
// background. Errors returned here mean no execution was started.
func (e *Engine) Start(ctx context.Context, sm *StateMachine, input json.RawMessage, opts StartOptions) (*Execution, error) {
	x, body, err := e.prepare(ctx, sm, input, opts)
	if err != nil {
		return nil, err
	}
	go body()
	return x, nil
}

// prepare validates and builds an execution; body runs it to the end.
func (e *Engine) prepare(ctx context.Context, sm *StateMachine, input json.RawMessage, opts StartOptions) (*Execution, func(), error) {
	if opts.Test == nil || opts.Test.Mock == nil { // a TestState mock calls no handler
		if err := e.check(sm, opts.Mock); err != nil {
			return nil, nil, err
		}
	}
	if len(strings.TrimSpace(string(input))) == 0 {
		input = json.RawMessage("{}")
	}
	// The input holds lazy values only where no state reads plain values
	// alone (JSONata ones would resolve it at every state).
	in, inSize, lazy, err := parseData(input, !e.eager && !sm.jsonata)
	if err != nil {
		return nil, nil, fmt.Errorf("execution input is not valid JSON: %w", err)
	}
	if inSize > MaxPayloadBytes {
		return nil, nil, fmt.Errorf("execution input is %d bytes, over the %d-byte limit", inSize, MaxPayloadBytes)
	}
	name := opts.Name
	if name == "" {
		name = newToken()[:32]
	}
	smName := opts.StateMachineName
	if smName == "" {
		smName = "local"
	}
	start := e.now()
	x := &Execution{
		ID:          fmt.Sprintf("arn:aws:states:local:000000000000:execution:%s:%s", smName, name),
		Name:        name,
		StartTime:   start.UTC(),
		wall0:       start.UnixNano(),
		mono0:       start,
		engine:      e,
		sm:          sm,
		smName:      smName,
		smID:        "arn:aws:states:local:000000000000:stateMachine:" + smName,
		input:       in,
		inputSize:   inSize,
		onEvent:     opts.OnEvent,
		durable:     opts.Durable,
		mock:        opts.Mock,
		keepHistory: !opts.DiscardHistory,
		maxWait:     opts.MaxWait,
		buckets:     opts.Buckets,
		mapRuns:     opts.MapRuns,
		test:        opts.Test,
		vars0:       newVarScope(nil),
		ctxOverride: opts.Context,
		done:        make(chan struct{}),
	}
	if err := x.vars0.assign(opts.Variables); err != nil {
		return nil, nil, fmt.Errorf("execution variables: %w", err)
	}
	if lazy {
		x.markLazy()
	}
	if x.keepHistory {
		x.hist = newHistory(x.wall0)
	}
	if opts.ExecutionARN != "" {
		x.ID = opts.ExecutionARN
	}
	if opts.StateMachineARN != "" {
		x.smID = opts.StateMachineARN
	}
	if !opts.StartTime.IsZero() {
		x.StartTime = opts.StartTime.UTC()
	}
	// The execution outlives the caller's request context only by the
	// caller's choice: cancelling ctx aborts it.
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	if deadline := x.deadline(opts); !deadline.IsZero() {
		runCtx, cancel = e.withDeadline(context.WithoutCancel(ctx), deadline)
	}
	x.cancel = cancel
	stop := context.AfterFunc(ctx, cancel)
	return x, func() {
		defer stop()
		defer cancel()
		x.run(runCtx)
		if opts.OnDone != nil {
			opts.OnDone(x.result)
		}
	}, nil
}

// jsonataBinding is staticBinding for a JSONata lambda:invoke Task, whose
// FunctionName is in Arguments (possibly computed by an expression).
func jsonataBinding(st *State) (string, bool) {
	args := st.ja.Arguments
	if args == nil {
		return "", true
	}
	switch args.kind {
	case tmplLiteral:
		if m, ok := args.literal.(map[string]any); ok {
			if fn, ok := m["FunctionName"].(string); ok {
				return bindingName(fn), true
			}
		}
		return "", true
	case tmplObject:
		for i, k := range args.keys {
			if k != "FunctionName" {
				continue
			}
			if f := args.fields[i]; f.kind == tmplLiteral {
				if fn, ok := f.literal.(string); ok {
					return bindingName(fn), true
				}
			}
			return "", false
		}
		return "", true
	}
	return "", false
}
