package search_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/veredicto/veredicto"
	fileblob "github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/search"
	filestore "github.com/veredicto/veredicto/internal/store/file"
)

// TestMinimumInputsAreEnforcedBeforeEachAgent: seed 000 §2–3. A
// candidate lacking an agent's minimum documents is not sent to that
// agent; it ends escalated for a structural lack of evidence, its report
// and escalation package naming the documents. With a scripted model that
// would approve everyone, no candidate missing tests, case or references
// is approved.
func TestMinimumInputsAreEnforcedBeforeEachAgent(t *testing.T) {
	approve := script{gem1: 9, gem2: 9, gem3: []int{9}, rec: []string{"SI"}, gem4: []qa{{score: 9}}}
	in := t.TempDir()
	writeSearch(t, in, "c-full", "c-nocv", "c-notests", "c-noref")
	for _, f := range []string{"c-nocv/cv.md", "c-notests/tests.md", "c-notests/case.md", "c-noref/references.md"} {
		if err := os.Remove(filepath.Join(in, "candidates", filepath.FromSlash(f))); err != nil {
			t.Fatal(err)
		}
	}
	r := runSearch(t, in, map[string]script{"c-full": approve, "c-nocv": approve, "c-notests": approve, "c-noref": approve}, filestore.NewMemory(), "")
	tests := []struct {
		id, agent string
		missing   []string
		calls     map[string]int // agent → calls
	}{
		{"c-nocv", "gem1", []string{"candidates/c-nocv/cv.md"}, map[string]int{"gem1": 0, "gem2": 0}},
		{"c-notests", "gem2", []string{"candidates/c-notests/tests.md", "candidates/c-notests/case.md"}, map[string]int{"gem1": 1, "gem2": 0, "gem3": 0}},
		{"c-noref", "gem3", []string{"candidates/c-noref/references.md"}, map[string]int{"gem2": 1, "gem3": 0, "gem4": 0}},
	}
	for _, tt := range tests {
		rep := readReport(t, r.out, tt.id)
		if rep.Decision != search.DecisionEscalated || rep.Reason != search.ReasonNoEvidence {
			t.Errorf("%s: %s (%s), want escalated for a structural lack of evidence", tt.id, rep.Decision, rep.Reason)
		}
		for agent, n := range tt.calls {
			if got := r.analyst.Calls(tt.id, agent); got != n {
				t.Errorf("%s: %s called %d times, want %d", tt.id, agent, got, n)
			}
		}
		if rep.Escalation == nil || !slices.Equal(rep.Escalation.MissingInputs, tt.missing) {
			t.Errorf("%s: escalation package %+v, want the missing documents %v", tt.id, rep.Escalation, tt.missing)
		}
		last := rep.Trail[len(rep.Trail)-1]
		if last.Name != "gate_"+tt.agent || last.Outcome != search.OutcomeMissingInputs || !slices.Equal(last.Missing, tt.missing) {
			t.Errorf("%s: the trail ends %+v", tt.id, last)
		}
		md, err := os.ReadFile(filepath.Join(r.out, tt.id, "report.md"))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range tt.missing {
			if !strings.Contains(string(md), m) {
				t.Errorf("%s: report.md does not name %s", tt.id, m)
			}
		}
	}
	if rep := readReport(t, r.out, "c-full"); rep.Decision != search.DecisionApproved {
		t.Errorf("the complete candidate: %s", rep.Decision)
	}
}

// TestStrictInputsRefusesBeforeAnyModelCall: with strict_inputs, a search
// with any candidate lacking a minimum document is refused by Validate,
// which names every candidate's gaps; no agent runs.
func TestStrictInputsRefusesBeforeAnyModelCall(t *testing.T) {
	in := t.TempDir()
	writeSearch(t, in, "c-1", "c-2", "c-3")
	os.Remove(filepath.Join(in, "candidates", "c-1", "tests.md"))
	os.Remove(filepath.Join(in, "candidates", "c-3", "interview.md"))
	os.Remove(filepath.Join(in, "candidates", "c-3", "references.md"))
	an := &scripted{scripts: map[string]script{}, calls: map[string]int{}}
	svc := &search.Service{Inputs: fileblob.NewDir(in), Reports: fileblob.NewDir(t.TempDir()), Store: filestore.NewMemory(), Analyst: an}
	_, err := svc.Validate(context.Background(), search.StartInput{SearchID: "s-test", StrictInputs: true})
	var gaps *search.InputGapsError
	if !errors.As(err, &gaps) || veredicto.ErrorName(err) != veredicto.NameInvalidInput {
		t.Fatalf("strict validate: %v", err)
	}
	msg := err.Error()
	for _, want := range []string{"2 candidate(s)", "c-1: GEM2 needs candidates/c-1/tests.md", "c-3: GEM1 needs candidates/c-3/interview.md; GEM3 needs candidates/c-3/references.md"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "c-2") {
		t.Errorf("error %q names the complete candidate", msg)
	}
	if len(an.calls) != 0 {
		t.Errorf("model calls %v", an.calls)
	}
	if _, err := svc.Validate(context.Background(), search.StartInput{SearchID: "s-test"}); err != nil {
		t.Errorf("without strict_inputs the search runs: %v", err)
	}
}

// TestCompanyContextIsGEM5sMinimumInput: without company.md the mandate
// analysis cannot run and the search is blocked, naming the document.
func TestCompanyContextIsGEM5sMinimumInput(t *testing.T) {
	in := t.TempDir()
	writeSearch(t, in, "c-1")
	os.Remove(filepath.Join(in, "company.md"))
	svc := &search.Service{Inputs: fileblob.NewDir(in), Reports: fileblob.NewDir(t.TempDir()), Store: filestore.NewMemory(),
		Analyst: &scripted{scripts: map[string]script{}, calls: map[string]int{}}}
	_, err := svc.Validate(context.Background(), search.StartInput{SearchID: "s-test"})
	var mi *veredicto.MissingInputError
	if !errors.As(err, &mi) || !slices.Equal(mi.Files, []string{"company.md"}) {
		t.Errorf("validate without company.md: %v", err)
	}
}

// TestQABlockRecordsTheRetryState: a QA block with corrections left puts
// the candidate in BLOQUEADO_QA_REINTENTO (the Gem4 result and the report's
// trail say so); the last block, with none left, does not.
func TestQABlockRecordsTheRetryState(t *testing.T) {
	block := qa{score: 5, blocked: true}
	r := runWorkflow(t, map[string]script{"c-001": {gem1: 7, gem2: 7, gem3: []int{7}, rec: []string{"SI"}, gem4: []qa{block, block, block}}}, nil, "")
	rep := readReport(t, r.out, "c-001")
	var states, outcomes []string
	for _, g := range rep.Trail {
		if g.Name == "gate_qa" {
			states, outcomes = append(states, g.State), append(outcomes, g.Outcome)
		}
	}
	if !slices.Equal(states, []string{search.StateQARetry, search.StateQARetry, ""}) ||
		!slices.Equal(outcomes, []string{search.OutcomeQARetry, search.OutcomeQARetry, search.OutcomeQAExhausted}) {
		t.Errorf("QA states %q outcomes %q", states, outcomes)
	}
	md, _ := os.ReadFile(filepath.Join(r.out, "c-001", "report.md"))
	if !strings.Contains(string(md), "## Cómo se decidió") || strings.Count(string(md), "Bloqueado por QA, en corrección") != 2 {
		t.Errorf("report.md does not show the retry state twice:\n%s", md)
	}
}

// TestGEM3GateAppliesToItsOwnScore: issue 32. A SI with 5/10 is discarded
// by the gate, not re-asked, and the trail records the inconsistency; an
// approved candidate whose agents declared no risk says so, naming the
// sources read, instead of listing «No informado en fuentes» as a risk.
func TestGEM3GateAppliesToItsOwnScore(t *testing.T) {
	r := runWorkflow(t, map[string]script{
		"c-si5": {gem1: 8, gem2: 8, gem3: []int{5}, rec: []string{"SI"}},
		"c-ok":  {gem1: 8, gem2: 8, gem3: []int{8}, rec: []string{"SI"}, gem4: []qa{{score: 8}}},
	}, nil, "")
	rep := readReport(t, r.out, "c-si5")
	if rep.Decision != search.DecisionDiscarded3 || r.analyst.Calls("c-si5", "gem3") != 1 {
		t.Errorf("c-si5: %s, %d GEM3 calls; want DESCARTADO_GEM3 after one call", rep.Decision, r.analyst.Calls("c-si5", "gem3"))
	}
	g := rep.Trail[len(rep.Trail)-1]
	if g.Name != "gate_gem3" || g.Outcome != search.OutcomeBelow || g.Recommendation != "SI" || !strings.Contains(g.Detail, "no es coherente") {
		t.Errorf("c-si5's last gate %+v", g)
	}
	md, _ := os.ReadFile(filepath.Join(r.out, "c-ok", "report.md"))
	risks := string(md)[strings.Index(string(md), "## Riesgos"):strings.Index(string(md), "## Contradicciones")]
	if !strings.Contains(risks, "Ningún riesgo con evidencia en las fuentes leídas (jd.md, kickoff.md, company.md, culture.md, candidates/c-ok/cv.md") ||
		strings.Contains(risks, search.NotInSources) {
		t.Errorf("c-ok's risks:\n%s", risks)
	}
}
