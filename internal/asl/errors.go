package asl

import (
	"errors"
	"fmt"
)

// Predefined error names of the Amazon States Language.
const (
	ErrAll                    = "States.ALL"
	ErrHeartbeatTimeout       = "States.HeartbeatTimeout"
	ErrTimeout                = "States.Timeout"
	ErrTaskFailed             = "States.TaskFailed"
	ErrPermissions            = "States.Permissions"
	ErrResultPathMatchFailure = "States.ResultPathMatchFailure"
	ErrParameterPathFailure   = "States.ParameterPathFailure"
	ErrBranchFailed           = "States.BranchFailed"
	ErrNoChoiceMatched        = "States.NoChoiceMatched"
	ErrIntrinsicFailure       = "States.IntrinsicFailure"
	ErrExceedToleratedFailure = "States.ExceedToleratedFailureThreshold"
	ErrItemReaderFailed       = "States.ItemReaderFailed"
	ErrResultWriterFailed     = "States.ResultWriterFailed"
	ErrDataLimitExceeded      = "States.DataLimitExceeded"
	ErrRuntime                = "States.Runtime"
	ErrQueryEvaluationError   = "States.QueryEvaluationError"
)

// StatesError is a failure with an ASL error name (the string Retry and
// Catch match in ErrorEquals) and a human-readable cause.
type StatesError struct {
	Name  string
	Cause string
	// Heartbeat marks the States.Timeout of a Task whose HeartbeatSeconds
	// ran out. Step Functions records it as any timeout, States.Timeout
	// without a cause (recorded on AWS: LocalStack snapshot
	// timeouts/test_heartbeats.snapshot.json), yet its documentation has
	// ErrorEquals ["States.HeartbeatTimeout"] match it, and only it.
	Heartbeat bool

	located bool // the cause already names the failing state
	// location is the field of a JSONata state whose expression failed
	// (States.QueryEvaluationError): the EvaluationFailed event's location.
	location string
}

func (e *StatesError) Error() string {
	if e.Cause == "" {
		return e.Name
	}
	return fmt.Sprintf("%s: %s", e.Name, e.Cause)
}

// timedOut is the error of a Task that timed out, by its HeartbeatSeconds
// (heartbeat) or its TimeoutSeconds: Step Functions gives it no cause
// (recorded on AWS: LocalStack snapshots timeouts/test_timeouts.snapshot.json,
// timeouts/test_heartbeats.snapshot.json,
// activities/test_activities.snapshot.json).
func timedOut(heartbeat bool) *StatesError {
	return &StatesError{Name: ErrTimeout, Heartbeat: heartbeat}
}

// newError builds a *StatesError with a formatted cause.
func newError(name, format string, args ...any) *StatesError {
	return &StatesError{Name: name, Cause: fmt.Sprintf(format, args...)}
}

// queryError is a States.QueryEvaluationError of the JSONata expression in
// field.
func queryError(field, format string, args ...any) *StatesError {
	return &StatesError{Name: ErrQueryEvaluationError, Cause: fmt.Sprintf(format, args...), location: field}
}

// asStatesError reports whether err is (or wraps) a *StatesError.
func asStatesError(err error, target **StatesError) bool {
	return errors.As(err, target)
}
