package chatapi_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/chat"
	"github.com/veredicto/veredicto/internal/confirm"
	memoryconfirm "github.com/veredicto/veredicto/internal/confirm/memory"
	fileeventlog "github.com/veredicto/veredicto/internal/eventlog/file"
	"github.com/veredicto/veredicto/internal/httpapi"
	"github.com/veredicto/veredicto/internal/httpapi/chatapi"
	filestore "github.com/veredicto/veredicto/internal/store/file"
	"github.com/veredicto/veredicto/prompts"
)

// noTool stands for every tool: these tests never delegate.
type noTool struct{}

func (noTool) Args() any { return &struct{}{} }
func (noTool) Run(context.Context, chat.Call) (chat.Result, error) {
	return chat.Result{}, nil
}

// blockingModel answers only when its turn's context ends.
type blockingModel struct{ started chan struct{} }

func (m blockingModel) Next(ctx context.Context, _ chat.Prompt) (chat.Reply, error) {
	m.started <- struct{}{}
	<-ctx.Done()
	return chat.Reply{}, ctx.Err()
}

type queued struct{ jobs []chat.TurnJob }

func (q *queued) Enqueue(_ context.Context, j chat.TurnJob) error {
	q.jobs = append(q.jobs, j)
	return nil
}

func chatService(t *testing.T, model chat.Model) (*chat.Service, *fileeventlog.Log) {
	t.Helper()
	reg, err := chat.LoadRegistry(prompts.AgentsFile, prompts.AgentsYAML, chat.KnownActions())
	if err != nil {
		t.Fatal(err)
	}
	events := fileeventlog.New(t.TempDir())
	cs := &confirm.Service{Store: memoryconfirm.New(), Events: events}
	tools := map[string]chat.Tool{}
	for a := range chat.KnownActions() {
		tools[a] = noTool{}
	}
	svc := &chat.Service{Registry: reg, Model: model, Store: filestore.NewMemory(), Events: events,
		Confirmations: cs, ConfirmationStore: cs.Store, Tools: tools, Logger: slog.New(slog.DiscardHandler)}
	return svc, events
}

func postChat(h http.Handler, tenant, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest("POST", "/api/chat", strings.NewReader(body))
	if tenant != "" {
		r = r.WithContext(auth.WithPrincipal(r.Context(), auth.Principal{Name: "ana", Tenant: tenant, Via: auth.ViaJWT}))
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// TestChatQueuesTheTurn: with a queue (AWS) the POST claims the turn,
// queues it with who sent it (the worker's audit record names them) and
// answers 202 with where its events are; bad requests are
// refused by name before anything is claimed.
func TestChatQueuesTheTurn(t *testing.T) {
	svc, _ := chatService(t, nil)
	q := &queued{}
	h := httpapi.New(nil, &chatapi.Routes{Service: svc, Enqueue: q})
	w := postChat(h, "acme", `{"chat_id":"q1","message":"hola"}`)
	var acc chat.Accepted
	if w.Code != http.StatusAccepted || json.Unmarshal(w.Body.Bytes(), &acc) != nil || acc.Turn != 1 || acc.Events != "/api/events?chat=q1" {
		t.Fatalf("POST: %d %s", w.Code, w.Body)
	}
	if len(q.jobs) != 1 || q.jobs[0] != (chat.TurnJob{Tenant: "acme", ChatID: "q1", Turn: 1, Message: "hola", Principal: "ana", Via: auth.ViaJWT}) {
		t.Fatalf("queued %+v", q.jobs)
	}
	for _, tc := range []struct {
		tenant, body string
		status       int
		want         string
	}{
		{"", `{"chat_id":"q1","message":"hola"}`, http.StatusUnauthorized, "no credentials"},
		{"acme", `{"chat_id":"q1"}`, http.StatusBadRequest, "message"},
		{"acme", `{"chat_id":"q1","message":"hola","extra":1}`, http.StatusBadRequest, "extra"},
		{"acme", `{"chat_id":7,"message":"hola"}`, http.StatusBadRequest, "chat_id"},
	} {
		if w := postChat(h, tc.tenant, tc.body); w.Code != tc.status || !strings.Contains(w.Body.String(), tc.want) {
			t.Errorf("%s: %d %s, want %d naming %q", tc.body, w.Code, w.Body, tc.status, tc.want)
		}
	}
	if len(q.jobs) != 1 {
		t.Errorf("refused requests queued turns: %+v", q.jobs)
	}
}

// TestCloseStopsRunningTurns: shutting the local server down ends the
// turns running in the background (the turn's finish says so, and the
// turn is stored), and a POST after that is a 503.
func TestCloseStopsRunningTurns(t *testing.T) {
	started := make(chan struct{}, 1)
	svc, events := chatService(t, blockingModel{started})
	c := &chatapi.Routes{Service: svc, Async: true, Logger: slog.New(slog.DiscardHandler)}
	h := httpapi.New(nil, c)
	if w := postChat(h, "acme", `{"chat_id":"w","message":"hola"}`); w.Code != http.StatusAccepted {
		t.Fatalf("POST: %d %s", w.Code, w.Body)
	}
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the turn never reached the model")
	}
	c.Close()
	evs, err := events.Read(context.Background(), "acme", chat.StreamName("w"), 0, 100)
	if err != nil || len(evs) == 0 {
		t.Fatalf("events: %v %v", evs, err)
	}
	var last map[string]any
	json.Unmarshal(evs[len(evs)-1].Data, &last)
	if last["type"] != "finish" || last["finishReason"] != "error" {
		t.Errorf("last event %v, want finish with finishReason error", last)
	}
	if hist, _ := svc.History(context.Background(), "acme", "w", 5); len(hist) != 1 || hist[0].Error == "" {
		t.Errorf("history = %+v, want the failed turn stored", hist)
	}
	if w := postChat(h, "acme", `{"chat_id":"w","message":"hola"}`); w.Code != http.StatusServiceUnavailable {
		t.Errorf("POST after Close: %d %s", w.Code, w.Body)
	}
}

func asTenant(r *http.Request, tenant, name string) *http.Request {
	return r.WithContext(auth.WithPrincipal(r.Context(), auth.Principal{Name: name, Tenant: tenant, Via: auth.ViaJWT}))
}

// TestChatFeedbackRoutes: a synchronous turn, then its answer through
// POST /api/chat/feedback (the principal, not the body, says who answers),
// counted in GET /api/chat/metrics; another tenant cannot answer it; the
// agents the clients offer come from GET /api/chat/agents.
func TestChatFeedbackRoutes(t *testing.T) {
	svc, _ := chatService(t, nil)
	h := httpapi.New(nil, &chatapi.Routes{Service: svc})
	if w := postChat(h, "acme", `{"chat_id":"fb","message":"Hola, ¿qué tal?"}`); w.Code != http.StatusOK {
		t.Fatalf("turn: %d %s", w.Code, w.Body)
	}
	answer := func(tenant, body string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, asTenant(httptest.NewRequest("POST", "/api/chat/feedback", strings.NewReader(body)), tenant, "ana"))
		return w
	}
	if w := answer("zeta", `{"chat_id":"fb","turn":1,"answer":"yes","agent":"debate"}`); w.Code != http.StatusNotFound {
		t.Errorf("another tenant's answer: %d %s, want 404", w.Code, w.Body)
	}
	w := answer("acme", `{"chat_id":"fb","turn":1,"answer":"yes","agent":"debate"}`)
	if w.Code != http.StatusCreated || !strings.Contains(w.Body.String(), `"label": "debate"`) || !strings.Contains(w.Body.String(), `"question": "missed"`) ||
		strings.Contains(w.Body.String(), "Hola") {
		t.Errorf("answer: %d %s; want 201 with the label and not the message", w.Code, w.Body)
	}
	if w := answer("acme", `{"chat_id":"fb","turn":1,"answer":"no"}`); w.Code != http.StatusConflict {
		t.Errorf("second answer: %d, want 409", w.Code)
	}
	if w := answer("acme", `{"chat_id":"fb","turn":1,"answer":"no","by":"mallory"}`); w.Code != http.StatusBadRequest {
		t.Errorf("a body naming who answers: %d, want 400", w.Code)
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, asTenant(httptest.NewRequest("GET", "/api/chat/metrics", nil), "acme", "ana"))
	var m chat.Metrics
	if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil || m.Feedback.MissedYes != 1 || m.Agents["debate"].FeedbackMissed != 1 {
		t.Errorf("metrics = %s (%v), want one «¿Faltó delegar?» yes for debate", w.Body, err)
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, asTenant(httptest.NewRequest("GET", "/api/chat/agents", nil), "acme", "ana"))
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"id": "search-analyst"`) || strings.Contains(w.Body.String(), `"id": "veredicto"`) {
		t.Errorf("agents: %d %s", w.Code, w.Body)
	}
}
