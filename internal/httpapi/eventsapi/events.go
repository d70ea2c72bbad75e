// Package eventsapi is the HTTP API's event stream (seed 004 §4): GET
// /api/events as Server-Sent Events, and the stream's own Function URL
// (EventStream).
package eventsapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/veredicto/veredicto/internal/httpapi"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/chat"
	"github.com/veredicto/veredicto/internal/eventlog"
)

// EventReader reads a stream of the event log.
type EventReader interface {
	Read(ctx context.Context, tenant, stream string, after int64, limit int) ([]eventlog.Event, error)
}

// Watcher signals appends made by this process (eventlog.File does); the
// handler also polls, which is all it does on AWS.
type Watcher interface {
	Watch(tenant, stream string) (<-chan struct{}, func())
}

// ExecutionResolver maps the execution parameter (an ARN or a name) to the
// execution ARN whose stream to serve, for the caller's tenant; another
// tenant's execution is a *veredicto.NotFoundError, like a missing one.
type ExecutionResolver interface {
	ResolveExecution(ctx context.Context, tenant, ref string) (string, error)
}

// StreamRefresher brings a stream up to date before it is read (on AWS,
// stream.Executions mirrors the Step Functions history into the log).
type StreamRefresher interface {
	Refresh(ctx context.Context, tenant, stream string) error
}

// Routes serves GET /api/events?execution=<arn or name> (and a
// conversation's stream, ?chat=<id>: see serveChat) as Server-Sent
// Routes for the tenant the auth middleware verified. Every message is
// "id: N" and "data: {json with type}"; comments (": ping") keep the
// connection alive. The stream ends after the finish message; a client
// that reconnects after it gets 204, which tells EventSource to stop. An
// event the log cannot read (a damaged line) is sent under its id as
// {"type": "error", "id": N, "error": "damaged", "message"} and the
// stream goes on (eventlog.Damaged).
//
// Each connection reads the durable log at its own pace, at most Batch
// events at a time, so a slow client holds a bounded buffer and never
// slows the writers; a write that stalls past WriteTimeout drops it.
type Routes struct {
	Log EventReader
	// Watch, when set, wakes connections as soon as this process appends.
	Watch Watcher
	// Resolve, when nil, takes the parameter as the stream name and
	// answers 404 for a stream with no events.
	Resolve ExecutionResolver
	// Refresh, when set, brings the stream up to date before each read
	// (on AWS, Executions mirrors the Step Functions history).
	Refresh StreamRefresher
	// Poll is how often the log is re-read without a signal (default 1 s),
	// Heartbeat how often an idle connection gets a comment (default 15 s),
	// Batch the most events read and written at once (default 64),
	// WriteTimeout how long one write may stall (default 30 s).
	Poll, Heartbeat, WriteTimeout time.Duration
	Batch                         int
	// Reserve ends the response this long before the request context's
	// deadline (a Lambda invocation's), so the client reconnects cleanly
	// with Last-Event-ID instead of being cut off (default 5 s).
	Reserve time.Duration
	// Lifetime ends a response without a deadline (the local server's)
	// after this long; the client reconnects with Last-Event-ID and
	// misses nothing (default 1 hour). MaxPerTenant bounds one tenant's
	// open streams on this handler (default 32; 429 beyond).
	Lifetime     time.Duration
	MaxPerTenant int
	Logger       *slog.Logger

	mu   sync.Mutex
	open map[string]int // tenant → open streams
}

// acquire counts an open stream of tenant; false when it has
// MaxPerTenant already.
func (h *Routes) acquire(tenant string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.open == nil {
		h.open = map[string]int{}
	}
	if h.open[tenant] >= dflt(h.MaxPerTenant, 32) {
		return false
	}
	h.open[tenant]++
	return true
}

func (h *Routes) release(tenant string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.open[tenant]--; h.open[tenant] <= 0 {
		delete(h.open, tenant)
	}
}

func dflt[T int | time.Duration](v, d T) T {
	if v <= 0 {
		return d
	}
	return v
}

func (h *Routes) logger() *slog.Logger {
	if h.Logger != nil {
		return h.Logger
	}
	return slog.Default()
}

func (h *Routes) Register(m *httpapi.Mux) {
	m.Handle("GET /api/events", httpapi.RequireTenant(h.serveHTTP))
}

func (h *Routes) serveHTTP(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	ctx, tenant := r.Context(), p.Tenant
	if r.URL.Query().Has("chat") {
		h.serveChat(w, r, tenant)
		return
	}
	ref := r.URL.Query().Get("execution")
	if ref == "" {
		httpapi.WriteError(w, r, &veredicto.InvalidInputError{Field: "execution", Problem: "is required (an execution ARN or name)"})
		return
	}
	after, ok := lastEventID(w, r)
	if !ok {
		return
	}
	stream, ended, err := h.resolve(ctx, tenant, ref, after)
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	if ended { // the client has seen the finish: 204 tells EventSource to stop
		w.WriteHeader(http.StatusNoContent)
		return
	}
	h.serve(ctx, w, r, tenant, stream, after, false)
}

// resolve finds the stream and whether a reconnecting client has already
// seen its end.
func (h *Routes) resolve(ctx context.Context, tenant, ref string, after int64) (stream string, ended bool, err error) {
	notFound := &veredicto.NotFoundError{What: "execution " + ref}
	stream = ref
	if h.Resolve != nil {
		s, err := h.Resolve.ResolveExecution(ctx, tenant, ref)
		var nf *veredicto.NotFoundError
		switch {
		case errors.As(err, &nf):
			return "", false, notFound
		case err != nil:
			return "", false, err
		}
		stream = s
	}
	if after > 0 {
		evs, err := h.Log.Read(ctx, tenant, stream, after-1, 1)
		if err != nil {
			return "", false, err
		}
		if len(evs) == 0 { // an id the stream never had
			if h.Resolve == nil {
				return "", false, notFound
			}
			return "", false, &veredicto.InvalidInputError{Field: "Last-Event-ID", Problem: fmt.Sprintf("%d is past the end of the stream", after)}
		}
		return stream, evs[0].Finished(), nil
	}
	if h.Resolve == nil {
		evs, err := h.Log.Read(ctx, tenant, stream, 0, 1)
		if err != nil {
			return "", false, err
		}
		if len(evs) == 0 {
			return "", false, notFound
		}
	}
	return stream, false, nil
}

// serve writes the stream from after. An execution's stream is refreshed
// from its history and ends at its finish; a conversation's (chat) is
// written by the chat alone and stays open, each turn ending with its own
// finish.
func (h *Routes) serve(ctx context.Context, w http.ResponseWriter, r *http.Request, tenant, stream string, after int64, chat bool) {
	if !h.acquire(tenant) {
		httpapi.WriteError(w, r, &httpapi.Error{Name: httpapi.NameTooManyRequests, Header: http.Header{"Retry-After": {"30"}},
			Message: fmt.Sprintf("this tenant has %d event streams open, the most one server keeps; close one and retry", dflt(h.MaxPerTenant, 32))})
		return
	}
	defer h.release(tenant)
	var cancel context.CancelFunc
	if dl, ok := ctx.Deadline(); ok {
		ctx, cancel = context.WithDeadline(ctx, dl.Add(-dflt(h.Reserve, 5*time.Second)))
	} else {
		ctx, cancel = context.WithTimeout(ctx, dflt(h.Lifetime, time.Hour))
	}
	defer cancel()
	rc := http.NewResponseController(w)
	hdr := w.Header()
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)

	var wake <-chan struct{}
	if h.Watch != nil {
		ch, cancel := h.Watch.Watch(tenant, stream)
		defer cancel()
		wake = ch
	}
	poll := time.NewTicker(dflt(h.Poll, time.Second))
	defer poll.Stop()
	heartbeat := time.NewTicker(dflt(h.Heartbeat, 15*time.Second))
	defer heartbeat.Stop()
	batch := dflt(h.Batch, 64)
	writeTimeout := dflt(h.WriteTimeout, 30*time.Second)

	write := func(b []byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout))
		if _, err := w.Write(b); err != nil {
			return false
		}
		if err := rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return false
		}
		return true
	}
	if !write([]byte("retry: 2000\n\n")) {
		return
	}
	var buf []byte
	for {
		if h.Refresh != nil && !chat {
			if err := h.Refresh.Refresh(ctx, tenant, stream); err != nil && ctx.Err() == nil {
				h.logger().WarnContext(ctx, "refresh event stream", "tenant", tenant, "stream", stream, "error", err)
			}
		}
		evs, err := h.Log.Read(ctx, tenant, stream, after, batch)
		if err != nil {
			if ctx.Err() == nil {
				h.logger().ErrorContext(ctx, "read event stream", "tenant", tenant, "stream", stream, "error", err)
			}
			return
		}
		buf = buf[:0]
		finished := false
		for _, ev := range evs {
			if !json.Valid(ev.Data) { // an adapter that passed a damaged event through
				ev = eventlog.Damaged(ev.ID)
			}
			if ev.Type == eventlog.TypeError {
				h.logger().WarnContext(ctx, "event stream: a damaged event is sent as an error message", "tenant", tenant, "stream", stream, "event_id", ev.ID)
			}
			data := ev.Data
			if bytes.ContainsAny(data, "\r\n") { // one data line per message
				var c bytes.Buffer
				if json.Compact(&c, data) == nil {
					data = c.Bytes()
				}
			}
			buf = fmt.Appendf(buf, "id: %d\ndata: %s\n\n", ev.ID, data)
			after = ev.ID
			if ev.Finished() && !chat {
				finished = true
				break
			}
		}
		if len(buf) > 0 && !write(buf) {
			return
		}
		if finished {
			return
		}
		if len(evs) == batch {
			continue // more to catch up on
		}
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-poll.C:
		case <-heartbeat.C:
			if !write([]byte(": ping\n\n")) {
				return
			}
		}
	}
}

var chatIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// serveChat serves GET /api/events?chat=<id>: the conversation's stream,
// which stays open across turns (each turn ends with its own finish; the
// client closes when it is done). A chat with no events yet is served
// too, so a client can subscribe before its first message; another
// tenant's chat is therefore indistinguishable from a new one.
func (h *Routes) serveChat(w http.ResponseWriter, r *http.Request, tenant string) {
	id := r.URL.Query().Get("chat")
	if !chatIDPattern.MatchString(id) {
		httpapi.WriteError(w, r, &veredicto.InvalidInputError{Field: "chat", Problem: "must be 1-64 letters, digits, '_' or '-'"})
		return
	}
	after, ok := lastEventID(w, r)
	if !ok {
		return
	}
	h.serve(r.Context(), w, r, tenant, chat.StreamName(id), after, true)
}

// lastEventID is where a client resumes: the Last-Event-ID header, or the
// lastEventId query parameter (EventSource cannot set headers on a new
// connection), 0 when neither is set. An invalid one is answered 400 here
// (ok false).
func lastEventID(w http.ResponseWriter, r *http.Request) (after int64, ok bool) {
	last := r.Header.Get("Last-Event-ID")
	if last == "" {
		last = r.URL.Query().Get("lastEventId")
	}
	if last == "" {
		return 0, true
	}
	n, err := strconv.ParseInt(strings.TrimSpace(last), 10, 64)
	if err != nil || n < 0 {
		httpapi.WriteError(w, r, &veredicto.InvalidInputError{Field: "Last-Event-ID", Problem: "must be a non-negative integer"})
		return 0, false
	}
	return n, true
}

// EventStream serves the event stream as its Function URL does: at the
// URL's root and at /api/events, with tokens verified by v (the HTTP API's
// issuer), sent as "Authorization: Bearer" or, for a browser's
// EventSource, as ?access_token=.
func EventStream(h *Routes, v auth.Verifier, logger *slog.Logger) http.Handler {
	m := httpapi.NewMux(logger)
	h.Register(m)
	m.Handle("GET /{$}", httpapi.RequireTenant(h.serveHTTP))
	authn := &httpapi.Authenticator{Tokens: v, QueryToken: []string{"/", "/api/events"}, Logger: logger}
	return authn.Wrap(m)
}
