package jsonata

import "fmt"

// Error is a JSONata compile or evaluation error. Code is the JSONata error
// code of the reference implementation (S0xxx syntax, T0xxx/T1xxx/T2xxx type,
// D1xxx/D2xxx/D3xxx dynamic, U1xxx resource bounds), so callers can report it
// the way AWS Step Functions does. Position is the 1-based character offset in
// the expression where the problem was detected (0 when unknown).
type Error struct {
	Code     string
	Position int
	Token    string
	Message  string
}

func (e *Error) Error() string {
	if e.Position > 0 {
		return fmt.Sprintf("%s at position %d: %s", e.Code, e.Position, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func newErr(code string, pos int, format string, args ...any) *Error {
	return &Error{Code: code, Position: pos, Message: fmt.Sprintf(format, args...)}
}
