// Package searchtest scripts an executive search for tests: a search
// folder with every minimum document, and a model that answers each agent
// by a per-candidate plan, served through llmtest's OpenAI-compatible
// server or called in-process. It lives beside the search so the gems
// tests, the CLI tests and the benchmarks script one search the same way.
package searchtest

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"

	"github.com/veredicto/veredicto/internal/llm/llmtest"
	"github.com/veredicto/veredicto/internal/search"
)

// Plan scripts one candidate's model answers, per call of each agent.
type Plan struct {
	Gem1, Gem2  int
	Gem3        []int
	Rec         []string
	Gem4        []int // a score below 7 is a BLOQUEADO audit
	Structural  bool  // the first audit reports a structural lack of evidence
	BadCite     bool  // GEM1's first answer cites a file that does not exist
	Unavailable bool  // GEM1's first call gets a 503 (the client retries)
}

// Plans are eight candidates covering every path of the workflow.
func Plans() map[string]Plan {
	return map[string]Plan{
		"c-001": {Gem1: 8, Gem2: 8, Gem3: []int{8}, Rec: []string{"SI"}, Gem4: []int{8}, BadCite: true},
		"c-002": {Gem1: 5},
		"c-003": {Gem1: 7, Gem2: 4, Unavailable: true},
		"c-004": {Gem1: 7, Gem2: 7, Gem3: []int{5}, Rec: []string{"NO"}},
		"c-005": {Gem1: 7, Gem2: 7, Gem3: []int{7}, Rec: []string{"SI"}, Gem4: []int{5, 6, 6}},
		"c-006": {Gem1: 9, Gem2: 8, Gem3: []int{8}, Rec: []string{"SI"}, Gem4: []int{6, 8}},
		"c-007": {Gem1: 8, Gem2: 8, Gem3: []int{8, 8}, Rec: []string{"NO", "NO"}},
		"c-008": {Gem1: 8, Gem2: 8, Gem3: []int{7}, Rec: []string{"SI"}, Gem4: []int{4}, Structural: true},
	}
}

// CandidateFiles are a candidate's documents, by file name.
var CandidateFiles = []string{"cv.md", "interview.md", "tests.md", "case.md", "references.md"}

// WriteSearch writes a search folder in dir for the candidates ids, with
// every document of the protocol except those omit lists ("c-001/tests.md").
func WriteSearch(t testing.TB, dir string, ids []string, omit ...string) {
	t.Helper()
	skip := map[string]bool{}
	for _, o := range omit {
		skip[o] = true
	}
	files := map[string]string{
		"jd.md":      "# CFO\n## Requisitos\n- Refinanciamiento de deuda bancaria\n- Implementación de SAP\n",
		"kickoff.md": "## Desafío crítico\n- Refinanciar la deuda en 18 meses\n",
		"company.md": "Distribuidora regional de alimentos.\n",
		"culture.md": "Austeridad y decisiones basadas en datos.\n",
	}
	texts := map[string]string{
		"cv.md":         "### CFO — Empresa (2015–2024)\n- Refinancié 40 MM USD de deuda.\n",
		"interview.md":  "Explicó la refinanciación con cifras.\n",
		"tests.md":      "Test de razonamiento: 8/10.\n",
		"case.md":       "Resolvió el caso de caja con un plan de 13 semanas.\n",
		"references.md": "## Referencia 1\n- Confirma la refinanciación.\n",
	}
	for _, id := range ids {
		for _, f := range CandidateFiles {
			if !skip[id+"/"+f] {
				files["candidates/"+id+"/"+f] = texts[f]
			}
		}
	}
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// CountFiles counts the files and folders under dirs: what a run created
// there, each a new inode (the benchmarks report them per model call).
func CountFiles(t testing.TB, dirs ...string) int {
	t.Helper()
	n := 0
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
			if p != dir {
				n++
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// Claim cites src.
func Claim(src string) search.Claim {
	return search.Claim{Text: "evidencia citada", Sources: []string{src}}
}

// GapClaim declares the lack of evidence.
func GapClaim() search.Claim {
	return search.Claim{Text: search.NotInSources + ": sin dato", Sources: []string{}}
}

// None is an empty list of findings.
func None() []search.Claim { return []search.Claim{} }

// Scores are a score (nil for none) with confidence 0.8.
func Scores(n *int) search.Scores { return search.Scores{ScoreDimension: n, Confidence: 0.8} }

// Answer is an agent's answer with no issues.
func Answer[C any](c C, s search.Scores) search.Answer[C] {
	return search.Answer[C]{Content: c, Scores: s, IssuesFound: []search.Issue{}, Blockers: []search.Issue{}}
}

// Gem5 is a mandate citing the JD and the kickoff.
func Gem5() search.Answer[search.Gem5Content] {
	return Answer(search.Gem5Content{RealProblem: Claim("jd.md"), ExpectedSuccesses: []search.KPI{}, NoFits: None(),
		Stakeholders: []search.Claim{Claim("kickoff.md")}, MarketMap: []search.Claim{Claim("company.md")}, MandateRisks: None(), DecisionCriteria: None(),
		KeyChallenge: Claim("kickoff.md"), Requirements: []search.Claim{Claim("jd.md")}}, Scores(nil))
}

// Gem1 scores n, citing cv.
func Gem1(cv string, n int) search.Answer[search.Gem1Content] {
	return Answer(search.Gem1Content{Trajectory: []search.Claim{Claim(cv)}, Achievements: []search.Achievement{},
		ContinuityRisks: None(), EvidenceGaps: None()}, Scores(&n))
}

// Gem2 scores n, citing cv.
func Gem2(cv string, n int) search.Answer[search.Gem2Content] {
	return Answer(search.Gem2Content{Execution: []search.Claim{Claim(cv)}, UnderPressure: None(), WorkStyle: None(),
		ChallengeFit: GapClaim(), Contradictions: None()}, Scores(&n))
}

// Gem3Content recommends rec, citing ref.
func Gem3Content(ref, rec string) search.Gem3Content {
	return search.Gem3Content{StrategicFit: Claim(ref), CulturalFit: GapClaim(),
		SWOT:       search.SWOT{Strengths: None(), Opportunities: None(), Weaknesses: None(), Threats: None()},
		Risks:      None(),
		References: []search.ReferenceCheck{{Statement: "confirma", Status: "confirma", Sources: []string{ref}}}, Recommendation: rec}
}

// Gem4 audits with score n: BLOQUEADO below 7 or when structural.
func Gem4(n int, structural bool) search.Answer[search.Gem4Content] {
	d := search.QAApproved
	if n < 7 || structural {
		d = search.QABlocked
	}
	return Answer(search.Gem4Content{UnsupportedClaims: None(), Fluff: None(), CriticalGaps: None(), Contradictions: None(),
		Decision: d, StructuralEvidenceGap: structural}, Scores(&n))
}

// CandidateRE finds the candidate a user message is about.
var CandidateRE = regexp.MustCompile(`candidate_id: (\S+)`)

// Model answers each agent by the plans, counting calls per candidate and
// agent ("c-001/gem4").
type Model struct {
	Plans map[string]Plan
	mu    sync.Mutex
	calls map[string]int
}

// NewModel answers by plans.
func NewModel(plans map[string]Plan) *Model { return &Model{Plans: plans, calls: map[string]int{}} }

// Calls is how many times agent was called for candidate ("-" for GEM5).
func (m *Model) Calls(candidate, agent string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls[candidate+"/"+agent]
}

// Respond is the llmtest server's handler.
func (m *Model) Respond(t testing.TB) func(llmtest.Call) llmtest.Reply {
	return func(c llmtest.Call) llmtest.Reply {
		id := "-"
		if mm := CandidateRE.FindStringSubmatch(c.User()); mm != nil {
			id = mm[1]
		}
		m.mu.Lock()
		n := m.calls[id+"/"+c.Schema]
		m.calls[id+"/"+c.Schema]++
		m.mu.Unlock()
		p := m.Plans[id]
		cv, ref := "candidates/"+id+"/cv.md", "candidates/"+id+"/references.md"
		var v any
		switch c.Schema {
		case "gem5":
			v = Gem5()
		case "gem1":
			a := Gem1(cv, p.Gem1)
			if p.BadCite && n == 0 {
				a.Content.Trajectory[0].Sources = []string{"candidates/" + id + "/invented.md"}
			}
			v = a
		case "gem2":
			v = Gem2(cv, p.Gem2)
		case "gem3":
			s := p.Gem3[n]
			v = Answer(Gem3Content(ref, p.Rec[n]), Scores(&s))
		case "gem4":
			v = Gem4(p.Gem4[n], p.Structural && n == 0)
		case "correction":
			v = Answer(search.CorrectionContent{Gem1: Gem1(cv, 0).Content, Gem2: Gem2(cv, 0).Content,
				Gem3: Gem3Content(ref, p.Rec[len(p.Rec)-1]), Changes: []search.Claim{Claim(cv)}}, Scores(nil))
		default:
			t.Errorf("unexpected schema %q", c.Schema)
			return llmtest.Reply{Status: 400}
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Error(err)
		}
		if p.Unavailable && c.Schema == "gem1" && n == 0 {
			return llmtest.Reply{Status: 503} // transient: the client retries
		}
		return llmtest.Reply{Content: string(b), PromptTokens: 1000, CachedTokens: 600, CompletionTokens: 200}
	}
}

// ReadSummary reads the summary.json a run wrote under out.
func ReadSummary(t testing.TB, out string) search.Summary {
	t.Helper()
	p := filepath.Join(out, "summary.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var sum search.Summary
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return sum
}
