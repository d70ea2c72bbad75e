package catalog_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/asl"
	fileblob "github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/catalog"
	"github.com/veredicto/veredicto/internal/companion"
	"github.com/veredicto/veredicto/internal/confirm"
	confirmengine "github.com/veredicto/veredicto/internal/confirm/engine"
	"github.com/veredicto/veredicto/internal/confirm/memory"
	"github.com/veredicto/veredicto/internal/eventlog"
	filestore "github.com/veredicto/veredicto/internal/store/file"
)

// companionRun runs statemachines/career_companion.asl.json through the
// local engine with the real handlers, the offline analyst, an in-memory
// context store and a folder of blobs.
type companionRun struct {
	svc      *companion.Service
	confirms *confirm.Service
	eng      *asl.Engine
	blobs    string
	events   *memEvents
}

// memEvents records the events appended to each stream.
type memEvents struct {
	mu      sync.Mutex
	streams map[string][]eventlog.Event
}

func (m *memEvents) Append(_ context.Context, tenant, stream string, ev eventlog.Event) (eventlog.Event, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.streams == nil {
		m.streams = map[string][]eventlog.Event{}
	}
	m.streams[tenant+"|"+stream] = append(m.streams[tenant+"|"+stream], ev)
	return ev, nil
}

func newCompanionRun(t *testing.T) *companionRun {
	t.Helper()
	r := &companionRun{blobs: t.TempDir(), confirms: &confirm.Service{Store: memory.New(), Logger: slog.New(slog.DiscardHandler)}}
	r.svc = &companion.Service{Store: filestore.NewMemory(), Blobs: fileblob.NewDir(r.blobs), Analyst: companion.Offline{Now: func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }},
		Engine: companion.NewEngine(companion.DefaultConfig()), Logger: slog.New(slog.DiscardHandler)}
	r.events = &memEvents{}
	r.svc.Events = r.events
	r.eng = asl.New(catalog.CompanionRegistry(r.svc, r.confirms))
	r.confirms.Tasks = confirmengine.Tasks{Engine: r.eng}
	return r
}

func companionInputs(t *testing.T, extraJD string) ([]byte, []byte) {
	t.Helper()
	jd, err := os.ReadFile("../../examples/companion/jd.md")
	if err != nil {
		t.Fatal(err)
	}
	p, err := os.ReadFile("../../examples/companion/profile.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return append(jd, []byte(extraJD)...), p
}

const hardGapsJD = "\n## Requisitos adicionales\n- Experiencia con mainframe COBOL (excluyente).\n"

// start creates the application and starts its execution; decide, when
// set, answers the anti-impostor confirmation once it waits.
func (r *companionRun) start(t *testing.T, jd, profile []byte, mode string, decide func(id string)) (*asl.Result, companion.StartInput) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	in, err := r.svc.Create(ctx, tenant, jd, profile, mode, "Andes Fintech", "")
	if err != nil {
		t.Fatal(err)
	}
	x, err := catalog.StartCompanion(ctx, r.eng, in, nil)
	if err != nil {
		t.Fatal(err)
	}
	if decide != nil {
		decide(pendingReview(t, r.confirms))
	}
	res, err := x.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return res, in
}

func statePath(res *asl.Result) []string {
	var out []string
	for _, ev := range res.History() {
		if ev.Type == "TaskStateEntered" || ev.Type == "ChoiceStateEntered" || ev.Type == "SucceedStateEntered" || ev.Type == "FailStateEntered" || ev.Type == "PassStateEntered" {
			out = append(out, ev.State)
		}
	}
	return out
}

func TestCompanionWorkflowPausesAndProceeds(t *testing.T) {
	r := newCompanionRun(t)
	jd, p := companionInputs(t, hardGapsJD)
	res, in := r.start(t, jd, p, companion.ModeFull, func(id string) {
		list, _, _ := r.confirms.Store.List(t.Context(), tenant, time.Now(), 10)
		if len(list) != 1 || list[0].ToolName != companion.ToolAntiImpostor || !strings.Contains(string(list[0].Preview), "Eso no te define") {
			t.Errorf("pending confirmation = %+v", list)
		}
		if _, err := r.confirms.Resolve(t.Context(), tenant, confirm.Resolution{ID: id, Approved: true, By: "ana"}); err != nil {
			t.Fatal(err)
		}
	})
	if res.Status != asl.StatusSucceeded {
		t.Fatalf("%s: %s %s", res.Status, res.Error, res.Cause)
	}
	got := strings.Join(statePath(res), " ")
	want := "Begin Intent Validate CultureRadar CacheLookup ClassificationCached Classify Sas Scoring AntiImpostorRule AskAntiImpostor MarkProceed RecordProceed Draft Done"
	if got != want {
		t.Errorf("path\n got %s\nwant %s", got, want)
	}
	c, err := r.svc.Load(t.Context(), companion.TaskInput{StartInput: in})
	if err != nil {
		t.Fatal(err)
	}
	if c.LastCompletedPhase != 3 || c.Status != companion.StatusCompleted || c.Pause.Resolution != "proceed" || c.CVContent == nil {
		t.Errorf("context: phase %d status %s pause %+v", c.LastCompletedPhase, c.Status, c.Pause)
	}
	// Each step's progress went to the execution's stream, in order.
	var lines []string
	for key, evs := range r.events.streams {
		if !strings.HasPrefix(key, tenant+"|") || !strings.HasSuffix(key, "-"+in.ApplicationID) {
			t.Errorf("events on stream %q", key)
		}
		for _, ev := range evs {
			var d struct{ Message string }
			json.Unmarshal(ev.Data, &d)
			lines = append(lines, d.Message)
		}
	}
	if len(lines) != 6 || lines[1] != "[Fase 1/7] Radar cultural listo." || lines[5] != "[Fase 3/7] Contenido del CV listo." {
		t.Errorf("progress events %q", lines)
	}
	rep, err := os.ReadFile(r.blobs + "/" + companion.Prefix(tenant, in.ApplicationID) + companion.ReportFile)
	if err != nil || !strings.Contains(string(rep), "## 4. Resumen de presentación") {
		t.Errorf("report.md in the blob store: %v", err)
	}
	// Another tenant's application answers like a missing one.
	other := in
	other.Tenant = "globex"
	var nf *veredicto.NotFoundError
	if _, err := r.svc.Load(t.Context(), companion.TaskInput{StartInput: other}); !errors.As(err, &nf) {
		t.Errorf("other tenant: err = %v, want not found", err)
	}
}

func TestCompanionWorkflowStopAndScreening(t *testing.T) {
	r := newCompanionRun(t)
	jd, p := companionInputs(t, hardGapsJD)
	res, in := r.start(t, jd, p, companion.ModeFull, func(id string) {
		if _, err := r.confirms.Resolve(t.Context(), tenant, confirm.Resolution{ID: id, Approved: false, By: "ana"}); err != nil {
			t.Fatal(err)
		}
	})
	if p := strings.Join(statePath(res), " "); res.Status != asl.StatusSucceeded || !strings.HasSuffix(p, "AskAntiImpostor MarkStop RecordStop Stopped") {
		t.Fatalf("%s: %s", res.Status, p)
	}
	c, _ := r.svc.Load(t.Context(), companion.TaskInput{StartInput: in})
	if c.Status != companion.StatusStopped || c.CVContent != nil {
		t.Errorf("stopped: status %s", c.Status)
	}

	// Screening: phases 1-2, no pause even with hard gaps; the second
	// application with the same JD and profile reuses the classification.
	res, in = r.start(t, jd, p, companion.ModeScreening, nil)
	if p := strings.Join(statePath(res), " "); res.Status != asl.StatusSucceeded || !strings.HasSuffix(p, "ClassificationCached Sas Scoring AntiImpostorRule Done") {
		t.Fatalf("screening %s: %s", res.Status, p)
	}
	c, _ = r.svc.Load(t.Context(), companion.TaskInput{StartInput: in})
	if c.LastCompletedPhase != 2 || c.Status != companion.StatusCompleted || !c.ClassificationCached {
		t.Errorf("screening: phase %d status %s cached %v", c.LastCompletedPhase, c.Status, c.ClassificationCached)
	}
}

// runUploaded uploads an application's JD and profile and runs the
// companion workflow on it to its end.
func (r *companionRun) runUploaded(t *testing.T, in companion.StartInput, jd, profile []byte) *asl.Result {
	t.Helper()
	ctx := t.Context()
	blobs := fileblob.NewDir(r.blobs)
	blobs.Put(ctx, companion.Prefix(tenant, in.ApplicationID)+"jd.md", jd, "")
	blobs.Put(ctx, companion.Prefix(tenant, in.ApplicationID)+"profile.yaml", profile, "")
	x, err := catalog.StartCompanion(ctx, r.eng, in, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := x.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestCompanionWorkflowRejectsIncompleteProfile(t *testing.T) {
	r := newCompanionRun(t)
	jd, _ := companionInputs(t, "")
	in := companion.StartInput{Tenant: tenant, ApplicationID: "incomplete-f", Mode: companion.ModeFull}
	res := r.runUploaded(t, in, jd, []byte("name: Ana\n"))
	if res.Status != asl.StatusFailed || res.Error != "InvalidInputError" || strings.Join(statePath(res), " ") != "Begin Intent Rejected" {
		t.Errorf("%s %s path %v", res.Status, res.Error, statePath(res))
	}
}

// TestCompanionRejectedIntentIsKept: an input the intent check refuses
// (a recipe, not a job) fails the workflow and is kept as rejected with
// the reason, so GET answers why instead of 404; a retried Intent task
// refuses again instead of running on.
func TestCompanionRejectedIntentIsKept(t *testing.T) {
	r := newCompanionRun(t)
	_, profile := companionInputs(t, "")
	ctx := t.Context()
	in := companion.StartInput{Tenant: tenant, ApplicationID: "recipe-f", Mode: companion.ModeFull}
	// (It asks for something, so the code's JD check lets it reach the
	// intent check; a text asking nothing is refused before, by code.)
	res := r.runUploaded(t, in, []byte("Buscamos recetas con experiencia de sabor: harina, carne, cebolla y aceitunas. Hornear 20 minutos."), profile)
	if res.Status != asl.StatusFailed || res.Error != "InvalidInputError" {
		t.Fatalf("%s %s, want FAILED InvalidInputError", res.Status, res.Error)
	}
	c, err := r.svc.Load(ctx, companion.TaskInput{StartInput: in})
	if err != nil || c.Status != companion.StatusRejected || c.Rejection == "" {
		t.Fatalf("kept application: %+v, %v; want status rejected with its reason", c, err)
	}
	var ir *companion.IntentRejectedError
	if _, err := r.svc.Intent(ctx, companion.TaskInput{StartInput: in}); !errors.As(err, &ir) {
		t.Errorf("a retried Intent task: %v, want the same refusal", err)
	}
}

// TestCompanionWorkflowProseJD: a job description without a list runs the
// whole workflow (issue 32): its requirements come from its text, and the
// salary it states in another currency is «sin dato», null in the
// context. A text with no requirement at all is refused when the
// application is created, before any step runs.
func TestCompanionWorkflowProseJD(t *testing.T) {
	r := newCompanionRun(t)
	jd, err := os.ReadFile("../../examples/companion/jd_prosa.md")
	if err != nil {
		t.Fatal(err)
	}
	_, p := companionInputs(t, "")
	res, in := r.start(t, jd, p, companion.ModeFull, nil)
	if path := strings.Join(statePath(res), " "); res.Status != asl.StatusSucceeded || !strings.HasSuffix(path, "Draft Done") {
		t.Fatalf("%s: %s", res.Status, path)
	}
	c, err := r.svc.Load(t.Context(), companion.TaskInput{StartInput: in})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.ClassifiedRequirements) != 5 || c.LastCompletedPhase != 3 {
		t.Errorf("requirements %d, phase %d", len(c.ClassifiedRequirements), c.LastCompletedPhase)
	}
	if v, ok := c.ScoringResult.NonNegotiablesCheck[companion.RuleMinSalary]; !ok || v != nil {
		t.Errorf("min_salary = %v, want null", v)
	}
	if _, err := r.svc.Create(t.Context(), tenant, []byte("Hola, ¿qué tal? Saludos cordiales."), p, companion.ModeFull, "", ""); err == nil || !strings.Contains(err.Error(), "states no requirement") {
		t.Errorf("a text with no requirement: %v", err)
	}
}
