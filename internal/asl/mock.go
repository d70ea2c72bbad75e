package asl

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// TaskMock answers the Task attempts of one execution in place of the
// services they call, as Step Functions Local's mocked service
// integrations do: a mocked Task never calls its resource (no handler need
// serve it), and its answer is the Task's result exactly as the service
// would have returned it (a lambda:invoke's answer is the whole
// {StatusCode, Payload…} response, not wrapped again), or the error the
// attempt fails with. A mocked .waitForTaskToken Task gets a token as any
// other and is answered at once, without waiting for SendTask*.
//
// Every attempt of a mocked state consumes one answer, in execution order:
// its retries take the next ones, and so does an attempt replayed from the
// history after a restart or a redrive, so the answers go on where they
// left off. It must be safe for concurrent use (Map iterations and
// Parallel branches run at once).
type TaskMock interface {
	// Mocks reports whether the state's Tasks are answered by the mock.
	Mocks(state string) bool
	// Next is the answer to the state's next attempt: the result's JSON
	// text, or the error it fails with (a *StatesError; one named
	// States.Runtime ends the execution, as a mocked state with no answer
	// for an attempt does in Step Functions Local).
	Next(state string) (json.RawMessage, error)
}

// mockAnswer ends a mocked Task attempt (whose context is tctx) with the
// mock's next answer, once its scheduling is recorded. A replayed attempt
// consumes its answer too and ends as the history recorded it. It is
// task's tail, kept out of task's frame (see taskFailed).
func (r *stateRun) mockAnswer(ctx, tctx context.Context, input any, replay *TaskReplay, timeout time.Duration) (any, error) {
	st := r.st
	raw, err := r.x.mock.Next(st.Name)
	if replay.Done {
		return r.replayed(input, *replay)
	}
	var se *StatesError
	if errors.As(err, &se) && se.Name == ErrRuntime {
		return nil, se // no answer for this attempt: the execution fails
	}
	if err != nil {
		return nil, r.taskFailed(ctx, tctx, err, timeout)
	}
	result, size, perr := r.taskResult(raw)
	if perr != nil {
		return nil, newError(ErrRuntime, "state %q: the mocked response is not JSON: %v", st.Name, perr)
	}
	if size > MaxPayloadBytes {
		return nil, newError(ErrDataLimitExceeded, "The state/task '%s' returned a result with a size exceeding the maximum number of bytes service limit.", st.Resource)
	}
	r.resultSize = size
	if strings.HasSuffix(st.Resource, waitForTaskToken) {
		r.x.emitState(evTaskSubmitted, st, r.fr, result)
	}
	r.x.emitState(evTaskSucceeded, st, r.fr, result)
	return r.finish(input, result)
}
