package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/auth"
)

// Handler serves the chat for the tenant the auth middleware verified:
//
//	POST /api/chat           {"chat_id", "message"} → the turn runs; its
//	                         output is on GET /api/events?chat=<chat_id>
//	GET  /api/chat/metrics   delegation counters per agent (Metrics)
//
// With Enqueue (AWS) a POST claims the turn, queues it and answers 202
// {chat_id, turn, events}. With Async (the local server) a POST answers 202 {chat_id, turn,
// events} at once and the turn runs in the background, bounded by
// MaxRunning turns at once (429 beyond) and TurnTimeout each. Without it
// (a Lambda behind API Gateway) the POST answers 200 with the TurnResult
// when the turn ends.
type Handler struct {
	Service *Service
	Async   bool
	// Enqueue, when set, hands each claimed turn to a worker (the chat
	// turns queue on AWS) and the POST answers 202 at once.
	Enqueue Enqueuer
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
const maxChatBody = MaxMessageBytes + 1024

func (h *Handler) logger() *slog.Logger {
	if h.Logger != nil {
		return h.Logger
	}
	return slog.Default()
}

// Wait blocks until the background turns have ended.
func (h *Handler) Wait() { h.running.Wait() }

// Close stops the background turns (a turn waiting for a confirmation
// ends as failed; its finish is still written) and waits for them.
func (h *Handler) Close() {
	h.init()
	h.cancel()
	h.running.Wait()
}

func (h *Handler) init() {
	h.once.Do(func() {
		n := h.MaxRunning
		if n <= 0 {
			n = 16
		}
		h.slots = make(chan struct{}, n)
		h.stop, h.cancel = context.WithCancel(context.Background())
	})
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	tenant, ok := auth.TenantFrom(r.Context())
	if !ok {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "no verified token"})
		return
	}
	switch {
	case r.URL.Path == "/api/chat/metrics" && r.Method == http.MethodGet:
		m, err := h.Service.Metrics(r.Context(), tenant)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, m)
	case r.URL.Path == "/api/chat" && r.Method == http.MethodPost:
		h.post(w, r, tenant)
	case r.URL.Path == "/api/chat", r.URL.Path == "/api/chat/metrics":
		allow := "POST"
		if r.URL.Path == "/api/chat/metrics" {
			allow = "GET"
		}
		w.Header().Set("Allow", allow)
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": r.Method + " is not allowed on " + r.URL.Path})
	default:
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no route for " + r.Method + " " + r.URL.Path})
	}
}

// Request is POST /api/chat's body.
type Request struct {
	ChatID  string `json:"chat_id"`
	Message string `json:"message"`
}

// Accepted is POST /api/chat's answer when the turn runs in the background.
type Accepted struct {
	ChatID string `json:"chat_id"`
	Turn   int    `json:"turn"`
	Events string `json:"events"`
}

// DecodeRequest reads {"chat_id", "message"} strictly, naming the field at
// fault.
func DecodeRequest(body io.Reader) (Request, error) {
	b, err := io.ReadAll(io.LimitReader(body, maxChatBody+1))
	if err != nil {
		return Request{}, &veredicto.InvalidInputError{File: "body", Problem: "cannot be read"}
	}
	if len(b) > maxChatBody {
		return Request{}, &veredicto.InvalidInputError{File: "body", Field: "message", Problem: fmt.Sprintf("is over %d bytes", MaxMessageBytes)}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var req Request
	if err := dec.Decode(&req); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te):
			return Request{}, &veredicto.InvalidInputError{File: "body", Field: te.Field, Problem: "must be text"}
		default:
			return Request{}, &veredicto.InvalidInputError{File: "body", Problem: `must be {"chat_id": "…", "message": "…"}: ` + err.Error()}
		}
	}
	return req, Check(req.ChatID, req.Message)
}

func (h *Handler) post(w http.ResponseWriter, r *http.Request, tenant string) {
	req, err := DecodeRequest(r.Body)
	if err != nil {
		h.fail(w, r, err)
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
			err = h.Enqueue.Enqueue(r.Context(), TurnJob{Tenant: tenant, ChatID: req.ChatID, Turn: n, Message: req.Message})
		}
		if err != nil {
			h.fail(w, r, err)
			return
		}
		writeJSON(w, http.StatusAccepted, Accepted{ChatID: req.ChatID, Turn: n, Events: "/api/events?chat=" + req.ChatID})
		return
	}
	if !h.Async {
		n, err := h.Service.Claim(r.Context(), tenant, req.ChatID)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		res, err := h.Service.Turn(r.Context(), tenant, req.ChatID, n, req.Message)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, res)
		return
	}
	if h.stop.Err() != nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "the server is shutting down"})
		return
	}
	select {
	case h.slots <- struct{}{}:
	default:
		writeJSON(w, http.StatusTooManyRequests, map[string]string{"error": "too many chat turns running; retry shortly"})
		return
	}
	n, err := h.Service.Claim(r.Context(), tenant, req.ChatID)
	if err != nil {
		<-h.slots
		h.fail(w, r, err)
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
	writeJSON(w, http.StatusAccepted, Accepted{ChatID: req.ChatID, Turn: n, Events: "/api/events?chat=" + req.ChatID})
}

func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	var (
		ie *veredicto.InvalidInputError
		ce *veredicto.ConflictError
		te *veredicto.TransientError
	)
	switch {
	case errors.As(err, &ie):
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": ie.Error()})
	case errors.As(err, &ce):
		writeJSON(w, http.StatusConflict, map[string]string{"error": ce.Error()})
	case errors.As(err, &te):
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "temporarily unavailable; retry"})
	default:
		h.logger().ErrorContext(r.Context(), "chat request failed", "error", err)
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "internal error"})
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
