package chat

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/prompts"
)

func defaultRegistry(t testing.TB) *Registry {
	t.Helper()
	r, err := LoadRegistry(prompts.AgentsFile, prompts.AgentsYAML, KnownActions())
	if err != nil {
		t.Fatalf("default registry: %v", err)
	}
	return r
}

func TestLoadRegistryDefaultAndSeed(t *testing.T) {
	r := defaultRegistry(t)
	var ids []string
	for _, a := range r.Specialists() {
		ids = append(ids, a.ID)
	}
	if got, want := strings.Join(ids, ","), "search-analyst,flags-classifier,companion,debate,reports"; got != want {
		t.Errorf("specialists = %s, want %s", got, want)
	}
	data, err := os.ReadFile("../../examples/delegation/agents-seed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	seed, err := LoadRegistry("agents-seed.yaml", data, map[string]bool{"external": true})
	if err != nil {
		t.Fatalf("seed registry: %v", err)
	}
	want := []string{"ami-creative", "notion-agent", "peter-google", "apu-research", "apu-markets", "emma-ecommerce",
		"toby-technical", "astra-email", "nora-community", "luna-content-creator", "zara-analytics-specialist", "viktor-publishing-specialist"}
	got := seed.Specialists()
	if len(got) != len(want) {
		t.Fatalf("seed registry has %d specialists, want %d", len(got), len(want))
	}
	for i, a := range got {
		if a.ID != want[i] {
			t.Errorf("seed agent %d = %s, want %s", i, a.ID, want[i])
		}
	}
	// The runtime does not implement the seed's tools: rejected at start.
	_, err = LoadRegistry("agents-seed.yaml", data, KnownActions())
	var ie *veredicto.InvalidInputError
	if !errors.As(err, &ie) || ie.File != "agents-seed.yaml" || ie.Field != "agents[1].action" {
		t.Errorf("seed registry with the default actions: err = %v, want agents-seed.yaml agents[1].action", err)
	}
	in := seed.ScoreDelegationIntent("Investiga fuentes sobre el mercado laboral y cita las fuentes")
	if in.Target != "apu-research" {
		t.Errorf("seed target = %q, want apu-research (%v)", in.Target, in.Reasons)
	}
}

func TestLoadRegistryRejects(t *testing.T) {
	const head = "supervisor: sup\nagents:\n  - {id: sup, description: s}\n"
	agent := func(extra string) string {
		return "  - {id: a1, description: d, tool: delegate_to_a1, action: search, does: x, keywords: [{term: k, weight: 1}]" + extra + "}\n"
	}
	tests := []struct {
		name, yaml, field, problem string
	}{
		{"unknown action", head + "  - {id: a1, description: d, tool: delegate_to_a1, action: teleport, does: x, keywords: [{term: k, weight: 1}]}\n", "agents[1].action", "does not exist"},
		{"duplicate id", head + agent("") + agent(""), "agents[2].id", "duplicates agents[1].id"},
		{"tool not named after agent", head + "  - {id: a1, description: d, tool: delegate_to_a2, action: search, does: x, keywords: [{term: k, weight: 1}]}\n", "agents[1].tool", `must be "delegate_to_a1"`},
		{"bad weight", head + "  - {id: a1, description: d, tool: delegate_to_a1, action: search, does: x, keywords: [{term: k, weight: 9}]}\n", "agents[1].keywords[0].weight", "at most 5"},
		{"empty term", head + "  - {id: a1, description: d, tool: delegate_to_a1, action: search, does: x, keywords: [{term: '¿?', weight: 1}]}\n", "agents[1].keywords[0].term", "no word"},
		{"no keywords", head + "  - {id: a1, description: d, tool: delegate_to_a1, action: search, does: x}\n", "agents[1].keywords", "is empty"},
		{"supervisor missing", "supervisor: boss\nagents:\n" + agent(""), "supervisor", "not among agents"},
		{"supervisor with tool", "supervisor: a1\nagents:\n" + agent(""), "agents[0].tool", "must be empty"},
		{"unknown field", head + agent(", colour: red"), "agents[1].colour", "not a known field"},
		{"bad id", head + "  - {id: A B, description: d, tool: delegate_to_A B, action: search, does: x, keywords: [{term: k, weight: 1}]}\n", "agents[1].id", "lowercase"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadRegistry("agents.yaml", []byte(tc.yaml), KnownActions())
			var ie *veredicto.InvalidInputError
			if !errors.As(err, &ie) {
				t.Fatalf("err = %v, want *InvalidInputError", err)
			}
			if ie.File != "agents.yaml" || ie.Field != tc.field || !strings.Contains(ie.Problem, tc.problem) {
				t.Errorf("err = %v, want agents.yaml: %s: …%s…", err, tc.field, tc.problem)
			}
		})
	}
}

func TestScoreDelegationIntent(t *testing.T) {
	r := defaultRegistry(t)
	tests := []struct {
		text   string
		target string
		score  float64
		reason string
	}{
		// 7 words; compar* (2) + deuda (1): 3/(3+7/8) = 0.774, +0.15 imperative.
		{"Compara a c-001 con c-006 en deuda", "search-analyst", 0.92, "imperative: compara"},
		// 6 words (clamped to at least 4): bandera* (2.5) + entrevista* (1.5) = 4/(4+0.75) = 0.842, +0.15.
		{"Marca las banderas de esta entrevista", "flags-classifier", 0.99, "matched: bandera*, entrevista*"},
		// 5 words: debate* (3): 3/(3+5/8) = 0.828, +0.15 imperative (abre).
		{"Abre un debate sobre c-005", "debate", 0.98, "imperative: abre"},
		// 5 words: envia* (2.5) + al cliente (1.5) = 4/(4+0.625) = 0.865, +0.15.
		{"Envía la terna al cliente", "reports", 1, "matched: envia*, al cliente"},
		// A question about the chat: debate* (3)/(3+6/8)=0.8, -0.35.
		{"¿Qué puedes hacer con un debate?", "debate", 0.45, "question about the chat"},
		// 8 words: compar* (2): 2/(2+1) = 0.667, no opening verb, +0.25 named.
		{"Que el analista compare a c-002 con c-003", "search-analyst", 0.92, "named: analista"},
		// A name that is also a keyword counts once: 10 words, comite (2): 2/(2+1.25) = 0.615.
		{"Me gustaría que lo mire el comité si es posible", "debate", 0.62, "matched: comite"},
		// A name alone: +0.25 (and +0.15 for the opening verb).
		{"Pásaselo al analista", "search-analyst", 0.25, "named: analista"},
		{"Hola, ¿qué tal?", "", 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			got := r.ScoreDelegationIntent(tc.text)
			if got.Target != tc.target || got.Score != tc.score {
				t.Fatalf("ScoreDelegationIntent = %s %.2f (%v), want %s %.2f", got.Target, got.Score, got.Reasons, tc.target, tc.score)
			}
			if tc.reason != "" && !strings.Contains(strings.Join(got.Reasons, "|"), tc.reason) {
				t.Errorf("reasons = %v, want one with %q", got.Reasons, tc.reason)
			}
			if tc.target != "" && got.Scores[tc.target] != tc.score {
				t.Errorf("scores[%s] = %v, want %v", tc.target, got.Scores[tc.target], tc.score)
			}
			if again := r.ScoreDelegationIntent(tc.text); again.Score != got.Score || again.Target != got.Target {
				t.Errorf("not deterministic: %v then %v", got, again)
			}
		})
	}
}

func loadCorpus(t testing.TB) []Labelled {
	t.Helper()
	data, err := os.ReadFile("testdata/intent_corpus.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := LoadCorpus("testdata/intent_corpus.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestIntentCorpus checks every labelled request, then the corpus's
// precision and recall at the two thresholds against floors recorded in
// docs/BENCHMARKS.md (a regression of the weights fails here).
func TestIntentCorpus(t *testing.T) {
	r := defaultRegistry(t)
	corpus := loadCorpus(t)
	if len(corpus) < 60 {
		t.Fatalf("corpus has %d requests, want at least 60", len(corpus))
	}
	positives := 0
	for _, l := range corpus {
		if l.Target != "" {
			positives++
			if _, ok := r.Agent(l.Target); !ok {
				t.Errorf("corpus label %q is not an agent", l.Target)
			}
		}
	}
	if positives < 30 || len(corpus)-positives < 15 {
		t.Errorf("corpus has %d delegations and %d others; want both kinds", positives, len(corpus)-positives)
	}
	for _, l := range corpus {
		in := r.ScoreDelegationIntent(l.Text)
		if in.Score >= HintThreshold && in.Target != l.Target {
			t.Logf("miss at 0.55: %q → %s %.2f %v (label %q)", l.Text, in.Target, in.Score, in.Reasons, l.Target)
		}
		if l.Target != "" && in.Score < HintThreshold {
			t.Logf("below 0.55: %q → %s %.2f (label %q)", l.Text, in.Target, in.Score, l.Target)
		}
	}
	floors := []struct{ threshold, precision, recall float64 }{
		{HintThreshold, 0.9, 0.9},
		{MissedThreshold, 0.95, 0.75},
	}
	for _, f := range floors {
		q := r.Evaluate(corpus, f.threshold)
		t.Logf("threshold %.2f: precision %.3f (%d/%d), recall %.3f (%d/%d)", f.threshold, q.Precision, q.Correct, q.Predicted, q.Recall, q.Correct, q.Positives)
		if q.Precision < f.precision || q.Recall < f.recall {
			t.Errorf("threshold %.2f: precision %.3f recall %.3f, want at least %.2f and %.2f", f.threshold, q.Precision, q.Recall, f.precision, f.recall)
		}
	}
}

func TestEvaluateCounts(t *testing.T) {
	r := defaultRegistry(t)
	corpus := []Labelled{
		{Text: "Compara a c-001 con c-006 en deuda", Target: "search-analyst"}, // right
		{Text: "Abre un debate sobre c-005", Target: "reports"},                // wrong target
		{Text: "Hola", Target: ""},                                             // not predicted
		{Text: "Marca las banderas de esta entrevista", Target: ""},            // false alarm
		{Text: "hola de nuevo", Target: "companion"},                           // missed
	}
	q := r.Evaluate(corpus, HintThreshold)
	if q.Predicted != 3 || q.Correct != 1 || q.Positives != 3 {
		t.Fatalf("Evaluate = %+v, want predicted 3, correct 1, positives 3", q)
	}
	if q.Precision != 0.3333 || q.Recall != 0.3333 || q.F1 != 0.3333 {
		t.Errorf("precision %v recall %v F1 %v, want 0.3333 each", q.Precision, q.Recall, q.F1)
	}
	if a := q.Agents["search-analyst"]; a != (Rates{Predicted: 1, Correct: 1, Positives: 1, Precision: 1, Recall: 1, F1: 1}) {
		t.Errorf("search-analyst = %+v, want 1/1/1", a)
	}
	if a := q.Agents["companion"]; a.Predicted != 0 || a.Positives != 1 || a.Precision != 1 || a.Recall != 0 || a.F1 != 0 {
		t.Errorf("companion = %+v, want nothing predicted of 1 labelled", a)
	}
	if len(q.Confusion) != 3 {
		t.Errorf("confusion = %+v, want 3 pairs (reports→debate, none→flags, companion→none)", q.Confusion)
	}
	for _, c := range q.Confusion {
		if c.Count != 1 || c.Label == c.Predicted {
			t.Errorf("confusion pair %+v", c)
		}
	}
}

// BenchmarkScoreDelegationIntent measures one scoring over the corpus and
// reports the corpus's precision and recall at 0.55 and 0.75 (recorded in
// docs/BENCHMARKS.md).
func BenchmarkScoreDelegationIntent(b *testing.B) {
	r := defaultRegistry(b)
	corpus := loadCorpus(b)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		r.ScoreDelegationIntent(corpus[i%len(corpus)].Text)
	}
	b.StopTimer()
	for _, th := range []float64{HintThreshold, MissedThreshold} {
		q := r.Evaluate(corpus, th)
		suffix := "@0.55"
		if th == MissedThreshold {
			suffix = "@0.75"
		}
		b.ReportMetric(q.Precision, "precision"+suffix)
		b.ReportMetric(q.Recall, "recall"+suffix)
	}
}
