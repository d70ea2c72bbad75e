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
func newTaskToken(executionARN string) string { return taskToken(executionARN, newID()) }

// taskToken is the token of executionARN with random part id (32 hex
// digits).
func taskToken(executionARN, id string) string {
	return "v1." + base64.RawURLEncoding.EncodeToString([]byte(executionARN)) + "." + id
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

// waiting finds the recorder of the run that waits on a token or, when
// the token's Task is parked, its execution (rec nil); or the API error
// for a token that is malformed, unknown or no longer waiting.
func (m *Manager) waiting(token string) (*recorder, *execution, error) {
	if len(token) == 0 || len(token) > 2048 {
		return nil, nil, errorf(CodeValidation, "1 validation error detected: Value at 'taskToken' failed to satisfy constraint: Member must have length between 1 and 2048")
	}
	arn, ok := tokenExecution(token)
	if !ok {
		return nil, nil, errorf(CodeInvalidToken, "Invalid Token: 'Invalid token'")
	}
	m.mu.Lock()
	rec, waiting := m.tokens[token]
	e, known := m.execs[arn]
	var stalled *stall
	var dmg *damage
	parked := false
	if known {
		stalled, dmg = e.stalled, e.damage
		parked = e.park != nil && e.park.holds(token)
	}
	m.mu.Unlock()
	switch {
	case waiting:
		return rec, nil, nil
	case parked:
		return nil, e, nil
	case dmg != nil:
		return nil, nil, damagedError(arn, dmg)
	case stalled != nil:
		return nil, nil, errorf(CodeServiceUnavailable, "execution '%s' cannot record its history (%s): its tasks wait again once the server restarts with room on disk", arn, stalled.err)
	case known:
		return nil, nil, errorf(CodeTaskTimedOut, "Task Timed Out: 'Provided task does not exist anymore'")
	default:
		return nil, nil, errorf(CodeTaskDoesNotExist, "Task Does Not Exist: 'Provided task does not exist'")
	}
}

// maxMoves bounds how often an operation on a token follows its Task
// between a run and a parked record (each move is a park or a resume
// that happened meanwhile).
const maxMoves = 100

// resolveToken records an answer to the Task waiting on token: through
// the recorder of the run that waits, or by resuming its parked
// execution with it.
func (m *Manager) resolveToken(token string, res resolution) error {
	for range maxMoves {
		rec, e, err := m.waiting(token)
		switch {
		case err != nil:
			return err
		case rec != nil:
			err = rec.resolve(token, res)
		default:
			err = m.resolveParked(e, token, res)
		}
		if !errors.Is(err, errMoved) {
			return err
		}
	}
	return errorf(CodeServiceUnavailable, "the task of this token kept moving; retry")
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
	if _, _, err := m.waiting(token); err != nil {
		return err
	}
	if len(output) > asl.MaxPayloadBytes {
		return errorf(CodeValidation, "1 validation error detected: Value at 'output' failed to satisfy constraint: Member must have length less than or equal to %d", asl.MaxPayloadBytes)
	}
	if err := asl.CheckJSON([]byte(output)); err != nil {
		return errorf(CodeInvalidOutput, "Invalid Output: 'the output is not valid JSON: %v'", err)
	}
	return m.resolveToken(token, resolution{Token: token, Output: json.RawMessage(output)})
}

// SendTaskFailure fails the task waiting on token with an error name and
// cause (States.TaskFailed when errName is empty).
func (m *Manager) SendTaskFailure(_ context.Context, token, errName, cause string) error {
	if _, _, err := m.waiting(token); err != nil {
		return err
	}
	if err := checkErrorCause(errName, cause); err != nil {
		return err
	}
	if errName == "" {
		errName = asl.ErrTaskFailed
	}
	return m.resolveToken(token, resolution{Token: token, Error: errName, Cause: cause, Failed: true})
}

// SendTaskHeartbeat reports that the task waiting on token is alive: its
// HeartbeatSeconds count again from now. A task recorded as waiting that
// the engine is not waiting for yet (its execution is being resumed) starts
// its count when it waits again; a parked one's count moves in its record.
func (m *Manager) SendTaskHeartbeat(_ context.Context, token string) error {
	for range maxMoves {
		_, e, err := m.waiting(token)
		if err != nil {
			return err
		}
		if e != nil {
			if m.beatParked(e, token) {
				return nil
			}
			continue // resumed meanwhile
		}
		return m.beatLive(token)
	}
	return nil
}

// beatLive passes a heartbeat to the engine's Task waiting on token or,
// when the Task parked meanwhile, to its parked record.
func (m *Manager) beatLive(token string) error {
	var notYet *asl.TaskTimedOut
	err := m.eng.SendTaskHeartbeat(token)
	if !errors.As(err, &notYet) {
		return err
	}
	// not waiting in the engine: being resumed (its count starts when it
	// waits), or parked meanwhile
	arn, _ := tokenExecution(token)
	if e, err := m.lookup(arn); err == nil {
		m.beatParked(e, token)
	}
	return nil
}
