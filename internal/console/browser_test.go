package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/console"
	"github.com/veredicto/veredicto/internal/console/browsertest"
	"github.com/veredicto/veredicto/internal/eventlog"
	"github.com/veredicto/veredicto/internal/httpapi"
	"github.com/veredicto/veredicto/internal/httpapi/eventsapi"
	"github.com/veredicto/veredicto/internal/stream"
)

// memLog is an in-memory event log (stream.Reader, stream.Watcher and
// stream.Appender): the stream handler and the recorder are the real
// ones, only the storage is memory.
type memLog struct {
	mu      sync.Mutex
	events  map[string][]eventlog.Event
	watches map[string][]chan struct{}
}

func newMemLog() *memLog {
	return &memLog{events: map[string][]eventlog.Event{}, watches: map[string][]chan struct{}{}}
}

func (l *memLog) Append(_ context.Context, tenant, s string, ev eventlog.Event) (eventlog.Event, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := tenant + "/" + s
	ev.ID = int64(len(l.events[k]) + 1)
	ev.Time = time.Now()
	l.events[k] = append(l.events[k], ev)
	for _, ch := range l.watches[k] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	return ev, nil
}

func (l *memLog) Read(_ context.Context, tenant, s string, after int64, limit int) ([]eventlog.Event, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	all := l.events[tenant+"/"+s]
	if after >= int64(len(all)) {
		return nil, nil
	}
	out := all[after:]
	if len(out) > limit {
		out = out[:limit]
	}
	return append([]eventlog.Event(nil), out...), nil
}

func (l *memLog) Watch(tenant, s string) (<-chan struct{}, func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ch := make(chan struct{}, 1)
	k := tenant + "/" + s
	l.watches[k] = append(l.watches[k], ch)
	return ch, func() {}
}

// fakeAPI is the part of the HTTP API the console calls besides the
// stream, with what a test sets: the runs, the confirmations (pending,
// settable; a POST decides one and is recorded), a search's roster and
// state, a report, the summary.
type fakeAPI struct {
	mu      sync.Mutex
	pending []map[string]any
	runs    []map[string]any
	roster  map[string]any // GET /searches/{id}/candidates
	state   map[string]any // GET /searches/{id}
	summary map[string]any // GET /searches/{id}/summary
	decided []string       // "cf_1 approved ana-comment", in order
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	f.mu.Lock()
	defer f.mu.Unlock()
	send := func(v any) {
		if m, ok := v.(map[string]any); ok && m == nil {
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"error":"not found"}`))
			return
		}
		json.NewEncoder(w).Encode(v)
	}
	path := r.URL.Path
	switch {
	case path == "/api/confirmations" && r.Method == http.MethodPost:
		var d struct {
			ID       string `json:"id"`
			Approved bool   `json:"approved"`
			Comment  string `json:"comment"`
		}
		json.NewDecoder(r.Body).Decode(&d)
		keep := f.pending[:0]
		found := false
		for _, c := range f.pending {
			if c["id"] == d.ID {
				found = true
				continue
			}
			keep = append(keep, c)
		}
		if !found {
			w.WriteHeader(http.StatusConflict)
			w.Write([]byte(`{"error":"already decided"}`))
			return
		}
		f.pending = keep
		f.decided = append(f.decided, fmt.Sprintf("%s %v %s", d.ID, d.Approved, d.Comment))
		send(map[string]any{"id": d.ID, "status": "approved"})
	case path == "/api/confirmations":
		list := f.pending
		if list == nil {
			list = []map[string]any{}
		}
		send(map[string]any{"confirmations": list})
	case path == "/runs":
		list := f.runs
		if list == nil {
			list = []map[string]any{}
		}
		send(map[string]any{"runs": list})
	case strings.HasSuffix(path, "/candidates") && strings.HasPrefix(path, "/searches/"):
		send(f.roster)
	case strings.HasSuffix(path, "/summary"):
		send(f.summary)
	case strings.HasSuffix(path, "/report"):
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte("<h1>Evaluación de candidato: c-005</h1><h2>Decisión: Escalado al consultor senior</h2><p>Motivo: falta estructural de evidencia.</p>"))
	case strings.HasPrefix(path, "/searches/"):
		send(f.state)
	default:
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"error":"not found"}`))
	}
}

type harness struct {
	base, token string
	log         *memLog
	api         *fakeAPI
	rec         *stream.Recorder
}

const (
	tenant  = "acme"
	execARN = "arn:aws:states:us-east-1:000000000000:execution:ExecutiveSearchStateMachine:acme--big"
)

// startHarness serves the console, the real event stream behind the real
// auth middleware (token as ?access_token=), and fakeAPI for the rest, on
// a loopback port.
func startHarness(t *testing.T) harness {
	t.Helper()
	key := []byte("0123456789abcdef0123456789abcdef")
	verify := &auth.HS256{Key: key, Policy: auth.Policy{Issuer: "test"}}
	log := newMemLog()
	api := &fakeAPI{}
	// The real routes for the stream and the console; fakeAPI behind the
	// same middleware for the rest.
	routes := httpapi.New(nil, &eventsapi.Routes{Log: log, Watch: log, Poll: 200 * time.Millisecond},
		httpapi.SiteRoutes(console.Handler(console.LocalConfig)))
	routes.Handle("GET /api/confirmations", api)
	routes.Handle("POST /api/confirmations", api)
	routes.Handle("GET /runs", api)
	routes.Handle("GET /searches/", api)
	mux := (&httpapi.Authenticator{Tokens: verify, QueryToken: []string{"/api/events"}}).Wrap(routes)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	now := time.Now()
	tok, err := auth.SignHS256(key, auth.Claims{Subject: "ana", Tenant: tenant, Issuer: "test", IssuedAt: now, ExpiresAt: now.Add(time.Hour)}, auth.DefaultTenantClaim)
	if err != nil {
		t.Fatal(err)
	}
	return harness{base: "http://" + ln.Addr().String(), token: tok, log: log, api: api, rec: &stream.Recorder{Log: log}}
}

// history is a search's history for n candidates as the engine writes it
// (Map iterations interleaved stage by stage), every candidate approved.
func history(n int) []stream.Event {
	var evs []stream.Event
	add := func(e stream.Event) {
		e.ID = len(evs) + 1
		evs = append(evs, e)
	}
	fn := func(name string) string { return "${" + name + "FunctionArn}" }
	add(stream.Event{Type: "ExecutionStarted"})
	add(stream.Event{Type: "MapStateEntered", State: "Candidates"})
	for i := 0; i < n; i++ {
		idx := i
		add(stream.Event{Type: "MapIterationStarted", State: "Candidates", Index: &idx})
	}
	scope := func(i int) string { return "Candidates/item[" + strconv.Itoa(i) + "]" }
	for _, stage := range []string{"Gem1", "Gate1", "Gem2", "Gate2", "Gem3", "Gate3", "Gem4", "QAGate", "Approved", "Report"} {
		for i := 0; i < n; i++ {
			switch {
			case stage == "Approved":
				add(stream.Event{Type: "PassStateEntered", State: stage, Scope: scope(i)})
			case stage[:3] == "Gat" || stage == "QAGate":
				add(stream.Event{Type: "ChoiceStateEntered", State: stage, Scope: scope(i)})
				add(stream.Event{Type: "ChoiceStateExited", State: stage, Scope: scope(i)})
			case stage == "Report":
				add(stream.Event{Type: "TaskStateEntered", State: stage, Scope: scope(i), Resource: fn("Report")})
				add(stream.Event{Type: "TaskSucceeded", State: stage, Scope: scope(i), Resource: fn("Report"),
					Output: map[string]any{"candidate_id": fmt.Sprintf("c-%03d", i+1), "decision": "APROBADO"}})
			default:
				add(stream.Event{Type: "TaskStateEntered", State: stage, Scope: scope(i), Resource: fn(stage)})
				if stage == "Gem2" && i == 0 { // one transient failure, retried
					add(stream.Event{Type: "TaskScheduled", State: stage, Scope: scope(i), Resource: fn(stage), Attempt: 2})
				}
				add(stream.Event{Type: "TaskSucceeded", State: stage, Scope: scope(i), Resource: fn(stage), Output: map[string]any{"score": float64(7 + i%4)}})
			}
		}
	}
	add(stream.Event{Type: "ExecutionSucceeded", Output: map[string]any{}})
	return evs
}

func signIn(t *testing.T, b *browsertest.Browser, h harness) {
	t.Helper()
	// Keyboard only: the token field has the focus, Tab reaches the
	// button, Enter submits.
	b.Run("open", 30*time.Second, chromedp.Navigate(h.base+"/"), chromedp.WaitVisible(chromedp.ID("token")))
	if id := browsertest.Eval[string](b, `document.activeElement.id`); id != "token" {
		t.Errorf("focus on %q at sign-in, want the token field", id)
	}
	b.Run("type token", 30*time.Second, chromedp.SendKeys(chromedp.ID("token"), h.token), chromedp.KeyEvent(kb.Tab))
	if id := browsertest.Eval[string](b, `document.activeElement.id`); id != "signin-submit" {
		t.Errorf("Tab from the token field reaches %q, want the submit button", id)
	}
	b.Run("submit", 30*time.Second, chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.ID("runs-table")))
}

// TestBrowserRunPageKeepsUpWith200Candidates streams a 200-candidate
// search (4 005 events) to the run page as fast as the server writes
// them, and checks the page received every event exactly once, in
// order, and shows every candidate's decision; the time it took is the
// figure in docs/BENCHMARKS.md. It also checks the phone width: the page
// never scrolls sideways (wide tables scroll in their own box).
func TestBrowserRunPageKeepsUpWith200Candidates(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: streams 4 005 events to the page, a measurement; make test-long runs it")
	}
	const n = 200
	h := startHarness(t)
	b := browsertest.New(t, 1280, 900)
	signIn(t, b, h)

	// The execution has started (its stream exists) when the page opens;
	// the rest streams while the page follows it.
	evs := history(n)
	if err := h.rec.Record(context.Background(), tenant, execARN, evs[0]); err != nil {
		t.Fatal(err)
	}
	b.Hash("#/ejecucion/search/big/" + execARN)
	b.WaitFor("stream open", `document.getElementById('run-events').dataset.count === '1'`, 15*time.Second)
	start := time.Now()
	go func() {
		for _, ev := range evs[1:] {
			if err := h.rec.Record(context.Background(), tenant, execARN, ev); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	b.WaitFor("all decisions", fmt.Sprintf(`document.querySelectorAll('#candidates-body tr[data-decision="APROBADO"]').length === %d && document.getElementById('run-status').textContent === 'Terminada'`, n), 120*time.Second)
	elapsed := time.Since(start)
	h.log.mu.Lock()
	total := len(h.log.events[tenant+"/"+execARN])
	h.log.mu.Unlock()
	got := browsertest.Eval[string](b, `document.getElementById('run-events').dataset.count + '/' + document.getElementById('run-events').dataset.lastId`)
	if want := fmt.Sprintf("%d/%d", total, total); got != want {
		t.Errorf("the page received %s events (count/last id), want %s: none dropped, none twice", got, want)
	}
	if rows := browsertest.Eval[int](b, `document.querySelectorAll('#candidates-body tr').length`); rows != n {
		t.Errorf("%d candidate rows, want %d", rows, n)
	}
	// Every candidate went through every stage: 4 agents done, 4 gates passed.
	if bad := browsertest.Eval[int](b, `[...document.querySelectorAll('#candidates-body tr')].filter(r => r.querySelectorAll('.chip.done').length !== 5 || r.querySelectorAll('.chip.gate-in').length !== 5).length`); bad != 0 {
		t.Errorf("%d candidates lack a stage or a gate outcome", bad)
	}
	if retry := browsertest.Eval[string](b, `[...document.querySelectorAll('#candidates-body .chip.retry')].map(c => c.closest('tr').dataset.candidate + ' ' + c.textContent).join(';')`); retry != "c-001 GEM2 reintento 2" {
		t.Errorf("retries shown: %q, want c-001's second GEM2 attempt", retry)
	}
	order := browsertest.Eval[bool](b, `[...document.querySelectorAll('#candidates-body tr')].every((r, i) => r.dataset.candidate === 'c-' + String(i + 1).padStart(3, '0'))`)
	if !order {
		t.Error("candidate rows are not in item order")
	}
	t.Logf("BENCHMARK run page: %d candidates, %d events streamed and rendered in %v (%.0f events/s)", n, total, elapsed.Round(time.Millisecond), float64(total)/elapsed.Seconds())
	b.Shot("200-candidates")

	b.Run("phone", 30*time.Second, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	if wide := browsertest.Eval[bool](b, `document.documentElement.scrollWidth > window.innerWidth + 1`); wide {
		t.Errorf("at phone width the page scrolls sideways (%d > %d)", browsertest.Eval[int](b, `document.documentElement.scrollWidth`), browsertest.Eval[int](b, `window.innerWidth`))
	}
	b.Shot("200-candidates-phone")
}

// TestBrowserConfirmationResolvedElsewhere: a pending-confirmation on the
// stream opens the modal with its fields; a confirmation-resolved for it
// (someone else decided) closes it and says so, even while the list still
// says pending. Escape closes the modal from the keyboard.
func TestBrowserConfirmationResolvedElsewhere(t *testing.T) {
	h := startHarness(t)
	b := browsertest.New(t, 390, 844) // a phone
	view := map[string]any{"id": "cf_1", "execution": execARN, "toolName": "senior_review", "category": "decision",
		"sensitivity": "high", "undoable": false, "preview": map[string]any{"candidate_id": "c-005", "decision": "ESCALADO_CONSULTOR_SENIOR"},
		"created_at": time.Now().UTC().Format(time.RFC3339), "expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339), "status": "pending"}
	h.api.mu.Lock()
	h.api.pending = []map[string]any{view}
	h.api.mu.Unlock()
	// Signed in by an identity provider's redirect: the token in the
	// fragment, which the page keeps and clears from the address.
	b.Run("redirect", 30*time.Second, chromedp.Navigate(h.base+"/#id_token="+h.token+"&token_type=Bearer&expires_in=3600"), chromedp.WaitVisible(chromedp.ID("runs-table")))
	if hash := browsertest.Eval[string](b, `location.hash`); hash != "#/" {
		t.Errorf("after the redirect the address keeps %q, want #/", hash)
	}
	b.WaitFor("badge", `document.getElementById('badge').textContent === '1'`, 15*time.Second)

	h.rec.Record(context.Background(), tenant, execARN, stream.Event{ID: 1, Type: "ExecutionStarted"})
	b.Hash("#/ejecucion/search/big/" + execARN)
	pending, _ := eventlog.New(eventlog.TypePendingConfirmation, "p", view)
	h.log.Append(context.Background(), tenant, execARN, pending)
	b.WaitFor("modal", `document.getElementById('confirm-dialog').open`, 15*time.Second)
	for id, want := range map[string]string{"cf-tool": "Revisión del consultor senior", "cf-category": "Decisión", "cf-sensitivity": "alta", "cf-undoable": "no", "cf-candidate": "c-005"} {
		if got := browsertest.Eval[string](b, `document.getElementById('`+id+`').textContent`); got != want {
			t.Errorf("%s %q, want %q", id, got, want)
		}
	}
	if got := browsertest.Eval[string](b, `document.getElementById('cf-preview').textContent`); got != "Decisión actualEscalado al consultor senior" {
		t.Errorf("preview %q", got)
	}
	b.Shot("modal-phone")
	b.Run("escape", 10*time.Second, chromedp.KeyEvent(kb.Escape))
	b.WaitFor("escape closes", `!document.getElementById('confirm-dialog').open`, 5*time.Second)

	// Open it again from the confirmations page, by keyboard.
	b.Hash("#/confirmaciones")
	b.Run("confirmations", 30*time.Second, chromedp.WaitVisible(chromedp.CSS(`#confirmations-list button`)))
	b.WaitFor("the table names the sensitivity as the modal does", `[...document.querySelectorAll('#confirmations-list td')].some(td => td.textContent === 'alta') && ![...document.querySelectorAll('#confirmations-list td')].some(td => td.textContent === 'high')`, 5*time.Second)
	b.Run("review", 10*time.Second, chromedp.Focus(chromedp.CSS(`#confirmations-list button`)), chromedp.KeyEvent(kb.Enter))
	b.WaitFor("modal again", `document.getElementById('confirm-dialog').open`, 5*time.Second)
	b.Hash("#/ejecucion/search/big/" + execARN)
	b.WaitFor("modal on the run page", `document.getElementById('confirm-dialog').open && document.getElementById('confirm-dialog').dataset.id === 'cf_1'`, 15*time.Second)

	resolved, _ := eventlog.New(eventlog.TypeConfirmationResolved, "r", map[string]any{"id": "cf_1", "approved": true})
	h.log.Append(context.Background(), tenant, execARN, resolved)
	b.WaitFor("closed by the event", `!document.getElementById('confirm-dialog').open && /otra sesión/.test(document.getElementById('notice').textContent)`, 15*time.Second)
	b.Shot("resolved-elsewhere")
}

// TestBrowserRunPageWaitsForItsStream: a run page opened before its
// execution has written any event (the stream answers 404) keeps trying,
// then follows the events from the first, none twice, without saying the
// connection was lost.
func TestBrowserRunPageWaitsForItsStream(t *testing.T) {
	h := startHarness(t)
	b := browsertest.New(t, 1280, 900)
	signIn(t, b, h)
	evs := history(2)
	b.Hash("#/ejecucion/search/big/" + execARN)
	// The first attempts find no stream: the page opens it again, twice.
	b.WaitFor("the stream reopened after two 404s", `Number(document.getElementById('run-events').dataset.reopened || 0) >= 2`, 30*time.Second)
	for _, ev := range evs {
		if err := h.rec.Record(context.Background(), tenant, execARN, ev); err != nil {
			t.Fatal(err)
		}
	}
	b.WaitFor("stream followed", `document.getElementById('run-status').textContent === 'Terminada'`, 30*time.Second)
	h.log.mu.Lock()
	total := len(h.log.events[tenant+"/"+execARN])
	h.log.mu.Unlock()
	if got, want := browsertest.Eval[string](b, `document.getElementById('run-events').dataset.count`), strconv.Itoa(total); got != want {
		t.Errorf("the page received %s events, want %d: none dropped, none twice", got, total)
	}
	if notice := browsertest.Eval[string](b, `document.getElementById('notice').hidden ? '' : document.getElementById('notice').textContent`); notice != "" {
		t.Errorf("notice shown: %q", notice)
	}
	b.Shot("stream-waited")
}
