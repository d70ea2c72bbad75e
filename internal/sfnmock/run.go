package sfnmock

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/veredicto/veredicto/internal/asl"
)

// Machines lists the state machines the configuration has test cases for,
// sorted.
func (c *Config) Machines() []string { return slices.Sorted(maps.Keys(c.machines)) }

// TestCases lists a state machine's test cases, sorted.
func (c *Config) TestCases(machine string) []string {
	return slices.Sorted(maps.Keys(c.machines[machine]))
}

// TestCase returns a new run of a state machine's test case: the mock of
// one execution, counting its invocations from 0. ok is false when the
// configuration has no such test case.
func (c *Config) TestCase(machine, testCase string) (asl.TaskMock, bool) {
	states, ok := c.machines[machine][testCase]
	if !ok {
		return nil, false
	}
	r := &Run{cfg: c, machine: machine, testCase: testCase, states: map[string]*response{}, calls: map[string]int{}}
	for state, name := range states {
		r.states[state] = c.responses[name]
	}
	return r, true
}

// Run is the mock of one execution of a test case (asl.TaskMock).
type Run struct {
	cfg               *Config
	machine, testCase string
	states            map[string]*response // never written after TestCase

	mu    sync.Mutex
	calls map[string]int // invocations so far, by state
}

var _ asl.TaskMock = (*Run)(nil)

// Mocks reports whether the test case mocks the state.
func (r *Run) Mocks(state string) bool {
	_, ok := r.states[state]
	return ok
}

// Next is the answer to the state's next invocation.
func (r *Run) Next(state string) (json.RawMessage, error) {
	resp, ok := r.states[state]
	if !ok {
		return nil, &asl.StatesError{Name: asl.ErrRuntime, Cause: fmt.Sprintf("state '%s' is not mocked by test case '%s'", state, r.testCase)}
	}
	r.mu.Lock()
	n := r.calls[state]
	r.calls[state] = n + 1
	r.mu.Unlock()
	i, found := slices.BinarySearchFunc(resp.answers, n, func(a answer, n int) int {
		switch {
		case a.last < n:
			return -1
		case a.first > n:
			return 1
		}
		return 0
	})
	if !found {
		return nil, &asl.StatesError{Name: asl.ErrRuntime, Cause: r.missing(state, resp, n)}
	}
	a := resp.answers[i]
	if a.throw != nil {
		return nil, &asl.StatesError{Name: a.throw.Name, Cause: a.throw.Cause}
	}
	return json.RawMessage(slices.Clone(a.ret)), nil
}

// missing is the cause of the failure of an invocation the mocked
// response has no answer for.
func (r *Run) missing(state string, resp *response, n int) string {
	keys := make([]string, 0, len(resp.answers))
	for _, a := range resp.answers {
		keys = append(keys, `"`+a.key+`"`)
	}
	given := "none"
	if len(keys) > 0 {
		given = strings.Join(keys, ", ")
	}
	return fmt.Sprintf("The mocked response '%s' of state '%s' in test case '%s' of state machine '%s' has no answer for invocation %d (it answers %s; mock config %s). "+
		"Mock every invocation of a mocked state, its retries included, numbered from 0.", resp.name, state, r.testCase, r.machine, n, given, r.cfg.File)
}
