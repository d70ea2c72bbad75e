package searchapi_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/app"
	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/httpapi"
	"github.com/veredicto/veredicto/internal/httpapi/apitest"
	"github.com/veredicto/veredicto/internal/httpapi/searchapi"
	"github.com/veredicto/veredicto/internal/intake"
	"github.com/veredicto/veredicto/internal/search/offline"
	"github.com/veredicto/veredicto/internal/starter"
)

// upload copies examples/search-demo to the local inputs bucket as
// searches/<tenant>/<id>/, with the example's search.yaml naming id.
func upload(t *testing.T, data, tenant, id string) {
	t.Helper()
	if err := app.UploadLocal(context.Background(), data, "../../../examples/search-demo", tenant, id); err != nil {
		t.Fatal(err)
	}
	inputs, _, _ := app.LocalLayout(data)
	yml := filepath.Join(inputs, "searches", tenant, id, "search.yaml")
	b, err := os.ReadFile(yml)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(yml, bytes.Replace(b, []byte("demo-cfo-andina"), []byte(id), 1), 0o644); err != nil {
		t.Fatal(err)
	}
}

// heldStarter starts the executions named in held without running them,
// so they stay RUNNING; others run in-process to the end.
type heldStarter struct {
	intake.Starter
	held    map[string]bool
	mu      *sync.Mutex
	started map[string]bool
}

func (h heldStarter) Start(ctx context.Context, name string, input []byte) (starter.Execution, error) {
	if h.held[name] {
		h.mu.Lock()
		defer h.mu.Unlock()
		first := !h.started[name]
		h.started[name] = true
		return starter.Execution{Name: name, Started: first}, nil
	}
	return h.Starter.Start(ctx, name, input)
}

func (h heldStarter) Describe(ctx context.Context, name string) (starter.Status, error) {
	if h.held[name] {
		return starter.Status{Name: name, Status: "RUNNING"}, nil
	}
	return h.Starter.Describe(ctx, name)
}

// world is one deployment: acme has a finished search "done", a running
// search "run" and an uploaded, never started search "up"; with seed false
// nothing exists at all.
func world(t *testing.T, seed bool) http.Handler {
	return httpapi.New(nil, worldRoutes(t, seed))
}

// worldRoutes are world's routes, for a test to add to.
func worldRoutes(t *testing.T, seed bool) searchapi.Routes {
	t.Helper()
	data := t.TempDir()
	a := app.NewLocal(data, offline.New(), nil)
	svc := *a.Intake
	svc.Starter = heldStarter{Starter: a.Intake.Starter, held: map[string]bool{starter.ExecutionName("acme", "run"): true},
		mu: &sync.Mutex{}, started: map[string]bool{}}
	rt := searchapi.Routes{Searches: &svc}
	if seed {
		for _, id := range []string{"done", "run", "up"} {
			upload(t, data, "acme", id)
		}
		for _, id := range []string{"done", "run"} {
			if _, err := svc.Start(context.Background(), "acme", "api", intake.StartRequest{SearchID: id}); err != nil {
				t.Fatalf("start %s: %v", id, err)
			}
		}
	}
	return rt
}

// response is what a route answered.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// serve asks h as tenant's authenticated principal ("" for none).
func serve(h http.Handler, method, path, tenant, body string, header http.Header) response {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	for k, v := range header {
		r.Header[k] = v
	}
	if tenant != "" {
		r = apitest.AsTenant(r, tenant)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return response{w.Code, w.Header(), w.Body.Bytes()}
}

var markdown = http.Header{"Accept": {"text/markdown"}}

// TestOtherTenantsSearchIsIndistinguishableFromAMissingOne asks every
// route, for each of acme's searches (finished, running, uploaded) and for
// an id nobody has, as acme and as globex. Globex's answers in a world
// where acme's searches exist must be byte for byte the answers of a world
// where nothing exists.
func TestOtherTenantsSearchIsIndistinguishableFromAMissingOne(t *testing.T) {
	full, empty := world(t, true), world(t, false)
	type route struct {
		name, method, path, body string
		header                   http.Header
	}
	routes := func(id string) []route {
		return []route{
			{"start", "POST", "/searches", `{"search_id":"` + id + `"}`, nil},
			{"state", "GET", "/searches/" + id, "", nil},
			{"report json", "GET", "/searches/" + id + "/candidates/c-001/report", "", nil},
			{"report md", "GET", "/searches/" + id + "/candidates/c-001/report", "", markdown},
			{"unknown candidate", "GET", "/searches/" + id + "/candidates/c-999/report", "", nil},
		}
	}
	// acme's own view: what exists answers.
	own := []struct {
		id, route string
		status    int
		want      string
	}{
		{"done", "state", 200, `"status": "SUCCEEDED"`},
		{"done", "report json", 200, `"decision": "APROBADO"`},
		{"done", "report md", 200, "## Decisión: Aprobado"},
		{"done", "unknown candidate", 404, "report of candidate c-999 in search done not found"},
		{"run", "state", 200, `"status": "RUNNING"`},
		{"run", "report json", 404, "report of candidate c-001 in search run not found"},
		{"up", "state", 404, `"error": "search up not found"`},
		{"done", "start", 200, `"started": false`},
		{"run", "start", 200, `"started": false`},
		{"up", "start", 202, `"started": true`}, // last: it starts acme's upload
	}
	for _, tt := range own {
		for _, r := range routes(tt.id) {
			if r.name != tt.route {
				continue
			}
			got := serve(full, r.method, r.path, "acme", r.body, r.header)
			if got.Status != tt.status || !strings.Contains(string(got.Body), tt.want) {
				t.Errorf("acme %s %s: %d %s; want %d containing %q", r.name, tt.id, got.Status, got.Body, tt.status, tt.want)
			}
		}
	}
	for _, id := range []string{"done", "run", "up", "nope"} {
		for _, r := range routes(id) {
			got := serve(full, r.method, r.path, "globex", r.body, r.header)
			want := serve(empty, r.method, r.path, "globex", r.body, r.header)
			if got.Status != want.Status || !bytes.Equal(got.Body, want.Body) {
				t.Errorf("globex %s %s: got %d %s; a missing search answers %d %s", r.name, id, got.Status, got.Body, want.Status, want.Body)
			}
			if r.name != "start" && got.Status != http.StatusNotFound {
				t.Errorf("globex %s %s: status %d, want 404", r.name, id, got.Status)
			}
		}
	}
	// Globex's list is empty in both worlds; acme's lists its three
	// started searches.
	if got, want := serve(full, "GET", "/searches", "globex", "", nil), serve(empty, "GET", "/searches", "globex", "", nil); !bytes.Equal(got.Body, want.Body) {
		t.Errorf("globex list: %s, want %s", got.Body, want.Body)
	}
	var list struct{ Searches []intake.SearchItem }
	json.Unmarshal(serve(full, "GET", "/searches", "acme", "", nil).Body, &list)
	if len(list.Searches) != 3 || list.Searches[0].SearchID != "done" || list.Searches[2].SearchID != "up" {
		t.Errorf("acme list %+v, want done, run, up", list.Searches)
	}
}

func TestRequestsTheCallerMustFix(t *testing.T) {
	rt := world(t, true)
	tests := []struct {
		name, method, path, tenant, body string
		status                           int
		want                             string
	}{
		{"no tenant", "GET", "/searches/done", "", "", 401, "no credentials: send Authorization: Bearer"},
		{"bad body", "POST", "/searches", "acme", `{"search":"x"}`, 400, `body: search: is not a known field`},
		{"wrong type", "POST", "/searches", "acme", `{"search_id":"x","thresholds":{"gem1":"high"}}`, 400, "thresholds: must be a number, not a JSON string"},
		{"bad id", "POST", "/searches", "acme", `{"search_id":"../etc"}`, 400, "search_id"},
		{"not uploaded", "POST", "/searches", "acme", `{"search_id":"ghost"}`, 422, "searches/acme/ghost/: required document(s) missing: jd.md, kickoff.md"},
		{"every problem named", "POST", "/searches", "acme", `{"search_id":"ghost","concurrency":99,"thresholds":{"gem1":6.5}}`, 400,
			`"problems": [
    "concurrency 99 is out of range 1–40",
    "thresholds.gem1: 6.5 is not a whole number (gates compare whole scores; a fraction would be truncated): use 6 or 7",
    "searches/acme/ghost/: required document(s) missing: jd.md, kickoff.md"
  ]`},
		{"malformed search id", "GET", "/searches/%2e%2e", "acme", "", 404, "not found"},
		{"fraction for a whole number", "POST", "/searches", "acme", `{"search_id":"x","concurrency":1.5}`, 400, "concurrency: must be a whole number, not a JSON number 1.5"},
		{"null body", "POST", "/searches", "acme", `null`, 400, "the search cannot start: search_id is required"},
		{"escaped accents are the id's letters", "GET", "/searches/b%C3%BAsqueda-%C3%B1", "acme", "", 404, "búsqueda-ñ not found"},
		{"malformed candidate id", "GET", "/searches/done/candidates/%2e%2e/report", "acme", "", 404, "not found"},
		{"odd candidate id", "GET", "/searches/done/candidates/c%2F1/report", "acme", "", 400, "candidate_id"},
		{"wrong method", "DELETE", "/searches/done", "acme", "", 405, "DELETE is not allowed on /searches/done; use GET, HEAD"},
		{"unknown route", "GET", "/nope", "acme", "", 404, "route GET /nope not found"},
		{"below a route", "GET", "/searches/a/b/c", "acme", "", 404, "route GET /searches/a/b/c not found"},
		{"flags not mounted", "POST", "/flags", "acme", "{}", 404, "route POST /flags not found"},
	}
	for _, tt := range tests {
		got := serve(rt, tt.method, tt.path, tt.tenant, tt.body, nil)
		if got.Status != tt.status || !strings.Contains(string(got.Body), tt.want) {
			t.Errorf("%s: %d %s; want %d containing %q", tt.name, got.Status, got.Body, tt.status, tt.want)
		}
		if ct := got.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s: content type %q", tt.name, ct)
		}
	}
}

// TestAPIGatewayFront: the tenant comes from the JWT claim the authorizer
// verified, a base64 body is decoded, headers reach the route.
func TestAPIGatewayFront(t *testing.T) {
	g := &httpapi.Gateway{Handler: world(t, true), TenantClaim: "custom:org"}
	h := g.Handle
	ev := func(method, path, tenant, body string, b64 bool, headers map[string]string) events.APIGatewayV2HTTPRequest {
		req := events.APIGatewayV2HTTPRequest{RawPath: path, Body: body, IsBase64Encoded: b64, Headers: headers}
		req.RequestContext.HTTP.Method = method
		if tenant != "" {
			req.RequestContext.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
				JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: map[string]string{"custom:org": tenant}},
			}
		}
		return req
	}
	tests := []struct {
		name   string
		req    events.APIGatewayV2HTTPRequest
		status int
		want   string
		ct     string
	}{
		{"claim", ev("GET", "/searches/done", "acme", "", false, nil), 200, `"SUCCEEDED"`, "application/json"},
		{"no claim", ev("GET", "/searches/done", "", "", false, nil), 401, "custom:org", "application/json"},
		{"tenant that cannot name a folder", ev("GET", "/searches/done", "../acme", "", false, nil), 401, "is not a tenant name", "application/json"},
		{"invalid escape", ev("GET", "/searches/%zz", "acme", "", false, nil), 400, "malformed request", "application/json"},
		{"base64 body", ev("POST", "/searches", "acme", base64.StdEncoding.EncodeToString([]byte(`{"search_id":"done"}`)), true, nil), 200, `"started": false`, "application/json"},
		{"bad base64", ev("POST", "/searches", "acme", "%%%", true, nil), 400, "base64", "application/json"},
		{"accept header", ev("GET", "/searches/done/candidates/c-001/report", "acme", "", false, map[string]string{"accept": "text/markdown"}), 200, "## Decisión", "text/markdown; charset=utf-8"},
	}
	for _, tt := range tests {
		resp, err := h(context.Background(), tt.req)
		if err != nil || resp.StatusCode != tt.status || !strings.Contains(resp.Body, tt.want) || resp.Headers["Content-Type"] != tt.ct {
			t.Errorf("%s: %d %v %s %v; want %d containing %q as %s", tt.name, resp.StatusCode, resp.Headers, resp.Body, err, tt.status, tt.want, tt.ct)
		}
	}
}

// TestBehindTheAuthenticator serves the routes as the local server does:
// a bearer token's tenant is the caller's, another tenant's search answers
// 404, and no token 401.
func TestBehindTheAuthenticator(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	srv := apitest.Serve(t, world(t, true), &auth.HS256{Key: key})
	get := func(path, tenant string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		if tenant != "" {
			tok, err := auth.SignHS256(key, auth.Claims{Tenant: tenant, Subject: "ana", ExpiresAt: time.Now().Add(time.Hour)}, "")
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/searches/done", "acme"); code != 200 || !strings.Contains(body, `"SUCCEEDED"`) {
		t.Errorf("acme: %d %s", code, body)
	}
	if code, body := get("/searches/done", "globex"); code != 404 || body != "{\n  \"error\": \"search done not found\"\n}\n" {
		t.Errorf("globex: %d %q", code, body)
	}
	if code, _ := get("/searches/done", ""); code != 401 {
		t.Errorf("no tenant: %d, want 401", code)
	}
}

// outage is a context store that is down.
type outage struct{ intake.Records }

func (outage) Get(context.Context, string) ([]byte, bool, error) {
	return nil, false, &veredicto.TransientError{Op: "dynamo get", Err: errors.New("503 ServiceUnavailable")}
}

func TestStorageOutageIsA503WithoutInternals(t *testing.T) {
	rt := httpapi.New(nil, searchapi.Routes{Searches: &intake.Service{Records: outage{}}})
	got := serve(rt, "GET", "/searches/done", "acme", "", nil)
	if got.Status != http.StatusServiceUnavailable || string(got.Body) != "{\n  \"error\": \"temporarily unavailable; retry later\"\n}\n" {
		t.Errorf("outage: %d %s; want 503 without internals", got.Status, got.Body)
	}
}

// TestAccentedSearchIDsOverHTTP: ids may hold accents and ñ; clients send
// them percent-encoded, and every route reads them back as the id.
func TestAccentedSearchIDsOverHTTP(t *testing.T) {
	data := t.TempDir()
	a := app.NewLocal(data, offline.New(), nil)
	rt := httpapi.New(nil, searchapi.Routes{Searches: a.Intake})
	upload(t, data, "acme", "búsqueda-ñ")
	if _, err := a.Intake.Start(context.Background(), "acme", "api", intake.StartRequest{SearchID: "búsqueda-ñ"}); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/searches/b%C3%BAsqueda-%C3%B1", "/searches/b%C3%BAsqueda-%C3%B1/summary"} {
		if resp := serve(rt, "GET", path, "acme", "", nil); resp.Status != http.StatusOK {
			t.Errorf("GET %s: %d %s", path, resp.Status, resp.Body)
		}
	}
}
