package sfnapi

import (
	"context"
	"time"

	"github.com/veredicto/veredicto/internal/control"
)

// Redriver is what the API needs from the control plane to redrive
// executions (a *control.Manager).
type Redriver interface {
	RedriveExecution(ctx context.Context, arn, clientToken string) (time.Time, error)
}

var _ Redriver = (*control.Manager)(nil)

func (h *Handler) redriveOps() map[string]func(context.Context, []byte) (any, error) {
	return map[string]func(context.Context, []byte) (any, error){"RedriveExecution": h.redriveExecution}
}

// redriveExecution runs a failed, timed-out or aborted execution again
// from where it failed. A tenant's key redrives its tenant's executions
// only; another's answers as a missing one.
func (h *Handler) redriveExecution(ctx context.Context, body []byte) (any, error) {
	var in struct {
		ARN         string `json:"executionArn"`
		ClientToken string `json:"clientToken"`
	}
	if err := h.decodeExecution(ctx, body, &in, &in.ARN); err != nil {
		return nil, err
	}
	at, err := h.backend.RedriveExecution(ctx, in.ARN, in.ClientToken)
	if err != nil {
		return nil, err
	}
	return map[string]any{"redriveDate": epoch(at)}, nil
}

// redrive adds what DescribeExecution reports of an execution's redrives.
func redrive(out map[string]any, rd control.Redrive) {
	out["redriveCount"] = rd.Count
	if d := epochPtr(rd.Date); d != nil {
		out["redriveDate"] = d
	}
	out["redriveStatus"] = rd.Status
	if rd.Reason != "" {
		out["redriveStatusReason"] = rd.Reason
	}
}

// redriveFilters are ListExecutions' redriveFilter values, each keeping
// the executions it names.
var redriveFilters = map[string]func(control.ExecutionSummary) bool{
	"":             func(control.ExecutionSummary) bool { return true },
	"REDRIVEN":     func(x control.ExecutionSummary) bool { return x.RedriveCount > 0 },
	"NOT_REDRIVEN": func(x control.ExecutionSummary) bool { return x.RedriveCount == 0 },
}
