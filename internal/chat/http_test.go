package chat

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/veredicto/veredicto/internal/auth"
)

type fakeSQS struct{ bodies []string }

func (f *fakeSQS) SendMessage(_ context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	f.bodies = append(f.bodies, *in.MessageBody)
	return &sqs.SendMessageOutput{}, nil
}

// TestQueuedTurn: with a queue (AWS) the POST claims the turn, queues it
// and answers 202; the worker runs it from the message, once.
func TestQueuedTurn(t *testing.T) {
	r := newRig(t, nil, Options{})
	q := &fakeSQS{}
	h := &Handler{Service: r.svc, Enqueue: SQSEnqueuer{Client: q, QueueURL: "https://sqs/q"}}
	post := func(tenant, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", "/api/chat", strings.NewReader(body))
		if tenant != "" {
			req = req.WithContext(auth.WithClaims(req.Context(), auth.Claims{Tenant: tenant}))
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	rec := post("acme", `{"chat_id":"q1","message":"Compara a c-001 con c-006 en la búsqueda cfo-2026"}`)
	var acc Accepted
	if rec.Code != http.StatusAccepted || json.Unmarshal(rec.Body.Bytes(), &acc) != nil || acc.Turn != 1 || acc.Events != "/api/events?chat=q1" {
		t.Fatalf("POST: %d %s", rec.Code, rec.Body)
	}
	if len(q.bodies) != 1 {
		t.Fatalf("%d messages queued", len(q.bodies))
	}
	msg := events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m1", Body: q.bodies[0]}}}
	for i := 0; i < 2; i++ { // a redelivery does not run the turn again
		resp, err := r.svc.HandleSQS(context.Background(), msg)
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("HandleSQS: %+v %v", resp, err)
		}
	}
	if got := strings.Count(types(r.eventsOf(t, "q1")), "finish"); got != 1 {
		t.Errorf("%d finishes on the stream, want 1", got)
	}
	bad := events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m2", Body: `{"tenant":"acme","chat_id":"a/b","turn":1,"message":"x"}`}}}
	if resp, _ := r.svc.HandleSQS(context.Background(), bad); len(resp.BatchItemFailures) != 0 {
		t.Error("a malformed message is retried")
	}
	for _, tc := range []struct {
		tenant, body string
		status       int
	}{
		{"", `{"chat_id":"q1","message":"hola"}`, http.StatusUnauthorized},
		{"acme", `{"chat_id":"q1"}`, http.StatusBadRequest},
		{"acme", `{"chat_id":"q1","message":"hola","extra":1}`, http.StatusBadRequest},
		{"acme", `{"chat_id":7,"message":"hola"}`, http.StatusBadRequest},
	} {
		if rec := post(tc.tenant, tc.body); rec.Code != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.body, rec.Code, rec.Body, tc.status)
		}
	}
}

// TestCloseStopsWaitingTurns: shutting the local server down ends a turn
// that waits for a confirmation: nothing is sent, and the turn is still
// stored and finished.
func TestCloseStopsWaitingTurns(t *testing.T) {
	r := newRig(t, nil, Options{})
	h := &Handler{Service: r.svc, Async: true}
	req := httptest.NewRequest("POST", "/api/chat", strings.NewReader(`{"chat_id":"w","message":"Envía el informe de c-001 de la búsqueda cfo-2026 a cliente@example.com"}`))
	req = req.WithContext(auth.WithClaims(req.Context(), auth.Claims{Tenant: "acme"}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusAccepted {
		t.Fatalf("POST: %d %s", rec.Code, rec.Body)
	}
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(types(r.eventsOf(t, "w")), "pending-confirmation"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no pending confirmation: %s", types(r.eventsOf(t, "w")))
		}
	}
	h.Close()
	evs := r.eventsOf(t, "w")
	if last := evs[len(evs)-1]; last["type"] != "finish" || last["finishReason"] != "error" {
		t.Errorf("last event %v, want finish with finishReason error", last)
	}
	if len(r.outbox.sent) != 0 {
		t.Error("sent without a decision")
	}
	if hist, _ := r.svc.History(context.Background(), "acme", "w", 5); len(hist) != 1 || hist[0].Error == "" {
		t.Errorf("history = %+v, want the failed turn stored", hist)
	}
	rec = httptest.NewRecorder()
	req = httptest.NewRequest("POST", "/api/chat", strings.NewReader(`{"chat_id":"w","message":"hola"}`))
	h.ServeHTTP(rec, req.WithContext(auth.WithClaims(req.Context(), auth.Claims{Tenant: "acme"})))
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("POST after Close: %d", rec.Code)
	}
}
