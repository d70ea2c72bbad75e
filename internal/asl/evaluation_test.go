package asl

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// A JSONata expression that fails records an EvaluationFailed event (the
// state, the field, the located cause) right after the state's entry, as
// Step Functions' history does; a Map that fails on its Items records
// MapStateFailed after it; a failure inside an item, the iteration's and
// the Map's failures.
func TestEvaluationFailedEvents(t *testing.T) {
	for _, tc := range []struct {
		name, def, input string
		types            []string
		state, location  string
	}{
		{
			name:     "output field",
			def:      `{"QueryLanguage":"JSONata","StartAt":"P","States":{"P":{"Type":"Pass","Output":{"error":"{% $nothing %}"},"End":true}}}`,
			input:    `{}`,
			types:    []string{"ExecutionStarted", "PassStateEntered", "EvaluationFailed", "ExecutionFailed"},
			state:    "P",
			location: "Output/error",
		},
		{
			name:     "map items",
			def:      `{"QueryLanguage":"JSONata","StartAt":"M","States":{"M":{"Type":"Map","Items":"{% 'not a list' %}","ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Pass","End":true}}},"End":true}}}`,
			input:    `{}`,
			types:    []string{"ExecutionStarted", "MapStateEntered", "EvaluationFailed", "MapStateFailed", "ExecutionFailed"},
			state:    "M",
			location: "Items",
		},
		{
			name: "inside an item",
			def: `{"QueryLanguage":"JSONata","StartAt":"M","States":{"M":{"Type":"Map","Items":"{% [1] %}",
			  "ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Pass","Output":{"r":"{% $states.input.missing %}"},"End":true}}},"End":true}}}`,
			input: `{}`,
			types: []string{"ExecutionStarted", "MapStateEntered", "MapStateStarted", "MapIterationStarted", "PassStateEntered",
				"EvaluationFailed", "MapIterationFailed", "MapStateFailed", "ExecutionFailed"},
			state:    "I",
			location: "Output/r",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := New(NewRegistry()).Run(context.Background(), mustParse(t, tc.def), json.RawMessage(tc.input), StartOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Error != ErrQueryEvaluationError {
				t.Fatalf("execution %s %s: %s", res.Status, res.Error, res.Cause)
			}
			var types []string
			var failed *Event
			history := res.History()
			for i := range history {
				types = append(types, history[i].Type)
				if history[i].Type == "EvaluationFailed" {
					failed = &history[i]
				}
			}
			if strings.Join(types, ",") != strings.Join(tc.types, ",") {
				t.Fatalf("history\n got  %v\n want %v", types, tc.types)
			}
			if failed.State != tc.state || failed.Location != tc.location || failed.Error != ErrQueryEvaluationError ||
				failed.Cause != res.Cause || !strings.HasPrefix(failed.Cause, "An error occurred while executing the state '"+tc.state+"' (entered at the event id #") {
				t.Errorf("EvaluationFailed %+v (execution cause %q)", *failed, res.Cause)
			}
		})
	}
	// A JSONPath state's failure is not an evaluation failure.
	res, err := New(NewRegistry()).Run(context.Background(),
		mustParse(t, `{"StartAt":"P","States":{"P":{"Type":"Pass","InputPath":"$.missing","End":true}}}`), json.RawMessage(`{}`), StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range res.History() {
		if ev.Type == "EvaluationFailed" {
			t.Errorf("a JSONPath failure recorded %+v", ev)
		}
	}
}
