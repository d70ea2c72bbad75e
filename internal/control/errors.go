package control

import "fmt"

// Error codes, named exactly as the Step Functions API names its errors, so
// the protocol layer reports them as they are.
const (
	CodeStateMachineDoesNotExist = "StateMachineDoesNotExist"
	CodeStateMachineExists       = "StateMachineAlreadyExists"
	CodeExecutionDoesNotExist    = "ExecutionDoesNotExist"
	CodeExecutionAlreadyExists   = "ExecutionAlreadyExists"
	CodeExecutionLimitExceeded   = "ExecutionLimitExceeded"
	CodeInvalidArn               = "InvalidArn"
	CodeInvalidName              = "InvalidName"
	CodeInvalidDefinition        = "InvalidDefinition"
	CodeInvalidExecutionInput    = "InvalidExecutionInput"
	CodeInvalidOutput            = "InvalidOutput"
	CodeInvalidToken             = "InvalidToken"
	CodeTaskDoesNotExist         = "TaskDoesNotExist"
	CodeTaskTimedOut             = "TaskTimedOut"
	CodeValidation               = "ValidationException"
	CodeServiceUnavailable       = "ServiceUnavailable"
	CodeMissingParameter         = "MissingRequiredParameter"
	CodeTypeNotSupported         = "StateMachineTypeNotSupported"
	CodeExecutionNotRedrivable   = "ExecutionNotRedrivable"

	CodeActivityDoesNotExist           = "ActivityDoesNotExist"
	CodeActivityAlreadyExists          = "ActivityAlreadyExists"
	CodeActivityLimitExceeded          = "ActivityLimitExceeded"
	CodeActivityWorkerLimitExceeded    = "ActivityWorkerLimitExceeded"
	CodeTooManyTags                    = "TooManyTags"
	CodeInvalidTracingConfiguration    = "InvalidTracingConfiguration"
	CodeInvalidEncryptionConfiguration = "InvalidEncryptionConfiguration"
)

// Error is a refusal the Step Functions API would give: Code is the API's
// error name (one of the Code constants), Message says what was wrong.
// Err, when set, is the kind behind it (a *veredicto.DamagedError), for
// errors.As.
type Error struct {
	Code    string
	Message string
	Err     error
	// ResourceName, when set, is the resource the error is about, for the
	// errors whose shape carries it (ResourceNotFound, TooManyTags).
	ResourceName string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }
func (e *Error) Unwrap() error { return e.Err }

func errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}
