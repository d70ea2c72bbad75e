package sfnapi

import (
	"context"
	"encoding/json"
	"errors"
	"unicode/utf8"

	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/control"
)

// ActivityBackend is what the activity operations need (a
// *control.Manager).
type ActivityBackend interface {
	CreateActivity(ctx context.Context, name, tenant string, tags []control.Tag, enc *control.EncryptionConfiguration) (control.Activity, error)
	DescribeActivity(ctx context.Context, arn string) (control.Activity, error)
	ListActivities(ctx context.Context, after string, max int, visible func(control.Activity) bool) ([]control.Activity, string, error)
	DeleteActivity(ctx context.Context, arn string) error
	GetActivityTask(ctx context.Context, arn, worker, tenant string) (control.ActivityTask, error)
}

// activityOps are the activity operations.
func (h *Handler) activityOps() map[string]func(context.Context, []byte) (any, error) {
	return map[string]func(context.Context, []byte) (any, error){
		"CreateActivity":   h.createActivity,
		"DescribeActivity": h.describeActivity,
		"ListActivities":   h.listActivities,
		"DeleteActivity":   h.deleteActivity,
		"GetActivityTask":  h.getActivityTask,
	}
}

// Who may do what with activities:
//   - an operator's key creates activities everyone's workers may poll,
//     and sees and manages every activity;
//   - a tenant's key creates activities of its own, which only it (and
//     operators) sees: another tenant's answers exactly as a missing one;
//     it may describe, poll and list everyone's, but delete and tag only
//     its own;
//   - whoever polls, a task goes only to a worker of its execution's
//     tenant, or to an operator's (control.Manager.GetActivityTask).

// visibleActivity is the activity arn names, refused exactly as a missing
// one when it is another tenant's.
func (h *Handler) visibleActivity(ctx context.Context, arn string) (control.Activity, error) {
	a, err := h.backend.DescribeActivity(ctx, arn)
	if err != nil {
		return control.Activity{}, err
	}
	if p := principal(ctx); !p.Operator && a.Tenant != "" && a.Tenant != p.Tenant {
		return control.Activity{}, control.ActivityDoesNotExist(arn)
	}
	return a, nil
}

// workerTenant is whose tasks the caller's workers take: its tenant's, or
// anyone's for an operator ("").
func workerTenant(ctx context.Context) string {
	if p := principal(ctx); !p.Operator {
		return p.Tenant
	}
	return ""
}

func (h *Handler) createActivity(ctx context.Context, body []byte) (any, error) {
	var in struct {
		Name       nameField                        `json:"name"`
		Tags       []control.Tag                    `json:"tags"`
		Encryption *control.EncryptionConfiguration `json:"encryptionConfiguration"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if err := required("name", string(in.Name)); err != nil {
		return nil, err
	}
	a, err := h.backend.CreateActivity(ctx, string(in.Name), workerTenant(ctx), in.Tags, in.Encryption)
	if err != nil {
		return nil, err
	}
	return map[string]any{"activityArn": a.ARN, "creationDate": epoch(a.Created)}, nil
}

// activityRequest reads a request naming an activity by activityArn.
func activityRequest(body []byte) (string, error) {
	var in struct {
		ARN string `json:"activityArn"`
	}
	err := decodeWith(body, &in, "activityArn", &in.ARN)
	return in.ARN, err
}

func (h *Handler) describeActivity(ctx context.Context, body []byte) (any, error) {
	arn, err := activityRequest(body)
	if err != nil {
		return nil, err
	}
	a, err := h.visibleActivity(ctx, arn)
	if err != nil {
		return nil, err
	}
	enc := a.Encryption
	if enc == nil {
		enc = control.Configuration{}.Effective().Encryption
	}
	return map[string]any{"activityArn": a.ARN, "name": a.Name, "creationDate": epoch(a.Created), "encryptionConfiguration": enc}, nil
}

// listRequest reads a request for a page of a list that takes nothing
// else (ListStateMachines, ListActivities): its token and page size.
func listRequest(body []byte) (next string, max int, err error) {
	var in struct {
		MaxResults int    `json:"maxResults"`
		NextToken  string `json:"nextToken"`
	}
	if err := decode(body, &in); err != nil {
		return "", 0, err
	}
	max, err = pageSize(in.MaxResults)
	return in.NextToken, max, err
}

func (h *Handler) listActivities(ctx context.Context, body []byte) (any, error) {
	after, max, err := listRequest(body)
	if err != nil {
		return nil, err
	}
	p := principal(ctx)
	// Another tenant's activity is not listed, as if it did not exist:
	// filtered before the paging, so no page or token reveals it.
	list, next, err := h.backend.ListActivities(ctx, after, max, func(a control.Activity) bool {
		return p.Operator || a.Tenant == "" || a.Tenant == p.Tenant
	})
	if err != nil {
		return nil, err
	}
	items := make([]map[string]any, 0, len(list))
	for _, a := range list {
		items = append(items, map[string]any{"activityArn": a.ARN, "name": a.Name, "creationDate": epoch(a.Created)})
	}
	out := map[string]any{"activities": items}
	if next != "" {
		out["nextToken"] = next
	}
	return out, nil
}

func (h *Handler) deleteActivity(ctx context.Context, body []byte) (any, error) {
	arn, err := activityRequest(body)
	if err != nil {
		return nil, err
	}
	a, err := h.visibleActivity(ctx, arn)
	switch {
	case hasCode(err, control.CodeActivityDoesNotExist):
		return struct{}{}, nil // deleting a missing activity succeeds
	case err != nil:
		return nil, err
	}
	if p := principal(ctx); !p.Operator && a.Tenant != p.Tenant {
		return nil, accessDenied(p, "DeleteActivity")
	}
	return struct{}{}, h.backend.DeleteActivity(ctx, arn)
}

func (h *Handler) getActivityTask(ctx context.Context, body []byte) (any, error) {
	var in struct {
		ARN    string  `json:"activityArn"`
		Worker *string `json:"workerName"`
	}
	if err := decodeWith(body, &in, "activityArn", &in.ARN); err != nil {
		return nil, err
	}
	worker := ""
	if in.Worker != nil {
		worker = *in.Worker
		if n := utf8.RuneCountInString(worker); n < 1 || n > 80 {
			return nil, validation("1 validation error detected: Value '%s' at 'workerName' failed to satisfy constraint: Member must have length between 1 and 80", worker)
		}
	}
	if _, err := h.visibleActivity(ctx, in.ARN); err != nil {
		return nil, err
	}
	t, err := h.backend.GetActivityTask(ctx, in.ARN, worker, workerTenant(ctx))
	if err != nil || t.Token == "" {
		return struct{}{}, err // no task within the poll: no taskToken, as Step Functions answers
	}
	return map[string]any{"taskToken": t.Token, "input": t.Input}, nil
}

// activityEvent renders the history events of an activity Task as Step
// Functions reports them (Activity*); ok is false for any other event.
func activityEvent(ev control.HistoryEvent, data bool) (out map[string]any, ok bool) {
	if ev.Type != "ActivityStarted" && !asl.IsActivityARN(ev.Resource) {
		return nil, false
	}
	out = map[string]any{"id": ev.ID, "previousEventId": ev.PreviousID, "timestamp": epoch(ev.Timestamp)}
	with := func(typ, key string, d map[string]any) (map[string]any, bool) {
		out["type"], out[key] = typ, d
		return out, true
	}
	errCause := map[string]any{}
	if ev.Error != "" {
		errCause["error"] = ev.Error
	}
	if ev.Cause != "" {
		errCause["cause"] = ev.Cause
	}
	switch ev.Type {
	case "ActivityStarted":
		d := map[string]any{}
		if ev.WorkerName != "" {
			d["workerName"] = ev.WorkerName
		}
		return with("ActivityStarted", "activityStartedEventDetails", d)
	case "TaskScheduled":
		d := eventData(map[string]any{"resource": ev.Resource}, "input", ev.Input, data)
		if ev.TimeoutSeconds > 0 {
			d["timeoutInSeconds"] = ev.TimeoutSeconds
		}
		if ev.HeartbeatSeconds > 0 {
			d["heartbeatInSeconds"] = ev.HeartbeatSeconds
		}
		return with("ActivityScheduled", "activityScheduledEventDetails", d)
	case "TaskSucceeded":
		return with("ActivitySucceeded", "activitySucceededEventDetails", eventData(map[string]any{}, "output", ev.Output, data))
	case "TaskFailed":
		return with("ActivityFailed", "activityFailedEventDetails", errCause)
	case "TaskTimedOut":
		return with("ActivityTimedOut", "activityTimedOutEventDetails", errCause)
	}
	return nil, false
}

// hasCode reports whether err is the control plane's refusal code.
func hasCode(err error, code string) bool {
	var ce *control.Error
	return errors.As(err, &ce) && ce.Code == code
}

// eventData sets d[field] to v as JSON text, with its …Details, when the
// history is read with its data.
func eventData(d map[string]any, field string, v any, data bool) map[string]any {
	if !data {
		return d
	}
	if b, err := json.Marshal(v); err == nil {
		d[field] = string(b)
		d[field+"Details"] = map[string]bool{"truncated": false}
	}
	return d
}
