package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/veredicto/veredicto/internal/asl"
)

// TestState statuses, as the API names them.
const (
	TestSucceeded   = "SUCCEEDED"
	TestFailed      = "FAILED"
	TestRetriable   = "RETRIABLE"
	TestCaughtError = "CAUGHT_ERROR"
)

// Inspection levels.
const (
	InspectInfo  = "INFO"
	InspectDebug = "DEBUG"
	InspectTrace = "TRACE"
)

// TestStateRequest is TestState's request, every member of the API model.
type TestStateRequest struct {
	// Definition is one state, or, with StateName, a whole state machine
	// whose state of that name is tested.
	Definition, StateName string
	Input                 string
	RoleARN               string
	// InspectionLevel is INFO (the default), DEBUG or TRACE.
	InspectionLevel string
	RevealSecrets   bool
	// Variables is a JSON object of the variables the state sees; Context
	// a JSON object standing for its context object (with a Mock only).
	Variables, Context string
	Mock               *TestStateMock
	Config             *TestStateConfig
}

// TestStateMock stands for the work of a Task, Map or Parallel state.
type TestStateMock struct {
	Result              *string // JSON text
	ErrorOutput         *TestStateError
	FieldValidationMode string // STRICT (default), PRESENT or NONE
}

// TestStateError is a mocked error.
type TestStateError struct{ Error, Cause string }

// TestStateConfig is TestState's stateConfiguration.
type TestStateConfig struct {
	RetrierRetryCount        *int
	ErrorCausedByState       string
	MapIterationFailureCount *int
	MapItemReaderData        *string
}

// TestResult is the outcome of TestState.
type TestResult struct {
	Status    string
	Output    json.RawMessage
	Error     string
	Cause     string
	NextState string
	// Inspection is the DEBUG and TRACE levels' inspectionData (nil at
	// INFO).
	Inspection *Inspection
}

// Inspection is TestState's inspectionData.
type Inspection struct {
	// Data are the values between the state's processing steps, by the
	// API's member names ("input", "afterInputPath", … "variables"), each
	// a JSON text; Numbers its maxConcurrency and tolerated failures.
	Data    map[string]json.RawMessage
	Numbers map[string]any
	// ErrorDetails says which retrier would retry the error (RETRIABLE)
	// or which catcher caught it.
	ErrorDetails *ErrorDetails
	// Request and Response, at TRACE, are an HTTP Task's.
	Request, Response map[string]any
}

// ErrorDetails is inspectionData.errorDetails.
type ErrorDetails struct {
	CatchIndex, RetryIndex, RetryBackoffIntervalSeconds *int
}

// TestStateLimit is how long TestState lets a state run, as Step Functions
// does: past it the state fails with States.Timeout.
const TestStateLimit = 5 * time.Minute

// TestState runs one state definition on input, as the Step Functions API
// does: its Task binds to the project's handlers unless a mock stands for
// its work, its Retry is not applied (an error a retrier would match is
// RETRIABLE, unless stateConfiguration's retrierRetryCount has used its
// attempts up), a caught error is CAUGHT_ERROR, and NextState names the
// state it would go to. At DEBUG and TRACE the answer holds the values
// between its processing steps. It answers within TestStateLimit: a state
// still running then has FAILED with States.Timeout, and a Wait longer
// than the limit fails so at once.
func (m *Manager) TestState(ctx context.Context, req TestStateRequest) (TestResult, error) {
	return m.TestStateWithin(ctx, req, TestStateLimit)
}

// TestStateWithin is TestState with limit in place of TestStateLimit.
func (m *Manager) TestStateWithin(ctx context.Context, req TestStateRequest, limit time.Duration) (TestResult, error) {
	st, err := m.testedState(req)
	if err != nil {
		return TestResult{}, err
	}
	if req.Input == "" {
		req.Input = "{}"
	}
	if len(req.Input) > asl.MaxPayloadBytes {
		return TestResult{}, errorf(CodeValidation, "1 validation error detected: Value at 'input' failed to satisfy constraint: Member must have length less than or equal to %d", asl.MaxPayloadBytes)
	}
	if err := asl.CheckJSON([]byte(req.Input)); err != nil {
		return TestResult{}, errorf(CodeInvalidExecutionInput, "Invalid State Machine Execution Input: 'the input is not valid JSON: %v'", err)
	}
	typ, _ := st["Type"].(string)
	hooks, err := testHooks(req, st, typ)
	if err != nil {
		return TestResult{}, err
	}
	opts := asl.StartOptions{StateMachineName: "TestState", MaxWait: limit, Test: hooks.TestHooks}
	if opts.Variables, err = jsonObject(req.Variables, "variables"); err != nil {
		return TestResult{}, err
	}
	if opts.Context, err = testContext(req, st); err != nil {
		return TestResult{}, err
	}
	// No worker could ever answer a test's task token: the call would only
	// wait out its time (and a confirmation would be asked for nothing).
	if res, _ := st["Resource"].(string); req.Mock == nil && (strings.HasSuffix(res, ".waitForTaskToken") || strings.HasSuffix(res, ".sync") || strings.Contains(res, ".sync:")) {
		return TestResult{}, errorf(CodeValidation, "TestState does not run the %s integration pattern without a mock: mock its result, test the state with the plain resource, or run it in an execution", res[strings.LastIndex(res, "."):])
	}
	if res, _ := st["Resource"].(string); req.Mock == nil && asl.IsActivityARN(res) {
		return TestResult{}, errorf(CodeValidation, "TestState does not run activity tasks (no worker could take a test's task): run the state in an execution")
	}
	retriers, _ := st["Retry"].([]any)
	delete(st, "Retry")
	name, sm, err := m.testMachine(st, req.Mock != nil)
	if err != nil {
		return TestResult{}, err
	}
	rctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	res, err := m.eng.Run(rctx, sm, json.RawMessage(req.Input), opts)
	if err != nil && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		// The run is aborted when rctx is cancelled: nothing goes on.
		return TestResult{Status: TestFailed, Error: asl.ErrTimeout, Cause: fmt.Sprintf("the state did not finish within TestState's limit of %s", limit)}, nil
	}
	if err != nil {
		return TestResult{}, errorf(CodeValidation, "the state could not run: %v", err)
	}
	out, exited := testOutcome(res, name)
	details := &ErrorDetails{}
	if out.NextState != "" && out.Status == TestCaughtError {
		details.CatchIndex = catchIndex(st, out.Error)
	}
	if out.Status == TestCaughtError || out.Status == TestFailed {
		retried(retriers, req.Config, &out, details)
	}
	if req.InspectionLevel == InspectDebug || req.InspectionLevel == InspectTrace {
		out.Inspection = hooks.inspection(req, typ, exited, details)
		if req.InspectionLevel == InspectTrace {
			out.Inspection.Request, out.Inspection.Response = httpTrace(st, hooks, out)
		}
	}
	return out, nil
}

// testedState is the state TestState tests: the definition, or the state
// StateName names in the machine the definition is (its QueryLanguage
// carried to the state).
func (m *Manager) testedState(req TestStateRequest) (map[string]any, error) {
	var def map[string]any
	if err := json.Unmarshal([]byte(req.Definition), &def); err != nil {
		return nil, errorf(CodeInvalidDefinition, "Invalid State Machine Definition: 'the definition is not a JSON object: %v'", err)
	}
	if req.StateName == "" {
		return def, nil
	}
	if _, err := parseOnly(req.Definition); err != nil {
		return nil, err
	}
	st := findState(def, req.StateName)
	if st == nil {
		return nil, errorf(CodeValidation, "State not found in definition")
	}
	if _, ok := st["QueryLanguage"]; !ok && def["QueryLanguage"] == "JSONata" {
		st["QueryLanguage"] = "JSONata"
	}
	return st, nil
}

// findState finds the state called name in machine m, its branches and
// item processors included.
func findState(m map[string]any, name string) map[string]any {
	states, _ := m["States"].(map[string]any)
	if st, ok := states[name].(map[string]any); ok {
		return st
	}
	for _, k := range slices.Sorted(maps.Keys(states)) {
		st, _ := states[k].(map[string]any)
		for _, nm := range nestedMachines(st) {
			if found := findState(nm, name); found != nil {
				return found
			}
		}
	}
	return nil
}

// nestedMachines are the branches of a Parallel state st, or the item
// processor of a Map.
func nestedMachines(st map[string]any) []map[string]any {
	var raw []any
	if b, ok := st["Branches"].([]any); ok {
		raw = append(raw, b...)
	}
	for _, f := range []string{"ItemProcessor", "Iterator"} {
		if p, ok := st[f]; ok {
			raw = append(raw, p)
		}
	}
	var out []map[string]any
	for _, r := range raw {
		if m, ok := r.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// testMachine is the state alone in a machine, with every state it may go
// to standing in as a Succeed state that passes its input through.
func (m *Manager) testMachine(st map[string]any, mocked bool) (string, *asl.StateMachine, error) {
	targets := map[string]bool{}
	addTarget := func(v any) {
		if s, ok := v.(string); ok && s != "" {
			targets[s] = true
		}
	}
	addTarget(st["Next"])
	addTarget(st["Default"])
	for _, list := range []string{"Choices", "Catch"} {
		items, _ := st[list].([]any)
		for _, it := range items {
			if mm, ok := it.(map[string]any); ok {
				addTarget(mm["Next"])
			}
		}
	}
	name := "TestState"
	for targets[name] {
		name += "_"
	}
	states := map[string]any{name: st}
	for t := range targets {
		states[t] = map[string]any{"Type": "Succeed"}
	}
	def, err := json.Marshal(map[string]any{"StartAt": name, "States": states})
	if err != nil {
		return "", nil, fmt.Errorf("test state: %w", err)
	}
	if mocked {
		sm, err := parseOnly(string(def))
		return name, sm, err
	}
	sm, err := m.parseDefinition(string(def))
	return name, sm, err
}

// testOutcome reads the run's history: the status, the state it would go
// to, a caught error, and the variables the state assigned.
func testOutcome(res *asl.Result, name string) (TestResult, map[string]string) {
	out := TestResult{}
	var caught *asl.Event
	var assigned map[string]string
	history := res.History()
	for i := range history {
		ev := &history[i]
		if ev.Scope != "" {
			continue
		}
		if strings.HasSuffix(ev.Type, "StateEntered") && ev.State != name {
			out.NextState = ev.State
			break
		}
		if ev.State == name && (strings.HasSuffix(ev.Type, "Failed") || ev.Type == "TaskTimedOut") {
			caught = ev
		}
		if ev.State == name && strings.HasSuffix(ev.Type, "StateExited") {
			assigned = ev.AssignedVariables
		}
	}
	switch {
	case res.Status == asl.StatusSucceeded && caught != nil:
		out.Status, out.Output, out.Error, out.Cause = TestCaughtError, res.Output, caught.Error, caught.Cause
	case res.Status == asl.StatusSucceeded:
		out.Status, out.Output = TestSucceeded, res.Output
	default:
		out.Status, out.Error, out.Cause = TestFailed, res.Error, res.Cause
		out.NextState = ""
	}
	return out, assigned
}

// retried makes the outcome RETRIABLE when a retrier matches its error
// and, by stateConfiguration's retrierRetryCount, has attempts left; the
// error details name the retrier and its next interval.
func retried(retriers []any, cfg *TestStateConfig, out *TestResult, details *ErrorDetails) {
	count := 0
	if cfg != nil && cfg.RetrierRetryCount != nil {
		count = *cfg.RetrierRetryCount
	}
	for i, r := range retriers {
		mm, _ := r.(map[string]any)
		names, _ := mm["ErrorEquals"].([]any)
		if !retryMatches(names, out.Error) {
			continue
		}
		idx := i
		details.RetryIndex = &idx
		max, interval, rate := 3.0, 1.0, 2.0
		if v, ok := mm["MaxAttempts"].(float64); ok {
			max = v
		}
		if v, ok := mm["IntervalSeconds"].(float64); ok {
			interval = v
		}
		if v, ok := mm["BackoffRate"].(float64); ok {
			rate = v
		}
		if float64(count) >= max {
			return // its attempts are used up: caught or failed as it stands
		}
		backoff := int(interval * math.Pow(rate, float64(count)))
		if v, ok := mm["MaxDelaySeconds"].(float64); ok && float64(backoff) > v {
			backoff = int(v)
		}
		details.RetryBackoffIntervalSeconds = &backoff
		details.CatchIndex = nil
		out.Status, out.Output, out.NextState = TestRetriable, nil, ""
		return
	}
}

// catchIndex is the position of the catcher that handles errName.
func catchIndex(st map[string]any, errName string) *int {
	catchers, _ := st["Catch"].([]any)
	for i, c := range catchers {
		mm, _ := c.(map[string]any)
		names, _ := mm["ErrorEquals"].([]any)
		if catchMatches(names, errName) {
			return &i
		}
	}
	return nil
}

// retryMatches applies a retrier's ErrorEquals as the engine does.
func retryMatches(names []any, errName string) bool {
	list := make([]string, 0, len(names))
	for _, n := range names {
		s, _ := n.(string)
		list = append(list, s)
	}
	return asl.ErrorMatches(list, errName)
}

// catchMatches applies a catcher's ErrorEquals.
func catchMatches(names []any, errName string) bool { return retryMatches(names, errName) }

// jsonObject reads a request member that must hold a JSON object.
func jsonObject(text, member string) (map[string]any, error) {
	if text == "" {
		return nil, nil
	}
	parsed, err := asl.ParseValue([]byte(text))
	v, ok := parsed.(map[string]any)
	if err != nil || !ok {
		return nil, errorf(CodeValidation, "Invalid %s provided: it must be a JSON object", member)
	}
	return v, nil
}
