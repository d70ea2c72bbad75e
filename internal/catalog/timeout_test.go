package catalog_test

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/llm/llmtest"
	"github.com/veredicto/veredicto/internal/search"
	"github.com/veredicto/veredicto/statemachines"
)

// withTaskTimeouts is executive_search.asl.json with every Task's
// TimeoutSeconds set to seconds, so that a test sees the deployed bound's
// path (States.Timeout, then the Catch) without waiting for it. It fails the
// test unless every agent Task has a TimeoutSeconds to shorten.
func withTaskTimeouts(t *testing.T, seconds int) *asl.StateMachine {
	t.Helper()
	var def map[string]any
	if err := json.Unmarshal(statemachines.ExecutiveSearch, &def); err != nil {
		t.Fatal(err)
	}
	bounded := map[string]bool{}
	var walk func(states map[string]any)
	walk = func(states map[string]any) {
		for name, v := range states {
			st := v.(map[string]any)
			if _, ok := st["TimeoutSeconds"]; ok && st["Type"] == "Task" {
				st["TimeoutSeconds"] = seconds
				bounded[name] = true
			}
			if p, ok := st["ItemProcessor"].(map[string]any); ok {
				walk(p["States"].(map[string]any))
			}
		}
	}
	walk(def["States"].(map[string]any))
	for _, agent := range []string{"Gem5", "Gem1", "Gem2", "Gem3", "Gem4", "Correction"} {
		if !bounded[agent] {
			t.Fatalf("executive_search.asl.json: the agent Task %s has no TimeoutSeconds", agent)
		}
	}
	b, err := json.Marshal(def)
	if err != nil {
		t.Fatal(err)
	}
	sm, err := asl.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	return sm
}

// silentOn answers like the scripted model, except that calls of schema
// for candidate (any candidate when "") are accepted and never answered:
// the server holds them until the client gives up.
func silentOn(t *testing.T, schema, candidate string) func(llmtest.Call) llmtest.Reply {
	m := &rateLimitedModel{t: t}
	return func(c llmtest.Call) llmtest.Reply {
		if c.Schema == schema && (candidate == "" || strings.Contains(c.User(), "candidate_id: "+candidate)) {
			return llmtest.Reply{Delay: time.Hour}
		}
		return m.respond(c)
	}
}

// TestASilentProviderEndsTheStageWithStatesTimeout: a provider that
// accepts a call and never answers ends the stage when the Task's
// TimeoutSeconds runs out, with States.Timeout (the client's own tries,
// 60 s each, outlast it), and the workflow takes the path of any stage
// failure: a candidate's stage escalates the candidate as a technical
// error while the others are decided; GEM5, which every candidate needs,
// fails the search.
func TestASilentProviderEndsTheStageWithStatesTimeout(t *testing.T) {
	sm := withTaskTimeouts(t, 1)

	t.Run("candidate stage", func(t *testing.T) {
		o := runSearchOn(t, silentOn(t, "gem1", "c-high"), sm)
		if o.res.Status != asl.StatusSucceeded {
			t.Fatalf("execution %s: %s: %s", o.res.Status, o.res.Error, o.res.Cause)
		}
		want := map[string]string{
			"c-high": search.DecisionEscalated + " (" + search.ReasonTechnicalError + ")  States.Timeout",
			"c-low":  search.DecisionDiscarded1 + " (" + search.ReasonGate1 + ") gem1",
		}
		if !maps.Equal(o.decisions, want) {
			t.Errorf("decisions %q, want %q", o.decisions, want)
		}
		if got := strings.Join(o.failures, " "); got != "Gem1:States.Timeout" {
			t.Errorf("task failures %q, want one Gem1:States.Timeout, not retried", got)
		}
	})

	t.Run("mandate stage", func(t *testing.T) {
		o := runSearchOn(t, silentOn(t, "gem5", ""), sm)
		// No cause: Step Functions records a timeout without one; the
		// history names the state that timed out.
		if o.res.Status != asl.StatusFailed || o.res.Error != "States.Timeout" || o.res.Cause != "" {
			t.Errorf("execution %s %s: %q, want FAILED with States.Timeout and no cause", o.res.Status, o.res.Error, o.res.Cause)
		}
		if got := strings.Join(o.failures, " "); got != "Gem5:States.Timeout" {
			t.Errorf("task failures %q, want one Gem5:States.Timeout", got)
		}
	})
}
