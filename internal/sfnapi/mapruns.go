package sfnapi

import (
	"context"
	"fmt"

	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/control"
)

// MapRunner is what the API needs from the control plane for the map runs
// of Distributed Map states (a *control.Manager).
type MapRunner interface {
	DescribeMapRun(ctx context.Context, arn string) (control.MapRun, error)
	ListMapRuns(ctx context.Context, executionARN, next string, max int) ([]control.MapRun, string, error)
	UpdateMapRun(ctx context.Context, arn string, u control.MapRunUpdate) error
	ListMapRunExecutions(ctx context.Context, arn, status, next string, max int) ([]control.ExecutionSummary, string, error)
}

var _ MapRunner = (*control.Manager)(nil)

// mapRunOps are the operations on map runs. A map run belongs to its
// parent execution's tenant: another tenant's answers as a missing one.
func (h *Handler) mapRunOps() map[string]func(context.Context, []byte) (any, error) {
	return map[string]func(context.Context, []byte) (any, error){
		"DescribeMapRun": h.describeMapRun,
		"ListMapRuns":    h.listMapRuns,
		"UpdateMapRun":   h.updateMapRun,
	}
}

// visibleMapRun describes a map run the caller may see.
func (h *Handler) visibleMapRun(ctx context.Context, arn string) (control.MapRun, error) {
	r, err := h.backend.DescribeMapRun(ctx, arn)
	if err != nil {
		return r, err
	}
	if p := principal(ctx); !p.Operator && r.Tenant != p.Tenant {
		return control.MapRun{}, &control.Error{Code: control.CodeResourceNotFound, Message: fmt.Sprintf("Resource not found: '%s'", arn)}
	}
	return r, nil
}

func (h *Handler) describeMapRun(ctx context.Context, body []byte) (any, error) {
	var in struct {
		ARN string `json:"mapRunArn"`
	}
	if err := decodeWith(body, &in, "mapRunArn", &in.ARN); err != nil {
		return nil, err
	}
	r, err := h.visibleMapRun(ctx, in.ARN)
	if err != nil {
		return nil, err
	}
	out := map[string]any{
		"mapRunArn": r.ARN, "executionArn": r.ExecutionARN, "status": r.Status, "startDate": epoch(r.Start),
		"maxConcurrency": r.MaxConcurrency, "toleratedFailurePercentage": r.ToleratedFailurePercentage, "toleratedFailureCount": r.ToleratedFailureCount,
		"itemCounts": counts(r.Counts.Items), "executionCounts": counts(r.Counts.Executions), "redriveCount": r.RedriveCount,
	}
	if s := epochPtr(r.Stop); s != nil {
		out["stopDate"] = s
	}
	if d := epochPtr(r.RedriveDate); d != nil {
		out["redriveDate"] = d
	}
	return out, nil
}

// counts is DescribeMapRun's itemCounts or executionCounts.
func counts(c asl.MapRunCount) map[string]any {
	notRedrivable := int64(0) // a child's failure is redriven with its run
	return map[string]any{"pending": c.Pending, "running": c.Running, "succeeded": c.Succeeded, "failed": c.Failed, "timedOut": c.TimedOut,
		"aborted": c.Aborted, "total": c.Total, "resultsWritten": c.ResultsWritten, "failuresNotRedrivable": notRedrivable, "pendingRedrive": int64(0)}
}

func (h *Handler) listMapRuns(ctx context.Context, body []byte) (any, error) {
	var in struct {
		ARN        string `json:"executionArn"`
		MaxResults int    `json:"maxResults"`
		NextToken  string `json:"nextToken"`
	}
	if err := h.decodeExecution(ctx, body, &in, &in.ARN); err != nil {
		return nil, err
	}
	max, err := pageSize(in.MaxResults)
	if err != nil {
		return nil, err
	}
	runs, next, err := h.backend.ListMapRuns(ctx, in.ARN, in.NextToken, max)
	if err != nil {
		return nil, err
	}
	items := make([]map[string]any, 0, len(runs))
	for _, r := range runs {
		it := map[string]any{"executionArn": r.ExecutionARN, "mapRunArn": r.ARN, "stateMachineArn": r.StateMachineARN, "startDate": epoch(r.Start)}
		if s := epochPtr(r.Stop); s != nil {
			it["stopDate"] = s
		}
		items = append(items, it)
	}
	out := map[string]any{"mapRuns": items}
	if next != "" {
		out["nextToken"] = next
	}
	return out, nil
}

func (h *Handler) updateMapRun(ctx context.Context, body []byte) (any, error) {
	var in struct {
		ARN                        string   `json:"mapRunArn"`
		MaxConcurrency             *int     `json:"maxConcurrency"`
		ToleratedFailureCount      *int64   `json:"toleratedFailureCount"`
		ToleratedFailurePercentage *float64 `json:"toleratedFailurePercentage"`
	}
	if err := decodeWith(body, &in, "mapRunArn", &in.ARN); err != nil {
		return nil, err
	}
	if _, err := h.visibleMapRun(ctx, in.ARN); err != nil {
		return nil, err
	}
	return struct{}{}, h.backend.UpdateMapRun(ctx, in.ARN, control.MapRunUpdate{MaxConcurrency: in.MaxConcurrency,
		ToleratedFailureCount: in.ToleratedFailureCount, ToleratedFailurePercentage: in.ToleratedFailurePercentage})
}
