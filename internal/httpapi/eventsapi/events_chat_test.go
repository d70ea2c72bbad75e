package eventsapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	fileeventlog "github.com/veredicto/veredicto/internal/eventlog/file"
	"github.com/veredicto/veredicto/internal/httpapi/eventsapi"

	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/chat"
	"github.com/veredicto/veredicto/internal/eventlog"
	"github.com/veredicto/veredicto/internal/httpapi"
)

type countingRefresher struct{ n atomic.Int32 }

func (c *countingRefresher) Refresh(context.Context, string, string) error {
	c.n.Add(1)
	return nil
}

// TestChatStreamStaysOpenAcrossTurns: a conversation's stream passes each
// turn's finish and waits for the next turn; it is never refreshed from an
// execution history; it is the tenant's own.
func TestChatStreamStaysOpenAcrossTurns(t *testing.T) {
	log := fileeventlog.New(t.TempDir())
	ref := &countingRefresher{}
	h := httpapi.New(nil, &eventsapi.Routes{Log: log, Watch: log, Refresh: ref, Poll: 20 * time.Millisecond})
	appendEv := func(tenant, typ string, turn int) {
		ev, _ := eventlog.New(typ, "", map[string]any{"turn": turn})
		if _, err := log.Append(context.Background(), tenant, chat.StreamName("c1"), ev); err != nil {
			t.Fatal(err)
		}
	}
	appendEv("acme", "text-delta", 1)
	appendEv("acme", "finish", 1)
	appendEv("zeta", "text-delta", 9)

	// No deadline on the request (the handler reserves 5 s of one); the
	// reads below are bounded by their own.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := httptest.NewRequest("GET", "/api/events?chat=c1", nil).WithContext(auth.WithPrincipal(ctx, auth.Principal{Name: "ana", Tenant: "acme", Via: auth.ViaJWT}))
	readCtx, stop := context.WithTimeout(ctx, 10*time.Second)
	defer stop()
	pr, pw := newPipeWriter()
	done := make(chan struct{})
	go func() { h.ServeHTTP(pw, req); close(done) }()
	var got []string
	for len(got) < 4 {
		line, err := pr.line(readCtx)
		if err != nil {
			t.Fatalf("read: %v (got %v)", err, got)
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			var m map[string]any
			_ = json.Unmarshal([]byte(d), &m)
			got = append(got, m["type"].(string))
			if len(got) == 2 {
				appendEv("acme", "text-delta", 2) // the next turn, after the first finish
				appendEv("acme", "finish", 2)
			}
		}
	}
	if strings.Join(got, ",") != "text-delta,finish,text-delta,finish" {
		t.Errorf("events = %v", got)
	}
	cancel()
	<-done
	if n := ref.n.Load(); n != 0 {
		t.Errorf("the chat stream was refreshed %d times from an execution history", n)
	}

	for _, q := range []string{"chat=", "chat=a/b", "chat=" + strings.Repeat("x", 65)} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/events?"+q, nil).WithContext(auth.WithPrincipal(context.Background(), auth.Principal{Name: "ana", Tenant: "acme", Via: auth.ViaJWT})))
		if rec.Code != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", q, rec.Code)
		}
	}
}

// pipeWriter is a ResponseWriter whose body is read line by line.
type pipeWriter struct {
	hdr   http.Header
	lines chan string
	buf   strings.Builder
}

func newPipeWriter() (*pipeWriter, *pipeWriter) {
	p := &pipeWriter{hdr: http.Header{}, lines: make(chan string, 1024)}
	return p, p
}

func (p *pipeWriter) Header() http.Header { return p.hdr }
func (p *pipeWriter) WriteHeader(int)     {}
func (p *pipeWriter) Flush()              {}
func (p *pipeWriter) Write(b []byte) (int, error) {
	for _, c := range string(b) {
		if c == '\n' {
			p.lines <- p.buf.String()
			p.buf.Reset()
			continue
		}
		p.buf.WriteRune(c)
	}
	return len(b), nil
}

func (p *pipeWriter) line(ctx context.Context) (string, error) {
	select {
	case l := <-p.lines:
		return l, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}
