package confirm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/auth"
	. "github.com/veredicto/veredicto/internal/confirm"
	"github.com/veredicto/veredicto/internal/confirm/file"
	"github.com/veredicto/veredicto/internal/eventlog"
	fileeventlog "github.com/veredicto/veredicto/internal/eventlog/file"
	"github.com/veredicto/veredicto/internal/httpapi"
	"github.com/veredicto/veredicto/internal/httpapi/apitest"
	"github.com/veredicto/veredicto/internal/httpapi/confirmapi"
)

// The service's tests are package confirm_test and import confirm with a
// dot: they run on the file adapter (internal/confirm/file), which imports
// confirm, so they cannot be part of it.

func ptr[T any](v T) *T { return &v }

// fakeTasks records SendTask calls; fail, when set, answers instead.
type fakeTasks struct {
	mu        sync.Mutex
	successes map[string][]string // token → outputs
	failures  map[string][]string // token → "error|cause"
	fail      func(token string) error
}

func newFakeTasks() *fakeTasks {
	return &fakeTasks{successes: map[string][]string{}, failures: map[string][]string{}}
}

func (f *fakeTasks) SendTaskSuccess(_ context.Context, in *sfn.SendTaskSuccessInput, _ ...func(*sfn.Options)) (*sfn.SendTaskSuccessOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		if err := f.fail(*in.TaskToken); err != nil {
			return nil, err
		}
	}
	f.successes[*in.TaskToken] = append(f.successes[*in.TaskToken], *in.Output)
	return &sfn.SendTaskSuccessOutput{}, nil
}

func (f *fakeTasks) SendTaskFailure(_ context.Context, in *sfn.SendTaskFailureInput, _ ...func(*sfn.Options)) (*sfn.SendTaskFailureOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		if err := f.fail(*in.TaskToken); err != nil {
			return nil, err
		}
	}
	f.failures[*in.TaskToken] = append(f.failures[*in.TaskToken], *in.Error+"|"+*in.Cause)
	return &sfn.SendTaskFailureOutput{}, nil
}

func (f *fakeTasks) sent(token string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.successes[token]) + len(f.failures[token])
}

type fixture struct {
	dir   string // the data folder: confirmations/, events/, quarantine/
	svc   *Service
	tasks *fakeTasks
	log   *fileeventlog.Log
	clock *clock
	key   []byte
	srv   *httptest.Server
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	f := &fixture{dir: dir, tasks: newFakeTasks(), log: fileeventlog.New(dir + "/events"),
		clock: &clock{t: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}, key: []byte("0123456789abcdef0123456789abcdef")}
	f.svc = &Service{Store: file.New(dir + "/confirmations"), Events: f.log, Tasks: f.tasks, Now: f.clock.Now,
		Logger: slog.New(slog.DiscardHandler)}
	f.srv = apitest.Serve(t, httpapi.New(slog.New(slog.DiscardHandler), confirmapi.Routes{Service: f.svc}), &auth.HS256{Key: f.key}).Server
	return f
}

func yes() *bool { b := true; return &b }

func request(tenant, token string) Request {
	return Request{TaskToken: token, ToolName: "senior_review", Category: "decision", Sensitivity: "high",
		Undoable: yes(), Preview: json.RawMessage(`{"candidate":"c-001","reason":"qa blocks"}`), Tenant: tenant,
		Execution: "arn:aws:states:us-east-1:000000000000:execution:ExecutiveSearch:s-1"}
}

func (f *fixture) create(t *testing.T, tenant, token string) string {
	t.Helper()
	resp, err := f.svc.Confirm(t.Context(), request(tenant, token))
	if err != nil {
		t.Fatalf("Confirm: %v", err)
	}
	return resp.ID
}

func (f *fixture) token(t *testing.T, tenant, sub string) string {
	t.Helper()
	tok, err := auth.SignHS256(f.key, auth.Claims{Subject: sub, Tenant: tenant, ExpiresAt: time.Now().Add(time.Hour)}, "")
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// do sends a request as tenant (no token when tenant is "") and returns
// the status and body.
func (f *fixture) do(t *testing.T, method, tenant, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+"/api/confirmations", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if tenant != "" {
		req.Header.Set("Authorization", "Bearer "+f.token(t, tenant, "ana@"+tenant))
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestConfirmValidatesEachField(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		field  string
		mutate func(*Request)
	}{
		{"task_token", func(r *Request) { r.TaskToken = "" }},
		{"task_token", func(r *Request) { r.TaskToken = strings.Repeat("x", 1025) }},
		{"toolName", func(r *Request) { r.ToolName = "" }},
		{"toolName", func(r *Request) { r.ToolName = "send email!" }},
		{"category", func(r *Request) { r.Category = "" }},
		{"sensitivity", func(r *Request) { r.Sensitivity = "extreme" }},
		{"undoable", func(r *Request) { r.Undoable = nil }},
		{"preview", func(r *Request) { r.Preview = nil }},
		{"preview", func(r *Request) { r.Preview = json.RawMessage("null") }},
		{"preview", func(r *Request) { r.Preview = json.RawMessage(`"` + strings.Repeat("p", MaxPreviewBytes) + `"`) }},
		{"tenant", func(r *Request) { r.Tenant = "a/b" }},
		{"execution", func(r *Request) { r.Execution = "" }},
		{"timeout_seconds", func(r *Request) { r.TimeoutSeconds = -1 }},
	}
	for _, tt := range tests {
		t.Run(tt.field, func(t *testing.T) {
			in := request("acme", "tok")
			tt.mutate(&in)
			_, err := f.svc.Confirm(t.Context(), in)
			var ie *veredicto.InvalidInputError
			if !errors.As(err, &ie) || ie.Field != tt.field {
				t.Fatalf("err = %v, want InvalidInputError on %s", err, tt.field)
			}
			if got := veredicto.ErrorName(err); got != "InvalidInputError" {
				t.Errorf("ASL name = %q", got)
			}
		})
	}
}

func TestConfirmIsIdempotentOnTheToken(t *testing.T) {
	f := newFixture(t)
	in := request("acme", "token-1")
	first, err := f.svc.Confirm(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Add(time.Minute)
	again, err := f.svc.Confirm(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	if !first.Created || again.Created || again.ID != first.ID {
		t.Errorf("first %+v, retry %+v: want one confirmation, created once", first, again)
	}
	list, _, err := f.svc.List(t.Context(), "acme")
	if err != nil || len(list) != 1 {
		t.Fatalf("list = %d items (%v), want 1", len(list), err)
	}
	if !list[0].CreatedAt.Equal(f.clock.Now().Add(-time.Minute)) {
		t.Errorf("created_at = %v: the retry overwrote the record", list[0].CreatedAt)
	}
	evs, err := f.log.Read(t.Context(), "acme", in.Execution, 0, 10)
	if err != nil || len(evs) != 1 || evs[0].Type != eventlog.TypePendingConfirmation {
		t.Fatalf("events = %+v (%v), want one pending-confirmation", evs, err)
	}
	var data map[string]any
	json.Unmarshal(evs[0].Data, &data)
	for _, k := range []string{"id", "toolName", "category", "sensitivity", "undoable", "preview"} {
		if _, ok := data[k]; !ok {
			t.Errorf("pending-confirmation lacks %s: %s", k, evs[0].Data)
		}
	}
	if strings.Contains(string(evs[0].Data), "token-1") {
		t.Error("the event leaks the task token")
	}
}

func TestHTTP(t *testing.T) {
	f := newFixture(t)
	idApprove := f.create(t, "acme", "tok-approve")
	idReject := f.create(t, "acme", "tok-reject")
	idOther := f.create(t, "globex", "tok-other")

	status, body := f.do(t, "GET", "acme", "")
	if status != 200 || !strings.Contains(body, idApprove) || !strings.Contains(body, idReject) || strings.Contains(body, idOther) {
		t.Fatalf("GET = %d %s: want acme's two confirmations only", status, body)
	}
	if !strings.Contains(body, `"more": false`) {
		t.Errorf("GET does not say whether more wait: %s", body)
	}
	if strings.Contains(body, "tok-approve") || strings.Contains(body, "task_token") {
		t.Errorf("GET leaks the task token: %s", body)
	}
	for _, k := range []string{`"execution"`, `"toolName"`, `"category"`, `"sensitivity"`, `"undoable"`, `"preview"`, `"created_at"`} {
		if !strings.Contains(body, k) {
			t.Errorf("GET item lacks %s", k)
		}
	}

	unknown := IDFor("acme", "never")
	tests := []struct {
		name       string
		method     string
		tenant     string
		body       string
		wantStatus int
		wantBody   string
	}{
		{"no token", "GET", "", "", 401, `"error"`},
		{"approve", "POST", "acme", `{"id":"` + idApprove + `","approved":true,"comment":"ok"}`, 200, `"status": "approved"`},
		{"approve again", "POST", "acme", `{"id":"` + idApprove + `","approved":true}`, 409, "already approved by ana@acme"},
		{"reject after approve", "POST", "acme", `{"id":"` + idApprove + `","approved":false}`, 409, "already approved"},
		{"reject", "POST", "acme", `{"id":"` + idReject + `","approved":false,"comment":"not now"}`, 200, `"status": "rejected"`},
		{"unknown id", "POST", "acme", `{"id":"` + unknown + `","approved":true}`, 404, "confirmation " + unknown + " not found"},
		{"not an id", "POST", "acme", `{"id":"x","approved":true}`, 404, "not found"},
		{"missing id", "POST", "acme", `{"approved":true}`, 400, `id: is required`},
		{"missing approved", "POST", "acme", `{"id":"` + idApprove + `"}`, 400, `approved: is required`},
		{"approved not bool", "POST", "acme", `{"id":"` + idApprove + `","approved":"yes"}`, 400, `approved: must be true or false`},
		{"approved null", "POST", "acme", `{"id":"` + idApprove + `","approved":null}`, 400, `approved: must be true or false`},
		{"comment not string", "POST", "acme", `{"id":"` + idApprove + `","approved":true,"comment":3}`, 400, `comment: must be a string`},
		{"unknown field", "POST", "acme", `{"id":"` + idApprove + `","approved":true,"by":"x"}`, 400, `by: is not a known field`},
		{"not json", "POST", "acme", `{`, 400, `body: not valid JSON`},
		{"array", "POST", "acme", `[]`, 400, `body: must be a JSON object`},
		{"put", "PUT", "acme", `{}`, 405, "not allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := f.do(t, tt.method, tt.tenant, tt.body)
			if status != tt.wantStatus || !strings.Contains(body, tt.wantBody) {
				t.Errorf("got %d %s, want %d containing %q", status, body, tt.wantStatus, tt.wantBody)
			}
		})
	}

	t.Run("another tenant's id is the same 404", func(t *testing.T) {
		_, missing := f.do(t, "POST", "acme", `{"id":"`+idOther+`","approved":true}`)
		_, gone := f.do(t, "POST", "globex", `{"id":"`+IDFor("globex", "never")+`","approved":true}`)
		if want := strings.ReplaceAll(gone, IDFor("globex", "never"), idOther); missing != want {
			t.Errorf("other tenant's: %s\nmissing: %s\nwant identical bodies", missing, gone)
		}
		if f.tasks.sent("tok-other") != 0 {
			t.Error("another tenant resolved globex's confirmation")
		}
	})

	t.Run("what the workflow receives", func(t *testing.T) {
		if got := f.tasks.successes["tok-approve"]; len(got) != 1 {
			t.Fatalf("SendTaskSuccess calls = %v, want exactly 1", got)
		} else {
			var out map[string]any
			json.Unmarshal([]byte(got[0]), &out)
			if out["approved"] != true || out["decided_by"] != "ana@acme" || out["comment"] != "ok" || out["decided_at"] != "2026-11-23T12:00:00Z" {
				t.Errorf("success output = %s", got[0])
			}
		}
		if got := f.tasks.failures["tok-reject"]; len(got) != 1 || !strings.HasPrefix(got[0], "ConfirmationRejected|") || !strings.Contains(got[0], "not now") {
			t.Errorf("SendTaskFailure calls = %v, want one ConfirmationRejected with the comment", got)
		}
		if n := len(f.tasks.successes["tok-reject"]) + len(f.tasks.failures["tok-approve"]); n != 0 {
			t.Errorf("%d calls of the wrong kind", n)
		}
	})

	t.Run("events", func(t *testing.T) {
		evs, _ := f.log.Read(t.Context(), "acme", request("", "").Execution, 0, 100)
		var types []string
		for _, e := range evs {
			types = append(types, e.Type)
		}
		want := "[pending-confirmation pending-confirmation confirmation-resolved confirmation-resolved]"
		if fmt.Sprint(types) != want {
			t.Errorf("acme's events = %v, want %s", types, want)
		}
	})

	status, body = f.do(t, "GET", "acme", "")
	if status != 200 || strings.Contains(body, idApprove) || strings.Contains(body, idReject) {
		t.Errorf("GET after resolving = %d %s, want none pending", status, body)
	}
}

func TestFailingSendTaskKeepsTheDecisionAndDeliversOnce(t *testing.T) {
	f := newFixture(t)
	id := f.create(t, "acme", "tok")
	calls := 0
	f.tasks.fail = func(string) error {
		calls++
		if calls == 1 {
			return errors.New("connection refused")
		}
		return nil
	}
	status, body := f.do(t, "POST", "acme", `{"id":"`+id+`","approved":true}`)
	if status != 503 || !strings.Contains(body, "decision recorded") {
		t.Fatalf("first POST = %d %s, want 503 saying the decision is recorded", status, body)
	}
	status, body = f.do(t, "GET", "acme", "")
	if !strings.Contains(body, `"status": "resolving"`) {
		t.Errorf("GET = %d %s, want the confirmation shown as resolving", status, body)
	}
	// Another decision cannot replace the recorded one.
	if status, body = f.do(t, "POST", "acme", `{"id":"`+id+`","approved":false}`); status != 409 {
		t.Errorf("contrary POST = %d %s, want 409", status, body)
	}
	if status, body = f.do(t, "POST", "acme", `{"id":"`+id+`","approved":true}`); status != 200 {
		t.Fatalf("retried POST = %d %s, want 200", status, body)
	}
	if n := f.tasks.sent("tok"); n != 1 {
		t.Errorf("successful sends = %d, want exactly 1", n)
	}
	if status, _ = f.do(t, "POST", "acme", `{"id":"`+id+`","approved":true}`); status != 409 {
		t.Errorf("POST after delivery = %d, want 409", status)
	}
	if n := f.tasks.sent("tok"); n != 1 {
		t.Errorf("successful sends after a third POST = %d, want 1", n)
	}
}

func TestTokenGone(t *testing.T) {
	gone := &types.TaskTimedOut{Message: ptr("Task Timed Out")}
	t.Run("first attempt: expired, 410", func(t *testing.T) {
		f := newFixture(t)
		id := f.create(t, "acme", "tok")
		f.tasks.fail = func(string) error { return gone }
		status, body := f.do(t, "POST", "acme", `{"id":"`+id+`","approved":true}`)
		if status != 410 || !strings.Contains(body, "expired") {
			t.Errorf("POST = %d %s, want 410 expired", status, body)
		}
		if status, _ = f.do(t, "POST", "acme", `{"id":"`+id+`","approved":true}`); status != 410 {
			t.Errorf("again = %d, want 410", status)
		}
	})
	t.Run("redelivery: the decision stands, unconfirmed", func(t *testing.T) {
		f := newFixture(t)
		id := f.create(t, "acme", "tok")
		f.tasks.fail = func(string) error { return &types.InvalidToken{} }
		// A crash after SendTask reached the workflow but before the
		// outcome was written leaves the record resolving with one attempt.
		rec, _ := f.svc.Store.Get(t.Context(), "acme", id)
		rec.Status, rec.Attempts = StatusResolving, 1
		rec.Decision = &Decision{Approved: true, DecidedBy: "ana@acme", DecidedAt: f.clock.Now()}
		if err := f.svc.Store.Put(t.Context(), rec, rec.Version); err != nil {
			t.Fatal(err)
		}
		v, err := f.svc.Redeliver(t.Context(), "acme", id)
		if err != nil || v.Status != StatusApproved || v.Delivery != "unconfirmed" {
			t.Errorf("Redeliver = %+v, %v; want approved, delivery unconfirmed", v, err)
		}
	})
}

func TestLazyExpiry(t *testing.T) {
	f := newFixture(t)
	in := request("acme", "tok")
	in.TimeoutSeconds = 3600
	resp, err := f.svc.Confirm(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Add(2 * time.Hour)
	if list, _, _ := f.svc.List(t.Context(), "acme"); len(list) != 0 {
		t.Errorf("list after the timeout = %+v, want none", list)
	}
	status, body := f.do(t, "POST", "acme", `{"id":"`+resp.ID+`","approved":true}`)
	if status != 410 {
		t.Errorf("POST after the timeout = %d %s, want 410", status, body)
	}
	if f.tasks.sent("tok") != 0 {
		t.Error("a decision was sent after the timeout")
	}
}

func TestConcurrentDecisionsOneWins(t *testing.T) {
	f := newFixture(t)
	id := f.create(t, "acme", "tok")
	var wg sync.WaitGroup
	statuses := make([]int, 8)
	for i := range statuses {
		wg.Go(func() {
			statuses[i], _ = f.do(t, "POST", "acme", fmt.Sprintf(`{"id":%q,"approved":%v}`, id, i%2 == 0))
		})
	}
	wg.Wait()
	ok := 0
	for _, s := range statuses {
		switch s {
		case 200:
			ok++
		case 409:
		default:
			t.Errorf("status %d, want 200 or 409", s)
		}
	}
	if f.tasks.sent("tok") != 1 {
		t.Errorf("sends = %d, want 1 (statuses %v)", f.tasks.sent("tok"), statuses)
	}
	if ok < 1 {
		t.Errorf("no POST won: %v", statuses)
	}
}

// A decision recorded before a crash (resolving, SendTask failed) is
// delivered by the restarted server's sweep, once, for every tenant, and a
// record owned by another process is left to it.
func TestRedeliverAllAfterARestart(t *testing.T) {
	f := newFixture(t)
	acme := f.create(t, "acme", "tok-acme")
	beta := f.create(t, "beta", "tok-beta")
	pending := f.create(t, "acme", "tok-pending")
	f.tasks.fail = func(string) error { return errors.New("connection refused") }
	for _, c := range []struct{ tenant, id string }{{"acme", acme}, {"beta", beta}} {
		if status, body := f.do(t, "POST", c.tenant, `{"id":"`+c.id+`","approved":true}`); status != 503 {
			t.Fatalf("POST %s = %d %s, want 503 (decision recorded, delivery failed)", c.id, status, body)
		}
	}
	f.tasks.fail = nil
	f.clock.Add(time.Hour) // past any delivery lease

	store := f.svc.Store.(*file.Store)
	tenants, err := store.Tenants()
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(tenants)
	if strings.Join(tenants, ",") != "acme,beta" {
		t.Fatalf("Tenants = %v, want [acme beta]", tenants)
	}
	other := *f.svc
	other.Resolver = "another-process"
	if n, err := other.RedeliverAll(context.Background(), tenants); err != nil || n != 0 {
		t.Errorf("a process that owns none delivered %d (%v), want 0", n, err)
	}
	restarted := *f.svc
	n, err := restarted.RedeliverAll(context.Background(), tenants)
	if err != nil || n != 2 {
		t.Fatalf("RedeliverAll = %d, %v; want 2 delivered", n, err)
	}
	for _, tok := range []string{"tok-acme", "tok-beta"} {
		if got := f.tasks.sent(tok); got != 1 {
			t.Errorf("%s: sends = %d, want 1", tok, got)
		}
	}
	if got := f.tasks.sent("tok-pending"); got != 0 {
		t.Errorf("a pending confirmation (%s) was sent %d times: nobody decided it", pending, got)
	}
	if n, err := restarted.RedeliverAll(context.Background(), tenants); err != nil || n != 0 {
		t.Errorf("second sweep delivered %d (%v), want 0", n, err)
	}
}

// interleaving is a Store that, once, lets another writer change a record
// between a Resolve's read and its write.
type interleaving struct {
	Store
	once  sync.Once
	other func()
}

func (s *interleaving) Put(ctx context.Context, r Record, expect int) error {
	if r.Status == StatusResolving {
		s.once.Do(s.other)
	}
	return s.Store.Put(ctx, r, expect)
}

// A keyed question asked first without a task token (the workflow looking
// a decision up) and then with one (the workflow waiting) is rewritten in
// between; a consultant's decision landing in that instant is applied to
// the rewritten record, not refused as a concurrent write.
func TestDecisionWhileTheWorkflowAsksAgain(t *testing.T) {
	f := newFixture(t)
	lookup := request("acme", "")
	lookup.Key = "senior_review/s-1/c-005"
	first, err := f.svc.Confirm(t.Context(), lookup)
	if err != nil {
		t.Fatal(err)
	}
	store := &interleaving{Store: f.svc.Store}
	store.other = func() {
		ask := lookup
		ask.TaskToken = "token-of-the-waiting-task"
		if _, err := f.svc.Confirm(t.Context(), ask); err != nil {
			t.Errorf("the workflow's second ask: %v", err)
		}
	}
	f.svc.Store = store
	view, err := f.svc.Resolve(t.Context(), "acme", Resolution{ID: first.ID, Approved: true, By: "ana@acme", Comment: "ok"})
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	if view.Status != StatusApproved {
		t.Errorf("status %s, want approved", view.Status)
	}
	if n := f.tasks.sent("token-of-the-waiting-task"); n != 1 {
		t.Errorf("the waiting task got %d answers, want 1", n)
	}
}

// TestExpireExecution: when an execution ends, the confirmations its
// tasks waited on expire (announced on its stream); another execution's,
// and a keyed question without a token that a later run applies, stay.
func TestExpireExecution(t *testing.T) {
	f := newFixture(t)
	ended := request("acme", "tok-ended").Execution
	mine := f.create(t, "acme", "tok-ended")
	other := request("acme", "tok-other")
	other.Execution += "-2"
	otherResp, err := f.svc.Confirm(t.Context(), other)
	if err != nil {
		t.Fatal(err)
	}
	keyed := request("acme", "")
	keyed.Key = "senior-review:c-001"
	keyedResp, err := f.svc.Confirm(t.Context(), keyed)
	if err != nil {
		t.Fatal(err)
	}
	n, err := f.svc.ExpireExecution(t.Context(), "acme", ended)
	if err != nil || n != 1 {
		t.Fatalf("ExpireExecution = %d, %v; want 1", n, err)
	}
	list, _, _ := f.svc.List(t.Context(), "acme")
	if len(list) != 2 || !slices.ContainsFunc(list, func(v View) bool { return v.ID == otherResp.ID }) || !slices.ContainsFunc(list, func(v View) bool { return v.ID == keyedResp.ID }) {
		t.Errorf("open after the end: %+v, want the other execution's and the keyed question", list)
	}
	if _, err := f.svc.Resolve(t.Context(), "acme", Resolution{ID: mine, Approved: true, By: "ana"}); httpapi.StatusOf(err) != 410 {
		t.Errorf("a decision after the end: %v, want 410", err)
	}
	evs, err := f.log.Read(t.Context(), "acme", ended, 0, 10)
	if err != nil || len(evs) == 0 || !strings.Contains(string(evs[len(evs)-1].Data), `"expired"`) {
		t.Errorf("the execution's stream does not announce the expiry: %v %v", evs, err)
	}
	if n, _ := f.svc.ExpireExecution(t.Context(), "acme", ended); n != 0 {
		t.Errorf("a second call expired %d", n)
	}
}
