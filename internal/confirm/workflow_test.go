package confirm_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/httpapi"
	"github.com/veredicto/veredicto/internal/poll"

	"github.com/veredicto/veredicto/internal/asl"
	. "github.com/veredicto/veredicto/internal/confirm"
	confirmengine "github.com/veredicto/veredicto/internal/confirm/engine"
)

// reviewASL asks for a confirmation and takes the approved, rejected or
// timed-out path, as a workflow using ConfirmFunction does.
const reviewASL = `{
  "StartAt": "AskReview",
  "States": {
    "AskReview": {
      "Type": "Task",
      "Resource": "arn:aws:states:::lambda:invoke.waitForTaskToken",
      "Parameters": {
        "FunctionName": "ConfirmFunction",
        "Payload": {
          "task_token.$": "$$.Task.Token",
          "execution.$": "$$.Execution.Id",
          "toolName": "senior_review",
          "category": "decision",
          "sensitivity": "high",
          "undoable": false,
          "preview.$": "$.package",
          "tenant.$": "$.tenant",
          "timeout_seconds.$": "$.timeout"
        }
      },
      "TimeoutSecondsPath": "$.timeout",
      "ResultPath": "$.review",
      "Catch": [
        {"ErrorEquals": ["ConfirmationRejected"], "ResultPath": "$.rejection", "Next": "Rejected"},
        {"ErrorEquals": ["States.Timeout"], "Next": "NoAnswer"}
      ],
      "Next": "Approved"
    },
    "Approved": {"Type": "Pass", "Result": "APROBADO_POR_CONSULTOR", "ResultPath": "$.decision", "End": true},
    "Rejected": {"Type": "Pass", "Result": "DESCARTADO_POR_CONSULTOR", "ResultPath": "$.decision", "End": true},
    "NoAnswer": {"Type": "Pass", "Result": "ESCALADO_CONSULTOR_SENIOR", "ResultPath": "$.decision", "End": true}
  }
}`

func TestWorkflowThroughTheEngine(t *testing.T) {
	tests := []struct {
		name     string
		approve  *bool // nil: nobody answers
		timeout  int
		want     string
		wantPath string
	}{
		{"approved", ptr(true), 60, "APROBADO_POR_CONSULTOR", `"approved":true`},
		{"rejected", ptr(false), 60, "DESCARTADO_POR_CONSULTOR", `"Error":"ConfirmationRejected"`},
		{"timed out", nil, 1, "ESCALADO_CONSULTOR_SENIOR", ""},
	}
	sm, err := asl.Parse([]byte(reviewASL))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			reg := asl.NewRegistry()
			reg.Register("ConfirmFunction", asl.Typed(f.svc.Confirm))
			eng := asl.New(reg)
			f.svc.Tasks = confirmengine.Tasks{Engine: eng}
			input := `{"tenant":"acme","timeout":` + itoa(tt.timeout) + `,"package":{"candidate":"c-004"}}`
			x, err := eng.Start(t.Context(), sm, json.RawMessage(input), asl.StartOptions{Name: "s-1", StateMachineName: "review"})
			if err != nil {
				t.Fatal(err)
			}
			if tt.approve != nil {
				id := waitPending(t, f.svc, "acme")
				if _, err := f.svc.Resolve(t.Context(), "acme", Resolution{ID: id, Approved: *tt.approve, By: "ana", Comment: "seen"}); err != nil {
					t.Fatalf("Resolve: %v", err)
				}
			}
			res, err := x.Wait(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			var out map[string]any
			json.Unmarshal(res.Output, &out)
			if res.Status != "SUCCEEDED" || out["decision"] != tt.want {
				t.Fatalf("status %s, output %s; want decision %s", res.Status, res.Output, tt.want)
			}
			if !strings.Contains(string(res.Output), tt.wantPath) {
				t.Errorf("output %s lacks %s", res.Output, tt.wantPath)
			}
			if tt.approve == nil {
				// The workflow stopped waiting: a late answer is 410.
				// Listed as of before its expiry: it is not open now.
				recs, _, _ := f.svc.Store.List(t.Context(), "acme", time.Time{}, 10)
				if len(recs) != 1 {
					t.Fatalf("records = %d, want 1", len(recs))
				}
				_, err := f.svc.Resolve(t.Context(), "acme", Resolution{ID: recs[0].ID, Approved: true, By: "ana"})
				if httpapi.StatusOf(err) != 410 {
					t.Errorf("late answer: %v (status %d), want 410", err, httpapi.StatusOf(err))
				}
			}
		})
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func waitPending(t *testing.T, svc *Service, tenant string) string {
	t.Helper()
	var id string
	poll.Until(t, 10*time.Second, func() bool {
		list, _, err := svc.List(t.Context(), tenant)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) == 1 {
			id = list[0].ID
		}
		return id != ""
	}, "a pending confirmation")
	return id
}
