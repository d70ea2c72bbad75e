package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestLambdaInvokeDebateAgentSamples runs the debate's agent steps on their
// events/ samples, as "sam local invoke" would: the offline agents answer
// within the per-agent timeout. (The samples once carried the debate's and
// the round's start times, so every hand-run call found the time long spent
// and answered TIMEOUT at once.)
func TestLambdaInvokeDebateAgentSamples(t *testing.T) {
	data := t.TempDir()

	code, out, errs := invoke(t, data, "DebatePositionFunction", "../../events/debate-position.json")
	var pos struct {
		Answer struct {
			Participant string `json:"participant"`
			TimedOut    bool   `json:"timed_out"`
		} `json:"answer"`
		Event string `json:"event"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &pos) != nil || pos.Answer.Participant == "" || pos.Answer.TimedOut || pos.Event != "" {
		t.Errorf("DebatePositionFunction: exit %d, answer %+v, event %q\n%s\n%s", code, pos.Answer, pos.Event, out, errs)
	}

	// The sequential round's step answers for one agent and, the round
	// still open, hands the next agent its turn.
	code, out, errs = invoke(t, data, "DebateRebuttalFunction", "../../events/debate-rebuttal.json")
	var flow struct {
		Next    string `json:"next"`
		Index   int    `json:"index"`
		Current []struct {
			Participant string `json:"participant"`
			TimedOut    bool   `json:"timed_out"`
		} `json:"current"`
		Result struct {
			Events []string `json:"Events"`
		} `json:"result"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &flow) != nil {
		t.Fatalf("DebateRebuttalFunction: exit %d\n%s\n%s", code, out, errs)
	}
	for _, ev := range flow.Result.Events {
		if strings.HasPrefix(ev, "TIMEOUT") {
			t.Errorf("DebateRebuttalFunction: %s", ev)
		}
	}
	if flow.Next != "rebuttal" || flow.Index != 1 || len(flow.Current) == 0 || flow.Current[0].TimedOut {
		t.Errorf("DebateRebuttalFunction: next %q, index %d, current %+v; want the first agent answered and the next one's turn", flow.Next, flow.Index, flow.Current)
	}
}
