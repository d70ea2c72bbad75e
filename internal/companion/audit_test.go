package companion

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/audit/audittest"
	fileblob "github.com/veredicto/veredicto/internal/blob/file"
	filestore "github.com/veredicto/veredicto/internal/store/file"
)

// recorded runs the offline pipeline on the example in mode with an
// audit scope and returns the context and the main chain's entries.
func recorded(t *testing.T, mode string) (*Context, []audit.Entry) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	a := Offline{} // the clock through the scope
	c, err := NewContext("profile.yaml", exampleJD(t), exampleProfile(t), mode, "Andes Fintech", "", a.Info())
	if err != nil {
		t.Fatal(err)
	}
	ctx = audit.WithScope(ctx, NewScope(audit.NewRecorder(audit.NewDir(dir), nil), "x-1", a, nil))
	if err := (&Runner{Analyst: a, Engine: NewEngine(DefaultConfig())}).Run(ctx, c); err != nil {
		t.Fatal(err)
	}
	return c, audittest.Entries(t, dir, audit.MainChain)
}

// TestScoringDecisionsAreRecorded: the ScoringEngine's decisions are in
// the record as it took them: every requirement's score, the confidence
// score, the decision matrix's rule with the threshold it compared, the
// hard-filter cap that lowered it (the example's PCI DSS is a type-A
// gap), each non-negotiable and the anti-impostor rule against its
// minimum; the offline analyst's clock reading is recorded too.
func TestScoringDecisionsAreRecorded(t *testing.T) {
	c, es := recorded(t, ModeFull)
	res, cfg := c.ScoringResult, DefaultConfig()
	if n := len(audittest.Decisions(es, DecisionRequirement)); n != len(c.ClassifiedRequirements) {
		t.Errorf("%d requirement scores, %d requirements", n, len(c.ClassifiedRequirements))
	}
	if d := audittest.Decisions(es, DecisionConfidence); len(d) != 1 || *d[0].Score != res.Confidence.Final {
		t.Errorf("confidence %+v, want %v", d, res.Confidence.Final)
	}
	m := audittest.Decisions(es, DecisionMatrix)
	if len(m) != 1 || m[0].Outcome != DecisionConsider || *m[0].Threshold != cfg.Decision.Consider.Final || *m[0].Score != res.Confidence.Final {
		t.Errorf("decision matrix %+v, want consider against %v", m, cfg.Decision.Consider.Final)
	}
	if d := audittest.Decisions(es, DecisionHardFilter); len(d) != 1 || d[0].Outcome != cfg.Decision.HardFilterCap || res.DecisionMatrix != cfg.Decision.HardFilterCap {
		t.Errorf("hard-filter cap %+v, decision %s", d, res.DecisionMatrix)
	}
	if d := audittest.Decisions(es, DecisionNonNegotiable); len(d) != len(res.NonNegotiablesCheck) {
		t.Errorf("%d non-negotiables recorded, %d checked", len(d), len(res.NonNegotiablesCheck))
	}
	rule := audittest.Decisions(es, DecisionAntiImpostor)
	if len(rule) != 1 || *rule[0].Score != float64(len(HardGaps(c.ClassifiedRequirements))) || *rule[0].Threshold != float64(cfg.AntiImpostorMinHardGaps) || rule[0].Outcome != "sin_pausa" {
		t.Errorf("anti-impostor rule %+v", rule)
	}
	clock := false
	for _, e := range es {
		var ck audit.Clock
		if e.Kind == audit.KindClock && json.Unmarshal(e.Data, &ck) == nil && ck.Use == clockOfflineYears {
			clock = true
		}
	}
	if !clock {
		t.Error("the offline analyst's clock reading is not recorded")
	}

	// Outside full mode the anti-impostor rule does not apply.
	if _, es := recorded(t, ModeScreening); len(audittest.Decisions(es, DecisionAntiImpostor)) != 0 {
		t.Error("a screening run records the anti-impostor rule")
	}
}

// TestWorkflowTasksNeedTheExecutionName: with an Auditor, a task without
// the execution's name (or with one that cannot name a folder) is an
// InvalidInputError naming the field, before anything runs.
func TestWorkflowTasksNeedTheExecutionName(t *testing.T) {
	svc := &Service{Store: filestore.NewMemory(), Blobs: fileblob.NewDir(t.TempDir()), Analyst: Offline{}, Engine: NewEngine(DefaultConfig()),
		Audit: &audit.Folders{Root: t.TempDir()}}
	for _, ref := range []*ExecutionRef{nil, {ID: "arn:x"}, {ID: "arn:x", Name: "../x"}, {ID: "arn:x", Name: "a b"}} {
		in := TaskInput{StartInput: StartInput{Tenant: "acme", ApplicationID: "abc-f"}, Execution: ref}
		for name, task := range map[string]func(context.Context, TaskInput) (TaskOutput, error){"Intent": svc.Intent, "Scoring": svc.Scoring, "Draft": svc.Draft} {
			_, err := task(context.Background(), in)
			var ie *veredicto.InvalidInputError
			if !errors.As(err, &ie) || ie.Field != "execution.name" || ie.File != "state input" {
				t.Errorf("%s with %+v: %v, want an InvalidInputError naming execution.name", name, ref, err)
			}
		}
	}
}
