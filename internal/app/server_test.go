package app_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/app"
	"github.com/veredicto/veredicto/internal/control"
)

// documented is the route table of internal/httpapi's doc and the README:
// every one must be registered on the local server.
var documented = []string{
	"GET /healthz",
	"POST /{$}",
	"GET /searches", "POST /searches", "GET /searches/{id}", "GET /searches/{id}/summary",
	"GET /searches/{id}/candidates/{cid}/report", "GET /searches/{id}/sources/{path...}",
	"GET /runs",
	"POST /flags",
	"POST /debates", "GET /debates/{id}", "GET /debates/{id}/report",
	"POST /companion/applications", "GET /companion/applications/{id}",
	"POST /companion/applications/{id}/answer", "POST /companion/applications/{id}/verify",
	"POST /companion/applications/{id}/audit", "POST /companion/applications/{id}/retro",
	"POST /companion/applications/{id}/refine",
	"GET /api/confirmations", "POST /api/confirmations",
	"POST /api/chat", "GET /api/chat/metrics", "POST /api/chat/feedback", "GET /api/chat/agents",
	"GET /api/events",
	"GET /{$}", "GET /config.js",
}

func newServer(t *testing.T) *app.Server {
	t.Helper()
	srv, err := app.NewServer(context.Background(), app.ServerConfig{Data: t.TempDir(), Addr: "127.0.0.1:8080", Self: "http://127.0.0.1:8080",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

// TestRouteTable: every documented route is registered and answers (no
// 404 or 405 once authenticated); an unknown path is 404 and a known path
// asked with another method 405 with Allow, both in JSON.
func TestRouteTable(t *testing.T) {
	srv := newServer(t)
	registered := srv.Routes.Patterns()
	for _, p := range documented {
		if !slices.Contains(registered, p) {
			t.Errorf("documented route %q is not registered (registered: %v)", p, registered)
		}
	}
	for _, tt := range []struct {
		method, path string
		status       int
		allow, want  string
	}{
		{"GET", "/nope", 404, "", `"error": "route GET /nope not found"`},
		{"GET", "/searches/a/b/c", 404, "", "route GET /searches/a/b/c not found"},
		{"GET", "/searches/../auth/hs256.key", 404, "", "not found"},
		{"DELETE", "/searches/s-1", 405, "GET, HEAD", "DELETE is not allowed on /searches/s-1"},
		{"PUT", "/api/confirmations", 405, "GET, HEAD, POST", "PUT is not allowed"},
		{"GET", "/api/chat", 405, "POST", "GET is not allowed"},
		{"GET", "/companion/applications/x/verify", 405, "POST", "GET is not allowed"},
		{"POST", "/companion/applications/x/unknown", 404, "", "not found"},
		{"GET", "/searches", 401, "", "no credentials"},
		{"GET", "/healthz", 200, "", "ok"},
	} {
		r := httptest.NewRequest(tt.method, "http://127.0.0.1:8080"+tt.path, nil)
		w := httptest.NewRecorder()
		srv.Handler.ServeHTTP(w, r)
		if w.Code != tt.status || w.Header().Get("Allow") != tt.allow || !strings.Contains(w.Body.String(), tt.want) {
			t.Errorf("%s %s: %d Allow %q %s; want %d Allow %q containing %q", tt.method, tt.path, w.Code, w.Header().Get("Allow"), w.Body, tt.status, tt.allow, tt.want)
		}
		if tt.status >= 400 && w.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%s %s: Content-Type %q", tt.method, tt.path, w.Header().Get("Content-Type"))
		}
	}
}

// TestEveryDocumentedRouteAnswersATenant: with a tenant's token, no
// documented route of the project's API is a 404 of the router or a 405.
func TestEveryDocumentedRouteAnswersATenant(t *testing.T) {
	data := t.TempDir()
	srv, err := app.NewServer(context.Background(), app.ServerConfig{Data: data, Addr: "127.0.0.1:8080", Self: "http://127.0.0.1:8080",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	tok, err := app.SignLocalToken(data, "acme", "ana", app.MaxLocalTokenTTL)
	if err != nil {
		t.Fatal(err)
	}
	fill := strings.NewReplacer("{id}", "x1", "{cid}", "c-001", "{path...}", "jd.md", "{$}", "")
	for _, p := range documented {
		method, path, _ := strings.Cut(p, " ")
		if path == "/{$}" && method == "POST" {
			continue // the Step Functions API: its own tests
		}
		path = fill.Replace(path)
		if path == "/api/events" {
			path += "?execution=nope"
		}
		r := httptest.NewRequest(method, "http://127.0.0.1:8080"+path, strings.NewReader("{}"))
		r.Header.Set("Authorization", "Bearer "+tok)
		w := httptest.NewRecorder()
		srv.Handler.ServeHTTP(w, r)
		if w.Code == http.StatusMethodNotAllowed || w.Code == http.StatusUnauthorized || strings.Contains(w.Body.String(), "route "+method) {
			t.Errorf("%s: %d %s", p, w.Code, w.Body)
		}
	}
}

// TestTemplateFromAnywhere: with no --template the server registers the
// project's state machines from the binary, whatever the directory; a
// template named but missing is an error naming it, never a server
// without its machines.
func TestTemplateFromAnywhere(t *testing.T) {
	t.Chdir(t.TempDir())
	srv, err := app.NewServer(context.Background(), app.ServerConfig{Data: t.TempDir(), Addr: "127.0.0.1:8080", Self: "http://127.0.0.1:8080",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	machines, _ := srv.Manager.ListStateMachines(context.Background(), "", 100)
	var names []string
	for _, m := range machines {
		names = append(names, m.Name)
	}
	if got := strings.Join(names, " "); got != "CareerCompanionStateMachine DebateStateMachine ExecutiveSearchStateMachine GatesDemoStateMachine" {
		t.Errorf("machines registered from another directory: %s", got)
	}
	_, err = app.NewServer(context.Background(), app.ServerConfig{Data: t.TempDir(), Template: "nope.yaml", Self: "http://127.0.0.1:8080",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err == nil || !strings.Contains(err.Error(), "nope.yaml") {
		t.Errorf("a missing template: %v, want an error naming it", err)
	}
}

// TestStartWithoutItsStateMachine: a start whose state machine is not
// registered answers 503 naming it, never "internal error", and leaves no
// run behind.
func TestStartWithoutItsStateMachine(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	// The server's starter calls its own Step Functions API: it listens.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := app.NewServer(ctx, app.ServerConfig{Data: data, Addr: ln.Addr().String(), Self: "http://" + ln.Addr().String(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if err := app.UploadLocal(ctx, data, filepath.Join("..", "..", "examples", "search-demo"), "acme", "demo-cfo-andina"); err != nil {
		t.Fatal(err)
	}
	if err := srv.Manager.DeleteStateMachine(ctx, control.StateMachineARN(app.ExecutiveSearchMachine)); err != nil {
		t.Fatal(err)
	}
	tok, err := app.SignLocalToken(data, "acme", "ana", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(srv.Handler)
	hs.Listener = ln
	hs.Start()
	defer hs.Close()
	call := func(method, path, body string) (int, string) {
		r, _ := http.NewRequest(method, hs.URL+path, strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	st, body := call("POST", "/searches", `{"search_id":"demo-cfo-andina"}`)
	if st != http.StatusServiceUnavailable || !strings.Contains(body, "ExecutiveSearchStateMachine is not registered") {
		t.Errorf("start: %d %s, want 503 naming the state machine", st, body)
	}
	if st, body := call("GET", "/runs", ""); st != http.StatusOK || !strings.Contains(body, `"runs": []`) {
		t.Errorf("runs after the refused start: %d %s, want none", st, body)
	}
}
