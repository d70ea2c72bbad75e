package asl

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Distributed Map states: running them. A Distributed Map opens a map run
// (MapRunStarted), reads its items (from the state input, or streamed by
// its ItemReader), selects and batches them, and runs each batch as a
// child execution of its item processor, at most MaxConcurrency at once;
// failed children count their items as failed, and once more items fail
// than the tolerated count or percentage allow, the run stops launching,
// aborts the children still running and fails with
// States.ExceedToleratedFailureThreshold. Its ResultWriter then writes the
// children's results, and the run ends (MapRunSucceeded or MapRunFailed).
//
// Who runs the children is the execution's MapRunner (StartOptions.
// MapRuns): package control records each child as an execution of its
// own, listed under its map run; without one they run in-process on the
// same engine, unrecorded.
//
// Memory stays bounded by the concurrency, not the item count: items are
// read and batched as children start (a few batches ahead), and what is
// kept of each finished child is its result's JSON text, which the Map's
// output (at most 256 KiB) or its ResultWriter needs.

// DefaultMapRunConcurrency is how many children a Distributed Map runs at
// once when its MaxConcurrency is 0 (Step Functions: up to 10,000): every
// child is a goroutine, and one execution's map run should not take the
// whole machine.
const DefaultMapRunConcurrency = 1000

// MaxMapRunConcurrency bounds any MaxConcurrency, as Step Functions does.
const MaxMapRunConcurrency = 10_000

// MapRunner starts the map runs of an execution's Distributed Map states.
type MapRunner interface {
	// OpenMapRun opens the map run spec describes. The same spec.ID is
	// opened again when the execution is resumed after a restart or
	// redriven: the runner then finds the run and its children again.
	OpenMapRun(ctx context.Context, spec MapRunSpec) (MapRun, error)
}

// MapRunSpec describes a map run.
type MapRunSpec struct {
	// ID is the run's id (the last part of its ARN): the same for the same
	// Map state attempt of the same execution, however often it is run.
	ID string
	// The parent execution and its state machine.
	ExecutionARN, StateMachineARN, StateMachineName string
	// State is the Distributed Map state, Label its label (the state's
	// Label, else an id derived from its name).
	State, Label string
	// ExecutionType is STANDARD or EXPRESS; Definition the machine each
	// child runs (Processor parsed).
	ExecutionType string
	Definition    json.RawMessage
	Processor     *StateMachine
	Settings      MapRunSettings
	Start         time.Time
}

// MapRunSettings are what UpdateMapRun may change while a run runs.
type MapRunSettings struct {
	MaxConcurrency int
	// The tolerated failures; -1 when not set (then any failure fails the
	// run, unless the other is set).
	ToleratedFailureCount      int64
	ToleratedFailurePercentage float64
}

// MapRun is an open map run.
type MapRun interface {
	ARN() string
	// Settings returns the run's settings and a channel closed when they
	// change (UpdateMapRun).
	Settings() (MapRunSettings, <-chan struct{})
	// Child runs child index (0, 1, … in item order) with input and
	// returns its end; a child that ran before (the run resumed or
	// redriven) returns its recorded end, or is waited for.
	Child(ctx context.Context, index int, input json.RawMessage) ChildResult
	// Progress reports the run's counts as they change.
	Progress(MapRunCounts)
	// Close records the run's end.
	Close(MapRunEnd)
}

// ChildResult is a child execution's end.
type ChildResult struct {
	ExecutionARN, Name, StateMachineARN string
	Status                              string
	Input, Output                       json.RawMessage
	Error, Cause                        string
	Start, Stop                         time.Time
	RedriveCount                        int
	// Redrivable: a STANDARD child that failed may be redriven with its
	// map run (REDRIVABLE_BY_MAP_RUN).
	Redrivable bool
}

// MapRunCounts are a map run's item and child execution counts
// (DescribeMapRun's itemCounts and executionCounts).
type MapRunCounts struct {
	Items, Executions MapRunCount
}

// MapRunCount counts items or children by status.
type MapRunCount struct {
	Pending, Running, Succeeded, Failed, TimedOut, Aborted, Total, ResultsWritten int64
}

// MapRunEnd is how a map run ended.
type MapRunEnd struct {
	Status       string // SUCCEEDED, FAILED or ABORTED
	Error, Cause string
	Counts       MapRunCounts
	Stop         time.Time
}

// Map run statuses.
const (
	MapRunRunning   = "RUNNING"
	MapRunSucceeded = "SUCCEEDED"
	MapRunFailed    = "FAILED"
	MapRunAborted   = "ABORTED"
)

// causeExceeded is Step Functions' cause of States.ExceedToleratedFailureThreshold.
const causeExceeded = "The specified tolerated failure threshold was exceeded"

// MapRunARN is the ARN of map run id of a Distributed Map labelled label
// in the state machine machineARN: "…:mapRun:<machine>/<label>:<id>".
func MapRunARN(machineARN, label, id string) string {
	prefix, name := splitMachineARN(machineARN)
	return prefix + "mapRun:" + name + "/" + label + ":" + id
}

// ChildARNs are the ARNs of child name of a map run and of the machine
// it runs: "…:execution:<machine>/<label>:<name>" and
// "…:stateMachine:<machine>/<label>".
func ChildARNs(machineARN, label, name string) (execution, machine string) {
	prefix, m := splitMachineARN(machineARN)
	return prefix + "execution:" + m + "/" + label + ":" + name, prefix + "stateMachine:" + m + "/" + label
}

// splitMachineARN splits "arn:aws:states:R:A:stateMachine:NAME[:qualifier]"
// into "arn:aws:states:R:A:" and NAME.
func splitMachineARN(arn string) (prefix, name string) {
	i := strings.Index(arn, "stateMachine:")
	if i < 0 {
		return "arn:aws:states:local:000000000000:", arn
	}
	name, _, _ = strings.Cut(arn[i+len("stateMachine:"):], ":")
	return arn[:i], name
}

// ChildName is the name of child index of map run id: a UUID, as Step
// Functions names them, the same for the same run and index (a resumed or
// redriven run finds its children again).
func ChildName(runID string, index int) string {
	return stableUUID(runID, fmt.Sprint(index))
}

// stableUUID is a UUID-shaped id derived from parts.
func stableUUID(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	s := hex.EncodeToString(h[:16])
	return s[0:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:32]
}

// mapRunConfig is a Distributed Map attempt's evaluated configuration.
type mapRunConfig struct {
	settings MapRunSettings
	reader   readerRequest
	// batching: at most maxItems items (0: no limit) and maxBytes bytes of
	// child input a batch; batchInput joins each batch (nil: none).
	batched    bool
	maxItems   int
	maxBytes   int
	batchInput any
	writer     writerRequest
}

// writerRequest is where a ResultWriter writes, once evaluated.
type writerRequest struct{ bucket, prefix string }

// distributedMap runs a Distributed Map state.
func (r *stateRun) distributedMap(ctx context.Context, input any) (any, error) {
	st, d := r.st, r.st.dist
	var (
		eff   any
		items []any
		err   error
	)
	eff = input
	if !st.jsonata {
		if eff, err = r.applyInputPath(input); err != nil {
			return nil, err
		}
	}
	if d.reader == nil {
		if st.jsonata {
			items, _, err = r.jsonataMapItems(ctx, input)
		} else {
			items, err = r.jsonPathItems(eff)
		}
		if err != nil {
			return nil, r.mapFailedEarly(err)
		}
	}
	r.x.emit(Event{Type: "MapStateStarted", State: st.Name, Scope: r.fr.scope(), Length: intPtr(len(items))})
	cfg, err := r.mapRunConfig(ctx, input, eff)
	if err != nil {
		return nil, r.mapFailedEarly(err) // States.Runtime: no MapStateFailed, as Step Functions records it
	}
	if r.x.test != nil {
		if out, mocked, err := r.testedMapRun(input, cfg.settings); mocked {
			return out, err
		}
	}
	run, err := r.openMapRun(ctx, cfg)
	if err != nil {
		return nil, err
	}
	r.x.emit(Event{Type: "MapRunStarted", State: st.Name, Scope: r.fr.scope(), MapRunARN: run.ARN()})
	mr := &mapRunState{r: r, run: run, cfg: cfg, eff: eff, input: input, items: items}
	out, counts, runErr := mr.execute(ctx)
	end := MapRunEnd{Status: MapRunSucceeded, Counts: counts, Stop: r.x.engine.now()}
	var se *StatesError
	switch {
	case runErr == nil:
	case ctx.Err() != nil || !errors.As(runErr, &se):
		end.Status = MapRunAborted
		run.Close(end)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, runErr
	default:
		end.Status, end.Error, end.Cause = MapRunFailed, se.Name, se.Cause
	}
	run.Close(end)
	if end.Status == MapRunFailed {
		r.x.emit(Event{Type: "MapRunFailed", State: st.Name, Scope: r.fr.scope(), Error: se.Name, Cause: se.Cause})
		r.x.emit(Event{Type: "MapStateFailed", State: st.Name, Scope: r.fr.scope()})
		return nil, se
	}
	r.x.emit(Event{Type: "MapRunSucceeded", State: st.Name, Scope: r.fr.scope()})
	r.x.emit(Event{Type: "MapStateSucceeded", State: st.Name, Scope: r.fr.scope()})
	return r.finish(input, out)
}

// jsonPathItems selects the items of a JSONPath Map from its effective
// input (ItemsPath): they must be an array.
func (r *stateRun) jsonPathItems(eff any) ([]any, error) {
	itemsPath := r.st.ItemsPath
	if itemsPath == nil {
		itemsPath = rootPath
	}
	raw, ok := r.scope(eff).lookup(itemsPath)
	if !ok {
		return nil, newError(ErrRuntime, "Invalid path '%s' : No results for path: %s", itemsPath.raw, itemsPath.normalized())
	}
	items, isArr := raw.([]any)
	if !isArr {
		// Step Functions names the path, not the value, and shows a
		// context path with one "$" (recorded on AWS: LocalStack snapshot
		// test_state/test_state_context_object.snapshot.json, ItemsPath
		// "$$.Execution.Input" and "$$").
		shown := itemsPath.raw
		if itemsPath.context {
			shown = shown[1:]
		}
		return nil, newError(ErrRuntime, "Reference path \"%s\" must point to array.", shown)
	}
	if r.x.test != nil {
		r.inspect("afterItemsPath", items)
	}
	return items, nil
}

// notAnArray is the failure of a JSONata Map whose items are not an
// array, in Step Functions' words.
func notAnArray(v any) *StatesError {
	b, err := marshalJSON(v)
	if err != nil {
		b = []byte(typeName(v))
	}
	return &StatesError{Name: ErrQueryEvaluationError, Cause: "Map state input must be an array but was: " + string(b), location: "Items"}
}

// mapRunConfig evaluates a Distributed Map's settings: its concurrency,
// tolerated failures, reader, batcher and writer.
func (r *stateRun) mapRunConfig(ctx context.Context, input, eff any) (mapRunConfig, error) {
	st, d := r.st, r.st.dist
	cfg := mapRunConfig{settings: MapRunSettings{ToleratedFailureCount: -1, ToleratedFailurePercentage: -1}}
	// MaxConcurrency
	limit := int(st.MaxConcurrency)
	switch {
	case st.jsonata && st.ja.MaxConcurrency != nil:
		n, err := r.jsonataInt(r.jsonataEnv(ctx, input, nil), st.ja.MaxConcurrency, "MaxConcurrency", 0)
		if err != nil {
			return cfg, err
		}
		limit = int(n)
	case st.MaxConcurrencyPath != nil:
		n, err := r.maxConcurrencyPath(eff)
		if err != nil {
			return cfg, err
		}
		limit = n
	}
	cfg.settings.MaxConcurrency = min(limit, MaxMapRunConcurrency)
	// tolerated failures
	if d.toleratedCount.given() {
		n, err := r.numValue(ctx, d.toleratedCount, input, eff, true)
		if err != nil {
			return cfg, err
		}
		if n < 0 {
			return cfg, newError(ErrRuntime, "ToleratedFailureCount cannot be negative.")
		}
		cfg.settings.ToleratedFailureCount = int64(n)
	}
	if d.toleratedPercent.given() {
		n, err := r.numValue(ctx, d.toleratedPercent, input, eff, false)
		if err != nil {
			return cfg, err
		}
		if n < 0 || n > 100 {
			return cfg, newError(ErrRuntime, "ToleratedFailurePercentage must be between 0 and 100.")
		}
		cfg.settings.ToleratedFailurePercentage = n
	}
	if d.reader != nil {
		var err error
		if cfg.reader, err = r.readerRequestOf(ctx, d.reader, input, eff); err != nil {
			return cfg, err
		}
	}
	if b := d.batcher; b != nil {
		cfg.batched = true
		n, err := r.numValue(ctx, b.maxItems, input, eff, true)
		if err != nil {
			return cfg, err
		}
		cfg.maxItems = int(n)
		m, err := r.numValue(ctx, b.maxBytes, input, eff, true)
		if err != nil {
			return cfg, err
		}
		cfg.maxBytes = int(m)
		if cfg.maxItems < 0 || cfg.maxBytes < 0 {
			return cfg, newError(ErrRuntime, "ItemBatcher: MaxItemsPerBatch and MaxInputBytesPerBatch cannot be negative.")
		}
		if cfg.maxBytes == 0 || cfg.maxBytes > MaxBatchBytes {
			cfg.maxBytes = MaxBatchBytes
		}
		switch {
		case b.batchJ != nil:
			if cfg.batchInput, err = b.batchJ.eval(r.jsonataEnv(ctx, input, nil), "ItemBatcher/BatchInput"); err != nil {
				return cfg, err
			}
		case b.batchInput != nil:
			if cfg.batchInput, err = b.batchInput.eval(r.scope(eff)); err != nil {
				return cfg, err
			}
		}
	}
	if w := d.writer; w != nil && w.export {
		var args any
		var err error
		if w.args != nil {
			args, err = w.args.eval(r.jsonataEnv(ctx, input, nil), "ResultWriter/Arguments")
		} else {
			args, err = w.params.eval(r.scope(eff))
		}
		if err != nil {
			return cfg, err
		}
		m, _ := resolve(args).(map[string]any)
		var ok bool
		if cfg.writer.bucket, ok = stringMember(m, "Bucket"); !ok {
			return cfg, newError(ErrRuntime, "The ResultWriter's Bucket must be a string, got %s", describe(m["Bucket"], m["Bucket"] != nil))
		}
		cfg.writer.prefix, _ = stringMember(m, "Prefix")
	}
	return cfg, nil
}

// maxConcurrencyPath evaluates MaxConcurrencyPath against the effective
// input (or, for "$name…", the variable).
func (r *stateRun) maxConcurrencyPath(eff any) (int, error) {
	p := r.st.MaxConcurrencyPath
	v, found := r.scope(eff).lookup(p)
	if !found {
		return 0, newError(ErrRuntime, "Invalid path '%s' : No results for path: %s", p.raw, p.normalized())
	}
	n, isInt := asInt(v)
	switch {
	case !isInt:
		s, isStr := v.(string)
		if !isStr {
			b, _ := marshalJSON(v)
			s = string(b)
		}
		return 0, newError(ErrRuntime, "The MaxConcurrencyPath field refers to value \"%s\" which is not a valid integer: %s", s, p.raw)
	case n < 0:
		return 0, newError(ErrRuntime, "Expected non-negative integer for MaxConcurrency, got '%d' instead.", n)
	}
	return int(n), nil
}

// openMapRun opens this attempt's map run with the execution's runner.
func (r *stateRun) openMapRun(ctx context.Context, cfg mapRunConfig) (MapRun, error) {
	x, st, d := r.x, r.st, r.st.dist
	scope := r.fr.scope()
	x.mapRunMu.Lock()
	if x.mapRunSeq == nil {
		x.mapRunSeq = map[string]int{}
	}
	k := scope + "|" + st.Name
	seq := x.mapRunSeq[k]
	x.mapRunSeq[k]++
	x.mapRunMu.Unlock()
	label := d.label
	if label == "" {
		label = stableUUID(x.smID, st.Name)
	}
	spec := MapRunSpec{
		ID:           stableUUID(x.ID, scope, st.Name, fmt.Sprint(seq)),
		ExecutionARN: x.ID, StateMachineARN: x.smID, StateMachineName: x.smName,
		State: st.Name, Label: label, ExecutionType: d.executionType,
		Definition: d.definition, Processor: st.Processor, Settings: cfg.settings, Start: x.engine.now(),
	}
	runner := x.mapRuns
	if runner == nil {
		runner = localMapRuns{x: x}
	}
	run, err := runner.OpenMapRun(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("state %q: open its map run: %w", st.Name, err)
	}
	return run, nil
}

// localMapRuns runs a map run's children in-process on the parent's
// engine, unrecorded: the runner of an execution without one.
type localMapRuns struct{ x *Execution }

func (l localMapRuns) OpenMapRun(_ context.Context, spec MapRunSpec) (MapRun, error) {
	return &localMapRun{x: l.x, spec: spec, arn: MapRunARN(spec.StateMachineARN, spec.Label, spec.ID)}, nil
}

type localMapRun struct {
	x    *Execution
	spec MapRunSpec
	arn  string
}

func (m *localMapRun) ARN() string                                 { return m.arn }
func (m *localMapRun) Settings() (MapRunSettings, <-chan struct{}) { return m.spec.Settings, nil }
func (m *localMapRun) Progress(MapRunCounts)                       {}
func (m *localMapRun) Close(MapRunEnd)                             {}

func (m *localMapRun) Child(ctx context.Context, index int, input json.RawMessage) ChildResult {
	name := ChildName(m.spec.ID, index)
	arn, smARN := ChildARNs(m.spec.StateMachineARN, m.spec.Label, name)
	opts := StartOptions{Name: name, StateMachineName: m.spec.StateMachineName + "/" + m.spec.Label, ExecutionARN: arn, StateMachineARN: smARN,
		DiscardHistory: true, Buckets: m.x.buckets}
	if m.spec.ExecutionType == ChildExpress {
		opts.MaxDuration = 5 * time.Minute
	}
	return RunChild(ctx, m.x.engine, m.spec.Processor, input, opts)
}

// RunChild runs a map run's child on e to its end (a MapRun's Child
// without a record of its own).
func RunChild(ctx context.Context, e *Engine, sm *StateMachine, input json.RawMessage, opts StartOptions) ChildResult {
	cr := ChildResult{ExecutionARN: opts.ExecutionARN, Name: opts.Name, StateMachineARN: opts.StateMachineARN, Input: input, Start: e.now().UTC()}
	res, err := e.Run(ctx, sm, input, opts)
	cr.Stop = e.now().UTC()
	switch {
	case err != nil && ctx.Err() != nil:
		cr.Status, cr.Error, cr.Cause = StatusAborted, "States.Aborted", "the map run was stopped"
	case err != nil:
		cr.Status, cr.Error, cr.Cause = StatusFailed, ErrRuntime, err.Error()
	default:
		cr.Status, cr.Output, cr.Error, cr.Cause = res.Status, res.Output, res.Error, res.Cause
	}
	return cr
}
