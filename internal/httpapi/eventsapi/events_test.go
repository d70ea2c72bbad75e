package eventsapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	fileeventlog "github.com/veredicto/veredicto/internal/eventlog/file"

	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/eventlog"
	"github.com/veredicto/veredicto/internal/eventlog/eventlogtest"
	"github.com/veredicto/veredicto/internal/httpapi"
	"github.com/veredicto/veredicto/internal/httpapi/apitest"
	"github.com/veredicto/veredicto/internal/httpapi/eventsapi"
	"github.com/veredicto/veredicto/internal/poll"
)

// sseMsg is one message a client received.
type sseMsg struct {
	id   string
	data string
}

// client reads an SSE response, sending messages on msgs and comments on
// pings, until the body ends.
func readSSE(body io.Reader, msgs chan<- sseMsg, pings chan<- struct{}) {
	sc := bufio.NewScanner(body)
	var cur sseMsg
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.id != "" || cur.data != "" {
				msgs <- cur
			}
			cur = sseMsg{}
		case strings.HasPrefix(line, ":"):
			if pings != nil {
				select {
				case pings <- struct{}{}:
				default:
				}
			}
		case strings.HasPrefix(line, "id: "):
			cur.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = strings.TrimPrefix(line, "data: ")
		}
	}
	close(msgs)
}

type sseFixture struct {
	log *fileeventlog.Log
	srv *httptest.Server
	key []byte
}

func newSSE(t testing.TB, h *eventsapi.Routes) *sseFixture {
	t.Helper()
	f := &sseFixture{log: fileeventlog.New(t.TempDir()), key: []byte("0123456789abcdef0123456789abcdef")}
	h.Log, h.Watch = f.log, f.log
	if h.Logger == nil {
		h.Logger = slog.New(slog.DiscardHandler)
	}
	f.srv = apitest.Serve(t, httpapi.New(nil, h), &auth.HS256{Key: f.key}).Server
	return f
}

func (f *sseFixture) open(t testing.TB, ctx context.Context, tenant, execution, lastID string) (*http.Response, error) {
	t.Helper()
	tok, err := auth.SignHS256(f.key, auth.Claims{Tenant: tenant, ExpiresAt: time.Now().Add(time.Hour)}, "")
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(ctx, "GET", f.srv.URL+"/api/events?execution="+execution, nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	return f.srv.Client().Do(req)
}

func (f *sseFixture) append(t testing.TB, tenant, stream, typ string, n int) {
	t.Helper()
	ev, err := eventlog.New(typ, "", map[string]int{"n": n})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.log.Append(context.Background(), tenant, stream, ev); err != nil {
		t.Fatal(err)
	}
}

const arn = "arn:aws:states:us-east-1:000000000000:execution:Review:s-1"

func TestReconnectGetsEveryEventOnceInOrder(t *testing.T) {
	f := newSSE(t, &eventsapi.Routes{Poll: time.Hour}) // only in-process signals wake it
	f.append(t, "acme", arn, eventlog.TypeExecutionStep, 1)

	ctx, cancel := context.WithCancel(t.Context())
	resp, err := f.open(t, ctx, "acme", arn, "")
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("status %d, Content-Type %q", resp.StatusCode, ct)
	}
	msgs := make(chan sseMsg, 100)
	go readSSE(resp.Body, msgs, nil)
	var seen []string
	for i := 2; len(seen) < 3; i++ {
		if i <= 3 {
			f.append(t, "acme", arn, eventlog.TypeExecutionStep, i) // while connected
		}
		m := <-msgs
		seen = append(seen, m.id)
	}
	cancel() // the client goes away mid-run
	resp.Body.Close()
	for range msgs { // drain until the reader sees the body end
	}
	for i := 4; i <= 7; i++ { // what it misses
		f.append(t, "acme", arn, eventlog.TypeExecutionStep, i)
	}
	resp, err = f.open(t, t.Context(), "acme", arn, seen[len(seen)-1])
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	msgs = make(chan sseMsg, 100)
	go readSSE(resp.Body, msgs, nil)
	f.append(t, "acme", arn, eventlog.TypeExecutionStep, 8) // after reconnecting
	f.append(t, "acme", arn, eventlog.TypeFinish, 9)
	var types []string
	for m := range msgs { // ends when the server closes after finish
		seen = append(seen, m.id)
		var d map[string]any
		json.Unmarshal([]byte(m.data), &d)
		types = append(types, d["type"].(string))
		if d["n"] != float64(len(seen)) {
			t.Errorf("message %s carries n=%v", m.id, d["n"])
		}
	}
	if got, want := strings.Join(seen, ","), "1,2,3,4,5,6,7,8,9"; got != want {
		t.Errorf("ids = %s, want %s (each once, in order)", got, want)
	}
	if types[len(types)-1] != "finish" {
		t.Errorf("last message type = %s, want finish", types[len(types)-1])
	}
}

func TestFinishedStream(t *testing.T) {
	f := newSSE(t, &eventsapi.Routes{})
	for i := 1; i <= 3; i++ {
		f.append(t, "acme", arn, eventlog.TypeExecutionStep, i)
	}
	f.append(t, "acme", arn, eventlog.TypeFinish, 4)
	tests := []struct {
		name       string
		tenant     string
		execution  string
		last       string
		wantStatus int
		wantIDs    string
	}{
		{"replays and closes", "acme", arn, "", 200, "1,2,3,4"},
		{"from the middle", "acme", arn, "2", 200, "3,4"},
		{"after the end: stop reconnecting", "acme", arn, "4", 204, ""},
		{"unknown execution", "acme", arn + "-x", "", 404, ""},
		{"another tenant's", "globex", arn, "", 404, ""},
		{"another tenant's with an id", "globex", arn, "2", 404, ""},
		{"bad Last-Event-ID", "acme", arn, "x", 400, ""},
		{"no execution", "acme", "", "", 400, ""},
	}
	var bodies404 []string
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := f.open(t, t.Context(), tt.tenant, tt.execution, tt.last)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tt.wantStatus {
				b, _ := io.ReadAll(resp.Body)
				t.Fatalf("status %d %s, want %d", resp.StatusCode, b, tt.wantStatus)
			}
			if tt.wantStatus != 200 {
				b, _ := io.ReadAll(resp.Body)
				if tt.wantStatus == 404 {
					bodies404 = append(bodies404, strings.ReplaceAll(string(b), arn+"-x", arn))
				}
				return
			}
			msgs := make(chan sseMsg, 10)
			go readSSE(resp.Body, msgs, nil)
			var ids []string
			for m := range msgs {
				ids = append(ids, m.id)
			}
			if got := strings.Join(ids, ","); got != tt.wantIDs {
				t.Errorf("ids = %s, want %s", got, tt.wantIDs)
			}
		})
	}
	for _, b := range bodies404 {
		if b != bodies404[0] {
			t.Errorf("404 bodies differ: %q vs %q", b, bodies404[0])
		}
	}
	t.Run("no token", func(t *testing.T) {
		resp, err := http.Get(f.srv.URL + "/api/events?execution=" + arn)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Errorf("status %d, want 401", resp.StatusCode)
		}
	})
}

func TestHeartbeatAndCrossProcessAppends(t *testing.T) {
	f := newSSE(t, &eventsapi.Routes{Heartbeat: 10 * time.Millisecond, Poll: 10 * time.Millisecond})
	f.append(t, "acme", arn, eventlog.TypeExecutionStep, 1)
	resp, err := f.open(t, t.Context(), "acme", arn, "")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	msgs, pings := make(chan sseMsg, 10), make(chan struct{}, 1)
	go readSSE(resp.Body, msgs, pings)
	<-msgs
	<-pings // an idle connection gets comments
	// Another process (a fresh log on the same folder, as "veredicto
	// confirm" is) appends: polling finds it without a signal.
	other := fileeventlog.New(f.log.Dir())
	ev, _ := eventlog.New(eventlog.TypeFinish, "", map[string]string{"status": "SUCCEEDED"})
	if _, err := other.Append(t.Context(), "acme", arn, ev); err != nil {
		t.Fatal(err)
	}
	if m := <-msgs; m.id != "2" {
		t.Errorf("got message %s, want 2", m.id)
	}
}

func TestSlowClientDoesNotBlockWriters(t *testing.T) {
	f := newSSE(t, &eventsapi.Routes{Batch: 4, WriteTimeout: time.Second})
	f.append(t, "acme", arn, eventlog.TypeExecutionStep, 0)
	resp, err := f.open(t, t.Context(), "acme", arn, "")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close() // never read
	big := strings.Repeat("x", 32<<10)
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 300 { // ~10 MiB, far beyond socket buffers
			ev, _ := eventlog.New(eventlog.TypeExecutionStep, "", map[string]any{"n": i, "pad": big})
			if _, err := f.log.Append(context.Background(), "acme", arn, ev); err != nil {
				t.Error(err)
				return
			}
		}
	})
	wg.Wait() // a writer blocked by the client would hang the test here
}

// BenchmarkFanOut100 streams one execution to 100 clients: per op, 100
// events and a finish are appended and every client receives all of them.
func BenchmarkFanOut100(b *testing.B) {
	const clients, events = 100, 100
	f := newSSE(b, &eventsapi.Routes{})
	b.ResetTimer()
	for i := range b.N {
		stream := fmt.Sprintf("%s-%d", arn, i)
		f.append(b, "acme", stream, eventlog.TypeExecutionStep, 0)
		var wg sync.WaitGroup
		ready := make(chan struct{}, clients)
		for range clients {
			wg.Go(func() {
				resp, err := f.open(b, context.Background(), "acme", stream, "")
				if err != nil {
					b.Error(err)
					return
				}
				defer resp.Body.Close()
				msgs := make(chan sseMsg, events+2)
				go readSSE(resp.Body, msgs, nil)
				<-msgs
				ready <- struct{}{}
				n := 1
				for range msgs {
					n++
				}
				if n != events+2 {
					b.Errorf("client got %d messages, want %d", n, events+2)
				}
			})
		}
		for range clients {
			<-ready
		}
		for j := 1; j <= events; j++ {
			f.append(b, "acme", stream, eventlog.TypeExecutionStep, j)
		}
		f.append(b, "acme", stream, eventlog.TypeFinish, events+1)
		wg.Wait()
	}
	b.ReportMetric(float64(b.N*clients*(events+1))/b.Elapsed().Seconds(), "deliveries/s")
}

// TestStreamsAreBoundedPerTenantAndInLifetime: one tenant cannot hold more
// than MaxPerTenant streams open (another tenant can), and a stream
// without a deadline ends after Lifetime so its slot comes back.
func TestStreamsAreBoundedPerTenantAndInLifetime(t *testing.T) {
	f := newSSE(t, &eventsapi.Routes{MaxPerTenant: 1, Lifetime: 300 * time.Millisecond, Poll: 10 * time.Millisecond})
	f.append(t, "acme", arn, eventlog.TypeExecutionStep, 1)
	f.append(t, "globex", arn, eventlog.TypeExecutionStep, 1)
	first, err := f.open(t, t.Context(), "acme", arn, "")
	if err != nil {
		t.Fatal(err)
	}
	defer first.Body.Close()
	msgs := make(chan sseMsg, 10)
	go readSSE(first.Body, msgs, nil)
	if m := <-msgs; m.id != "1" {
		t.Fatalf("first stream: message %q", m.id)
	}
	second, err := f.open(t, t.Context(), "acme", arn, "")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(second.Body)
	second.Body.Close()
	if second.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(body), "1 event streams open") {
		t.Errorf("second stream of the tenant: %d %s, want 429", second.StatusCode, body)
	}
	other, err := f.open(t, t.Context(), "globex", arn, "")
	if err != nil {
		t.Fatal(err)
	}
	if other.StatusCode != http.StatusOK {
		t.Errorf("another tenant's stream: %d, want 200", other.StatusCode)
	}
	other.Body.Close()
	// The first stream ends by itself (Lifetime), unfinished.
	select {
	case _, open := <-msgs:
		for open {
			_, open = <-msgs
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a stream without a deadline stayed open past its lifetime")
	}
	var again *http.Response
	poll.Within(10*time.Second, func() bool { // the slot is released as the handler returns
		if again, err = f.open(t, t.Context(), "acme", arn, "1"); err != nil {
			t.Fatal(err)
		}
		again.Body.Close()
		return again.StatusCode == http.StatusOK
	})
	if again.StatusCode != http.StatusOK {
		t.Errorf("after the first stream ended: %d, want 200", again.StatusCode)
	}
}

// TestDamagedEventIsNamedAndTheStreamGoesOn: a line of the log that no
// longer decodes reaches the client as an error message under its id, and
// the stream goes on to its end.
func TestDamagedEventIsNamedAndTheStreamGoesOn(t *testing.T) {
	f := newSSE(t, &eventsapi.Routes{})
	for i := 1; i <= 3; i++ {
		f.append(t, "acme", arn, eventlog.TypeExecutionStep, i)
	}
	f.append(t, "acme", arn, eventlog.TypeFinish, 4)
	eventlogtest.CorruptLine(t, eventlogtest.StreamFile(t, f.log.Dir()), 2, `{"id":2,"ty`+strings.Repeat("\x00", 20))
	f.log = fileeventlog.New(f.log.Dir()) // what a restarted server reads
	h := &eventsapi.Routes{Log: f.log, Watch: f.log, Logger: slog.New(slog.DiscardHandler)}
	f.srv = apitest.Serve(t, httpapi.New(nil, h), &auth.HS256{Key: f.key}).Server

	resp, err := f.open(t, t.Context(), "acme", arn, "")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	msgs := make(chan sseMsg, 10)
	go readSSE(resp.Body, msgs, nil)
	var got []string
	for m := range msgs {
		var d map[string]any
		if err := json.Unmarshal([]byte(m.data), &d); err != nil {
			t.Fatalf("message %s: %v", m.id, err)
		}
		got = append(got, fmt.Sprintf("%s:%v", m.id, d["type"]))
		if d["type"] == "error" && (d["id"] != 2.0 || d["error"] != "damaged") {
			t.Errorf("error message %s, want the damaged event's id", m.data)
		}
	}
	if want := "1:execution-step 2:error 3:execution-step 4:finish"; strings.Join(got, " ") != want {
		t.Errorf("messages %s, want %s", strings.Join(got, " "), want)
	}
}
