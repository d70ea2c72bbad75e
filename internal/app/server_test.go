package app_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/veredicto/veredicto/internal/app"
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
	"POST /api/chat", "GET /api/chat/metrics",
	"GET /api/events",
	"GET /{$}", "GET /config.js",
}

func newServer(t *testing.T) *app.Server {
	t.Helper()
	srv, err := app.NewServer(context.Background(), app.ServerConfig{Data: t.TempDir(), Addr: "127.0.0.1:8080", Self: "http://127.0.0.1:8080",
		Template: filepath.Join("..", "..", "template.yaml"), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
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
		Template: filepath.Join("..", "..", "template.yaml"), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
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
