package httpapi_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/httpapi"
	"github.com/veredicto/veredicto/internal/httpapi/apitest"
)

// down is a token verifier whose issuer does not answer.
type down struct{}

func (down) Verify(context.Context, string) (auth.Claims, error) {
	return auth.Claims{}, errors.New("jwks: connection refused")
}

// whoami answers the principal a route was served for.
func whoami() http.Handler {
	m := httpapi.NewMux(nil)
	m.Handle("GET /whoami", httpapi.RequireTenant(func(w http.ResponseWriter, r *http.Request, p auth.Principal) {
		io.WriteString(w, p.Name+"@"+p.Tenant+" via "+p.Via)
	}))
	m.Handle("POST /whoami", httpapi.RequireTenant(func(w http.ResponseWriter, r *http.Request, p auth.Principal) {
		b, _ := io.ReadAll(r.Body)
		io.WriteString(w, p.Name+"@"+p.Tenant+" read "+string(b))
	}))
	return m
}

// TestAuthenticator: one middleware for every route: the Host is checked
// first, then a SigV4 signature or a bearer token names the principal;
// the project's routes want a tenant's.
func TestAuthenticator(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	keys := auth.OpenKeys(t.TempDir())
	hosts := auth.NewHostPolicy("127.0.0.1:8080")
	authn := &httpapi.Authenticator{Hosts: &hosts, SigV4: &auth.SigV4{Keys: keys, Region: "us-east-1"},
		Tokens: &auth.HS256{Key: key}, QueryToken: []string{"/api/events"}}
	h := authn.Wrap(whoami())
	tok, err := auth.SignHS256(key, auth.Claims{Tenant: "acme", Subject: "ana", ExpiresAt: time.Now().Add(time.Hour)}, "")
	if err != nil {
		t.Fatal(err)
	}
	tenantKey, _ := keys.Ensure(auth.KeySpec{Name: "luis", Tenant: "acme"})
	operatorKey, _ := keys.Ensure(auth.KeySpec{Name: "ops", Operator: true})
	req := func(method, target, host, authz, body string) *http.Request {
		r := httptest.NewRequest(method, "http://127.0.0.1:8080"+target, strings.NewReader(body))
		r.Host = host
		if authz != "" {
			r.Header.Set("Authorization", authz)
		}
		return r
	}
	signed := func(k auth.Key, body string) *http.Request {
		r := httptest.NewRequest("POST", "http://127.0.0.1:8080/whoami", strings.NewReader(body))
		apitest.Sign(t, r, []byte(body), k, "execute-api")
		return r
	}
	for _, tt := range []struct {
		name   string
		r      *http.Request
		status int
		want   string
	}{
		{"bearer", req("GET", "/whoami", "127.0.0.1:8080", "Bearer "+tok, ""), 200, "ana@acme via jwt"},
		{"bearer through localhost", req("GET", "/whoami", "localhost:8080", "Bearer "+tok, ""), 200, "ana@acme"},
		{"DNS rebinding", req("GET", "/whoami", "attacker.example:8080", "Bearer "+tok, ""), 421, `host \"attacker.example:8080\" is not a name of this server`},
		{"no credentials", req("GET", "/whoami", "127.0.0.1:8080", "", ""), 401, "no credentials"},
		{"bad token", req("GET", "/whoami", "127.0.0.1:8080", "Bearer "+tok[:len(tok)-3]+"AAA", ""), 401, "bad signature"},
		{"query token off this path", req("GET", "/whoami?access_token="+tok, "127.0.0.1:8080", "", ""), 401, "no credentials"},
		{"malformed token", func() *http.Request {
			r := req("GET", "/whoami", "127.0.0.1:8080", "Bearer x.y.z", "")
			return r
		}(), 401, "malformed"},
		{"a tenant's key", signed(tenantKey, `{"a":1}`), 200, `luis@acme read {"a":1}`},
		{"an operator's key", signed(operatorKey, `{}`), 403, "ops is an operator key"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, tt.r)
			if w.Code != tt.status || !strings.Contains(w.Body.String(), tt.want) {
				t.Errorf("%d %s, want %d containing %q", w.Code, w.Body, tt.status, tt.want)
			}
		})
	}

	outage := (&httpapi.Authenticator{Tokens: down{}}).Wrap(whoami())
	w := httptest.NewRecorder()
	outage.ServeHTTP(w, req("GET", "/whoami", "127.0.0.1:8080", "Bearer a.b.c", ""))
	if w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "cannot verify tokens") {
		t.Errorf("issuer down: %d %s, want 503", w.Code, w.Body)
	}
}

func TestCORS(t *testing.T) {
	h := httpapi.CORS("https://console.example", whoami())
	pre := httptest.NewRequest("OPTIONS", "/whoami", nil)
	pre.Header.Set("Origin", "https://console.example")
	pre.Header.Set("Access-Control-Request-Method", "GET")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, pre)
	if w.Code != http.StatusNoContent || w.Header().Get("Access-Control-Allow-Origin") != "https://console.example" {
		t.Errorf("preflight of the allowed origin: %d %v", w.Code, w.Header())
	}
	other := httptest.NewRequest("GET", "/whoami", nil)
	other.Header.Set("Origin", "https://attacker.example")
	w = httptest.NewRecorder()
	h.ServeHTTP(w, other)
	if w.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("another origin got CORS headers: %v", w.Header())
	}
	for _, bad := range []string{"console.example", "https://console.example/path", "ftp://x", "https://"} {
		if httpapi.CheckOrigin(bad) == nil {
			t.Errorf("origin %q accepted", bad)
		}
	}
}
