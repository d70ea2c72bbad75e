package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/poll"
)

// TestServeDebate: a debate started over HTTP runs DebateStateMachine on
// the local control plane (offline agents, the tenant's search folder as
// knowledge) and its log and report are read back; another tenant sees
// nothing.
func TestServeDebate(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l := startLive(ctx, t)
	acme := l.token(t, "acme", "ana")
	body := `{"debate_id": "d-c-005", "optional_council": false, "human_timeout_seconds": 1,
	  "knowledge": ["searches/acme/demo-cfo-andina/"],
	  "question": {"question": "¿Avanzamos con la oferta a c-005, escalado por contradicciones?",
	    "options": ["avanzar con la oferta", "pedir referencias"],
	    "participants": [{"id": "cfo", "brief": "Costo y banda salarial"}, {"id": "chro", "brief": "Referencias y cultura"}]}}`
	if code, resp := l.call(ctx, t, http.MethodPost, "/debates", acme, body); code != http.StatusAccepted {
		t.Fatalf("POST /debates: %d %s", code, resp)
	}
	// Starting the same debate again is idempotent; another debate under
	// the same id is a conflict.
	if code, _ := l.call(ctx, t, http.MethodPost, "/debates", acme, body); code != http.StatusAccepted {
		t.Errorf("a second POST of the same debate: %d, want 202", code)
	}
	if code, _ := l.call(ctx, t, http.MethodPost, "/debates", acme, strings.Replace(body, "c-005, escalado", "c-006, escalado", 1)); code != http.StatusConflict {
		t.Errorf("another debate under the same id: %d, want 409", code)
	}
	if code, resp := l.call(ctx, t, http.MethodPost, "/debates", acme, `{"debate_id": "x", "question": {"question": "¿?", "options": ["a"]}}`); code != http.StatusBadRequest || !strings.Contains(resp, "options") {
		t.Errorf("a bad question: %d %s, want 400 naming options", code, resp)
	}
	for _, prefix := range []string{"../../auth/", "searches/globex/demo-cfo-andina/"} {
		outside := strings.Replace(body, `"searches/acme/demo-cfo-andina/"`, `"`+prefix+`"`, 1)
		if code, resp := l.call(ctx, t, http.MethodPost, "/debates", acme, outside); code != http.StatusBadRequest || !strings.Contains(resp, prefix) || !strings.Contains(resp, "knowledge") {
			t.Errorf("knowledge %s: %d %s, want 400 naming the field and the prefix", prefix, code, resp)
		}
	}
	var view struct {
		Status string `json:"status"`
		Log    *struct {
			DebateLog struct {
				SessionID string `json:"session_id"`
				Resultado struct {
					EscaladoPara string `json:"escalado_para"`
				} `json:"resultado"`
			} `json:"debate_log"`
		} `json:"log"`
	}
	if !poll.Within(time.Minute, func() bool {
		code, resp := l.call(ctx, t, http.MethodGet, "/debates/d-c-005", acme, "")
		if code != http.StatusOK {
			t.Fatalf("GET /debates/d-c-005: %d %s", code, resp)
		}
		if err := json.Unmarshal([]byte(resp), &view); err != nil {
			t.Fatal(err)
		}
		if view.Status == "FAILED" {
			t.Fatalf("the debate failed: %s", resp)
		}
		return view.Status == "SUCCEEDED"
	}) {
		t.Fatalf("the debate did not finish: %+v", view)
	}
	if view.Log == nil || view.Log.DebateLog.SessionID != "d-c-005" || view.Log.DebateLog.Resultado.EscaladoPara == "" {
		t.Fatalf("log %+v", view.Log)
	}
	code, md := l.call(ctx, t, http.MethodGet, "/debates/d-c-005/report", acme, "")
	if code != http.StatusOK || !strings.Contains(md, "## Decisión") {
		t.Errorf("GET report: %d %.200s", code, md)
	}
	globex := l.token(t, "globex", "bob")
	c1, missing := l.call(ctx, t, http.MethodGet, "/debates/nope", globex, "")
	c2, other := l.call(ctx, t, http.MethodGet, "/debates/d-c-005", globex, "")
	if c1 != http.StatusNotFound || c2 != http.StatusNotFound || strings.Replace(other, "d-c-005", "nope", -1) != missing {
		t.Errorf("another tenant: %d %s; a missing debate: %d %s — want the same 404", c2, other, c1, missing)
	}
	if c, _ := l.call(ctx, t, http.MethodGet, "/debates/d-c-005/report", globex, ""); c != http.StatusNotFound {
		t.Errorf("another tenant's report: %d, want 404", c)
	}
}
