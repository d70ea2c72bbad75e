package stream

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

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/eventlog"
)

// Reader reads a stream of the event log.
type Reader interface {
	Read(ctx context.Context, tenant, stream string, after int64, limit int) ([]eventlog.Event, error)
}

// Watcher signals appends made by this process (eventlog.File does); the
// handler also polls, which is all it does on AWS.
type Watcher interface {
	Watch(tenant, stream string) (<-chan struct{}, func())
}

// Resolver maps the execution parameter (an ARN or a name) to the
// execution ARN whose stream to serve, for the caller's tenant; another
// tenant's execution is a *veredicto.NotFoundError, like a missing one.
type Resolver interface {
	ResolveExecution(ctx context.Context, tenant, ref string) (string, error)
}

// Handler serves GET /api/events?execution=<arn or name> (and a
// conversation's stream, ?chat=<id>: see serveChat) as Server-Sent
// Events for the tenant the auth middleware verified. Every message is
// "id: N" and "data: {json with type}"; comments (": ping") keep the
// connection alive. The stream ends after the finish message; a client
// that reconnects after it gets 204, which tells EventSource to stop.
//
// Each connection reads the durable log at its own pace, at most Batch
// events at a time, so a slow client holds a bounded buffer and never
// slows the writers; a write that stalls past WriteTimeout drops it.
type Handler struct {
	Log Reader
	// Watch, when set, wakes connections as soon as this process appends.
	Watch Watcher
	// Resolve, when nil, takes the parameter as the stream name and
	// answers 404 for a stream with no events.
	Resolve Resolver
	// Refresh, when set, brings the stream up to date before each read
	// (on AWS, Executions mirrors the Step Functions history).
	Refresh Refresher
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
func (h *Handler) acquire(tenant string) bool {
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

func (h *Handler) release(tenant string) {
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

func (h *Handler) logger() *slog.Logger {
	if h.Logger != nil {
		return h.Logger
	}
	return slog.Default()
}

func jsonError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	tenant, ok := auth.TenantFrom(ctx)
	if !ok {
		jsonError(w, http.StatusUnauthorized, "no verified token")
		return
	}
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		jsonError(w, http.StatusMethodNotAllowed, r.Method+" is not allowed on /api/events")
		return
	}
	if r.URL.Query().Has("chat") {
		h.serveChat(w, r, tenant)
		return
	}
	ref := r.URL.Query().Get("execution")
	if ref == "" {
		jsonError(w, http.StatusBadRequest, "execution: is required (an execution ARN or name)")
		return
	}
	after, ok := lastEventID(w, r)
	if !ok {
		return
	}
	stream, status, err := h.resolve(ctx, tenant, ref, after)
	if err != nil {
		if status == http.StatusInternalServerError {
			h.logger().ErrorContext(ctx, "event stream failed", "tenant", tenant, "error", err)
			jsonError(w, status, "internal error")
			return
		}
		jsonError(w, status, err.Error())
		return
	}
	if status == http.StatusNoContent {
		w.WriteHeader(status)
		return
	}
	h.serve(ctx, w, tenant, stream, after, false)
}

// resolve finds the stream and checks the reconnecting client has not
// already seen its end.
func (h *Handler) resolve(ctx context.Context, tenant, ref string, after int64) (string, int, error) {
	notFound := &veredicto.NotFoundError{What: "execution " + ref}
	stream := ref
	if h.Resolve != nil {
		s, err := h.Resolve.ResolveExecution(ctx, tenant, ref)
		var nf *veredicto.NotFoundError
		switch {
		case errors.As(err, &nf):
			return "", http.StatusNotFound, notFound
		case err != nil:
			return "", http.StatusInternalServerError, err
		}
		stream = s
	}
	if after > 0 {
		evs, err := h.Log.Read(ctx, tenant, stream, after-1, 1)
		if err != nil {
			return "", http.StatusInternalServerError, err
		}
		if len(evs) == 0 { // an id the stream never had
			if h.Resolve == nil {
				return "", http.StatusNotFound, notFound
			}
			return "", http.StatusBadRequest, fmt.Errorf("Last-Event-ID: %d is past the end of the stream", after)
		}
		if evs[0].Finished() {
			return stream, http.StatusNoContent, nil
		}
		return stream, http.StatusOK, nil
	}
	if h.Resolve == nil {
		evs, err := h.Log.Read(ctx, tenant, stream, 0, 1)
		if err != nil {
			return "", http.StatusInternalServerError, err
		}
		if len(evs) == 0 {
			return "", http.StatusNotFound, notFound
		}
	}
	return stream, http.StatusOK, nil
}

// serve writes the stream from after. An execution's stream is refreshed
// from its history and ends at its finish; a conversation's (chat) is
// written by the chat alone and stays open, each turn ending with its own
// finish.
func (h *Handler) serve(ctx context.Context, w http.ResponseWriter, tenant, stream string, after int64, chat bool) {
	if !h.acquire(tenant) {
		w.Header().Set("Retry-After", "30")
		jsonError(w, http.StatusTooManyRequests, fmt.Sprintf("this tenant has %d event streams open, the most one server keeps; close one and retry", dflt(h.MaxPerTenant, 32)))
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

// ChatStream is the event-log stream of a conversation (internal/chat).
func ChatStream(chatID string) string { return "chat/" + chatID }

var chatIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// serveChat serves GET /api/events?chat=<id>: the conversation's stream,
// which stays open across turns (each turn ends with its own finish; the
// client closes when it is done). A chat with no events yet is served
// too, so a client can subscribe before its first message; another
// tenant's chat is therefore indistinguishable from a new one.
func (h *Handler) serveChat(w http.ResponseWriter, r *http.Request, tenant string) {
	id := r.URL.Query().Get("chat")
	if !chatIDPattern.MatchString(id) {
		jsonError(w, http.StatusBadRequest, "chat: must be 1-64 letters, digits, '_' or '-'")
		return
	}
	after, ok := lastEventID(w, r)
	if !ok {
		return
	}
	h.serve(r.Context(), w, tenant, ChatStream(id), after, true)
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
		jsonError(w, http.StatusBadRequest, "Last-Event-ID: must be a non-negative integer")
		return 0, false
	}
	return n, true
}
