package console_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/veredicto/veredicto/internal/console/browsertest"
	"github.com/veredicto/veredicto/internal/eventlog"
	"github.com/veredicto/veredicto/internal/stream"
)

// TestBrowserDamage: a damaged confirmation is listed with a sentence
// saying it cannot be decided here, never with a button to decide it; a
// damaged event on the run page's stream is named in the notice and the
// page goes on with the events after it.
func TestBrowserDamage(t *testing.T) {
	h := startHarness(t)
	b := browsertest.New(t, 1280, 900)
	now := time.Now().UTC().Format(time.RFC3339)
	h.api.mu.Lock()
	h.api.pending = []map[string]any{{"id": "cf_1", "execution": "", "toolName": "", "category": "", "sensitivity": "",
		"undoable": false, "preview": nil, "created_at": now, "expires_at": "0001-01-01T00:00:00Z", "status": "damaged",
		"damage": "not valid JSON (syntax error at byte 9)"}}
	h.api.mu.Unlock()
	signIn(t, b, h)

	b.Hash("#/confirmaciones")
	b.WaitFor("damaged row", `!!document.querySelector('#confirmations-list tr[data-id="cf_1"]')`, 15*time.Second)
	if got := browsertest.Eval[string](b, `document.querySelector('#confirmations-list tr[data-id="cf_1"]').textContent`); !strings.Contains(got, "Registro dañado: no se puede decidir desde aquí; avise al operador.") {
		t.Errorf("damaged row %q, want the Spanish sentence", got)
	}
	if n := browsertest.Eval[float64](b, `document.querySelectorAll('#confirmations-list button').length`); n != 0 {
		t.Errorf("%v decision buttons for a damaged confirmation, want none", n)
	}
	if got := browsertest.Eval[string](b, `document.getElementById('badge').textContent`); got != "0" {
		t.Errorf("badge %q: a damaged confirmation is not one to decide", got)
	}
	b.Shot("damaged-confirmation")

	// The stream: an event, a damaged one, then the end.
	h.rec.Record(context.Background(), tenant, execARN, stream.Event{ID: 1, Type: "ExecutionStarted"})
	h.log.Append(context.Background(), tenant, execARN, eventlog.Damaged(2))
	b.Hash("#/ejecucion/search/big/" + execARN)
	h.rec.Record(context.Background(), tenant, execARN, stream.Event{ID: 2, Type: "ExecutionSucceeded", Output: map[string]any{}})
	b.Run("stream", 30*time.Second, chromedp.WaitVisible(chromedp.ID("run-status")))
	b.WaitFor("the run ends after the damaged event", `document.getElementById('run-status').textContent === 'Terminada'`, 30*time.Second)
	if notice := browsertest.Eval[string](b, `document.getElementById('notice').textContent`); !strings.Contains(notice, "n.º 2") || !strings.Contains(notice, "dañado") {
		t.Errorf("notice %q, want it to name damaged event 2", notice)
	}
	b.Shot("damaged-event")
}
