package catalog_test

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
	"github.com/veredicto/veredicto/internal/confirm"
	memoryconfirm "github.com/veredicto/veredicto/internal/confirm/memory"
	"github.com/veredicto/veredicto/internal/llm"
	"github.com/veredicto/veredicto/internal/llm/llmtest"
	"github.com/veredicto/veredicto/internal/search"
	"github.com/veredicto/veredicto/internal/search/gems"
	filestore "github.com/veredicto/veredicto/internal/store/file"
	"github.com/veredicto/veredicto/prompts"
)

// gem1Scores scripts the model: c-low fails gate 1, c-high passes it and
// fails gate 2, so both decisions come from model answers.
var gem1Scores = map[string]int{"c-low": 5, "c-high": 8}

const gem2Score = 4

var candidateLine = regexp.MustCompile(`candidate_id: (\S+)`)

// rateLimitedModel answers like a model, except that its first
// rateLimited calls of GEM1 for c-high are 429s with a Retry-After.
type rateLimitedModel struct {
	t           *testing.T
	rateLimited int

	mu    sync.Mutex
	seen  int // GEM1 calls for c-high so far
	fails int // 429s sent
}

func (m *rateLimitedModel) respond(c llmtest.Call) llmtest.Reply {
	id := ""
	if mm := candidateLine.FindStringSubmatch(c.User()); mm != nil {
		id = mm[1]
	}
	if c.Schema == "gem1" && id == "c-high" {
		m.mu.Lock()
		m.seen++
		limited := m.seen <= m.rateLimited
		if limited {
			m.fails++
		}
		m.mu.Unlock()
		if limited {
			return llmtest.Reply{Status: 429, RetryAfter: "1"}
		}
	}
	claim := func(src string) search.Claim { return search.Claim{Text: "evidencia citada", Sources: []string{src}} }
	none := []search.Claim{}
	score := func(n int) search.Scores { return search.Scores{ScoreDimension: &n, Confidence: 0.8} }
	cv := "candidates/" + id + "/cv.md"
	var v any
	switch c.Schema {
	case "gem5":
		v = search.Answer[search.Gem5Content]{Content: search.Gem5Content{RealProblem: claim("jd.md"), ExpectedSuccesses: []search.KPI{},
			NoFits: none, Stakeholders: none, MarketMap: none, MandateRisks: none, DecisionCriteria: none,
			KeyChallenge: claim("kickoff.md"), Requirements: []search.Claim{claim("jd.md")}},
			Scores: search.Scores{Confidence: 0.8}, IssuesFound: []search.Issue{}, Blockers: []search.Issue{}}
	case "gem1":
		v = search.Answer[search.Gem1Content]{Content: search.Gem1Content{Trajectory: []search.Claim{claim(cv)},
			Achievements: []search.Achievement{}, ContinuityRisks: none, EvidenceGaps: none},
			Scores: score(gem1Scores[id]), IssuesFound: []search.Issue{}, Blockers: []search.Issue{}}
	case "gem2":
		v = search.Answer[search.Gem2Content]{Content: search.Gem2Content{Execution: []search.Claim{claim(cv)}, UnderPressure: none,
			WorkStyle: none, ChallengeFit: claim(cv), Contradictions: none},
			Scores: score(gem2Score), IssuesFound: []search.Issue{}, Blockers: []search.Issue{}}
	default:
		m.t.Errorf("unexpected call for schema %q (candidate %q)", c.Schema, id)
		return llmtest.Reply{Status: 400}
	}
	b, err := json.Marshal(v)
	if err != nil {
		m.t.Error(err)
	}
	return llmtest.Reply{Content: string(b), PromptTokens: 100, CompletionTokens: 20}
}

// outcome is what a run decided: each candidate's decision, reason, stages
// and (escalated for a technical error) the error, and the Task failures
// and timeouts the engine saw.
type outcome struct {
	res       *asl.Result
	decisions map[string]string
	failures  []string // "State:Error"
}

// runSearch runs the real executive_search.asl.json through the engine
// with the real handlers, the LLM agents on an OpenAI-compatible server
// scripted by m, and expects the execution to succeed.
func runSearch(t *testing.T, m *rateLimitedModel) outcome {
	t.Helper()
	o := runSearchOn(t, m.respond, nil)
	if o.res.Status != asl.StatusSucceeded {
		t.Fatalf("execution %s: %s: %s", o.res.Status, o.res.Error, o.res.Cause)
	}
	return o
}

// runSearchOn runs sm (nil: executive_search.asl.json as deployed) with the
// real handlers, the LLM agents on a server answering with respond. The
// decisions are read from the reports when the execution succeeded.
func runSearchOn(t *testing.T, respond func(llmtest.Call) llmtest.Reply, sm *asl.StateMachine) outcome {
	t.Helper()
	in, out := t.TempDir(), t.TempDir()
	docs := map[string]string{
		"jd.md":      "# CFO\n## Requisitos\n- Refinanciamiento de deuda bancaria\n",
		"kickoff.md": "## Desafío crítico\n- Refinanciar la deuda en 18 meses\n",
		"company.md": "Distribuidora regional.\n",
	}
	for id := range gem1Scores {
		docs["candidates/"+id+"/cv.md"] = "### CFO — Empresa (2015–2024)\n- Refinancié 40 MM USD de deuda.\n"
		docs["candidates/"+id+"/interview.md"] = "Explicó la refinanciación.\n"
		docs["candidates/"+id+"/tests.md"] = "Test: 7/10.\n"
		docs["candidates/"+id+"/case.md"] = "Caso de caja resuelto.\n"
	}
	for name, text := range docs {
		p := filepath.Join(in, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := llmtest.NewServer(t, respond)
	// The client's own retries: two attempts, waits capped at 1 ms although
	// the server asks for 1 s, so a longer outage reaches the workflow.
	client, err := llm.NewOpenAI(llm.OpenAIConfig{APIKey: "test", BaseURL: srv.BaseURL(), Model: "gpt-4o-mini",
		MaxAttempts: 2, Backoff: time.Millisecond, MaxRetryAfter: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	svc := &search.Service{Inputs: fileblob.NewDir(in), Reports: fileblob.NewDir(out), Store: filestore.NewMemory(),
		Analyst: gems.New(client, client.Info()), PromptVersions: prompts.PromptVersion}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var (
		mu       sync.Mutex
		failures []string
	)
	onEvent := func(e asl.Event) {
		if e.Type == "TaskFailed" || e.Type == "TaskTimedOut" {
			mu.Lock()
			failures = append(failures, e.State+":"+e.Error)
			mu.Unlock()
		}
	}
	start := search.StartInput{SearchID: "s-retry", Concurrency: 2}
	var res *asl.Result
	if sm == nil {
		res, err = catalog.RunSearch(ctx, svc, start, onEvent)
	} else {
		input, _ := json.Marshal(start)
		eng := asl.New(catalog.SearchRegistry(svc, &confirm.Service{Store: memoryconfirm.New()}))
		res, err = eng.Run(ctx, sm, input, asl.StartOptions{Name: start.SearchID, StateMachineName: "executive_search", OnEvent: onEvent})
	}
	if err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatalf("the search did not end within a minute: %s", res.Status)
	}
	o := outcome{res: res, decisions: map[string]string{}, failures: failures}
	if res.Status != asl.StatusSucceeded {
		return o
	}
	for id := range gem1Scores {
		b, err := os.ReadFile(filepath.Join(out, id, "report.json"))
		if err != nil {
			t.Fatal(err)
		}
		var rep search.Report
		if err := json.Unmarshal(b, &rep); err != nil {
			t.Fatal(err)
		}
		o.decisions[id] = rep.Decision + " (" + rep.Reason + ") " + strings.Join(rep.StageOrder, " ")
		if rep.Error != nil {
			o.decisions[id] += " " + rep.Error.Error
		}
	}
	return o
}

// TestRateLimitRecoversThroughTheWorkflowRetry: GEM1 is rate limited for
// longer than the LLM client's own retries. The handler's TransientError
// keeps its name through the wrapping, the state machine's Retry runs the
// Task again after the outage, and every decision equals an undisturbed
// run's: no candidate is escalated as a technical error.
func TestRateLimitRecoversThroughTheWorkflowRetry(t *testing.T) {
	calm := runSearch(t, &rateLimitedModel{t: t})
	if len(calm.failures) != 0 {
		t.Fatalf("undisturbed run had task failures %v", calm.failures)
	}
	want := map[string]string{
		"c-low":  search.DecisionDiscarded1 + " (" + search.ReasonGate1 + ") gem1",
		"c-high": search.DecisionDiscarded2 + " (" + search.ReasonGate2 + ") gem1 gem2",
	}
	for id, w := range want {
		if calm.decisions[id] != w {
			t.Errorf("undisturbed %s: %s, want %s", id, calm.decisions[id], w)
		}
	}

	m := &rateLimitedModel{t: t, rateLimited: 2} // both attempts of the first invocation
	stormy := runSearch(t, m)
	if m.fails != 2 {
		t.Errorf("the server sent %d 429s, want 2", m.fails)
	}
	if got := strings.Join(stormy.failures, " "); got != "Gem1:TransientError" {
		t.Errorf("task failures %q, want one Gem1:TransientError retried by the workflow", got)
	}
	for id, w := range calm.decisions {
		if stormy.decisions[id] != w {
			t.Errorf("%s after the rate limit: %s, want %s as undisturbed", id, stormy.decisions[id], w)
		}
	}
}
