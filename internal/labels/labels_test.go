package labels_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/companion"
	"github.com/veredicto/veredicto/internal/confirm"
	"github.com/veredicto/veredicto/internal/debate"
	"github.com/veredicto/veredicto/internal/httpapi/searchapi"
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
		wantLabels(t, labels.RunKind, searchapi.KindOf(string(m[1])))
	}
}

// enumOf is the enum tag of the field of v whose JSON name is field: the
// codes a contract allows there.
func enumOf(t *testing.T, v any, field string) []string {
	t.Helper()
	rt := reflect.TypeOf(v)
	for i := 0; i < rt.NumField(); i++ {
		f := rt.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name == field {
			if e := f.Tag.Get("enum"); e != "" {
				return strings.Split(e, ",")
			}
		}
	}
	t.Fatalf("%s has no enum field %q", rt, field)
	return nil
}

// jsonNames lists the JSON names of a struct's fields.
func jsonNames(v any) []string {
	rt := reflect.TypeOf(v)
	var out []string
	for i := 0; i < rt.NumField(); i++ {
		if name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

// TestEveryReportCodeHasALabel: the codes a report, the console or a
// confirmation shows: the search's findings, the states of every state
// machine and what a step did, every field of a confirmation's preview,
// the career companion's classifications.
func TestEveryReportCodeHasALabel(t *testing.T) {
	wantLabels(t, labels.DecisionDetail, search.Decisions()...)
	wantLabels(t, labels.Recommendation, search.RecommendationYes, search.RecommendationNo)
	wantLabels(t, labels.QADecision, search.QAApproved, search.QABlocked)
	wantLabels(t, labels.Severity, enumOf(t, search.Issue{}, "severity")...)
	wantLabels(t, labels.ReferenceStatus, enumOf(t, search.ReferenceCheck{}, "estado")...)
	wantLabels(t, labels.ReviewStatus, search.ReviewApproved, search.ReviewRejected, search.ReviewPending, search.ReviewExpired, search.ReviewUnavailable)
	wantLabels(t, labels.Audit, "gem4", "gem4_retry_1", "gem4_retry_2") // max_qa_retries is at most 2
	wantLabels(t, labels.StepAction, "started", "finished", "retried", "failed", "succeeded", "timed-out", "aborted")

	// Every state of every state machine, and every field of a preview
	// they write.
	defs, _ := filepath.Glob(filepath.Join("..", "..", "statemachines", "*.asl.json"))
	for _, p := range defs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var def map[string]any
		if err := json.Unmarshal(b, &def); err != nil {
			t.Fatal(err)
		}
		var walk func(v any)
		walk = func(v any) {
			switch x := v.(type) {
			case map[string]any:
				if states, ok := x["States"].(map[string]any); ok {
					for name := range states {
						wantLabels(t, labels.State, name)
					}
				}
				if pv, ok := x["preview"].(map[string]any); ok {
					for k := range pv {
						wantLabels(t, labels.PreviewField, strings.TrimSuffix(k, ".$"))
					}
				}
				for _, c := range x {
					walk(c)
				}
			case []any:
				for _, c := range x {
					walk(c)
				}
			}
		}
		walk(def)
	}
	wantLabels(t, labels.Question, labels.Codes(labels.Tool)...)
	wantLabels(t, labels.PreviewField, jsonNames(search.Escalation{})...)
	wantLabels(t, labels.PreviewField, jsonNames(debate.Preview{})...)
	// The chat's reports agent asks before it sends (internal/chat/tools.go).
	wantLabels(t, labels.PreviewField, "to", "subject", "search_id", "candidate_ids")

	wantLabels(t, labels.CompanionDecision, companion.DecisionMaxPriority, companion.DecisionConsider, companion.DecisionStrategicOnly, companion.DecisionNotRecommended)
	wantLabels(t, labels.NonNegotiable, companion.RuleRemoteOnly, companion.RuleMinSalary, companion.RuleNoRelocation, companion.RuleExcludedIndustries, companion.RuleMaxTravelPct)
	wantLabels(t, labels.RequirementType, enumOf(t, companion.ClassifiedRequirement{}, "type")...)
	wantLabels(t, labels.RequirementMatch, enumOf(t, companion.ClassifiedRequirement{}, "match")...)
	wantLabels(t, labels.GapType, "hard_gap", "partial", "transferable", "nice_to_have") // GapItem.GapType, set in scoring.go
	wantLabels(t, labels.TechMaturity, enumOf(t, companion.CultureRadar{}, "tech_maturity")...)
	wantLabels(t, labels.CompanySize, enumOf(t, companion.CultureRadar{}, "company_size_signal")...)
	wantLabels(t, labels.CompanionMode, companion.ModeScreening, companion.ModeFull, companion.ModeOnboarding)
	wantLabels(t, labels.CompanionStatus, companion.StatusRunning, companion.StatusPaused, companion.StatusStopped, companion.StatusCompleted, companion.StatusRejected)
	wantLabels(t, labels.LearningCategory, enumOf(t, companion.Learning{}, "category")...)
	wantLabels(t, labels.SkillLevel, companion.SkillLevels...)
}

// alreadySpanish are the codes that are Spanish words already: their
// label may read as the code does.
var alreadySpanish = map[string]bool{
	"confirma": true, "contradice": true, "alta": true, "media": true, "baja": true,
	"cumple": true, "transferible": true, "parcial": true, "general": true,
	"intermedio": true, "avanzado": true, "experto": true,
}

// TestLabelsAreSpanishSentences: a label is not its code (unless the code
// is a Spanish word already) and holds no underscore; Of never shows
// nothing.
func TestLabelsAreSpanishSentences(t *testing.T) {
	for _, d := range labels.Domains() {
		for _, c := range labels.Codes(d) {
			l := labels.Of(d, c)
			if l == "" || (l == c && !alreadySpanish[c]) || strings.Contains(l, "_") {
				t.Errorf("%s %q reads %q", d, c, l)
			}
		}
	}
	if got := labels.Phrase(labels.Reason, "error_tecnico"); got != "error técnico" {
		t.Errorf("Phrase of error_tecnico %q", got)
	}
	if got := labels.Phrase(labels.Reason, "gate_gem1"); got != "no alcanzó el umbral de GEM1" {
		t.Errorf("Phrase of gate_gem1 %q", got)
	}
	if got := labels.Phrase(labels.State, "Gem4"); got != "GEM4 QA" {
		t.Errorf("Phrase keeps an acronym: %q", got)
	}
	for n, want := range map[int]string{0: "0 informes", 1: "1 informe", 2: "2 informes"} {
		if got := labels.Count(n, "informe", "informes"); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
	if got := labels.Of(labels.Reason, "no_such_code"); got != "no such code" {
		t.Errorf("an unknown code reads %q", got)
	}
}

// TestPreviewTextReadsAsLabelledSections: a senior review's preview reads
// as labelled lines in the table's order, its decision and reason in
// words, its escalation package an indented section, no key showing.
func TestPreviewTextReadsAsLabelledSections(t *testing.T) {
	raw := []byte(`{"candidate_id":"c-005","search_id":"demo","decision":"ESCALADO_CONSULTOR_SENIOR","report":"reports/acme/demo/c-005/report.json",
		"escalation":{"motivo":"falta_estructural_evidencia","resumen_ejecutivo":"Candidato c-005 escalado.","bloqueos_y_correcciones":["Primera auditoría: QA 5/10"],"riesgos_si_se_fuerza_cierre":[]}}`)
	want := `  Búsqueda: demo
  Candidato: c-005
  Decisión actual: Escalado al consultor senior
  Informe: reports/acme/demo/c-005/report.json
  Paquete de escalamiento:
    Motivo: Falta estructural de evidencia
    Resumen ejecutivo: Candidato c-005 escalado.
    Bloqueos y correcciones intentadas:
      - Primera auditoría: QA 5/10
    Riesgos si se fuerza el cierre: —
`
	if got := labels.PreviewText(raw, "  "); got != want {
		t.Errorf("preview:\n%s\nwant:\n%s", got, want)
	}
	if got := labels.PreviewText([]byte(`"texto"`), ""); got != "texto\n" {
		t.Errorf("a text preview reads %q", got)
	}
}

// TestEveryChatToolHasALabel: `veredicto chat` and the console name the
// tool a turn calls by its label; every delegation tool of the registry
// (prompts/agents.yaml) and every tool the chat answers itself has one.
func TestEveryChatToolHasALabel(t *testing.T) {
	var tools []string
	for file, re := range map[string]*regexp.Regexp{
		filepath.Join("..", "..", "prompts", "agents.yaml"):        regexp.MustCompile(`(?m)^\s+tool: ([A-Za-z0-9_-]+)$`),
		filepath.Join("..", "..", "internal", "chat", "direct.go"): regexp.MustCompile(`(?m)^\s+name:\s+"([a-z_]+)",$`),
	} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		ms := re.FindAllSubmatch(b, -1)
		if len(ms) == 0 {
			t.Fatalf("%s declares no tool (the pattern no longer matches it)", file)
		}
		for _, m := range ms {
			tools = append(tools, string(m[1]))
		}
	}
	wantLabels(t, labels.ChatTool, tools...)
}
