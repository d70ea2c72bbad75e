package app

import (
	"context"
	"fmt"
	"time"

	"github.com/veredicto/veredicto/internal/app/peopleapp"
	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/catalog/peoplefn"
	"github.com/veredicto/veredicto/internal/confirm"
	fileconfirm "github.com/veredicto/veredicto/internal/confirm/file"
	fileeventlog "github.com/veredicto/veredicto/internal/eventlog/file"
	"github.com/veredicto/veredicto/internal/httpapi/eventsapi"
)

// localPeople assembles the people functions on this machine under dir,
// with the layout "veredicto serve --data dir" uses: confirmations and
// events under dir, decisions delivered through the Step Functions API of
// the server running on dir, stream tokens signed with dir's local key. It
// returns the service that creates confirmations, the stream, and the
// service that resolves them.
func localPeople(dir string) (confirms *confirm.Service, sse *peoplefn.Stream, resolving *confirm.Service) {
	log := fileeventlog.Local(dir)
	tasks := ServiceSFN(dir, "", PrincipalConfirmations)
	store := fileconfirm.Local(dir)
	stream := peoplefn.Stream(peopleapp.EventStream(&eventsapi.Routes{Log: log}, localKey{dir: dir}))
	return &confirm.Service{Store: store, Events: log}, &stream, &confirm.Service{Store: store, Events: log, Tasks: tasks}
}

// localKey verifies tokens signed with the local HS256 key under dir
// ("veredicto token"), read when the first token arrives.
type localKey struct{ dir string }

func (k localKey) Verify(ctx context.Context, token string) (auth.Claims, error) {
	key, err := auth.LoadOrCreateKey(k.dir)
	if err != nil {
		return auth.Claims{}, fmt.Errorf("local signing key: %w", err)
	}
	return LocalTokens(key).Verify(ctx, token)
}

// LocalIssuer is the iss claim of the tokens "veredicto token" signs;
// LocalAudience their aud.
const (
	LocalIssuer   = "veredicto-local"
	LocalAudience = "veredicto"
)

// MaxLocalTokenTTL is the longest a local token may live, the longest
// "veredicto token --ttl" issues.
const MaxLocalTokenTTL = 24 * time.Hour

// SignLocalToken signs a token the server running on data accepts, for
// tenant, naming subject, valid for ttl (at most MaxLocalTokenTTL).
func SignLocalToken(data, tenant, subject string, ttl time.Duration) (string, error) {
	if ttl <= 0 || ttl > MaxLocalTokenTTL {
		return "", fmt.Errorf("a token lives at most %s", MaxLocalTokenTTL)
	}
	key, err := auth.LoadOrCreateKey(data)
	if err != nil {
		return "", err
	}
	now := time.Now()
	return auth.SignHS256(key, auth.Claims{Subject: subject, Tenant: tenant, Issuer: LocalIssuer, Audience: []string{LocalAudience},
		IssuedAt: now, ExpiresAt: now.Add(ttl)}, auth.DefaultTenantClaim)
}

// LocalTokens verifies the local server's tokens: HS256 with key, issuer
// LocalIssuer, audience LocalAudience, at most MaxLocalTokenTTL long.
func LocalTokens(key []byte) *auth.HS256 {
	return &auth.HS256{Key: key, Policy: auth.Policy{Issuer: LocalIssuer, Audience: []string{LocalAudience}, MaxLifetime: MaxLocalTokenTTL}}
}
