package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/app"
	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/intake"
	"github.com/veredicto/veredicto/internal/poll"
)

// TestServeRunsTheProjectAsAUserWould starts the whole assembled server
// (control plane, HTTP API, auth, event stream) on a loopback port and uses
// it as a client would: a tenant uploads a search, starts it through
// POST /searches (which goes through the server's own Step Functions API),
// reads its state and replays its event stream; another tenant and an
// anonymous caller see nothing.
func TestServeRunsTheProjectAsAUserWould(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	live := startLive(ctx, t)
	base, token := live.base, live.token
	call := func(method, path, tok, body string) (int, string) {
		t.Helper()
		return live.call(ctx, t, method, path, tok, body)
	}
	acme, zeta := token(t, "acme", "test"), token(t, "zeta", "test")

	if st, body := call("POST", "/searches", acme, `{"search_id":"demo-cfo-andina"}`); st != http.StatusAccepted || !strings.Contains(body, `"started": true`) {
		t.Fatalf("start: %d %s", st, body)
	}
	var state intake.SearchState
	poll.Within(30*time.Second, func() bool { // the offline run takes about a second; the check below names the status
		_, body := call("GET", "/searches/demo-cfo-andina", acme, "")
		if err := json.Unmarshal([]byte(body), &state); err != nil {
			t.Fatalf("state: %v: %s", err, body)
		}
		return state.Status != "RUNNING"
	})
	if state.Status != "SUCCEEDED" || len(state.Candidates) != 6 {
		t.Fatalf("state %s with %d candidates, want SUCCEEDED with 6", state.Status, len(state.Candidates))
	}

	// The finished execution's stream replays every event once, in order,
	// ends with finish, and closes.
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/events?execution=acme--demo-cfo-andina", nil)
	req.Header.Set("Authorization", "Bearer "+acme)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("content type %q", ct)
	}
	var ids []string
	gem1Steps := 0
	var last struct {
		Type   string `json:"type"`
		Status string `json:"status"`
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if id, ok := strings.CutPrefix(line, "id: "); ok {
			ids = append(ids, id)
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			json.Unmarshal([]byte(d), &last)
			// Steps of the Gem1 Map state name their agent, the function.
			gem1Steps += strings.Count(d, `"agent":"Gem1Function"`)
		}
	}
	if gem1Steps == 0 {
		t.Error("no step on the stream names the agent Gem1Function")
	}
	if len(ids) < 20 || last.Type != "finish" {
		t.Fatalf("stream: %d events, last %+v; want the whole run ending in finish", len(ids), last)
	}
	for i, id := range ids {
		if want := strconv.Itoa(i + 1); id != want {
			t.Fatalf("event %d has id %s, want %s (ids are dense and ordered)", i, id, want)
		}
	}

	// Another tenant and an anonymous caller see nothing.
	for _, tt := range []struct {
		path, tok string
		status    int
	}{
		{"/searches/demo-cfo-andina", zeta, http.StatusNotFound},
		{"/api/events?execution=acme--demo-cfo-andina", zeta, http.StatusNotFound},
		{"/api/confirmations", zeta, http.StatusOK},
		{"/searches/demo-cfo-andina", "", http.StatusUnauthorized},
		{"/api/confirmations", "", http.StatusUnauthorized},
	} {
		if st, body := call("GET", tt.path, tt.tok, ""); st != tt.status {
			t.Errorf("GET %s: %d %s, want %d", tt.path, st, body, tt.status)
		}
	}
}

// live is a whole `serve` (as assemble builds it) on a loopback port, with
// the example search uploaded for tenant acme; it stops with the test.
type live struct {
	base, data string
	key        []byte
}

func startLive(ctx context.Context, t *testing.T) live {
	t.Helper()
	data := t.TempDir()
	inputs, _, _ := app.LocalLayout(data)
	copyDir(t, filepath.Join("..", "..", "examples", "search-demo"), filepath.Join(inputs, "searches", "acme", "demo-cfo-andina"))
	base := serveInProcess(ctx, t, app.ServerConfig{Data: data}).base
	key, err := auth.LoadOrCreateKey(data)
	if err != nil {
		t.Fatal(err)
	}
	return live{base: base, data: data, key: key}
}

// token signs a local token for tenant, as `veredicto token` does.
func (l live) token(t testing.TB, tenant, subject string) string {
	t.Helper()
	now := time.Now()
	tok, err := auth.SignHS256(l.key, auth.Claims{Subject: subject, Tenant: tenant, Issuer: app.LocalIssuer, Audience: []string{app.LocalAudience},
		IssuedAt: now, ExpiresAt: now.Add(time.Hour)}, auth.DefaultTenantClaim)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// call sends one request to the server with tok as bearer token ("" for
// none) and returns the status and the body.
func (l live) call(ctx context.Context, t *testing.T, method, path, tok, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, method, l.base+path, strings.NewReader(body))
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
