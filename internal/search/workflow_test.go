package search_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/asl"
	fileblob "github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/catalog"
	"github.com/veredicto/veredicto/internal/confirm"
	"github.com/veredicto/veredicto/internal/confirm/memory"
	"github.com/veredicto/veredicto/internal/search"
	"github.com/veredicto/veredicto/internal/search/searchtest"
	filestore "github.com/veredicto/veredicto/internal/store/file"
	"github.com/veredicto/veredicto/statemachines"
)

// qa scripts one GEM4 audit.
type qa struct {
	score        int
	blocked      bool
	irresolvable bool
	structural   bool
}

// script is one candidate's scripted answers, by attempt.
type script struct {
	gem1, gem2 int
	gem3       []int    // per GEM3 attempt
	rec        []string // per GEM3 attempt
	gem4       []qa     // per GEM4 attempt
	failAt     string   // agent that fails with a non-transient error
	noEvidence string   // agent whose findings all declare "No informado en fuentes"
}

// scripted is a hand-written Analyst fake: scores come from the script,
// contents cite the candidate's CV so the citation checks pass.
type scripted struct {
	mu      sync.Mutex
	scripts map[string]script
	calls   map[string]int // "c-001/gem4" → calls
}

func (s *scripted) count(cand, agent string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[cand+"/"+agent]++
}

func (s *scripted) Calls(cand, agent string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[cand+"/"+agent]
}

func claim(src string) search.Claim { return search.Claim{Text: "evidencia", Sources: []string{src}} }

// gapClaim is a finding that declares the lack of evidence.
var gapClaim = search.Claim{Text: search.NotInSources + ": sin evidencia", Sources: []string{}}

func score(n int) search.Scores { return search.Scores{ScoreDimension: &n, Confidence: 0.8} }

type failure struct{ msg string }

func (f *failure) Error() string { return f.msg }

func (s *scripted) Gem5(_ context.Context, in search.Gem5Input) (search.Answer[search.Gem5Content], veredicto.Usage, error) {
	s.count("-", "gem5")
	jd := claim(in.Search.JD.ID)
	return search.Answer[search.Gem5Content]{Content: search.Gem5Content{RealProblem: jd, KeyChallenge: jd},
		Scores: search.Scores{Confidence: 0.9}}, veredicto.Usage{Calls: 1, PromptTokens: 100}, nil
}

func (s *scripted) Gem1(_ context.Context, in search.Gem1Input) (search.Answer[search.Gem1Content], veredicto.Usage, error) {
	c := in.Candidate.CandidateID
	s.count(c, "gem1")
	if s.scripts[c].failAt == "gem1" {
		return search.Answer[search.Gem1Content]{}, veredicto.Usage{}, &failure{"scripted failure"}
	}
	content := search.Gem1Content{Trajectory: []search.Claim{claim(in.Candidate.CV.ID)}}
	if s.scripts[c].noEvidence == "gem1" {
		content.Trajectory = []search.Claim{gapClaim}
	}
	return search.Answer[search.Gem1Content]{Content: content,
		Scores: score(s.scripts[c].gem1)}, veredicto.Usage{Calls: 1, PromptTokens: 200, CompletionTokens: 50}, nil
}

func (s *scripted) Gem2(_ context.Context, in search.Gem2Input) (search.Answer[search.Gem2Content], veredicto.Usage, error) {
	c := in.Candidate.CandidateID
	s.count(c, "gem2")
	content := search.Gem2Content{ChallengeFit: claim(in.Candidate.CV.ID)}
	if s.scripts[c].noEvidence == "gem2" {
		content.ChallengeFit = gapClaim
	}
	return search.Answer[search.Gem2Content]{Content: content, Scores: score(s.scripts[c].gem2)}, veredicto.Usage{Calls: 1}, nil
}

func (s *scripted) Gem3(_ context.Context, in search.Gem3Input) (search.Answer[search.Gem3Content], veredicto.Usage, error) {
	c := in.Candidate.CandidateID
	s.count(c, "gem3")
	a := 0
	if in.Reask != "" {
		a = 1
	}
	sc := s.scripts[c]
	return search.Answer[search.Gem3Content]{Content: search.Gem3Content{StrategicFit: claim(in.Candidate.CV.ID), CulturalFit: claim(in.Candidate.CV.ID),
		Recommendation: sc.rec[a]}, Scores: score(sc.gem3[a])}, veredicto.Usage{Calls: 1}, nil
}

func (s *scripted) Gem4(_ context.Context, in search.Gem4Input) (search.Answer[search.Gem4Content], veredicto.Usage, error) {
	c := in.Candidate.CandidateID
	s.count(c, "gem4")
	q := s.scripts[c].gem4[in.Attempt]
	d := search.QAApproved
	if q.blocked {
		d = search.QABlocked
	}
	return search.Answer[search.Gem4Content]{Content: search.Gem4Content{Decision: d, IrresolvableContradiction: q.irresolvable, StructuralEvidenceGap: q.structural},
		Scores: score(q.score)}, veredicto.Usage{Calls: 1}, nil
}

func (s *scripted) Correct(_ context.Context, in search.CorrectionInput) (search.Answer[search.CorrectionContent], veredicto.Usage, error) {
	c := in.Candidate.CandidateID
	s.count(c, "correction")
	return search.Answer[search.CorrectionContent]{Content: search.CorrectionContent{Gem1: in.Gem1.Content, Gem2: in.Gem2.Content, Gem3: in.Gem3.Content,
		Changes: []search.Claim{claim(in.Candidate.CV.ID)}}}, veredicto.Usage{Calls: 1}, nil
}

func (s *scripted) Info() veredicto.ModelInfo {
	return veredicto.ModelInfo{Provider: "scripted", Model: "test"}
}

// writeSearch makes a search folder with the given candidates.
func writeSearch(t *testing.T, dir string, ids ...string) {
	t.Helper()
	files := map[string]string{
		"jd.md":       "# CFO\nLiderar finanzas.",
		"kickoff.md":  "Prioridad: caja.",
		"company.md":  "ACME, industria.",
		"culture.md":  "Cultura de datos.",
		"search.yaml": "search_id: s-test\nclient: ACME\nrole: CFO\n",
	}
	for _, id := range ids {
		for _, f := range []string{"cv", "interview", "tests", "case", "references"} {
			files["candidates/"+id+"/"+f+".md"] = f + " de " + id
		}
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

type runResult struct {
	res     *asl.Result
	out     string
	kv      search.KV
	analyst *scripted
}

func runWorkflow(t *testing.T, scripts map[string]script, kv search.KV, out string) runResult {
	t.Helper()
	in := t.TempDir()
	ids := make([]string, 0, len(scripts))
	for id := range scripts {
		ids = append(ids, id)
	}
	writeSearch(t, in, ids...)
	if kv == nil {
		kv = filestore.NewMemory()
	}
	return runSearch(t, in, scripts, kv, out)
}

// runSearch runs the workflow over the search folder in.
func runSearch(t *testing.T, in string, scripts map[string]script, kv search.KV, out string) runResult {
	t.Helper()
	if out == "" {
		out = t.TempDir()
	}
	an := &scripted{scripts: scripts, calls: map[string]int{}}
	svc := &search.Service{Inputs: fileblob.NewDir(in), Reports: fileblob.NewDir(out), Store: kv, Analyst: an,
		PromptVersions: func(a string) string { return a + "-test" }}
	return runResult{res: runOn(t, svc, search.StartInput{SearchID: "s-test"}), out: out, kv: kv, analyst: an}
}

// runOn runs the workflow with svc on input in; it must succeed.
func runOn(t *testing.T, svc *search.Service, in search.StartInput) *asl.Result {
	t.Helper()
	sm, err := asl.Parse(statemachines.ExecutiveSearch)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	input, _ := json.Marshal(in)
	res, err := asl.New(catalog.SearchRegistry(svc, &confirm.Service{Store: memory.New()})).Run(ctx, sm, input, asl.StartOptions{Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != asl.StatusSucceeded {
		t.Fatalf("execution %s: %s: %s", res.Status, res.Error, res.Cause)
	}
	return res
}

func readReport(t *testing.T, out, id string) search.Report {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, id, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r search.Report
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestWorkflowPaths(t *testing.T) {
	pass := qa{score: 8}
	block := qa{score: 5, blocked: true}
	tests := []struct {
		name       string
		script     script
		decision   string
		reason     string
		stages     string
		gem4Calls  int
		correction int
	}{
		{"approved at first audit", script{gem1: 7, gem2: 7, gem3: []int{7}, rec: []string{"SI"}, gem4: []qa{pass}},
			search.DecisionApproved, search.ReasonQAPassed, "gem1 gem2 gem3 gem4", 1, 0},
		{"gem1 gate at 5 of 6", script{gem1: 5}, search.DecisionDiscarded1, search.ReasonGate1, "gem1", 0, 0},
		{"gem1 exactly 6 passes, gem2 gate", script{gem1: 6, gem2: 5}, search.DecisionDiscarded2, search.ReasonGate2, "gem1 gem2", 0, 0},
		{"gem3 gate with a consistent NO", script{gem1: 8, gem2: 8, gem3: []int{4}, rec: []string{"NO"}}, search.DecisionDiscarded3, search.ReasonGate3, "gem1 gem2 gem3", 0, 0},
		{"QA 7 exactly but BLOQUEADO then approved after one correction", script{gem1: 8, gem2: 8, gem3: []int{8}, rec: []string{"SI"}, gem4: []qa{{score: 7, blocked: true}, pass}},
			search.DecisionApproved, search.ReasonQAPassed, "gem1 gem2 gem3 gem4 correction_1 gem4_retry_1", 2, 1},
		{"three QA blocks in a row escalate", script{gem1: 8, gem2: 8, gem3: []int{8}, rec: []string{"SI"}, gem4: []qa{block, block, block}},
			search.DecisionEscalated, search.ReasonQABlocks, "gem1 gem2 gem3 gem4 correction_1 gem4_retry_1 correction_2 gem4_retry_2", 3, 2},
		{"irresolvable contradiction escalates at once", script{gem1: 8, gem2: 8, gem3: []int{8}, rec: []string{"SI"}, gem4: []qa{{score: 4, blocked: true, irresolvable: true}}},
			search.DecisionEscalated, search.ReasonContradiction, "gem1 gem2 gem3 gem4", 1, 0},
		{"structural lack of evidence escalates", script{gem1: 8, gem2: 8, gem3: []int{8}, rec: []string{"SI"}, gem4: []qa{{score: 3, blocked: true, structural: true}}},
			search.DecisionEscalated, search.ReasonNoEvidence, "gem1 gem2 gem3 gem4", 1, 0},
		{"GEM1 with no cited evidence cannot pass its gate on a high score", script{gem1: 9, noEvidence: "gem1"},
			search.DecisionEscalated, search.ReasonNoEvidence, "gem1", 0, 0},
		{"GEM2 with no cited evidence below its gate is still discarded", script{gem1: 8, gem2: 4, noEvidence: "gem2"},
			search.DecisionDiscarded2, search.ReasonGate2, "gem1 gem2", 0, 0},
		{"an approving audit that flags structural lack of evidence does not approve", script{gem1: 8, gem2: 8, gem3: []int{8}, rec: []string{"SI"}, gem4: []qa{{score: 9, structural: true}}},
			search.DecisionEscalated, search.ReasonNoEvidence, "gem1 gem2 gem3 gem4", 1, 0},
		{"an approving audit that flags an irresolvable contradiction does not approve", script{gem1: 8, gem2: 8, gem3: []int{8}, rec: []string{"SI"}, gem4: []qa{{score: 9, irresolvable: true}}},
			search.DecisionEscalated, search.ReasonContradiction, "gem1 gem2 gem3 gem4", 1, 0},
		// Issue 32: the gate applies to GEM3's own score, whatever SI/NO says.
		{"GEM3 SI below its gate is discarded by the gate", script{gem1: 8, gem2: 8, gem3: []int{5}, rec: []string{"SI"}},
			search.DecisionDiscarded3, search.ReasonGate3, "gem1 gem2 gem3", 0, 0},
		{"GEM3 NO above its gate is re-asked, then a consistent SI goes on", script{gem1: 8, gem2: 8, gem3: []int{8, 8}, rec: []string{"NO", "SI"}, gem4: []qa{{score: 8}}},
			search.DecisionApproved, search.ReasonQAPassed, "gem1 gem2 gem3 gem3_reask gem4", 1, 0},
		{"GEM3 stays ambiguous after the re-ask", script{gem1: 8, gem2: 8, gem3: []int{8, 8}, rec: []string{"NO", "NO"}},
			search.DecisionEscalated, search.ReasonAmbiguousGem3, "gem1 gem2 gem3 gem3_reask", 0, 0},
		{"a failing agent escalates with the error", script{failAt: "gem1"}, search.DecisionEscalated, search.ReasonTechnicalError, "", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runWorkflow(t, map[string]script{"c-001": tt.script}, nil, "")
			rep := readReport(t, r.out, "c-001")
			if rep.Decision != tt.decision || rep.Reason != tt.reason {
				t.Errorf("decision %s (%s), want %s (%s)", rep.Decision, rep.Reason, tt.decision, tt.reason)
			}
			if got := strings.Join(rep.StageOrder, " "); got != tt.stages {
				t.Errorf("stages %q, want %q", got, tt.stages)
			}
			if n := r.analyst.Calls("c-001", "gem4"); n != tt.gem4Calls {
				t.Errorf("gem4 calls %d, want %d", n, tt.gem4Calls)
			}
			if n := r.analyst.Calls("c-001", "correction"); n != tt.correction {
				t.Errorf("corrections %d, want %d", n, tt.correction)
			}
			if (rep.Decision == search.DecisionEscalated) != (rep.Escalation != nil) {
				t.Errorf("escalation package present=%v for decision %s", rep.Escalation != nil, rep.Decision)
			}
			if tt.reason == search.ReasonTechnicalError && (rep.Error == nil || rep.Error.Error != "failure") {
				t.Errorf("error %+v, want the agent's error type name", rep.Error)
			}
			if _, err := os.Stat(filepath.Join(r.out, "c-001", "report.md")); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestRerunReusesFinishedStages(t *testing.T) {
	scripts := map[string]script{
		"c-001": {gem1: 8, gem2: 8, gem3: []int{8}, rec: []string{"SI"}, gem4: []qa{{score: 5, blocked: true}, {score: 9}}},
		"c-002": {gem1: 3},
	}
	kv := filestore.NewMemory()
	first := runWorkflow(t, scripts, kv, "")
	if n := first.analyst.Calls("c-001", "gem4"); n != 2 {
		t.Fatalf("first run: gem4 calls %d, want 2", n)
	}
	second := runWorkflow(t, scripts, kv, "")
	for _, agent := range []string{"gem1", "gem2", "gem3", "gem4", "correction"} {
		if n := second.analyst.Calls("c-001", agent); n != 0 {
			t.Errorf("re-run called %s %d times, want 0 (stage stored)", agent, n)
		}
	}
	if n := second.analyst.Calls("-", "gem5"); n != 0 {
		t.Errorf("re-run called gem5 %d times, want 0", n)
	}
	a, b := readReport(t, first.out, "c-001"), readReport(t, second.out, "c-001")
	if a.Decision != b.Decision || fmt.Sprint(a.StageOrder) != fmt.Sprint(b.StageOrder) {
		t.Errorf("re-run report differs: %s %v vs %s %v", a.Decision, a.StageOrder, b.Decision, b.StageOrder)
	}
	sum, err := os.ReadFile(filepath.Join(second.out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s search.Summary
	if err := json.Unmarshal(sum, &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Ranking) != 2 || s.Ranking[0].CandidateID != "c-001" || s.Metrics.EscalationRate != 0 {
		t.Errorf("summary ranking %+v metrics %+v", s.Ranking, s.Metrics)
	}
}

// TestStagesKeptInTheEarlierLayoutAreReused: a store written before
// stage keys named the stage in one path element (a re-run of an earlier
// output folder) still serves its records: nothing is computed again.
func TestStagesKeptInTheEarlierLayoutAreReused(t *testing.T) {
	scripts := map[string]script{
		"c-001": {gem1: 8, gem2: 8, gem3: []int{8}, rec: []string{"SI"}, gem4: []qa{{score: 5, blocked: true}, {score: 9}}},
		"c-002": {gem1: 3},
	}
	in := t.TempDir()
	writeSearch(t, in, "c-001", "c-002")
	mem := filestore.NewMemory()
	first := runSearch(t, in, scripts, mem, "")
	ctx := t.Context()
	keys, err := mem.List(ctx, "stage/")
	if err != nil || len(keys) == 0 {
		t.Fatalf("stored stages: %v, %v", keys, err)
	}
	legacy := filestore.NewMemory()
	for _, k := range keys {
		// stage/<tenant>/<search>/<candidate>/<agent>.<attempt>.<hash> → …/<agent>/<attempt>/<hash>
		dir, name := path.Split(k)
		parts := strings.SplitN(name, ".", 3)
		if len(parts) != 3 {
			t.Fatalf("stage key %s is not in the current layout", k)
		}
		b, _, _ := mem.Get(ctx, k)
		if _, err := legacy.PutIfAbsent(ctx, dir+strings.Join(parts, "/"), b); err != nil {
			t.Fatal(err)
		}
	}
	second := runSearch(t, in, scripts, legacy, "")
	for _, c := range []string{"-", "c-001", "c-002"} {
		for _, agent := range []string{"gem5", "gem1", "gem2", "gem3", "gem4", "correction"} {
			if n := second.analyst.Calls(c, agent); n != 0 {
				t.Errorf("%s %s computed again %d times, want read from the earlier layout", c, agent, n)
			}
		}
	}
	a, b := readReport(t, first.out, "c-001"), readReport(t, second.out, "c-001")
	if a.Decision != b.Decision || fmt.Sprint(a.StageOrder) != fmt.Sprint(b.StageOrder) {
		t.Errorf("report from the earlier layout: %s %v, want %s %v", b.Decision, b.StageOrder, a.Decision, a.StageOrder)
	}
}

// damaging is a context store whose reads of the stage records of stage
// ("gem2": keys .../<candidate>/gem2.<attempt>.<hash>) come back damaged,
// as after a truncated or corrupted write.
type damaging struct {
	*filestore.Memory
	stage  string
	damage func([]byte) []byte
}

func (d damaging) Get(ctx context.Context, key string) ([]byte, bool, error) {
	b, ok, err := d.Memory.Get(ctx, key)
	if ok && strings.Contains(key, "/"+d.stage+".") && !strings.Contains(key, "/repair-") {
		b = d.damage(append([]byte(nil), b...))
	}
	return b, ok, err
}

func TestDamagedStageRecordIsRecomputed(t *testing.T) {
	tests := []struct {
		name   string
		damage func([]byte) []byte
	}{
		{"truncated", func(b []byte) []byte { return b[:len(b)/2] }},
		{"output changed", func(b []byte) []byte { return []byte(strings.Replace(string(b), "evidencia", "evidencie", 1)) }},
		{"empty", func([]byte) []byte { return nil }},
	}
	scripts := map[string]script{"c-001": {gem1: 8, gem2: 8, gem3: []int{8}, rec: []string{"SI"}, gem4: []qa{{score: 9}}}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := t.TempDir()
			writeSearch(t, in, "c-001")
			mem := filestore.NewMemory()
			first := runSearch(t, in, scripts, mem, "")
			kv := damaging{Memory: mem, stage: "gem2", damage: tt.damage}
			second := runSearch(t, in, scripts, kv, "")
			if n := second.analyst.Calls("c-001", "gem2"); n != 1 {
				t.Errorf("damaged gem2 called %d times on the re-run, want 1 (recomputed)", n)
			}
			if n := second.analyst.Calls("c-001", "gem1"); n != 0 {
				t.Errorf("intact gem1 called %d times, want 0", n)
			}
			a, b := readReport(t, first.out, "c-001"), readReport(t, second.out, "c-001")
			if a.Decision != b.Decision || fmt.Sprint(a.StageOrder) != fmt.Sprint(b.StageOrder) {
				t.Errorf("report after repair: %s %v, want %s %v", b.Decision, b.StageOrder, a.Decision, a.StageOrder)
			}
			third := runSearch(t, in, scripts, kv, "")
			if n := third.analyst.Calls("c-001", "gem2"); n != 0 {
				t.Errorf("third run called gem2 %d times, want 0 (the repair is stored)", n)
			}
		})
	}
}

func TestNoReportForAStageThatDidNotRun(t *testing.T) {
	tests := []struct {
		name    string
		outcome search.Outcome
		ran     []string // stage tasks run before the report
		written bool
	}{
		{"approval with no audit stored", search.Outcome{Decision: search.DecisionApproved, Reason: search.ReasonQAPassed}, []string{"gem1", "gem2", "gem3"}, false},
		{"gem1 discard with nothing stored", search.Outcome{Decision: search.DecisionDiscarded1, Reason: search.ReasonGate1}, nil, false},
		{"gem1 discard after gem1", search.Outcome{Decision: search.DecisionDiscarded1, Reason: search.ReasonGate1}, []string{"gem1"}, true},
		{"technical error needs no stage", search.Outcome{Decision: search.DecisionEscalated, Reason: search.ReasonTechnicalError}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, out := t.TempDir(), t.TempDir()
			writeSearch(t, in, "c-001")
			an := &scripted{scripts: map[string]script{"c-001": {gem1: 8, gem2: 8, gem3: []int{8}, rec: []string{"SI"}, gem4: []qa{{score: 9}}}}, calls: map[string]int{}}
			svc := &search.Service{Inputs: fileblob.NewDir(in), Reports: fileblob.NewDir(out), Store: filestore.NewMemory(), Analyst: an}
			ctx := context.Background()
			task := search.CandidateTask{SearchID: "s-test", CandidateID: "c-001"}
			for _, st := range tt.ran {
				var err error
				switch st {
				case "gem1":
					_, err = svc.Gem1(ctx, task)
				case "gem2":
					_, err = svc.Gem2(ctx, task)
				case "gem3":
					_, err = svc.Gem3(ctx, task)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			_, err := svc.Report(ctx, search.ReportTask{CandidateTask: task, Outcome: tt.outcome, Thresholds: search.DefaultGates})
			_, statErr := os.Stat(filepath.Join(out, "c-001", "report.md"))
			if written := statErr == nil; written != tt.written || (err == nil) != tt.written {
				t.Errorf("report written %v (error %v), want written %v", written, err, tt.written)
			}
			var sm *search.StageMissingError
			if !tt.written && !errors.As(err, &sm) {
				t.Errorf("error %T %v, want *search.StageMissingError", err, err)
			}
			if n := an.Calls("c-001", "gem4"); n != 0 {
				t.Errorf("the report task called gem4 %d times", n)
			}
		})
	}
}

func TestLogsCarryNoDocumentText(t *testing.T) {
	const marker = "MARCADOR-PERSONAL-7Q"
	in := t.TempDir()
	writeSearch(t, in, "c-001", "c-002")
	for name, body := range map[string]string{
		"candidates/c-001/cv.md":        "CV de c-001 " + marker,
		"candidates/c-001/interview.md": marker + " entrevista",
		"candidates/c-002/notes.txt":    marker, // ignored file: warned by name
	} {
		if err := os.WriteFile(filepath.Join(in, filepath.FromSlash(name)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var logs strings.Builder
	var mu sync.Mutex
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(prev) })
	scripts := map[string]script{
		"c-001": {gem1: 8, gem2: 8, gem3: []int{8}, rec: []string{"SI"}, gem4: []qa{{score: 9}}},
		"c-002": {failAt: "gem1"},
	}
	mem := filestore.NewMemory()
	runSearch(t, in, scripts, mem, "")
	// A re-run over damaged records warns about each one.
	runSearch(t, in, scripts, damaging{Memory: mem, stage: "gem1", damage: func(b []byte) []byte { return b[:10] }}, "")
	mu.Lock()
	defer mu.Unlock()
	got := logs.String()
	if !strings.Contains(got, "stage record damaged") || !strings.Contains(got, "agent call failed") {
		t.Fatalf("the scenario did not log what it should (test setup):\n%s", got)
	}
	if strings.Contains(got, marker) {
		t.Errorf("logs carry document text:\n%s", got)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *strings.Builder
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestLayoutKeepsTasksInTheirTenant: with the buckets' layout set, a task
// whose execution input points at another tenant's search or reports is
// refused by field, and reads nothing.
func TestLayoutKeepsTasksInTheirTenant(t *testing.T) {
	root, out := t.TempDir(), t.TempDir()
	for _, tenant := range []string{"acme", "globex"} {
		writeSearch(t, filepath.Join(root, "searches", tenant, "s-test"), "c-001")
	}
	layout := func(tenant, id string) (string, string) {
		return "searches/" + tenant + "/" + id, "reports/" + tenant + "/" + id
	}
	svc := &search.Service{Inputs: fileblob.NewDir(root), Reports: fileblob.NewDir(out), Store: filestore.NewMemory(), Layout: layout}
	ctx := t.Context()
	good := search.StartInput{Tenant: "acme", SearchID: "s-test", InputPrefix: "searches/acme/s-test/", ReportPrefix: "reports/acme/s-test"}
	if _, err := svc.Validate(ctx, good); err != nil {
		t.Fatalf("the tenant's own search: %v", err)
	}
	for field, in := range map[string]search.StartInput{
		"input_prefix":  {Tenant: "acme", SearchID: "s-test", InputPrefix: "searches/globex/s-test/", ReportPrefix: "reports/acme/s-test/"},
		"report_prefix": {Tenant: "acme", SearchID: "s-test", InputPrefix: "searches/acme/s-test/", ReportPrefix: "reports/globex/s-test/"},
		"search_id":     {Tenant: "acme", InputPrefix: "searches/acme/s-test/", ReportPrefix: "reports/acme/s-test/"},
	} {
		_, err := svc.Validate(ctx, in)
		var ie *veredicto.InvalidInputError
		if !errors.As(err, &ie) || ie.Field != field {
			t.Errorf("%s: got %v, want an InvalidInputError on %s", field, err, field)
		}
	}
	if _, err := svc.Summarize(ctx, search.SummaryTask{Tenant: "acme", SearchID: "s-test", InputPrefix: "searches/acme/s-test", ReportPrefix: "reports/globex/s-test"}); err == nil || !strings.Contains(err.Error(), "report_prefix") {
		t.Errorf("a summary into another tenant's reports: %v", err)
	}
}

// readCounter counts the reads of each input document.
type readCounter struct {
	search.BlobReader
	mu    sync.Mutex
	reads map[string]int
}

func (r *readCounter) Get(ctx context.Context, key string) ([]byte, error) {
	r.mu.Lock()
	r.reads[key]++
	r.mu.Unlock()
	return r.BlobReader.Get(ctx, key)
}

// TestSearchReadsEachDocumentOnce (issue 34): a whole run — GEM5, then
// every stage of every candidate, a correction loop included — reads each
// uploaded document once in the process, not once per stage that cites it.
func TestSearchReadsEachDocumentOnce(t *testing.T) {
	in := t.TempDir()
	scripts := map[string]script{
		"c-001": {gem1: 8, gem2: 8, gem3: []int{8}, rec: []string{"SI"}, gem4: []qa{{score: 7, blocked: true}, {score: 8}}},
		"c-002": {gem1: 7, gem2: 7, gem3: []int{8, 8}, rec: []string{"NO", "SI"}, gem4: []qa{{score: 8}}},
		"c-003": {gem1: 4},
	}
	writeSearch(t, in, "c-001", "c-002", "c-003")
	r := &readCounter{BlobReader: fileblob.NewDir(in), reads: map[string]int{}}
	an := &scripted{scripts: scripts, calls: map[string]int{}}
	svc := &search.Service{Inputs: r, Reports: fileblob.NewDir(t.TempDir()), Store: filestore.NewMemory(), Analyst: an,
		PromptVersions: func(a string) string { return a + "-test" }}
	runOn(t, svc, search.StartInput{SearchID: "s-test"})
	if an.Calls("c-001", "gem4") != 2 || an.Calls("c-002", "gem3") != 2 {
		t.Fatalf("the scripts did not run their loops: %v", an.calls)
	}
	// Every file of the folder (5 search-level, 5 per candidate), once.
	if len(r.reads) != 5+3*5 {
		t.Errorf("%d documents read, want 20: %v", len(r.reads), r.reads)
	}
	for key, n := range r.reads {
		if n != 1 {
			t.Errorf("%s read %d times in one run, want once", key, n)
		}
	}
}

// changingReports serves one candidate's report.json changed, as if it
// had been rewritten after the run's Report task wrote it.
type changingReports struct {
	*fileblob.Dir
	candidate string
}

func (c changingReports) Get(ctx context.Context, key string) ([]byte, error) {
	b, err := c.Dir.Get(ctx, key)
	if err == nil && key == c.candidate+"/report.json" {
		b = append(b, ' ')
	}
	return b, err
}

// TestSummaryReadsTheReportsTheRunWrote: the summary's rows come from
// the reports the Report tasks wrote (the Map keeps only each decision and
// its report's hash). A report that is not the one written — changed
// since — is set aside and named in the log: its candidate keeps its
// decision in the summary, with no figures, and the others theirs.
func TestSummaryReadsTheReportsTheRunWrote(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	writeSearch(t, in, "c-001", "c-002")
	var logs strings.Builder
	var mu sync.Mutex
	an := &scripted{scripts: map[string]script{
		"c-001": {gem1: 8, gem2: 8, gem3: []int{8}, rec: []string{"SI"}, gem4: []qa{{score: 9}}},
		"c-002": {gem1: 7, gem2: 7, gem3: []int{7}, rec: []string{"SI"}, gem4: []qa{{score: 8}}},
	}, calls: map[string]int{}}
	svc := &search.Service{Inputs: fileblob.NewDir(in), Reports: changingReports{Dir: fileblob.NewDir(out), candidate: "c-002"},
		Store: filestore.NewMemory(), Analyst: an, PromptVersions: func(a string) string { return a + "-test" },
		Logger: slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))}
	runOn(t, svc, search.StartInput{SearchID: "s-test"})
	sum := searchtest.ReadSummary(t, out)
	rows := map[string]search.CandidateResult{}
	for _, r := range sum.Ranking {
		rows[r.CandidateID] = r
	}
	if r := rows["c-001"]; r.Decision != search.DecisionApproved || r.Scores["gem1"] != 8 || r.QAScore == nil || *r.QAScore != 9 || r.Claims == 0 {
		t.Errorf("c-001, its report intact: %+v; want its figures", r)
	}
	if r := rows["c-002"]; r.Decision != search.DecisionApproved || len(r.Scores) != 0 || r.QAScore != nil {
		t.Errorf("c-002, its report changed: %+v; want its decision only", r)
	}
	mu.Lock()
	defer mu.Unlock()
	if got := logs.String(); !strings.Contains(got, "candidate_id=c-002") || !strings.Contains(got, "not the report this execution wrote") {
		t.Errorf("the changed report is not named in the log:\n%s", got)
	}
}

// TestSummaryRowsAreTheReportsRows: a run in one process hands the summary
// the rows its Report tasks computed (after checking each report's hash)
// instead of decoding every report again; a summary made by another
// process — a Lambda, which decodes them — is the same, byte for byte.
func TestSummaryRowsAreTheReportsRows(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	ids := []string{"c-001", "c-002", "c-003", "c-004"}
	writeSearch(t, in, ids...)
	store := filestore.NewMemory() // the stage records both processes read
	newService := func(reports string) *search.Service {
		an := &scripted{scripts: map[string]script{
			"c-001": {gem1: 8, gem2: 8, gem3: []int{8}, rec: []string{"SI"}, gem4: []qa{{score: 9}}},
			"c-002": {gem1: 7, gem2: 6, gem3: []int{7}, rec: []string{"SI"}, gem4: []qa{{score: 5}, {score: 8}}},
			"c-003": {gem1: 4},
			"c-004": {gem1: 8, gem2: 7, gem3: []int{5}, rec: []string{"NO"}},
		}, calls: map[string]int{}}
		return &search.Service{Inputs: fileblob.NewDir(in), Reports: fileblob.NewDir(reports), Store: store, Analyst: an,
			PromptVersions: func(a string) string { return a + "-test" }, Logger: slog.New(slog.DiscardHandler)}
	}
	runOn(t, newService(out), search.StartInput{SearchID: "s-test"})
	warm, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}

	// Another process summarizes the same reports from the Map's rows.
	task := mapRows(t, out, "s-test", ids)
	if _, err := newService(out).Summarize(context.Background(), task); err != nil {
		t.Fatal(err)
	}
	cold, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(warm, cold) {
		t.Errorf("the summary from the run's own rows differs from one decoded from its reports:\n%s\n---\n%s", warm, cold)
	}
	if s := searchtest.ReadSummary(t, out); len(s.Ranking) != len(ids) || s.Ranking[0].Scores["gem1"] == 0 {
		t.Errorf("summary ranking %+v", s.Ranking)
	}
}

// throttledReports answers one report.json with a throttling failure, as
// S3's 503 SlowDown does once the SDK's own retries are spent.
type throttledReports struct {
	*fileblob.Dir
	candidate string
}

func (c throttledReports) Get(ctx context.Context, key string) ([]byte, error) {
	if key == c.candidate+"/report.json" {
		return nil, &veredicto.TransientError{Op: "get blob " + key, Err: errors.New("SlowDown: 503")}
	}
	return c.Dir.Get(ctx, key)
}

// TestSummaryRetriesAReportItCouldNotReadForNow: a report the summary
// could not read for now (S3 throttling) fails the Summary task as a
// TransientError, which its Retry repeats, instead of a summary written
// without that candidate's figures; and no summary is written meanwhile.
func TestSummaryRetriesAReportItCouldNotReadForNow(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	ids := []string{"c-001", "c-002"}
	writeSearch(t, in, ids...)
	store := filestore.NewMemory()
	newService := func(reports search.BlobWriter) *search.Service {
		an := &scripted{scripts: map[string]script{
			"c-001": {gem1: 8, gem2: 8, gem3: []int{8}, rec: []string{"SI"}, gem4: []qa{{score: 9}}},
			"c-002": {gem1: 7, gem2: 6, gem3: []int{7}, rec: []string{"SI"}, gem4: []qa{{score: 5}, {score: 8}}},
		}, calls: map[string]int{}}
		return &search.Service{Inputs: fileblob.NewDir(in), Reports: reports, Store: store, Analyst: an,
			PromptVersions: func(a string) string { return a + "-test" }, Logger: slog.New(slog.DiscardHandler)}
	}
	runOn(t, newService(fileblob.NewDir(out)), search.StartInput{SearchID: "s-test"})
	task := mapRows(t, out, "s-test", ids)
	_, err := newService(throttledReports{Dir: fileblob.NewDir(out), candidate: "c-002"}).Summarize(context.Background(), task)
	if veredicto.ErrorName(err) != "TransientError" {
		t.Errorf("Summarize = %v (%s); want TransientError so the workflow retries it", err, veredicto.ErrorName(err))
	}
	if _, err := os.Stat(filepath.Join(out, "summary.json")); err == nil {
		// runOn wrote one: it must be the run's, not a partial one
		if s := searchtest.ReadSummary(t, out); len(s.Ranking) != 2 || len(s.Ranking[0].Scores) == 0 || len(s.Ranking[1].Scores) == 0 {
			t.Errorf("summary.json rewritten without a candidate's figures: %+v", s.Ranking)
		}
	}
}

// mapRows is the Summary task the Map hands over for the reports a run of
// searchID wrote under out: each candidate's decision and its report's
// hash.
func mapRows(t *testing.T, out, searchID string, ids []string) search.SummaryTask {
	t.Helper()
	task := search.SummaryTask{SearchID: searchID}
	for _, id := range ids {
		b, err := os.ReadFile(filepath.Join(out, id, "report.json"))
		if err != nil {
			t.Fatal(err)
		}
		rep := readReport(t, out, id)
		task.Thresholds = rep.Thresholds
		sum := sha256.Sum256(b)
		task.Results = append(task.Results, search.CandidateResult{CandidateID: id, Decision: rep.Decision, Reason: rep.Reason,
			ReportSHA256: hex.EncodeToString(sum[:])})
	}
	return task
}
