package labels_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/companion"
	"github.com/veredicto/veredicto/internal/confirm"
	"github.com/veredicto/veredicto/internal/debate"
	"github.com/veredicto/veredicto/internal/httpapi"
	"github.com/veredicto/veredicto/internal/labels"
	"github.com/veredicto/veredicto/internal/search"
)

func wantLabels(t *testing.T, d labels.Domain, codes ...string) {
	t.Helper()
	for _, c := range codes {
		if _, ok := labels.Lookup(d, c); !ok {
			t.Errorf("%s %q has no Spanish label", d, c)
		}
	}
}

// TestEveryContractCodeHasALabel checks the table against the codes the
// contracts define: the search's decisions and reasons (and every one the
// state machines write), the statuses of runs and confirmations, the kinds
// of the project's state machines, what confirmations ask about.
func TestEveryContractCodeHasALabel(t *testing.T) {
	wantLabels(t, labels.Decision, search.Decisions()...)
	wantLabels(t, labels.Reason, search.Reasons()...)
	wantLabels(t, labels.Decision, search.StateQARetry)
	wantLabels(t, labels.GateOutcome, search.Outcomes()...)
	wantLabels(t, labels.Gate, "gate_gem1", "gate_gem2", "gate_gem3", "gate_qa")
	wantLabels(t, labels.RunStatus, asl.StatusRunning, asl.StatusSucceeded, asl.StatusFailed, asl.StatusTimedOut, asl.StatusAborted, "PENDING", "DAMAGED")
	wantLabels(t, labels.ConfirmationStatus, confirm.StatusPending, confirm.StatusResolving, confirm.StatusApproved,
		confirm.StatusRejected, confirm.StatusExpired, confirm.StatusDamaged)
	wantLabels(t, labels.Sensitivity, "low", "medium", "high")
	// The debate's codes its report and CLI show (seed 003).
	wantLabels(t, labels.DebateTarget, debate.TargetNone, debate.TargetCouncil, debate.TargetHuman)
	wantLabels(t, labels.DebateMode, debate.ModeAuto, debate.ModeSimple, debate.ModeDebate, debate.ModeCouncil)
	wantLabels(t, labels.RoundKind, debate.RoundInitial, debate.RoundRebuttals, debate.RoundRefinement)
	wantLabels(t, labels.KeepsPosition, debate.KeepYes, debate.KeepNo, debate.KeepPartial)
	// The companion's codes its report and CLI show (seed 001).
	wantLabels(t, labels.CompanionDecision, companion.DecisionMaxPriority, companion.DecisionConsider, companion.DecisionStrategicOnly, companion.DecisionNotRecommended)
	wantLabels(t, labels.CompanionStatus, companion.StatusRunning, companion.StatusPaused, companion.StatusStopped, companion.StatusCompleted, companion.StatusRejected)
	wantLabels(t, labels.CompanionMode, companion.ModeScreening, companion.ModeFull, companion.ModeOnboarding)
	wantLabels(t, labels.NonNegotiable, companion.RuleRemoteOnly, companion.RuleMinSalary, companion.RuleNoRelocation, companion.RuleExcludedIndustries, companion.RuleMaxTravelPct)
	wantLabels(t, labels.RequirementMatch, companion.MatchCumple, companion.MatchTransferible, companion.MatchParcial, companion.MatchNoCumple)
	wantLabels(t, labels.GapType, companion.GapHard, companion.GapPartial, companion.GapTransferable, companion.GapNiceToHave)
	wantLabels(t, labels.TechMaturity, companion.TechMaturities...)
	wantLabels(t, labels.CompanySize, companion.CompanySizes...)

	defs, err := filepath.Glob(filepath.Join("..", "..", "statemachines", "*.asl.json"))
	if err != nil || len(defs) == 0 {
		t.Fatal(defs, err)
	}
	field := func(name string) *regexp.Regexp { return regexp.MustCompile(`"` + name + `": *"([A-Za-z0-9_]+)"`) }
	for _, p := range defs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []struct {
			name string
			d    labels.Domain
		}{{"decision", labels.Decision}, {"reason", labels.Reason}, {"toolName", labels.Tool}, {"category", labels.Category}, {"sensitivity", labels.Sensitivity}} {
			for _, m := range field(f.name).FindAllSubmatch(b, -1) {
				wantLabels(t, f.d, string(m[1]))
			}
		}
	}
	tmpl, err := os.ReadFile(filepath.Join("..", "..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	machines := regexp.MustCompile(`(?m)^  (\w+StateMachine):`).FindAllSubmatch(tmpl, -1)
	if len(machines) < 4 {
		t.Fatalf("found %d state machines in template.yaml", len(machines))
	}
	for _, m := range machines {
		wantLabels(t, labels.RunKind, httpapi.KindOf(string(m[1])))
	}
}

// TestLabelsAreSpanishSentences: a label is not its code and holds no
// underscore; Of never shows nothing.
func TestLabelsAreSpanishSentences(t *testing.T) {
	for _, d := range labels.Domains() {
		for _, c := range labels.Codes(d) {
			l := labels.Of(d, c)
			if l == "" || l == c || strings.Contains(l, "_") {
				t.Errorf("%s %q reads %q", d, c, l)
			}
		}
	}
	if got := labels.Of(labels.Reason, "no_such_code"); got != "no such code" {
		t.Errorf("an unknown code reads %q", got)
	}
}
