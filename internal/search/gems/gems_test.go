package gems_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/asl"
	fileblob "github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/catalog"
	"github.com/veredicto/veredicto/internal/llm"
	"github.com/veredicto/veredicto/internal/llm/llmtest"
	"github.com/veredicto/veredicto/internal/search"
	"github.com/veredicto/veredicto/internal/search/gems"
	"github.com/veredicto/veredicto/internal/search/searchtest"
	filestore "github.com/veredicto/veredicto/internal/store/file"
	"github.com/veredicto/veredicto/prompts"
)

var (
	plans       = searchtest.Plans()
	candidateRE = searchtest.CandidateRE
	claim       = searchtest.Claim
	none        = searchtest.None
	scores      = searchtest.Scores
	gem1        = searchtest.Gem1
	gem2        = searchtest.Gem2
	gem3Content = searchtest.Gem3Content
	gem4        = searchtest.Gem4
)

func answer[C any](c C, s search.Scores) search.Answer[C] { return searchtest.Answer(c, s) }

func writeSearch(t *testing.T, dir string) {
	t.Helper()
	ids := make([]string, 0, len(plans))
	for id := range plans {
		ids = append(ids, id)
	}
	searchtest.WriteSearch(t, dir, ids)
}

func TestWorkflowThroughOpenAICompatibleServer(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	writeSearch(t, in)
	m := searchtest.NewModel(plans)
	srv := llmtest.NewServer(t, m.Respond(t))
	client, err := llm.NewOpenAI(llm.OpenAIConfig{APIKey: "test", BaseURL: srv.BaseURL(), Model: "gpt-4o-mini", Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	svc := &search.Service{Inputs: fileblob.NewDir(in), Reports: fileblob.NewDir(out), Store: filestore.NewMemory(),
		Analyst: gems.New(client, client.Info()), PromptVersions: prompts.PromptVersion}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := catalog.RunSearch(ctx, svc, search.StartInput{SearchID: "s-openai", Concurrency: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != asl.StatusSucceeded {
		t.Fatalf("execution %s: %s: %s", res.Status, res.Error, res.Cause)
	}

	want := map[string]struct{ decision, reason, stages string }{
		"c-001": {search.DecisionApproved, search.ReasonQAPassed, "gem1 gem2 gem3 gem4"},
		"c-002": {search.DecisionDiscarded1, search.ReasonGate1, "gem1"},
		"c-003": {search.DecisionDiscarded2, search.ReasonGate2, "gem1 gem2"},
		"c-004": {search.DecisionDiscarded3, search.ReasonGate3, "gem1 gem2 gem3"},
		"c-005": {search.DecisionEscalated, search.ReasonQABlocks, "gem1 gem2 gem3 gem4 correction_1 gem4_retry_1 correction_2 gem4_retry_2"},
		"c-006": {search.DecisionApproved, search.ReasonQAPassed, "gem1 gem2 gem3 gem4 correction_1 gem4_retry_1"},
		"c-007": {search.DecisionEscalated, search.ReasonAmbiguousGem3, "gem1 gem2 gem3 gem3_reask"},
		"c-008": {search.DecisionEscalated, search.ReasonNoEvidence, "gem1 gem2 gem3 gem4"},
	}
	for id, w := range want {
		b, err := os.ReadFile(filepath.Join(out, id, "report.json"))
		if err != nil {
			t.Fatal(err)
		}
		var rep search.Report
		if err := json.Unmarshal(b, &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Decision != w.decision || rep.Reason != w.reason || strings.Join(rep.StageOrder, " ") != w.stages {
			t.Errorf("%s: %s (%s) stages %v; want %s (%s) stages %s", id, rep.Decision, rep.Reason, rep.StageOrder, w.decision, w.reason, w.stages)
		}
		if rep.LLM.Provider != "openai" || rep.LLM.Model != "gpt-4o-mini" {
			t.Errorf("%s: llm %+v", id, rep.LLM)
		}
		if rep.Usage.Calls == 0 || rep.Usage.PromptTokens == 0 || rep.Usage.CostUSD <= 0 {
			t.Errorf("%s: usage %+v, want calls, tokens and cost recorded", id, rep.Usage)
		}
		if (rep.Decision == search.DecisionEscalated) != (rep.Escalation != nil) {
			t.Errorf("%s: escalation package present=%v", id, rep.Escalation != nil)
		}
	}

	// The wire contract: schema names are agent ids, strict, candidate stages
	// name the candidate, the system prompt is the agent's prompt file.
	prefixes := map[string]string{}
	for _, c := range srv.Calls() {
		if !c.Strict || len(c.JSONSchema) == 0 {
			t.Errorf("call %d (%s): response_format not strict json_schema", c.N, c.Schema)
		}
		sys, err := prompts.System(c.Schema)
		if err != nil || c.System() != sys {
			t.Errorf("call %d: system prompt is not prompts/%s.md", c.N, c.Schema)
		}
		if c.Schema != "gem5" && !candidateRE.MatchString(c.User()) {
			t.Errorf("call %d (%s): user message does not state candidate_id", c.N, c.Schema)
		}
		// The search-level prefix of the user message is identical for every
		// candidate of the same agent, so providers can cache it.
		if c.Schema != "gem5" && !strings.Contains(c.User(), "Reconsideración") && !strings.Contains(c.User(), "Re-auditoría") {
			p := c.User()[:strings.Index(c.User(), "## Candidato")]
			if prev, ok := prefixes[c.Schema]; ok && prev != p {
				t.Errorf("%s: user-message prefix differs between candidates", c.Schema)
			}
			prefixes[c.Schema] = p
		}
	}
	// c-001's first GEM1 answer cited a file that does not exist: one re-ask.
	if got := m.Calls("c-001", "gem1"); got != 2 {
		t.Errorf("c-001 gem1 calls %d, want 2 (one re-ask for the bad citation)", got)
	}
	// c-003's first GEM1 call got a 503: the client retried it.
	if got := m.Calls("c-003", "gem1"); got != 2 {
		t.Errorf("c-003 gem1 calls %d, want 2 (one retry after 503)", got)
	}
	if got := m.Calls("-", "gem5"); got != 1 {
		t.Errorf("gem5 calls %d, want exactly 1 per search", got)
	}
	sum := searchtest.ReadSummary(t, out)
	if len(sum.Ranking) != len(plans) || sum.Metrics.Usage.Calls != len(srv.Calls())-1 {
		t.Errorf("summary: %d ranked, usage calls %d vs %d server calls (one was a 503)", len(sum.Ranking), sum.Metrics.Usage.Calls, len(srv.Calls()))
	}
}
