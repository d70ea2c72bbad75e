package console_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/veredicto/veredicto/internal/console/browsertest"
	"github.com/veredicto/veredicto/internal/eventlog"
	"github.com/veredicto/veredicto/internal/labels/labelstest"
	"github.com/veredicto/veredicto/internal/stream"
)

// spanish fails t when what the page shows (its visible text, the open
// modal's included) lets a code or a word that is not Spanish through.
func spanish(t *testing.T, b *browsertest.Browser, page string, allow ...string) {
	t.Helper()
	labelstest.Check(t, "console page "+page, browsertest.Eval[string](b, `document.body.innerText`), allow...)
}

var exampleRoster = map[string]any{"search_id": "big", "client": "Distribuidora Andina S.A.", "role": "Director/a de Finanzas (CFO)",
	"candidates": []map[string]any{
		{"candidate_id": "c-001", "name": "Mariana Rojas", "documents": []string{"candidates/c-001/cv.md", "candidates/c-001/interview.md"}},
		{"candidate_id": "c-002", "name": "Tomás Fuentes", "documents": []string{"candidates/c-002/cv.md"}},
		{"candidate_id": "c-005", "name": "Carla Medina", "documents": []string{"candidates/c-005/cv.md", "candidates/c-005/interview.md"}},
	}}

// seniorReview is the pending confirmation of c-005's senior review, as
// the search's state machine writes it.
func seniorReview() map[string]any {
	now := time.Now().UTC()
	return map[string]any{"id": "cf_1", "execution": execARN, "toolName": "senior_review", "category": "decision",
		"sensitivity": "high", "undoable": false, "status": "pending",
		"created_at": now.Format(time.RFC3339), "expires_at": now.Add(24 * time.Hour).Format(time.RFC3339),
		"preview": map[string]any{"search_id": "big", "candidate_id": "c-005", "decision": "ESCALADO_CONSULTOR_SENIOR",
			"report": "reports/acme/big/c-005/report.json",
			"escalation": map[string]any{"motivo": "falta_estructural_evidencia",
				"resumen_ejecutivo":           "Candidato c-005 escalado al consultor senior (falta estructural de evidencia).",
				"bloqueos_y_correcciones":     []string{"Primera auditoría: QA 5/10, bloqueado; 3 vacíos críticos"},
				"riesgos_si_se_fuerza_cierre": []string{"Vacío crítico: No informado en fuentes: candidates/c-005/tests.md"}}}}
}

// TestBrowserRunPageNamesAndCounts: from a candidate's first event its
// row names it (id and name from the search), the page counts «n de N
// evaluados», shows the elapsed time, an estimate of what is left once a
// candidate is done, and tokens and cost so far; the header names the
// tenant; every word is Spanish.
func TestBrowserRunPageNamesAndCounts(t *testing.T) {
	h := startHarness(t)
	h.api.mu.Lock()
	h.api.roster = exampleRoster
	h.api.state = map[string]any{"search_id": "big", "status": "RUNNING", "execution": "acme--big",
		"started_at": time.Now().Add(-90 * time.Second).UTC().Format(time.RFC3339),
		"usage":      map[string]any{"calls": 4, "prompt_tokens": 12000, "completion_tokens": 3456, "cost_usd": 0.0123}}
	h.api.mu.Unlock()
	b := browsertest.New(t, 1280, 900)
	signIn(t, b, h)
	if got := browsertest.Eval[string](b, `document.getElementById('tenant').textContent`); got != "Organización: acme" {
		t.Errorf("header tenant %q", got)
	}

	record := func(evs ...stream.Event) {
		for _, ev := range evs {
			if err := h.rec.Record(context.Background(), tenant, execARN, ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	n := 0
	ev := func(e stream.Event) stream.Event { n++; e.ID = n; return e }
	idx := func(i int) *int { return &i }
	scope := func(i int) string { return "Candidates/item[" + strconv.Itoa(i) + "]" }
	fn := "${Gem1FunctionArn}"
	record(ev(stream.Event{Type: "ExecutionStarted"}), ev(stream.Event{Type: "MapStateEntered", State: "Candidates"}))
	b.Hash("#/ejecucion/search/big/" + execARN)
	b.WaitFor("waiting says why", `/primer evento/.test(document.getElementById('candidates-empty').textContent) || document.getElementById('candidates-empty').hidden`, 15*time.Second)

	// The first event of each candidate: its index only; the row names it.
	record(ev(stream.Event{Type: "MapIterationStarted", State: "Candidates", Index: idx(0)}),
		ev(stream.Event{Type: "MapIterationStarted", State: "Candidates", Index: idx(1)}),
		ev(stream.Event{Type: "MapIterationStarted", State: "Candidates", Index: idx(2)}),
		ev(stream.Event{Type: "TaskStateEntered", State: "Gem1", Scope: scope(0), Resource: fn}))
	b.WaitFor("named from the first event", `[...document.querySelectorAll('#candidates-body tr')].map(r => r.cells[0].textContent).join('|') === 'c-001 · Mariana Rojas|c-002 · Tomás Fuentes|c-005 · Carla Medina'`, 15*time.Second)
	b.WaitFor("0 of 3", `document.getElementById('run-count').textContent === '0 de 3 evaluados'`, 10*time.Second)
	b.WaitFor("elapsed", `/Tiempo transcurrido: 1 min \d+ s/.test(document.getElementById('run-elapsed').textContent)`, 10*time.Second)
	b.WaitFor("cost so far", `document.getElementById('run-cost').textContent === '15.456 tokens · US$0,0123 hasta ahora'`, 10*time.Second)
	if eta := browsertest.Eval[string](b, `document.getElementById('run-eta').textContent`); !strings.Contains(eta, "primer candidato") {
		t.Errorf("ETA before any candidate is done: %q", eta)
	}
	b.Shot("named-0-of-3")

	// c-002 is decided: 1 of 3, and an estimate of what is left.
	record(ev(stream.Event{Type: "TaskStateEntered", State: "Report", Scope: scope(1), Resource: "${ReportFunctionArn}"}),
		ev(stream.Event{Type: "TaskSucceeded", State: "Report", Scope: scope(1), Resource: "${ReportFunctionArn}",
			Output: map[string]any{"candidate_id": "c-002", "decision": "DESCARTADO_GEM1", "reason": "gate_gem1"}}))
	b.WaitFor("1 of 3", `document.getElementById('run-count').textContent === '1 de 3 evaluados'`, 10*time.Second)
	eta := browsertest.Eval[string](b, `document.getElementById('run-eta').dataset.eta`)
	if secs, err := strconv.Atoi(eta); err != nil || secs < 150 || secs > 240 {
		t.Errorf("ETA after 1 of 3 in about 90 s: %q s, want about 180", eta)
	}
	if got := browsertest.Eval[string](b, `document.querySelector('#candidates-body tr[data-candidate="c-002"] td.decision').textContent`); got != "Descartado en GEM1 (trayectoria y logros)" {
		t.Errorf("c-002's decision reads %q", got)
	}
	spanish(t, b, "run page", "big")
	b.Shot("1-of-3")
}

// TestBrowserConfirmationInWords: the senior review asks in words —
// the decision at stake, the search with its role, the candidate by name,
// the escalation package as labelled sections, links to the report and
// the sources; following the report link closes the modal, and the report
// page decides beside the report, never under a modal; leaving a page
// closes the modal.
func TestBrowserConfirmationInWords(t *testing.T) {
	h := startHarness(t)
	h.api.mu.Lock()
	h.api.roster = exampleRoster
	h.api.pending = []map[string]any{seniorReview()}
	h.api.mu.Unlock()
	b := browsertest.New(t, 1280, 900)
	signIn(t, b, h)

	h.rec.Record(context.Background(), tenant, execARN, stream.Event{ID: 1, Type: "ExecutionStarted"})
	b.Hash("#/ejecucion/search/big/" + execARN)
	pending, _ := eventlog.New(eventlog.TypePendingConfirmation, "p", seniorReview())
	h.log.Append(context.Background(), tenant, execARN, pending)
	b.WaitFor("modal", `document.getElementById('confirm-dialog').open`, 15*time.Second)
	b.WaitFor("named", `document.getElementById('cf-candidate').textContent === 'c-005 · Carla Medina'`, 10*time.Second)
	for id, want := range map[string]string{
		"cf-question": "¿Aprobar al candidato escalado? Aprobar lo deja «Aprobado por el consultor senior»; rechazar, «Descartado por el consultor senior».",
		"cf-search":   "big — Director/a de Finanzas (CFO) · Distribuidora Andina S.A.",
	} {
		if got := browsertest.Eval[string](b, `document.getElementById('`+id+`').textContent`); got != want {
			t.Errorf("%s %q, want %q", id, got, want)
		}
	}
	sections := browsertest.Eval[string](b, `[...document.querySelectorAll('#cf-preview dt, #cf-preview h4')].map(e => e.textContent).join('|')`)
	if want := "Decisión actual|Informe|Paquete de escalamiento|Motivo|Resumen ejecutivo|Bloqueos y correcciones intentadas|Riesgos si se fuerza el cierre"; sections != want {
		t.Errorf("preview sections %q, want %q", sections, want)
	}
	if got := browsertest.Eval[string](b, `[...document.querySelectorAll('#cf-links a')].map(a => a.getAttribute('href')).join(' ')`); got != "#/informe/big/c-005 #/fuente/big/candidates/c-005/cv.md #/fuente/big/candidates/c-005/interview.md" {
		t.Errorf("links %q, want the report and the candidate's sources", got)
	}
	spanish(t, b, "confirmation modal", "big")
	b.Shot("modal-in-words")

	// The report link closes the modal; the report page decides.
	b.Run("open the report", 10*time.Second, chromedp.Click(chromedp.ID("cf-report-link")))
	b.WaitFor("report shown, modal closed", `!document.getElementById('confirm-dialog').open && document.querySelector('#document h2') !== null`, 10*time.Second)
	b.WaitFor("decision beside the report", `!document.getElementById('report-decision').hidden && document.getElementById('report-decision').dataset.id === 'cf_1'`, 10*time.Second)
	spanish(t, b, "report with its decision", "big")
	b.Shot("report-decides")
	b.Run("approve from the report", 10*time.Second,
		chromedp.SendKeys(chromedp.ID("rd-comment"), "referencias verificadas"),
		chromedp.Click(chromedp.ID("rd-approve")))
	b.WaitFor("recorded", `document.getElementById('report-decision').dataset.done === 'approved'`, 10*time.Second)
	if open := browsertest.Eval[bool](b, `document.getElementById('confirm-dialog').open`); open {
		t.Error("a modal opened over the report")
	}
	h.api.mu.Lock()
	decided := strings.Join(h.api.decided, ";")
	h.api.mu.Unlock()
	if decided != "cf_1 true referencias verificadas" {
		t.Errorf("decisions posted %q", decided)
	}

	// Leaving the page a modal was opened on closes it.
	h.api.mu.Lock()
	h.api.pending = []map[string]any{seniorReview()}
	h.api.pending[0]["id"] = "cf_2"
	h.api.mu.Unlock()
	b.Hash("#/confirmaciones")
	b.Run("review", 15*time.Second, chromedp.WaitVisible(chromedp.CSS(`#confirmations-list button`)), chromedp.Click(chromedp.CSS(`#confirmations-list button`)))
	b.WaitFor("modal", `document.getElementById('confirm-dialog').open`, 5*time.Second)
	b.Hash("#/")
	b.WaitFor("closed on navigation", `!document.getElementById('confirm-dialog').open && document.getElementById('runs-table') !== null`, 5*time.Second)
}

// TestBrowserEmptyStatesAndPhoneRuns: an empty runs list says why (the
// tenant) and what to do, and so do the confirmations and a run before
// its first event; at phone width the runs list shows every decision of
// a search, none cut off, with its earlier runs grouped under it.
func TestBrowserEmptyStatesAndPhoneRuns(t *testing.T) {
	h := startHarness(t)
	b := browsertest.New(t, 390, 844)
	signIn(t, b, h)
	b.WaitFor("empty runs", `document.getElementById('runs-empty') !== null`, 10*time.Second)
	empty := browsertest.Eval[string](b, `document.getElementById('runs-empty').textContent`)
	for _, want := range []string{"«acme»", "searches/acme/", "compruebe que el token"} {
		if !strings.Contains(empty, want) {
			t.Errorf("empty runs %q lacks %q", empty, want)
		}
	}
	spanish(t, b, "empty runs")
	b.Shot("runs-empty-phone")
	b.Hash("#/confirmaciones")
	b.WaitFor("empty confirmations", `/aparecerá aquí/.test((document.getElementById('confirmations-empty') || {}).textContent || '')`, 10*time.Second)
	spanish(t, b, "empty confirmations")

	now := time.Now().UTC()
	at := func(d time.Duration) string { return now.Add(d).Format(time.RFC3339) }
	decisions := map[string]any{}
	for i, d := range []string{"APROBADO", "APROBADO_POR_CONSULTOR", "ESCALADO_CONSULTOR_SENIOR", "DESCARTADO_POR_CONSULTOR", "DESCARTADO_GEM3", "DESCARTADO_GEM2", "DESCARTADO_GEM1"} {
		decisions[d] = i + 1
	}
	h.api.mu.Lock()
	h.api.runs = []map[string]any{
		{"kind": "search", "id": "demo-cfo-andina", "execution": "acme--demo", "status": "SUCCEEDED", "started_at": at(-time.Hour), "stopped_at": at(-50 * time.Minute),
			"duration_seconds": 600, "candidates": 28, "decisions": decisions,
			"reruns": []map[string]any{
				{"kind": "search", "id": "demo-cfo-andina", "execution": "acme--demo-2", "status": "SUCCEEDED", "started_at": at(-2 * time.Hour), "decisions": map[string]any{}},
				{"kind": "search", "id": "demo-cfo-andina", "execution": "acme--demo-1", "status": "FAILED", "started_at": at(-3 * time.Hour), "decisions": map[string]any{}}}},
		{"kind": "debate", "id": "d-oferta", "execution": "acme--d", "status": "RUNNING", "started_at": at(-time.Minute), "duration_seconds": 60, "decisions": map[string]any{}},
		{"kind": "career-companion", "id": "andes", "execution": "acme--a", "status": "TIMED_OUT", "started_at": at(-time.Minute), "duration_seconds": 60, "decisions": map[string]any{}},
	}
	h.api.mu.Unlock()
	b.Hash("#/")
	b.WaitFor("runs listed", `document.querySelectorAll('#runs-body tr').length === 3`, 10*time.Second)
	if n := browsertest.Eval[int](b, `document.querySelectorAll('#runs-body tr[data-id="demo-cfo-andina"]').length`); n != 1 {
		t.Errorf("%d rows for the search, want one", n)
	}
	if got := browsertest.Eval[string](b, `document.querySelector('#runs-body tr[data-id="demo-cfo-andina"] details.reruns summary').textContent`); got != "2 ejecuciones anteriores" {
		t.Errorf("reruns %q", got)
	}
	cut := browsertest.Eval[[]string](b, `[...document.querySelectorAll('#runs-body .chip.decision')].filter(c => {
		const r = c.getBoundingClientRect();
		return r.width === 0 || r.left < 0 || r.right > document.documentElement.clientWidth + 0.5 || c.scrollWidth > c.clientWidth + 1;
	}).map(c => c.textContent)`)
	if len(cut) > 0 {
		t.Errorf("at phone width these decisions are cut off or hidden: %q", cut)
	}
	if shown := browsertest.Eval[int](b, `document.querySelectorAll('#runs-body .chip.decision').length`); shown != 7 {
		t.Errorf("%d decisions shown, want 7", shown)
	}
	if wide := browsertest.Eval[bool](b, `document.documentElement.scrollWidth > window.innerWidth + 1`); wide {
		t.Error("at phone width the runs list scrolls sideways")
	}
	b.Run("open earlier runs", 5*time.Second, chromedp.Click(chromedp.CSS(`details.reruns summary`)))
	spanish(t, b, "runs list", "demo-cfo-andina", "d-oferta")
	b.Shot("runs-phone")
	b.Run("filter", 10*time.Second, chromedp.SetValue(chromedp.ID("status-filter"), "ABORTED"))
	browsertest.Eval[bool](b, `document.getElementById('status-filter').dispatchEvent(new Event('change'))`)
	if got := browsertest.Eval[string](b, `document.getElementById('runs-empty').textContent`); !strings.Contains(got, "Elija «Todas»") {
		t.Errorf("filtered empty %q says not what to do", got)
	}
}

// TestBrowserScreenshotMatrix saves every page of the console at laptop
// and phone widths for people to look at (out/console-screenshots/).
func TestBrowserScreenshotMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: a screenshot of every page at two widths; make test-long runs it")
	}
	for _, size := range []struct {
		name string
		w, h int
	}{{"laptop", 1280, 900}, {"phone", 390, 844}} {
		t.Run(size.name, func(t *testing.T) {
			h := startHarness(t)
			h.api.mu.Lock()
			h.api.roster = exampleRoster
			h.api.pending = []map[string]any{seniorReview()}
			h.api.state = map[string]any{"search_id": "big", "execution": "acme--big", "started_at": time.Now().Add(-5 * time.Minute).UTC().Format(time.RFC3339),
				"usage": map[string]any{"prompt_tokens": 80000, "completion_tokens": 9000, "cost_usd": 0.21}}
			h.api.summary = map[string]any{"ranking": []map[string]any{{"candidate_id": "c-001", "decision": "APROBADO", "reason": "qa_aprobado"},
				{"candidate_id": "c-005", "decision": "ESCALADO_CONSULTOR_SENIOR", "reason": "falta_estructural_evidencia"},
				{"candidate_id": "c-002", "decision": "DESCARTADO_GEM1", "reason": "gate_gem1"}}}
			h.api.runs = []map[string]any{{"kind": "search", "id": "big", "execution": execARN, "status": "SUCCEEDED", "started_at": time.Now().Add(-5 * time.Minute).UTC().Format(time.RFC3339),
				"duration_seconds": 300, "candidates": 3, "decisions": map[string]any{"APROBADO": 1, "ESCALADO_CONSULTOR_SENIOR": 1, "DESCARTADO_GEM1": 1},
				"reruns": []map[string]any{{"kind": "search", "id": "big", "execution": "acme--big-1", "status": "FAILED", "decisions": map[string]any{}}}}}
			h.api.mu.Unlock()
			b := browsertest.New(t, size.w, size.h)
			signIn(t, b, h)
			b.Shot("runs")
			evs := history(3)
			for _, ev := range evs {
				if ev.Type == "TaskSucceeded" && ev.State == "Report" {
					i, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(ev.Scope, "Candidates/item["), "]"))
					ev.Output = map[string]any{"candidate_id": []string{"c-001", "c-002", "c-005"}[i], "decision": []string{"APROBADO", "DESCARTADO_GEM1", "ESCALADO_CONSULTOR_SENIOR"}[i]}
				}
				h.rec.Record(context.Background(), tenant, execARN, ev)
			}
			b.Hash("#/ejecucion/search/big/" + execARN)
			b.WaitFor("finished", `document.getElementById('run-status').textContent === 'Terminada' && document.querySelectorAll('#ranking tbody tr').length === 3`, 30*time.Second)
			spanish(t, b, "finished run", "big")
			b.Shot("run-finished")
			pending, _ := eventlog.New(eventlog.TypePendingConfirmation, "p", seniorReview())
			h.log.Append(context.Background(), tenant, execARN, pending)
			b.Hash("#/confirmaciones")
			b.Run("review", 15*time.Second, chromedp.WaitVisible(chromedp.CSS(`#confirmations-list button`)))
			b.Shot("confirmations")
			b.Run("open", 5*time.Second, chromedp.Click(chromedp.CSS(`#confirmations-list button`)))
			b.WaitFor("modal", `document.getElementById('cf-candidate').textContent === 'c-005 · Carla Medina'`, 10*time.Second)
			b.Shot("modal")
			b.Hash("#/informe/big/c-005")
			b.WaitFor("report", `!document.getElementById('report-decision').hidden`, 10*time.Second)
			b.Shot("report-with-decision")
			b.Hash("#/conversacion/web-1")
			b.WaitFor("chat", `document.getElementById('chat-empty') !== null`, 10*time.Second)
			spanish(t, b, "empty conversation")
			b.Shot("conversation-empty")
			h.api.mu.Lock()
			h.api.runs, h.api.pending = nil, nil
			h.api.mu.Unlock()
			b.Hash("#/")
			b.WaitFor("empty", `document.getElementById('runs-empty') !== null`, 10*time.Second)
			b.Shot("runs-empty")
			if wide := browsertest.Eval[bool](b, `document.documentElement.scrollWidth > window.innerWidth + 1`); wide {
				t.Errorf("at %s width the page scrolls sideways", size.name)
			}
		})
	}
}
