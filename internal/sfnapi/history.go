package sfnapi

import (
	"encoding/json"
	"strings"

	"github.com/veredicto/veredicto/internal/control"
)

const serviceIntegration = "arn:aws:states:::"

// historyEvent renders a persisted event as Step Functions' HistoryEvent:
// its type, id, previousEventId, epoch-seconds timestamp and the
// <type>EventDetails member of that type. A Task whose resource is a
// function ARN (or a ${XxxFunctionArn} placeholder) is reported with the
// LambdaFunction* events Step Functions uses for one; service integrations
// (arn:aws:states:::lambda:invoke…) as Task* events with resourceType and
// resource split as Step Functions splits them.
func historyEvent(ev control.HistoryEvent, data bool, role string) map[string]any {
	if out, ok := activityEvent(ev, data); ok {
		return out
	}
	out := map[string]any{
		"id":              ev.ID,
		"previousEventId": ev.PreviousID,
		"timestamp":       epoch(ev.Timestamp),
		"type":            ev.Type,
	}
	payload := func(v any) (string, bool) {
		if !data {
			return "", false
		}
		b, err := json.Marshal(v)
		if err != nil {
			return "", false
		}
		return string(b), true
	}
	withData := func(d map[string]any, field string, v any) map[string]any {
		if s, ok := payload(v); ok {
			d[field] = s
			d[field+"Details"] = map[string]bool{"truncated": false}
		}
		return d
	}
	errCause := func(d map[string]any) map[string]any {
		if ev.Error != "" {
			d["error"] = ev.Error
		}
		if ev.Cause != "" {
			d["cause"] = ev.Cause
		}
		return d
	}
	lambda := ev.Resource != "" && !strings.HasPrefix(ev.Resource, serviceIntegration)
	resourceType, resource := splitResource(ev.Resource)
	task := func() map[string]any { return map[string]any{"resourceType": resourceType, "resource": resource} }

	switch t := ev.Type; {
	case t == "ExecutionStarted":
		out["executionStartedEventDetails"] = withData(map[string]any{"roleArn": role}, "input", ev.Input)
	case t == "ExecutionSucceeded":
		out["executionSucceededEventDetails"] = withData(map[string]any{}, "output", ev.Output)
	case t == "ExecutionFailed":
		out["executionFailedEventDetails"] = errCause(map[string]any{})
	case t == "ExecutionTimedOut":
		out["executionTimedOutEventDetails"] = errCause(map[string]any{})
	case t == "ExecutionAborted":
		out["executionAbortedEventDetails"] = errCause(map[string]any{})
	case t == "ExecutionRedriven":
		out["executionRedrivenEventDetails"] = map[string]any{"redriveCount": ev.RedriveCount}
	case strings.HasSuffix(t, "StateEntered"):
		out["stateEnteredEventDetails"] = withData(map[string]any{"name": ev.State}, "input", ev.Input)
	case strings.HasSuffix(t, "StateExited"):
		out["stateExitedEventDetails"] = withData(map[string]any{"name": ev.State}, "output", ev.Output)
	case t == "TaskScheduled" && lambda:
		out["type"] = "LambdaFunctionScheduled"
		d := withData(map[string]any{"resource": ev.Resource}, "input", ev.Input)
		if ev.TimeoutSeconds > 0 {
			d["timeoutInSeconds"] = ev.TimeoutSeconds
		}
		out["lambdaFunctionScheduledEventDetails"] = d
	case t == "TaskScheduled":
		d := map[string]any{"resourceType": resourceType, "resource": resource, "region": control.Region}
		if s, ok := payload(ev.Input); ok {
			d["parameters"] = s
		} else {
			d["parameters"] = "{}"
		}
		if ev.TimeoutSeconds > 0 {
			d["timeoutInSeconds"] = ev.TimeoutSeconds
		}
		if ev.HeartbeatSeconds > 0 {
			d["heartbeatInSeconds"] = ev.HeartbeatSeconds
		}
		out["taskScheduledEventDetails"] = d
	case t == "TaskStarted" && lambda:
		out["type"] = "LambdaFunctionStarted"
	case t == "TaskStarted":
		out["taskStartedEventDetails"] = task()
	case t == "TaskSubmitted":
		out["taskSubmittedEventDetails"] = withData(task(), "output", ev.Output)
	case t == "TaskSucceeded" && lambda:
		out["type"] = "LambdaFunctionSucceeded"
		out["lambdaFunctionSucceededEventDetails"] = withData(map[string]any{}, "output", ev.Output)
	case t == "TaskSucceeded":
		out["taskSucceededEventDetails"] = withData(task(), "output", ev.Output)
	case t == "TaskFailed" && lambda:
		out["type"] = "LambdaFunctionFailed"
		out["lambdaFunctionFailedEventDetails"] = errCause(map[string]any{})
	case t == "TaskFailed":
		out["taskFailedEventDetails"] = errCause(task())
	case t == "TaskTimedOut" && lambda:
		out["type"] = "LambdaFunctionTimedOut"
		out["lambdaFunctionTimedOutEventDetails"] = errCause(map[string]any{})
	case t == "TaskTimedOut":
		out["taskTimedOutEventDetails"] = errCause(task())
	case t == "EvaluationFailed":
		d := errCause(map[string]any{"state": ev.State})
		if ev.Location != "" {
			d["location"] = ev.Location
		}
		out["evaluationFailedEventDetails"] = d
	case t == "MapRunStarted":
		out["mapRunStartedEventDetails"] = map[string]any{"mapRunArn": ev.MapRunARN}
	case t == "MapRunFailed":
		out["mapRunFailedEventDetails"] = errCause(map[string]any{})
	case t == "MapStateStarted" && ev.Length != nil:
		out["mapStateStartedEventDetails"] = map[string]any{"length": *ev.Length}
	case strings.HasPrefix(t, "MapIteration") && ev.Index != nil:
		key := "mapIteration" + strings.TrimPrefix(t, "MapIteration") + "EventDetails"
		out[key] = map[string]any{"name": ev.State, "index": *ev.Index}
	}
	return out
}

// splitResource splits a service integration ARN as Step Functions reports
// it: "arn:aws:states:::lambda:invoke.waitForTaskToken" → "lambda",
// "invoke.waitForTaskToken".
func splitResource(res string) (resourceType, resource string) {
	rest, ok := strings.CutPrefix(res, serviceIntegration)
	if !ok {
		return "lambda", res
	}
	typ, r, _ := strings.Cut(rest, ":")
	return typ, r
}
