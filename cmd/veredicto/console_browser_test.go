package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/chromedp/chromedp"

	"github.com/veredicto/veredicto/internal/console/browsertest"
	"github.com/veredicto/veredicto/internal/labels/labelstest"
)

// FirstRenderBudget is the most the console's first render may transfer
// (HTML, CSS, JavaScript, config and the first API answer).
const FirstRenderBudget = 100 << 10

// TestBrowserConsole drives the web console in headless Chromium against
// the whole `serve` with the example search uploaded (the offline
// analyst stands in for the LLM), as a consultant would: sign in with a
// pasted token, start the example search asking for the senior review,
// watch the candidates' stages appear live on the run page, open a
// report and a cited source, approve the escalated candidate (c-005) in
// the confirmation modal, and see its decision change and the ranking
// appear. Screenshots of every step are saved (browsertest.ScreenshotDir).
func TestBrowserConsole(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	live := startLive(ctx, t)
	tok := live.token(t, "acme", "consultora-ana")
	b := browsertest.New(t, 1280, 900)

	// Sign-in page; the first render's transfer is within budget.
	b.Run("open", 30*time.Second, chromedp.Navigate(live.base+"/"), chromedp.WaitVisible(chromedp.ID("token")))
	b.Shot("signin")
	b.Run("sign in", 30*time.Second,
		chromedp.SendKeys(chromedp.ID("token"), tok),
		chromedp.Click(chromedp.ID("signin-submit")),
		chromedp.WaitVisible(chromedp.ID("runs-table")))
	b.WaitFor("runs listed", `document.getElementById('runs-table') !== null && /ejecuciones/.test(document.querySelector('main').textContent)`, 10*time.Second)
	transferred := browsertest.Eval[float64](b, `performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource')).reduce((n, e) => n + e.transferSize, 0)`)
	t.Logf("first render transferred %.0f bytes (budget %d)", transferred, FirstRenderBudget)
	if transferred <= 0 || transferred > FirstRenderBudget {
		t.Errorf("first render transferred %.0f bytes, want 0 < n ≤ %d", transferred, FirstRenderBudget)
	}
	b.Shot("runs-empty")

	// Start the example search, asking for the senior review.
	b.Run("start search", 30*time.Second,
		chromedp.SendKeys(chromedp.ID("new-search-id"), "demo-cfo-andina"),
		chromedp.Click(chromedp.CSS(`#start-form button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID("candidates")))
	// Stages appear live: rows with stage chips, then decisions.
	b.WaitFor("stages appear", `document.querySelectorAll('#candidates-body tr .chip').length > 0`, 30*time.Second)
	b.Shot("run-live")
	b.WaitFor("six candidates", `document.querySelectorAll('#candidates-body tr').length === 6`, 60*time.Second)
	// The escalated candidate's senior review opens the modal.
	b.WaitFor("modal", `document.getElementById('confirm-dialog').open`, 60*time.Second)
	if tool := browsertest.Eval[string](b, `document.getElementById('cf-tool').textContent`); tool != "Revisión del consultor senior" {
		t.Errorf("modal tool %q, want the senior review in words", tool)
	}
	b.WaitFor("the candidate named", `document.getElementById('cf-candidate').textContent === 'c-005 · Lucía Herrera'`, 10*time.Second)
	spanishPage(t, b, "confirmation modal")
	b.Shot("confirmation-modal")
	if got := browsertest.Eval[string](b, `document.getElementById('badge').textContent`); got != "1" {
		t.Errorf("badge %q, want 1 pending confirmation", got)
	}
	for _, id := range []string{"cf-category", "cf-sensitivity", "cf-undoable", "cf-preview"} {
		if browsertest.Eval[string](b, `document.getElementById('`+id+`').textContent.trim()`) == "" {
			t.Errorf("modal field %s is empty", id)
		}
	}
	// Decide later; stages meanwhile show gate outcomes and decisions.
	b.Run("decide later", 10*time.Second, chromedp.Click(chromedp.ID("cf-later")))
	b.WaitFor("gate outcomes", `document.querySelectorAll('#candidates-body .chip.gate-out').length > 0 && document.querySelectorAll('#candidates-body .chip.gate-in').length > 0`, 30*time.Second)
	b.WaitFor("c-005 escalated", `(document.querySelector('#candidates-body tr[data-item="4"]') || {}).getAttribute && document.querySelector('#candidates-body tr[data-item="4"]').getAttribute('data-decision') === 'ESCALADO_CONSULTOR_SENIOR'`, 30*time.Second)
	spanishPage(t, b, "run page")
	b.Shot("run-waiting-for-review")

	// Open a decided candidate's report, then a cited source.
	b.WaitFor("report link", `document.querySelector('#candidates-body tr[data-candidate="c-001"] td.decision a') !== null`, 30*time.Second)
	b.Run("open report", 30*time.Second,
		chromedp.Click(chromedp.CSS(`#candidates-body tr[data-candidate="c-001"] td.decision a`)),
		chromedp.WaitVisible(chromedp.CSS(`#document h1`)))
	if h := browsertest.Eval[string](b, `document.querySelector('#document h2').textContent`); h == "" {
		t.Error("the report has no decision heading")
	}
	b.WaitFor("citations", `document.querySelectorAll('#document a.cite').length > 3`, 10*time.Second)
	spanishPage(t, b, "report")
	b.Shot("report")
	b.Run("open source", 30*time.Second, chromedp.Click(chromedp.CSS(`#document a.cite`)), chromedp.WaitVisible(chromedp.ID("source")))
	b.WaitFor("source text", `document.getElementById('source').textContent.length > 100`, 10*time.Second)
	b.Shot("source")

	// Back on the run page (its stream replays), approve in the modal.
	b.Hash("#/")
	b.Run("back to runs", 30*time.Second, chromedp.WaitVisible(chromedp.CSS(`#runs-body tr[data-id="demo-cfo-andina"] a`)))
	b.Shot("runs-running")
	b.Run("open run", 30*time.Second, chromedp.Click(chromedp.CSS(`#runs-body tr[data-id="demo-cfo-andina"] a`)))
	b.WaitFor("modal again", `document.getElementById('confirm-dialog').open`, 30*time.Second)
	b.Run("approve", 30*time.Second,
		chromedp.SendKeys(chromedp.ID("cf-comment"), "referencias verificadas por teléfono"),
		chromedp.Click(chromedp.ID("cf-approve")))
	b.WaitFor("modal closed", `!document.getElementById('confirm-dialog').open`, 10*time.Second)
	b.WaitFor("decision changed", `document.querySelector('#candidates-body tr[data-candidate="c-005"]') !== null && document.querySelector('#candidates-body tr[data-candidate="c-005"]').getAttribute('data-decision') === 'APROBADO_POR_CONSULTOR'`, 60*time.Second)
	b.WaitFor("finished", `document.getElementById('run-status').textContent === 'Terminada' && document.querySelectorAll('#ranking tbody tr').length === 6`, 60*time.Second)
	b.WaitFor("badge cleared", `document.getElementById('badge').textContent === '0'`, 15*time.Second)
	spanishPage(t, b, "finished run")
	b.Shot("approved-and-ranked")

	// The runs page shows the finished search with its decisions.
	b.Hash("#/")
	b.WaitFor("runs finished", `(document.querySelector('#runs-body tr[data-id="demo-cfo-andina"]') || {}).dataset && document.querySelector('#runs-body tr[data-id="demo-cfo-andina"]').dataset.status === 'SUCCEEDED'`, 15*time.Second)
	b.Run("filter", 10*time.Second, chromedp.SetValue(chromedp.ID("status-filter"), "FAILED"))
	browsertest.Eval[bool](b, `document.getElementById('status-filter').dispatchEvent(new Event('change'))`)
	if n := browsertest.Eval[int](b, `document.querySelectorAll('#runs-body tr').length`); n != 0 {
		t.Errorf("filter FAILED shows %d runs, want 0", n)
	}
	b.Run("filter all", 10*time.Second, chromedp.SetValue(chromedp.ID("status-filter"), ""))
	browsertest.Eval[bool](b, `document.getElementById('status-filter').dispatchEvent(new Event('change'))`)
	spanishPage(t, b, "runs")
	b.Shot("runs-finished")

	// Another workflow's run shows up in the list and opens generically.
	input, err := os.ReadFile(filepath.Join("..", "..", "examples", "states", "gates_demo.input.json"))
	if err != nil {
		t.Fatal(err)
	}
	var in map[string]any
	json.Unmarshal(input, &in)
	in["tenant"] = "acme"
	body, _ := json.Marshal(in)
	client := tenantSFN(t, live.base, live.data, "acme")
	if _, err := client.StartExecution(ctx, &sfn.StartExecutionInput{Name: aws.String("gates-1"), Input: aws.String(string(body)),
		StateMachineArn: aws.String("arn:aws:states:us-east-1:000000000000:stateMachine:GatesDemoStateMachine")}); err != nil {
		t.Fatal(err)
	}
	b.Run("reload runs", 30*time.Second, chromedp.Reload())
	b.WaitFor("other workflow listed", `document.querySelector('#runs-body tr[data-id="gates-1"] a') !== null`, 15*time.Second)
	b.Run("open other run", 30*time.Second, chromedp.Click(chromedp.CSS(`#runs-body tr[data-id="gates-1"] a`)))
	b.WaitFor("other run steps", `document.getElementById('run-status').textContent === 'Terminada' && document.querySelectorAll('#timeline li').length > 2 && document.querySelectorAll('#candidates-body tr .chip.done').length > 0`, 30*time.Second)
	spanishPage(t, b, "another workflow's run", "gates-1")
	b.Shot("other-workflow-run")
}

// spanishPage fails t when the page shows a code or a word that is not
// Spanish (labelstest).
func spanishPage(t *testing.T, b *browsertest.Browser, page string, allow ...string) {
	t.Helper()
	labelstest.Check(t, "console "+page, browsertest.Eval[string](b, `document.body.innerText`), append(allow, "demo-cfo-andina")...)
}
