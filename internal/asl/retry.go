package asl

import (
	"context"
	"math"
	mrand "math/rand/v2"
	"time"
)

// retried waits out the delay of the retrier that matches se, if it has
// attempts left, and reports whether the state is to run again. It is kept
// out of withRetry's frame, which lies under a waiting Task (see
// Execution.conclude).
func (r *stateRun) retried(ctx context.Context, se *StatesError, attempts []int) (bool, error) {
	st := r.st
	i := matchIndex(st.Retry, se)
	if i < 0 || attempts[i] >= st.Retry[i].MaxAttempts {
		return false, nil
	}
	rt := st.Retry[i]
	delay := rt.IntervalSeconds * math.Pow(rt.BackoffRate, float64(attempts[i]))
	if rt.MaxDelaySeconds > 0 && delay > rt.MaxDelaySeconds {
		delay = rt.MaxDelaySeconds
	}
	if rt.JitterFull {
		delay = mrand.Float64() * delay
	}
	attempts[i]++
	r.retry++
	r.x.engine.logger.DebugContext(ctx, "retrying state", "state", st.Name, "error", se.Name, "attempt", r.retry)
	if err := r.x.engine.sleep(ctx, time.Duration(delay*float64(time.Second))); err != nil {
		return false, err
	}
	r.entered = r.x.engine.now()
	return true, nil
}

// withRetry runs a Task, Parallel or Map state with its Retry and Catch.
func (r *stateRun) withRetry(ctx context.Context, input any) (any, string, error) {
	st := r.st
	attempts := make([]int, len(st.Retry))
	for {
		var (
			out any
			err error
		)
		r.resultSize, r.outSize = sizeUnknown, sizeUnknown // this attempt's
		switch st.Type {
		case "Task":
			out, err = r.task(ctx, input)
		case "Parallel":
			out, err = r.parallel(ctx, input)
		case "Map":
			out, err = r.mapState(ctx, input)
		}
		if err == nil {
			return out, st.Next, nil
		}
		if err == errParked { // neither retried nor caught
			return nil, "", err
		}
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		se := toStatesError(err)
		if retry, err := r.retried(ctx, se, attempts); err != nil {
			return nil, "", err
		} else if retry {
			continue
		}
		for _, c := range st.Catch {
			if !errorMatches(c.ErrorEquals, se) {
				continue
			}
			errOut := map[string]any{"Error": se.Name, "Cause": se.Cause}
			r.resultSize, r.outSize = sizeUnknown, sizeUnknown // measured on exit
			out, perr := r.caught(ctx, c, input, errOut)
			if perr != nil {
				return nil, "", perr
			}
			return out, c.Next, nil
		}
		return nil, "", se
	}
}

func matchIndex(rs []*retrier, se *StatesError) int {
	for i, rt := range rs {
		if errorMatches(rt.ErrorEquals, se) {
			return i
		}
	}
	return -1
}

// errorMatches applies ErrorEquals to se: exact names, States.ALL (any
// error but the terminal States.Runtime and States.DataLimitExceeded),
// States.TaskFailed (any of those but the timeouts) and
// States.HeartbeatTimeout, the narrower name of the States.Timeout of a
// heartbeat's silence (StatesError.Heartbeat).
func errorMatches(list []string, se *StatesError) bool {
	name := se.Name
	// A history recorded before heartbeat timeouts were named
	// States.Timeout names one States.HeartbeatTimeout; replayed, it is
	// matched as it was then.
	heartbeat := se.Heartbeat || name == ErrHeartbeatTimeout
	terminal := name == ErrRuntime || name == ErrDataLimitExceeded
	for _, e := range list {
		switch {
		case e == name && name != ErrRuntime:
			return true
		case e == ErrAll && !terminal:
			return true
		case e == ErrHeartbeatTimeout && heartbeat, e == ErrTimeout && heartbeat:
			return true
		case e == ErrTaskFailed && !terminal && name != ErrTimeout && !heartbeat:
			return true
		}
	}
	return false
}

// ErrorMatches applies a Retry's or a Catch's ErrorEquals to an error
// named name, as the engine does (TestState's answers use it).
func ErrorMatches(errorEquals []string, name string) bool {
	return errorMatches(errorEquals, &StatesError{Name: name})
}

// caught builds the output of a Catch and makes its assignments ($ in a
// JSONPath Assign, $states.errorOutput in JSONata, is the error output).
func (r *stateRun) caught(ctx context.Context, c *catcher, input any, errOut map[string]any) (any, error) {
	if r.st.jsonata {
		return r.jsonataCaught(ctx, c, input, errOut)
	}
	commit, err := r.jsonPathAssign(c.Assign, errOut)
	if err != nil {
		return nil, err
	}
	out, err := r.applyResultPath(c.ResultPath, input, errOut)
	if err != nil {
		return nil, err
	}
	return out, commit()
}
