package auth

import (
	"context"
	"crypto"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

func fixedNow() time.Time { return t0 }

// rawToken builds a compact JWS with any header and claims, signed by sign.
func rawToken(t *testing.T, hdr, claims any, sign func(in string) []byte) string {
	t.Helper()
	hb, err := json.Marshal(hdr)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	in := base64.RawURLEncoding.EncodeToString(hb) + "." + base64.RawURLEncoding.EncodeToString(cb)
	return in + "." + base64.RawURLEncoding.EncodeToString(sign(in))
}

func TestHS256(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	other := []byte("fedcba9876543210fedcba9876543210")
	good := Claims{Subject: "ana", Tenant: "acme", IssuedAt: t0, ExpiresAt: t0.Add(time.Hour)}
	sign := func(c Claims, k []byte) string {
		tok, err := SignHS256(k, c, "")
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	with := func(f func(*Claims)) Claims { c := good; f(&c); return c }
	hs := func(k []byte) func(string) []byte {
		return func(in string) []byte {
			m := hmacSHA256(k, in)
			return m
		}
	}
	claims := map[string]any{"sub": "ana", "custom:tenant": "acme", "exp": t0.Add(time.Hour).Unix()}
	tests := []struct {
		name    string
		token   string
		policy  Policy
		wantErr string // "" for valid
	}{
		{"valid", sign(good, key), Policy{}, ""},
		{"wrong key", sign(good, other), Policy{}, "bad signature"},
		{"expired", sign(with(func(c *Claims) { c.ExpiresAt = t0 }), key), Policy{}, "expired"},
		{"expired within leeway", sign(with(func(c *Claims) { c.ExpiresAt = t0.Add(-10 * time.Second) }), key), Policy{Leeway: time.Minute}, ""},
		{"no exp", sign(with(func(c *Claims) { c.ExpiresAt = time.Time{} }), key), Policy{}, "no exp"},
		{"not yet", sign(with(func(c *Claims) { c.NotBefore = t0.Add(time.Minute) }), key), Policy{}, "nbf"},
		{"no tenant", sign(with(func(c *Claims) { c.Tenant = "" }), key), Policy{}, "no custom:tenant claim"},
		{"tenant with a slash", sign(with(func(c *Claims) { c.Tenant = "acme/x" }), key), Policy{}, "the custom:tenant claim is not a tenant name"},
		{"tenant of dots", sign(with(func(c *Claims) { c.Tenant = ".." }), key), Policy{}, "not a tenant name"},
		{"issuer matches", sign(with(func(c *Claims) { c.Issuer = "veredicto-local" }), key), Policy{Issuer: "veredicto-local"}, ""},
		{"issuer differs", sign(with(func(c *Claims) { c.Issuer = "evil" }), key), Policy{Issuer: "veredicto-local"}, "issuer"},
		{"audience matches", sign(with(func(c *Claims) { c.Audience = []string{"x", "api"} }), key), Policy{Audience: []string{"api"}}, ""},
		{"audience missing", sign(good, key), Policy{Audience: []string{"api"}}, "audience"},
		{"alg none", rawToken(t, map[string]string{"alg": "none"}, claims, func(string) []byte { return nil }), Policy{}, `alg "none"`},
		{"alg HS512", rawToken(t, map[string]string{"alg": "HS512"}, claims, hs(key)), Policy{}, `alg "HS512"`},
		{"alg RS256 with the HMAC key", rawToken(t, map[string]string{"alg": "RS256"}, claims, hs(key)), Policy{}, `alg "RS256"`},
		{"hand-built HS256", rawToken(t, map[string]string{"alg": "HS256"}, claims, hs(key)), Policy{}, ""},
		{"two parts", "a.b", Policy{}, "compact"},
		{"empty", "", Policy{}, "no token"},
		{"garbage header", "!!.e30.AA", Policy{}, "malformed header"},
		{"exp not a number", rawToken(t, map[string]string{"alg": "HS256"}, map[string]any{"custom:tenant": "a", "exp": "soon"}, hs(key)), Policy{}, "exp is not a number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.policy.Now = fixedNow
			v := &HS256{Key: key, Policy: tt.policy}
			got, err := v.Verify(t.Context(), tt.token)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Verify: %v, want valid", err)
				}
				if got.Tenant != "acme" {
					t.Errorf("tenant = %q, want acme", got.Tenant)
				}
				return
			}
			var it *InvalidTokenError
			if !errors.As(err, &it) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Verify error = %v, want an InvalidTokenError containing %q", err, tt.wantErr)
			}
		})
	}
}

func hmacSHA256(k []byte, in string) []byte { return macOf(k, in) }

func macOf(k []byte, in string) []byte {
	m := hmac.New(sha256.New, k)
	m.Write([]byte(in))
	return m.Sum(nil)
}

func TestSignHS256Claims(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	tok, err := SignHS256(key, Claims{Subject: "ana", Tenant: "acme", IssuedAt: t0, ExpiresAt: t0.Add(time.Hour)}, "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := parse(tok)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"sub": `"ana"`, "custom:tenant": `"acme"`, "iat": "1795435200", "exp": "1795438800"} // 2026-11-23T12:00Z and +1h
	for k, v := range want {
		if got := string(p.claims[k]); got != v {
			t.Errorf("claim %s = %s, want %s", k, got, v)
		}
	}
	hb, _ := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[0])
	if got := string(hb); got != `{"alg":"HS256","typ":"JWT"}` {
		t.Errorf("header = %s, want {\"alg\":\"HS256\",\"typ\":\"JWT\"}", got)
	}
}

func TestLoadOrCreateKey(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	keys := make([][]byte, 8)
	errs := make([]error, 8)
	for i := range keys {
		wg.Go(func() { keys[i], errs[i] = LoadOrCreateKey(dir) })
	}
	wg.Wait()
	for i := range keys {
		if errs[i] != nil {
			t.Fatalf("LoadOrCreateKey: %v", errs[i])
		}
		if string(keys[i]) != string(keys[0]) {
			t.Fatalf("concurrent first starts disagree on the key")
		}
	}
	if len(keys[0]) != 32 {
		t.Errorf("key has %d bytes, want 32", len(keys[0]))
	}
	info, err := os.Stat(filepath.Join(dir, KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Mode().Perm(); got != 0o600 {
		t.Errorf("key mode = %v, want 0600", got)
	}
	again, err := LoadOrCreateKey(dir)
	if err != nil || string(again) != string(keys[0]) {
		t.Errorf("second start: key changed or %v", err)
	}
	if err := os.Chmod(filepath.Join(dir, KeyFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreateKey(dir); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("world-readable key: err = %v, want a refusal", err)
	}
}

// jwksServer serves the public halves of keys as a JWKS and counts fetches.
type jwksServer struct {
	mu      sync.Mutex
	keys    map[string]*rsa.PrivateKey
	fetches atomic.Int64
	fail    atomic.Bool
}

func (s *jwksServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.fetches.Add(1)
	if s.fail.Load() {
		http.Error(w, "down", http.StatusInternalServerError)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var doc struct {
		Keys []jwk `json:"keys"`
	}
	doc.Keys = append(doc.Keys, jwk{Kty: "EC", Kid: "ec-key"}) // skipped, not RSA
	for kid, k := range s.keys {
		doc.Keys = append(doc.Keys, jwk{Kty: "RSA", Kid: kid, Use: "sig", Alg: "RS256",
			N: base64.RawURLEncoding.EncodeToString(k.N.Bytes()),
			E: base64.RawURLEncoding.EncodeToString(big.NewInt(int64(k.E)).Bytes())})
	}
	json.NewEncoder(w).Encode(doc)
}

func (s *jwksServer) add(t *testing.T, kid string) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.keys[kid] = k
	s.mu.Unlock()
	return k
}

func rsToken(t *testing.T, k *rsa.PrivateKey, kid string, claims map[string]any) string {
	t.Helper()
	return rawToken(t, map[string]string{"alg": "RS256", "kid": kid}, claims, func(in string) []byte {
		sum := sha256.Sum256([]byte(in))
		sig, err := rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, sum[:])
		if err != nil {
			t.Fatal(err)
		}
		return sig
	})
}

func TestJWKS(t *testing.T) {
	srv := &jwksServer{keys: map[string]*rsa.PrivateKey{}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	k1 := srv.add(t, "k1")
	now := t0
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	const iss = "https://cognito-idp.us-east-1.amazonaws.com/pool"
	v := &JWKS{URL: ts.URL, Client: ts.Client(), Policy: Policy{Issuer: iss, Audience: []string{"client-1"}, Now: clock}}
	claims := map[string]any{"iss": iss, "client_id": "client-1", "custom:tenant": "acme", "exp": t0.Add(24 * time.Hour).Unix()}

	got, err := v.Verify(t.Context(), rsToken(t, k1, "k1", claims))
	if err != nil || got.Tenant != "acme" {
		t.Fatalf("Verify = %+v, %v; want tenant acme", got, err)
	}
	if _, err := v.Verify(t.Context(), rsToken(t, k1, "k1", claims)); err != nil {
		t.Fatal(err)
	}
	if n := srv.fetches.Load(); n != 1 {
		t.Errorf("fetches after two tokens = %d, want 1 (cached)", n)
	}

	// A rotated key: unknown kid → one refetch, after MinRefresh.
	k2 := srv.add(t, "k2")
	if _, err := v.Verify(t.Context(), rsToken(t, k2, "k2", claims)); err == nil || !strings.Contains(err.Error(), "unknown kid") {
		t.Fatalf("new kid within MinRefresh: err = %v, want unknown kid", err)
	}
	if n := srv.fetches.Load(); n != 1 {
		t.Errorf("fetches within MinRefresh = %d, want 1", n)
	}
	advance(2 * time.Minute)
	if _, err := v.Verify(t.Context(), rsToken(t, k2, "k2", claims)); err != nil {
		t.Fatalf("rotated key after MinRefresh: %v", err)
	}
	for range 5 { // forged kids do not cause a fetch each
		v.Verify(t.Context(), rsToken(t, k2, "forged", claims))
	}
	if n := srv.fetches.Load(); n != 2 {
		t.Errorf("fetches after rotation and forged kids = %d, want 2", n)
	}

	// An outage keeps known keys serving.
	srv.fail.Store(true)
	advance(2 * time.Hour)
	if _, err := v.Verify(t.Context(), rsToken(t, k1, "k1", claims)); err != nil {
		t.Errorf("known key during a JWKS outage: %v", err)
	}

	bad := []struct {
		name  string
		token string
		want  string
	}{
		{"signed by another key", rsToken(t, k2, "k1", claims), "bad signature"},
		{"HS256 with the public modulus", rawToken(t, map[string]string{"alg": "HS256", "kid": "k1"}, claims, func(in string) []byte { return macOf(k1.N.Bytes(), in) }), `alg "HS256"`},
		{"wrong issuer", rsToken(t, k1, "k1", map[string]any{"iss": "https://evil", "client_id": "client-1", "custom:tenant": "acme", "exp": t0.Add(24 * time.Hour).Unix()}), "issuer"},
		{"wrong audience", rsToken(t, k1, "k1", map[string]any{"iss": iss, "aud": "other", "custom:tenant": "acme", "exp": t0.Add(24 * time.Hour).Unix()}), "audience"},
		{"no kid", rawToken(t, map[string]string{"alg": "RS256"}, claims, func(string) []byte { return []byte{1} }), "no kid"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := v.Verify(t.Context(), tt.token); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestJWKSOutageIsNotTheTokensFault(t *testing.T) {
	srv := &jwksServer{keys: map[string]*rsa.PrivateKey{}}
	srv.fail.Store(true)
	ts := httptest.NewServer(srv)
	defer ts.Close()
	k := srv.add(t, "k1")
	v := &JWKS{URL: ts.URL, Client: ts.Client(), Policy: Policy{Now: fixedNow}}
	// The issuer's outage is not the token's fault: never an
	// InvalidTokenError (the HTTP surface answers 503, not 401).
	_, err := v.Verify(context.Background(), rsToken(t, k, "k1", map[string]any{"custom:tenant": "a", "exp": t0.Add(time.Hour).Unix()}))
	var it *InvalidTokenError
	if err == nil || errors.As(err, &it) {
		t.Errorf("Verify during an outage: %v, want an error that is not the token's", err)
	}
}

// TestHS256Hardening: the audience is checked, a crit header and a member
// given twice are refused, and no token may live longer than the policy
// allows.
func TestHS256Hardening(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	v := &HS256{Key: key, Policy: Policy{Audience: []string{"veredicto"}, MaxLifetime: 24 * time.Hour, Now: func() time.Time { return t0 }}}
	hmacSign := func(in string) []byte {
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(in))
		return mac.Sum(nil)
	}
	// raw signs header and claims given as JSON text, duplicates and all.
	raw := func(hdr, claims string) string {
		in := base64.RawURLEncoding.EncodeToString([]byte(hdr)) + "." + base64.RawURLEncoding.EncodeToString([]byte(claims))
		return in + "." + base64.RawURLEncoding.EncodeToString(hmacSign(in))
	}
	claims := func(extra string) string {
		return fmt.Sprintf(`{"custom:tenant":"acme","sub":"ana","aud":"veredicto","iat":%d,"exp":%d%s}`, t0.Unix(), t0.Add(time.Hour).Unix(), extra)
	}
	for _, tt := range []struct {
		name, token, want string
	}{
		{"good", raw(`{"alg":"HS256","typ":"JWT"}`, claims("")), ""},
		{"another audience", raw(`{"alg":"HS256"}`, strings.Replace(claims(""), `"veredicto"`, `"other-app"`, 1)), "audience not accepted"},
		{"no audience", raw(`{"alg":"HS256"}`, strings.Replace(claims(""), `"aud":"veredicto",`, "", 1)), "audience not accepted"},
		{"crit header", raw(`{"alg":"HS256","crit":["exp"]}`, claims("")), "crit is not supported"},
		{"alg twice", raw(`{"alg":"HS256","alg":"none"}`, claims("")), `member "alg" appears twice`},
		{"tenant twice", raw(`{"alg":"HS256"}`, claims(`,"custom:tenant":"bravo"`)), `member "custom:tenant" appears twice`},
		{"a year long", raw(`{"alg":"HS256"}`, fmt.Sprintf(`{"custom:tenant":"acme","aud":"veredicto","iat":%d,"exp":%d}`, t0.Unix(), t0.Add(365*24*time.Hour).Unix())), "lifetime over"},
		{"a year long without iat", raw(`{"alg":"HS256"}`, fmt.Sprintf(`{"custom:tenant":"acme","aud":"veredicto","exp":%d}`, t0.Add(365*24*time.Hour).Unix())), "lifetime over"},
		{"alg none", raw(`{"alg":"none"}`, claims("")), `alg "none" is not accepted`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := v.Verify(context.Background(), tt.token)
			if tt.want == "" {
				if err != nil || c.Tenant != "acme" || c.Subject != "ana" {
					t.Errorf("got %+v %v", c, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error saying %q", err, tt.want)
			}
		})
	}
}
