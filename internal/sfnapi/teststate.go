package sfnapi

import (
	"context"

	"github.com/veredicto/veredicto/internal/control"
)

// testStateRequest is TestState's request: every member of the API model.
type testStateRequest struct {
	Definition      string  `json:"definition"`
	RoleARN         string  `json:"roleArn"`
	Input           *string `json:"input"`
	InspectionLevel string  `json:"inspectionLevel"`
	RevealSecrets   bool    `json:"revealSecrets"`
	Variables       *string `json:"variables"`
	StateName       *string `json:"stateName"`
	Mock            *struct {
		Result      *string `json:"result"`
		ErrorOutput *struct {
			Error string `json:"error"`
			Cause string `json:"cause"`
		} `json:"errorOutput"`
		FieldValidationMode string `json:"fieldValidationMode"`
	} `json:"mock"`
	Context            *string `json:"context"`
	StateConfiguration *struct {
		RetrierRetryCount        *int    `json:"retrierRetryCount"`
		ErrorCausedByState       string  `json:"errorCausedByState"`
		MapIterationFailureCount *int    `json:"mapIterationFailureCount"`
		MapItemReaderData        *string `json:"mapItemReaderData"`
	} `json:"stateConfiguration"`
}

func (h *Handler) testState(ctx context.Context, body []byte) (any, error) {
	var in testStateRequest
	if err := decodeWith(body, &in, "definition", &in.Definition); err != nil {
		return nil, err
	}
	if in.RoleARN != "" {
		if err := checkRole(in.RoleARN); err != nil {
			return nil, err
		}
	}
	if in.StateName != nil && (len(*in.StateName) < 1 || len(*in.StateName) > 80) {
		return nil, validation("1 validation error detected: Value at 'stateName' failed to satisfy constraint: Member must have length between 1 and 80")
	}
	req := control.TestStateRequest{Definition: in.Definition, RoleARN: in.RoleARN, InspectionLevel: in.InspectionLevel, RevealSecrets: in.RevealSecrets,
		Input: deref(in.Input), Variables: deref(in.Variables), StateName: deref(in.StateName), Context: deref(in.Context)}
	if req.Input == "" {
		req.Input = "{}"
	}
	if m := in.Mock; m != nil {
		req.Mock = &control.TestStateMock{Result: m.Result, FieldValidationMode: m.FieldValidationMode}
		if m.ErrorOutput != nil {
			req.Mock.ErrorOutput = &control.TestStateError{Error: m.ErrorOutput.Error, Cause: m.ErrorOutput.Cause}
		}
	}
	if c := in.StateConfiguration; c != nil {
		req.Config = &control.TestStateConfig{RetrierRetryCount: c.RetrierRetryCount, ErrorCausedByState: c.ErrorCausedByState,
			MapIterationFailureCount: c.MapIterationFailureCount, MapItemReaderData: c.MapItemReaderData}
	}
	res, err := h.backend.TestState(ctx, req)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"status": res.Status}
	outcome(out, res.Output, res.Error, res.Cause)
	if res.NextState != "" {
		out["nextState"] = res.NextState
	}
	if in := res.Inspection; in != nil {
		data := map[string]any{}
		for k, v := range in.Data {
			data[k] = string(v) // SensitiveData: JSON text
		}
		for k, v := range in.Numbers {
			data[k] = v
		}
		if d := in.ErrorDetails; d != nil {
			details := map[string]any{}
			set := func(k string, v *int) {
				if v != nil {
					details[k] = *v
				}
			}
			set("catchIndex", d.CatchIndex)
			set("retryIndex", d.RetryIndex)
			set("retryBackoffIntervalSeconds", d.RetryBackoffIntervalSeconds)
			data["errorDetails"] = details
		}
		if in.Request != nil {
			data["request"] = in.Request
		}
		if in.Response != nil {
			data["response"] = in.Response
		}
		out["inspectionData"] = data
	}
	return out, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
