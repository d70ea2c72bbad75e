// Package chatapi is the HTTP API's delegation chat (seed 004 §5–9):
// /api/chat….
package chatapi

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/veredicto/veredicto/internal/httpapi"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/chat"
)

// Routes serves the delegation chat (seed 004 §5–9) for the authenticated
// tenant:
//
//	POST /api/chat           {"chat_id", "message"} → the turn runs; its
//	                         output is on GET /api/events?chat=<chat_id>
//	GET  /api/chat/metrics   delegation counters per agent (Metrics)
//	POST /api/chat/feedback  {"chat_id", "turn", "answer", "agent"} → the
//	                         answer to the turn's question, stored as a
//	                         labelled example (chat.Feedback)
//	GET  /api/chat/agents    the specialists a request may go to
//
// With Enqueue (AWS) a POST claims the turn, queues it and answers 202
// {chat_id, turn, events}. With Async (the local server) a POST answers 202 {chat_id, turn,
// events} at once and the turn runs in the background, bounded by
// MaxRunning turns at once (429 beyond) and TurnTimeout each. Without it
// (a Lambda behind API httpapi.Gateway) the POST answers 200 with the TurnResult
// when the turn ends.
type Routes struct {
	Service *chat.Service
	Async   bool
	// Enqueue, when set, hands each claimed turn to a worker (the chat
	// turns queue on AWS) and the POST answers 202 at once.
	Enqueue chat.Enqueuer
	// MaxRunning bounds background turns (default 16); TurnTimeout bounds
	// one turn (default 15 minutes, confirmations included).
	MaxRunning  int
	TurnTimeout time.Duration
	Logger      *slog.Logger

	once    sync.Once
	slots   chan struct{}
	running sync.WaitGroup
	stop    context.Context
	cancel  context.CancelFunc
}

// maxChatBody bounds a POST body.
const maxChatBody = chat.MaxMessageBytes + 1024

func (h *Routes) logger() *slog.Logger {
	if h.Logger != nil {
		return h.Logger
	}
	return slog.Default()
}

// Wait blocks until the background turns have ended.
func (h *Routes) Wait() { h.running.Wait() }

// Close stops the background turns (a turn waiting for a confirmation
// ends as failed; its finish is still written) and waits for them.
func (h *Routes) Close() {
	h.init()
	h.cancel()
	h.running.Wait()
}

func (h *Routes) init() {
	h.once.Do(func() {
		n := h.MaxRunning
		if n <= 0 {
			n = 16
		}
		h.slots = make(chan struct{}, n)
		h.stop, h.cancel = context.WithCancel(context.Background())
	})
}

func (h *Routes) Register(m *httpapi.Mux) {
	m.Handle("POST /api/chat", httpapi.RequireTenant(h.post))
	m.Handle("GET /api/chat/metrics", httpapi.RequireTenant(h.metrics))
	m.Handle("POST /api/chat/feedback", httpapi.RequireTenant(h.feedback))
	m.Handle("GET /api/chat/agents", httpapi.RequireTenant(h.agents))
}

// feedback stores the person's answer to a turn's question («¿Faltó
// delegar?», «¿Era esto lo que pedías?»): 201 with the labelled example's
// question, answer and label (not the message), 404 for a turn that has
// not finished, 409 for a second answer.
func (h *Routes) feedback(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	var req chat.FeedbackRequest
	if err := httpapi.DecodeJSON(w, r, &req, `{"chat_id": "…", "turn": 1, "answer": "yes|no", "agent": "…"}`, 4096); err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	f, err := h.Service.Feedback(r.Context(), p.Tenant, p.Name, req)
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusCreated, map[string]any{"chat_id": f.ChatID, "turn": f.Turn, "question": f.Question,
		"answer": f.Answer, "label": f.Label})
}

// chatAgent is one specialist as the clients list it.
type chatAgent struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

func (h *Routes) agents(w http.ResponseWriter, _ *http.Request, _ auth.Principal) {
	out := []chatAgent{}
	for _, a := range h.Service.Registry.Specialists() {
		out = append(out, chatAgent{ID: a.ID, Name: a.Name})
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"agents": out})
}

func (h *Routes) metrics(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	m, err := h.Service.Metrics(r.Context(), p.Tenant)
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, m)
}

func (h *Routes) post(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	tenant := p.Tenant
	var req chat.Request
	err := httpapi.DecodeJSON(w, r, &req, `{"chat_id": "…", "message": "…"}`, maxChatBody)
	if err == nil {
		err = chat.Check(req.ChatID, req.Message)
	}
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	h.init()
	timeout := h.TurnTimeout
	if timeout <= 0 {
		timeout = 15 * time.Minute
	}
	if h.Enqueue != nil {
		n, err := h.Service.Claim(r.Context(), tenant, req.ChatID)
		if err == nil {
			err = h.Enqueue.Enqueue(r.Context(), chat.TurnJob{Tenant: tenant, ChatID: req.ChatID, Turn: n, Message: req.Message, Principal: p.Name, Via: p.Via})
		}
		if err != nil {
			httpapi.WriteError(w, r, err)
			return
		}
		httpapi.WriteJSON(w, http.StatusAccepted, chat.Accepted{ChatID: req.ChatID, Turn: n, Events: "/api/events?chat=" + req.ChatID})
		return
	}
	if !h.Async {
		n, err := h.Service.Claim(r.Context(), tenant, req.ChatID)
		if err != nil {
			httpapi.WriteError(w, r, err)
			return
		}
		res, err := h.Service.Turn(r.Context(), tenant, req.ChatID, n, req.Message)
		if err != nil {
			httpapi.WriteError(w, r, err)
			return
		}
		httpapi.WriteJSON(w, http.StatusOK, res)
		return
	}
	if h.stop.Err() != nil {
		httpapi.WriteError(w, r, httpapi.Errorf(httpapi.NameServiceUnavailable, "the server is shutting down"))
		return
	}
	select {
	case h.slots <- struct{}{}:
	default:
		httpapi.WriteError(w, r, &httpapi.Error{Name: httpapi.NameTooManyRequests, Message: "too many chat turns running; retry shortly", Header: http.Header{"Retry-After": {"5"}}})
		return
	}
	n, err := h.Service.Claim(r.Context(), tenant, req.ChatID)
	if err != nil {
		<-h.slots
		httpapi.WriteError(w, r, err)
		return
	}
	h.running.Add(1)
	go func() {
		defer h.running.Done()
		defer func() { <-h.slots }()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), timeout)
		defer cancel()
		stop := context.AfterFunc(h.stop, cancel)
		defer stop()
		if _, err := h.Service.Turn(ctx, tenant, req.ChatID, n, req.Message); err != nil {
			h.logger().ErrorContext(ctx, "chat turn", "tenant", tenant, "chat_id", req.ChatID, "turn", n, "error_type", veredicto.ErrorName(err))
		}
	}()
	httpapi.WriteJSON(w, http.StatusAccepted, chat.Accepted{ChatID: req.ChatID, Turn: n, Events: "/api/events?chat=" + req.ChatID})
}
