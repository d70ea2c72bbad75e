package stream

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

	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/eventlog"
	"github.com/veredicto/veredicto/internal/eventlog/file"
)

func TestFromHistory(t *testing.T) {
	idx := 2
	tests := []struct {
		name    string
		ev      asl.Event
		want    *Step // nil: not a step
		noWords []string
	}{
		{"execution started", asl.Event{ID: 1, Type: "ExecutionStarted", Input: map[string]any{"cv": "Jane Doe, 42, lives at…"}},
			&Step{ID: "h1", Agent: "execution", Action: "started", Content: "execution started"}, []string{"Jane"}},
		{"task state entered", asl.Event{ID: 2, Type: "TaskStateEntered", State: "GEM1", Input: map[string]any{"text": "secret cv"}},
			&Step{ID: "h2", Agent: "GEM1", Action: "started", Content: "GEM1 started"}, []string{"secret"}},
		{"first schedule is implied", asl.Event{ID: 3, Type: "TaskScheduled", State: "GEM1", Resource: "${Gem1FunctionArn}", Attempt: 1}, nil, nil},
		{"retry", asl.Event{ID: 4, Type: "TaskScheduled", State: "GEM1", Resource: "${Gem1FunctionArn}", Attempt: 2},
			&Step{ID: "h4", Agent: "Gem1Function", Action: "retried", Content: "Gem1Function retried (attempt 2)"}, nil},
		{"task failed names the error only", asl.Event{ID: 5, Type: "TaskFailed", State: "GEM1", Error: "TransientError", Cause: "the CV of Jane says…"},
			&Step{ID: "h5", Agent: "GEM1", Action: "failed", Content: "GEM1 failed: TransientError"}, []string{"Jane"}},
		{"task succeeded keeps decision fields", asl.Event{ID: 6, Type: "TaskSucceeded", State: "GEM1",
			Output: map[string]any{"candidate_id": "c-001", "score": 82.0, "passed": true, "summary": "Jane is great", "evidence": []any{"quote"}, "gem1": map[string]any{"decision": "SI", "notes": "long text"}}},
			&Step{ID: "h6", Agent: "GEM1", Action: "finished", Content: "GEM1 finished"}, []string{"Jane", "quote", "long text"}},
		{"task state exited is implied", asl.Event{ID: 7, Type: "TaskStateExited", State: "GEM1"}, nil, nil},
		{"choice exited", asl.Event{ID: 8, Type: "ChoiceStateExited", State: "Gate1"},
			&Step{ID: "h8", Agent: "Gate1", Action: "finished", Content: "Gate1 finished"}, nil},
		{"map iteration", asl.Event{ID: 9, Type: "MapIterationStarted", State: "Each", Index: &idx},
			&Step{ID: "h9", Agent: "Each", Action: "iteration-started", Content: "Each iteration-started (item 2)"}, nil},
		{"map started is implied", asl.Event{ID: 10, Type: "MapStateStarted", State: "Each"}, nil, nil},
		{"wait started is implied", asl.Event{ID: 11, Type: "WaitStateStarted", State: "W"}, nil, nil},
		{"timeout", asl.Event{ID: 12, Type: "TaskTimedOut", State: "Ask", Resource: "", Error: "States.Timeout"},
			&Step{ID: "h12", Agent: "Ask", Action: "timed-out", Content: "Ask timed-out: States.Timeout"}, nil},
		{"lambda arn", asl.Event{ID: 13, Type: "TaskScheduled", State: "G", Resource: "arn:aws:lambda:us-east-1:1:function:veredicto-Gem2Function-AbC:live", Attempt: 3},
			&Step{ID: "h13", Agent: "veredicto-Gem2Function-AbC", Action: "retried", Content: "veredicto-Gem2Function-AbC retried (attempt 3)"}, nil},
		{"task started is implied", asl.Event{ID: 15, Type: "TaskStarted", State: "GEM1", Resource: "${Gem1FunctionArn}"}, nil, nil},
		{"aborted by a sibling", asl.Event{ID: 16, Type: "TaskStateAborted", State: "GEM2", Scope: "Each/item[1]"},
			&Step{ID: "h16", Agent: "GEM2", Action: "aborted", Content: "GEM2 aborted"}, nil},
		{"map iteration aborted", asl.Event{ID: 17, Type: "MapIterationAborted", State: "Each", Index: &idx},
			&Step{ID: "h17", Agent: "Each", Action: "iteration-aborted", Content: "Each iteration-aborted (item 2)"}, nil},
		{"execution failed", asl.Event{ID: 14, Type: "ExecutionFailed", Error: "States.TaskFailed", Cause: "Jane"},
			&Step{ID: "h14", Agent: "execution", Action: "failed", Content: "execution failed: States.TaskFailed"}, []string{"Jane"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := FromHistory(tt.ev)
			if tt.want == nil {
				if ok {
					t.Fatalf("got step %+v, want none", got)
				}
				return
			}
			if !ok {
				t.Fatal("got no step")
			}
			if got.ID != tt.want.ID || got.Agent != tt.want.Agent || got.Action != tt.want.Action || got.Content != tt.want.Content {
				t.Errorf("got %+v, want %+v", got, *tt.want)
			}
			b, _ := json.Marshal(got)
			for _, w := range tt.noWords {
				if strings.Contains(string(b), w) {
					t.Errorf("step %s carries document text %q", b, w)
				}
			}
		})
	}
	st, _ := FromHistory(tests[5].ev)
	for k, want := range map[string]any{"candidate_id": "c-001", "score": 82.0, "passed": true, "gem1.decision": "SI"} {
		if st.Metadata[k] != want {
			t.Errorf("metadata[%s] = %v, want %v", k, st.Metadata[k], want)
		}
	}
}

func TestAgentsOf(t *testing.T) {
	def := `{"StartAt":"A","States":{
	  "A":{"Type":"Task","Resource":"${ValidateFunctionArn}","Next":"M"},
	  "M":{"Type":"Map","ItemProcessor":{"StartAt":"G","States":{"G":{"Type":"Task","Resource":"${Gem1FunctionArn}","End":true}}},"Next":"Ask"},
	  "Ask":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken","Parameters":{"FunctionName":"${ConfirmFunctionArn}","Payload":{}},"Next":"P"},
	  "P":{"Type":"Parallel","Branches":[{"StartAt":"X","States":{"X":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"SummaryFunction"},"End":true}}}],"End":true}}}`
	got, err := AgentsOf([]byte(def))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"A": "ValidateFunction", "G": "Gem1Function", "Ask": "ConfirmFunction", "X": "SummaryFunction"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("AgentsOf = %v, want %v", got, want)
	}
}

func TestRecorderReplayAppendsOnce(t *testing.T) {
	ctx := t.Context()
	log := file.New(t.TempDir())
	rec := &Recorder{Log: log, AgentsFor: func(string) map[string]string { return map[string]string{"GEM1": "Gem1Function"} }}
	history := []asl.Event{
		{ID: 1, Type: "ExecutionStarted"},
		{ID: 2, Type: "TaskStateEntered", State: "GEM1"},
		{ID: 3, Type: "TaskScheduled", State: "GEM1", Attempt: 1},
		{ID: 4, Type: "TaskSucceeded", State: "GEM1"},
		{ID: 5, Type: "TaskStateExited", State: "GEM1"},
		{ID: 6, Type: "ExecutionSucceeded"},
	}
	for _, ev := range history {
		if err := rec.Record(ctx, "acme", "arn:x", ev); err != nil {
			t.Fatal(err)
		}
	}
	hook := rec.Hook(slog.New(slog.DiscardHandler))
	for _, ev := range history { // a restart calls the hook again
		hook("acme", "arn:x", ev)
	}
	evs, err := log.Read(ctx, "acme", "arn:x", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		var d struct {
			Step   Step   `json:"step"`
			Status string `json:"status"`
		}
		json.Unmarshal(e.Data, &d)
		got = append(got, e.Type+":"+d.Step.Agent+d.Status)
	}
	want := "[execution-step:execution execution-step:Gem1Function execution-step:Gem1Function execution-step:execution finish:SUCCEEDED]"
	if fmt.Sprint(got) != want {
		t.Errorf("stream = %v\nwant     %s", got, want)
	}
}

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
	log *file.Log
	srv *httptest.Server
	key []byte
}

func newSSE(t testing.TB, h *Handler) *sseFixture {
	t.Helper()
	f := &sseFixture{log: file.New(t.TempDir()), key: []byte("0123456789abcdef0123456789abcdef")}
	h.Log, h.Watch = f.log, f.log
	if h.Logger == nil {
		h.Logger = slog.New(slog.DiscardHandler)
	}
	mux := http.NewServeMux()
	mux.Handle("/api/events", auth.Middleware(&auth.HS256{Key: f.key}, auth.MiddlewareOptions{QueryToken: true})(h))
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
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
	f := newSSE(t, &Handler{Poll: time.Hour}) // only in-process signals wake it
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
	f := newSSE(t, &Handler{})
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
	f := newSSE(t, &Handler{Heartbeat: 10 * time.Millisecond, Poll: 10 * time.Millisecond})
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
	other := file.New(f.log.Dir())
	ev, _ := eventlog.New(eventlog.TypeFinish, "", map[string]string{"status": "SUCCEEDED"})
	if _, err := other.Append(t.Context(), "acme", arn, ev); err != nil {
		t.Fatal(err)
	}
	if m := <-msgs; m.id != "2" {
		t.Errorf("got message %s, want 2", m.id)
	}
}

func TestSlowClientDoesNotBlockWriters(t *testing.T) {
	f := newSSE(t, &Handler{Batch: 4, WriteTimeout: time.Second})
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
	f := newSSE(b, &Handler{})
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
	f := newSSE(t, &Handler{MaxPerTenant: 1, Lifetime: 300 * time.Millisecond, Poll: 10 * time.Millisecond})
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
	for range 100 { // the slot is released as the handler returns
		if again, err = f.open(t, t.Context(), "acme", arn, "1"); err != nil {
			t.Fatal(err)
		}
		again.Body.Close()
		if again.StatusCode == http.StatusOK {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if again.StatusCode != http.StatusOK {
		t.Errorf("after the first stream ended: %d, want 200", again.StatusCode)
	}
}
