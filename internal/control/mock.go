package control

import (
	"strings"

	"github.com/veredicto/veredicto/internal/asl"
)

// MockSource holds the test cases of a mock configuration (Step Functions
// Local's mocked service integrations; internal/sfnmock reads the file).
type MockSource interface {
	// TestCase returns the mock of a new execution of a state machine's
	// test case, ok false when the configuration has none.
	TestCase(machine, testCase string) (mock asl.TaskMock, ok bool)
}

// splitTestCase splits a StartExecution's "<state machine ARN>#<test
// case>" into the machine's ARN and the test case ("" for a plain ARN).
func splitTestCase(arn string) (machineARN, testCase string) {
	machineARN, testCase, _ = strings.Cut(arn, "#")
	return machineARN, testCase
}

// checkTestCase refuses a start on a test case the mock configuration
// does not have (or with no mock configuration at all), as we take Step
// Functions Local to do (no recording verifies it): the whole
// "ARN#TestCase" names no state machine.
func (m *Manager) checkTestCase(startARN, machine, testCase string) error {
	if !strings.Contains(startARN, "#") {
		return nil
	}
	if m.cfg.Mocks != nil && testCase != "" {
		if _, ok := m.cfg.Mocks.TestCase(machine, testCase); ok {
			return nil
		}
	}
	m.log.Warn("no such test case in the mock configuration (serve --mock-config)", "state_machine", machine, "test_case", testCase,
		"mock_config", m.cfg.Mocks != nil)
	return machineDoesNotExist(startARN)
}

// mockOf is the mock an execution of a test case runs with (nil for
// none); the error it fails with when the configuration no longer has it
// (the server was restarted with another one).
func (m *Manager) mockOf(machine, testCase string) (asl.TaskMock, *asl.StatesError) {
	if testCase == "" {
		return nil, nil
	}
	if m.cfg.Mocks != nil {
		if mock, ok := m.cfg.Mocks.TestCase(machine, testCase); ok {
			return mock, nil
		}
	}
	return nil, &asl.StatesError{Name: asl.ErrRuntime, Cause: "the execution runs test case '" + testCase + "' of state machine '" + machine +
		"', which the server's mock configuration no longer has: start it again with the same --mock-config"}
}
