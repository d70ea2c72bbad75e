package control

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/veredicto/veredicto/internal/asl"
)

// newTaskToken makes a token that names its execution, so a token whose task
// has ended can be told from one that never existed.
func newTaskToken(executionARN string) string {
	return "v1." + base64.RawURLEncoding.EncodeToString([]byte(executionARN)) + "." + newID()
}

func tokenExecution(token string) (string, bool) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 || parts[0] != "v1" || len(parts[2]) != 32 {
		return "", false
	}
	arn, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil || checkExecutionARN(string(arn)) != nil {
		return "", false
	}
	return string(arn), true
}

func newID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err)) // never happens on supported platforms
	}
	return hex.EncodeToString(b[:])
}

// waiting finds the recorder a token belongs to, or the API error for a
// token that is malformed, unknown or no longer waiting.
func (m *Manager) waiting(token string) (*recorder, error) {
	if len(token) == 0 || len(token) > 2048 {
		return nil, errorf(CodeValidation, "1 validation error detected: Value at 'taskToken' failed to satisfy constraint: Member must have length between 1 and 2048")
	}
	arn, ok := tokenExecution(token)
	if !ok {
		return nil, errorf(CodeInvalidToken, "Invalid Token: 'Invalid token'")
	}
	m.mu.Lock()
	rec, waiting := m.tokens[token]
	e, known := m.execs[arn]
	var stalled *stall
	var dmg *damage
	if known {
		stalled, dmg = e.stalled, e.damage
	}
	m.mu.Unlock()
	switch {
	case waiting:
		return rec, nil
	case dmg != nil:
		return nil, damagedError(arn, dmg)
	case stalled != nil:
		return nil, errorf(CodeServiceUnavailable, "execution '%s' cannot record its history (%s): its tasks wait again once the server restarts with room on disk", arn, stalled.err)
	case known:
		return nil, errorf(CodeTaskTimedOut, "Task Timed Out: 'Provided task does not exist anymore'")
	default:
		return nil, errorf(CodeTaskDoesNotExist, "Task Does Not Exist: 'Provided task does not exist'")
	}
}

// checkErrorCause bounds an error name and cause as Step Functions does
// (StopExecution, SendTaskFailure).
func checkErrorCause(errName, cause string) error {
	if len(errName) > 256 {
		return errorf(CodeValidation, "1 validation error detected: Value at 'error' failed to satisfy constraint: Member must have length less than or equal to 256")
	}
	if len(cause) > 32768 {
		return errorf(CodeValidation, "1 validation error detected: Value at 'cause' failed to satisfy constraint: Member must have length less than or equal to 32768")
	}
	return nil
}

// SendTaskSuccess completes the task waiting on token with output (JSON).
func (m *Manager) SendTaskSuccess(_ context.Context, token, output string) error {
	rec, err := m.waiting(token)
	if err != nil {
		return err
	}
	if len(output) > asl.MaxPayloadBytes {
		return errorf(CodeValidation, "1 validation error detected: Value at 'output' failed to satisfy constraint: Member must have length less than or equal to %d", asl.MaxPayloadBytes)
	}
	if err := asl.CheckJSON([]byte(output)); err != nil {
		return errorf(CodeInvalidOutput, "Invalid Output: 'the output is not valid JSON: %v'", err)
	}
	return rec.resolve(token, resolution{Token: token, Output: json.RawMessage(output)})
}

// SendTaskFailure fails the task waiting on token with an error name and
// cause (States.TaskFailed when errName is empty).
func (m *Manager) SendTaskFailure(_ context.Context, token, errName, cause string) error {
	rec, err := m.waiting(token)
	if err != nil {
		return err
	}
	if err := checkErrorCause(errName, cause); err != nil {
		return err
	}
	if errName == "" {
		errName = asl.ErrTaskFailed
	}
	return rec.resolve(token, resolution{Token: token, Error: errName, Cause: cause, Failed: true})
}

// SendTaskHeartbeat reports that the task waiting on token is alive: its
// HeartbeatSeconds count again from now. A task recorded as waiting that
// the engine is not waiting for yet (its execution is being resumed) starts
// its count when it waits again.
func (m *Manager) SendTaskHeartbeat(_ context.Context, token string) error {
	if _, err := m.waiting(token); err != nil {
		return err
	}
	var notYet *asl.TaskTimedOut
	if err := m.eng.SendTaskHeartbeat(token); err != nil && !errors.As(err, &notYet) {
		return err
	}
	return nil
}
