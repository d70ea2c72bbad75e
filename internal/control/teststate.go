package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// TestResult is the outcome of TestState.
type TestResult struct {
	Status    string
	Output    json.RawMessage
	Error     string
	Cause     string
	NextState string
}

// TestStateLimit is how long TestState lets a state run, as Step Functions
// does: past it the state fails with States.Timeout.
const TestStateLimit = 5 * time.Minute

// TestState runs one state definition on input, as the Step Functions API
// does: its Task binds to the project's handlers, its Retry is not applied
// (an error a retrier would match is RETRIABLE), a caught error is
// CAUGHT_ERROR, and NextState names the state it would go to. It answers
// within TestStateLimit: a state still running then has FAILED with
// States.Timeout, and a Wait longer than the limit fails so at once.
func (m *Manager) TestState(ctx context.Context, definition, input string) (TestResult, error) {
	return m.TestStateWithin(ctx, definition, input, TestStateLimit)
}

// TestStateWithin is TestState with limit in place of TestStateLimit.
func (m *Manager) TestStateWithin(ctx context.Context, definition, input string, limit time.Duration) (TestResult, error) {
	var st map[string]any
	if err := json.Unmarshal([]byte(definition), &st); err != nil {
		return TestResult{}, errorf(CodeInvalidDefinition, "Invalid State Machine Definition: 'the state definition is not a JSON object: %v'", err)
	}
	if input == "" {
		input = "{}"
	}
	if len(input) > asl.MaxPayloadBytes {
		return TestResult{}, errorf(CodeValidation, "1 validation error detected: Value at 'input' failed to satisfy constraint: Member must have length less than or equal to %d", asl.MaxPayloadBytes)
	}
	if err := asl.CheckJSON([]byte(input)); err != nil {
		return TestResult{}, errorf(CodeInvalidExecutionInput, "Invalid State Machine Execution Input: 'the input is not valid JSON: %v'", err)
	}
	// No worker could ever answer a test's task token: the call would only
	// wait out its time (and a confirmation would be asked for nothing).
	if res, _ := st["Resource"].(string); strings.HasSuffix(res, ".waitForTaskToken") || strings.HasSuffix(res, ".sync") || strings.Contains(res, ".sync:") {
		return TestResult{}, errorf(CodeValidation, "TestState does not run the %s integration pattern: test the state with the plain resource, or run it in an execution", res[strings.LastIndex(res, "."):])
	}
	if res, _ := st["Resource"].(string); asl.IsActivityARN(res) {
		return TestResult{}, errorf(CodeValidation, "TestState does not run activity tasks (no worker could take a test's task): run the state in an execution")
	}
	retriers, _ := st["Retry"].([]any)
	delete(st, "Retry")

	// The state alone, with every state it may go to standing in as a
	// Succeed state that passes its input through.
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
		return TestResult{}, fmt.Errorf("test state: %w", err)
	}
	sm, err := m.parseDefinition(string(def))
	if err != nil {
		return TestResult{}, err
	}
	rctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	res, err := m.eng.Run(rctx, sm, json.RawMessage(input), asl.StartOptions{StateMachineName: "TestState", MaxWait: limit})
	if err != nil && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		// The run is aborted when rctx is cancelled: nothing goes on.
		return TestResult{Status: TestFailed, Error: asl.ErrTimeout, Cause: fmt.Sprintf("the state did not finish within TestState's limit of %s", limit)}, nil
	}
	if err != nil {
		return TestResult{}, errorf(CodeValidation, "the state could not run: %v", err)
	}
	out := TestResult{}
	var caught *asl.Event
	history := res.History()
	for i := range history {
		ev := &history[i]
		if strings.HasSuffix(ev.Type, "StateEntered") && ev.State != name && ev.Scope == "" {
			out.NextState = ev.State
			break
		}
		if ev.State == name && ev.Scope == "" && (strings.HasSuffix(ev.Type, "Failed") || ev.Type == "TaskTimedOut") {
			caught = ev
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
	if caught != nil || out.Status == TestFailed {
		errName := out.Error
		for _, r := range retriers {
			mm, _ := r.(map[string]any)
			names, _ := mm["ErrorEquals"].([]any)
			if retryMatches(names, errName) {
				out.Status, out.Output, out.NextState = TestRetriable, nil, ""
				break
			}
		}
	}
	return out, nil
}

// retryMatches applies ErrorEquals as Step Functions does.
func retryMatches(names []any, errName string) bool {
	terminal := errName == asl.ErrRuntime || errName == asl.ErrDataLimitExceeded
	for _, n := range names {
		s, _ := n.(string)
		switch {
		case s == errName && errName != asl.ErrRuntime:
			return true
		case s == asl.ErrAll && !terminal:
			return true
		case s == asl.ErrTaskFailed && !terminal && errName != asl.ErrTimeout:
			return true
		}
	}
	return false
}
