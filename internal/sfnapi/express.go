package sfnapi

import (
	"context"
	"time"

	"github.com/veredicto/veredicto/internal/control"
)

// Expresser is what the API needs from the control plane for Express
// workflows and their logs (a *control.Manager).
type Expresser interface {
	StartSyncExecution(ctx context.Context, smARN, name, input string) (control.Execution, error)
	SetLoggingConfiguration(ctx context.Context, arn string, lc control.LoggingConfiguration, revise bool) (time.Time, error)
}

var _ Expresser = (*control.Manager)(nil)

// billedMemoryMB is what Step Functions bills every Express execution
// for; the duration is billed in 100 ms steps, at least one.
const billedMemoryMB = 64

// startSyncExecution runs an Express execution and answers with its
// outcome. A tenant's input is scoped as StartExecution's.
func (h *Handler) startSyncExecution(ctx context.Context, body []byte) (any, error) {
	in, input, err := decodeStart(ctx, body)
	if err != nil {
		return nil, err
	}
	x, err := h.backend.StartSyncExecution(ctx, in.ARN, string(in.Name), input)
	if err != nil {
		return nil, err
	}
	ms := x.Stop.Sub(x.Start).Milliseconds()
	out := map[string]any{"executionArn": x.ARN, "stateMachineArn": x.StateMachineARN, "name": x.Name, "status": x.Status,
		"startDate": epoch(x.Start), "stopDate": epoch(x.Stop), "input": string(x.Input),
		"inputDetails": map[string]bool{"included": true}, "outputDetails": map[string]bool{"included": true},
		"billingDetails": map[string]int64{"billedDurationInMilliseconds": max(100, (ms+99)/100*100), "billedMemoryUsedInMB": billedMemoryMB}}
	outcome(out, x.Output, x.Error, x.Cause)
	if in.TraceHeader != "" {
		out["traceHeader"] = in.TraceHeader
	}
	return out, nil
}

// logging applies a request's loggingConfiguration to the machine arn
// (revise: an update's, a new revision when it changes anything).
func (h *Handler) logging(ctx context.Context, arn string, lc *control.LoggingConfiguration, revise bool) (time.Time, error) {
	if lc == nil {
		return time.Time{}, nil
	}
	return h.backend.SetLoggingConfiguration(ctx, arn, *lc, revise)
}

func (h *Handler) expressOps() map[string]func(context.Context, []byte) (any, error) {
	return map[string]func(context.Context, []byte) (any, error){"StartSyncExecution": h.startSyncExecution}
}
