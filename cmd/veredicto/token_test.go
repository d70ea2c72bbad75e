package main

import (
	"strings"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/app"
	"github.com/veredicto/veredicto/internal/auth"
)

func TestToken(t *testing.T) {
	data := t.TempDir()
	code, out, errOut := runCLI(t, "", "token", "--tenant", "acme", "--data", data, "--ttl", "2h", "--sub", "ana")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	key, err := auth.LoadOrCreateKey(data)
	if err != nil {
		t.Fatal(err)
	}
	v := &auth.HS256{Key: key, Policy: auth.Policy{Issuer: app.LocalIssuer, Audience: []string{app.LocalAudience}}}
	c, err := v.Verify(t.Context(), strings.TrimSpace(out))
	if err != nil {
		t.Fatalf("the printed token does not verify: %v", err)
	}
	if c.Tenant != "acme" || c.Subject != "ana" || c.ExpiresAt.Sub(c.IssuedAt) != 2*time.Hour {
		t.Errorf("claims = %+v", c)
	}
	// Another data folder has another key.
	other := &auth.HS256{Key: mustKey(t, t.TempDir())}
	if _, err := other.Verify(t.Context(), strings.TrimSpace(out)); err == nil {
		t.Error("a token verifies under another data folder's key")
	}

	bad := []struct {
		name string
		args []string
		want string
	}{
		{"no tenant", []string{"token", "--data", data}, "--tenant is required"},
		{"bad tenant", []string{"token", "--tenant", "a/b", "--data", data}, "--tenant is required"},
		{"bad ttl", []string{"token", "--tenant", "a", "--ttl", "-1h", "--data", data}, "--ttl"},
		{"extra arg", []string{"token", "--tenant", "a", "x"}, "unexpected argument"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, "", tt.args...)
			if code != exitUsage || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr %q; want %d containing %q", code, errOut, exitUsage, tt.want)
			}
		})
	}
}

func mustKey(t *testing.T, dir string) []byte {
	t.Helper()
	k, err := auth.LoadOrCreateKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
