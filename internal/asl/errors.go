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
