package gems_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/asl"
	fileblob "github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/catalog"
	"github.com/veredicto/veredicto/internal/llm"
	"github.com/veredicto/veredicto/internal/llm/llmtest"
	"github.com/veredicto/veredicto/internal/search"
	"github.com/veredicto/veredicto/internal/search/gems"
	filestore "github.com/veredicto/veredicto/internal/store/file"
	"github.com/veredicto/veredicto/prompts"
)

// plan scripts one candidate's model answers, per call of each agent.
type plan struct {
	gem1, gem2 int
	gem3       []int
	rec        []string
	gem4       []int // a score below 7 is a BLOQUEADO audit
	structural bool  // the first audit reports a structural lack of evidence
	badCite    bool  // GEM1's first answer cites a file that does not exist
}

var plans = map[string]plan{
	"c-001": {gem1: 8, gem2: 8, gem3: []int{8}, rec: []string{"SI"}, gem4: []int{8}, badCite: true},
	"c-002": {gem1: 5},
	"c-003": {gem1: 7, gem2: 4},
	"c-004": {gem1: 7, gem2: 7, gem3: []int{5}, rec: []string{"NO"}},
	"c-005": {gem1: 7, gem2: 7, gem3: []int{7}, rec: []string{"SI"}, gem4: []int{5, 6, 6}},
	"c-006": {gem1: 9, gem2: 8, gem3: []int{8}, rec: []string{"SI"}, gem4: []int{6, 8}},
	"c-007": {gem1: 8, gem2: 8, gem3: []int{8, 8}, rec: []string{"NO", "NO"}},
	"c-008": {gem1: 8, gem2: 8, gem3: []int{7}, rec: []string{"SI"}, gem4: []int{4}, structural: true},
}

func writeSearch(t *testing.T, dir string) {
	t.Helper()
	files := map[string]string{
		"jd.md":      "# CFO\n## Requisitos\n- Refinanciamiento de deuda bancaria\n- Implementación de SAP\n",
		"kickoff.md": "## Desafío crítico\n- Refinanciar la deuda en 18 meses\n",
		"culture.md": "Austeridad y decisiones basadas en datos.\n",
	}
	for id := range plans {
		files["candidates/"+id+"/cv.md"] = "### CFO — Empresa (2015–2024)\n- Refinancié 40 MM USD de deuda.\n"
		files["candidates/"+id+"/references.md"] = "## Referencia 1\n- Confirma la refinanciación.\n"
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func claim(src string) search.Claim {
	return search.Claim{Text: "evidencia citada", Sources: []string{src}}
}

func gapClaim() search.Claim {
	return search.Claim{Text: search.NotInSources + ": sin dato", Sources: []string{}}
}

func none() []search.Claim { return []search.Claim{} }

func scores(n *int) search.Scores { return search.Scores{ScoreDimension: n, Confidence: 0.8} }

func answer[C any](c C, s search.Scores) search.Answer[C] {
	return search.Answer[C]{Content: c, Scores: s, IssuesFound: []search.Issue{}, Blockers: []search.Issue{}}
}

func gem1(cv string, n int) search.Answer[search.Gem1Content] {
	return answer(search.Gem1Content{Trajectory: []search.Claim{claim(cv)}, Achievements: []search.Achievement{},
		ContinuityRisks: none(), EvidenceGaps: none()}, scores(&n))
}

func gem2(cv string, n int) search.Answer[search.Gem2Content] {
	return answer(search.Gem2Content{Execution: []search.Claim{claim(cv)}, UnderPressure: none(), WorkStyle: none(),
		ChallengeFit: gapClaim(), Contradictions: none()}, scores(&n))
}

func gem3Content(ref, rec string) search.Gem3Content {
	return search.Gem3Content{StrategicFit: claim(ref), CulturalFit: gapClaim(),
		SWOT:       search.SWOT{Strengths: none(), Opportunities: none(), Weaknesses: none(), Threats: none()},
		Risks:      none(),
		References: []search.ReferenceCheck{{Statement: "confirma", Status: "confirma", Sources: []string{ref}}}, Recommendation: rec}
}

func gem4(n int, structural bool) search.Answer[search.Gem4Content] {
	d := search.QAApproved
	if n < 7 || structural {
		d = search.QABlocked
	}
	return answer(search.Gem4Content{UnsupportedClaims: none(), Fluff: none(), CriticalGaps: none(), Contradictions: none(),
		Decision: d, StructuralEvidenceGap: structural}, scores(&n))
}

var candidateRE = regexp.MustCompile(`candidate_id: (\S+)`)

// model is the scripted OpenAI-compatible server's brain.
type model struct {
	mu    sync.Mutex
	calls map[string]int // "c-001/gem4" → calls so far
}

func (m *model) respond(t *testing.T) func(llmtest.Call) llmtest.Reply {
	return func(c llmtest.Call) llmtest.Reply {
		id := "-"
		if mm := candidateRE.FindStringSubmatch(c.User()); mm != nil {
			id = mm[1]
		}
		m.mu.Lock()
		n := m.calls[id+"/"+c.Schema]
		m.calls[id+"/"+c.Schema]++
		m.mu.Unlock()
		p := plans[id]
		cv, ref := "candidates/"+id+"/cv.md", "candidates/"+id+"/references.md"
		var v any
		switch c.Schema {
		case "gem5":
			v = answer(search.Gem5Content{RealProblem: claim("jd.md"), ExpectedSuccesses: []search.KPI{}, NoFits: none(),
				Stakeholders: none(), MarketMap: none(), MandateRisks: none(), DecisionCriteria: none(),
				KeyChallenge: claim("kickoff.md"), Requirements: []search.Claim{claim("jd.md")}}, scores(nil))
		case "gem1":
			a := gem1(cv, p.gem1)
			if p.badCite && n == 0 {
				a.Content.Trajectory[0].Sources = []string{"candidates/" + id + "/invented.md"}
			}
			v = a
		case "gem2":
			v = gem2(cv, p.gem2)
		case "gem3":
			s := p.gem3[n]
			v = answer(gem3Content(ref, p.rec[n]), scores(&s))
		case "gem4":
			v = gem4(p.gem4[n], p.structural && n == 0)
		case "correction":
			v = answer(search.CorrectionContent{Gem1: gem1(cv, 0).Content, Gem2: gem2(cv, 0).Content,
				Gem3: gem3Content(ref, p.rec[len(p.rec)-1]), Changes: []search.Claim{claim(cv)}}, scores(nil))
		default:
			t.Errorf("unexpected schema %q", c.Schema)
			return llmtest.Reply{Status: 400}
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Error(err)
		}
		rep := llmtest.Reply{Content: string(b), PromptTokens: 1000, CachedTokens: 600, CompletionTokens: 200}
		if id == "c-003" && c.Schema == "gem1" && n == 0 {
			rep = llmtest.Reply{Status: 503} // transient: the client retries
		}
		return rep
	}
}

func TestWorkflowThroughOpenAICompatibleServer(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	writeSearch(t, in)
	m := &model{calls: map[string]int{}}
	srv := llmtest.NewServer(t, m.respond(t))
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
	if got := m.calls["c-001/gem1"]; got != 2 {
		t.Errorf("c-001 gem1 calls %d, want 2 (one re-ask for the bad citation)", got)
	}
	// c-003's first GEM1 call got a 503: the client retried it.
	if got := m.calls["c-003/gem1"]; got != 2 {
		t.Errorf("c-003 gem1 calls %d, want 2 (one retry after 503)", got)
	}
	if got := m.calls["-/gem5"]; got != 1 {
		t.Errorf("gem5 calls %d, want exactly 1 per search", got)
	}
	var sum search.Summary
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if len(sum.Ranking) != len(plans) || sum.Metrics.Usage.Calls != len(srv.Calls())-1 {
		t.Errorf("summary: %d ranked, usage calls %d vs %d server calls (one was a 503)", len(sum.Ranking), sum.Metrics.Usage.Calls, len(srv.Calls()))
	}
}
