package auth

import (
	"context"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"time"
)

// JWKS verifies RS256 tokens against the public keys an issuer publishes
// (for Cognito, <issuer>/.well-known/jwks.json). Keys are fetched on first
// use and cached; a token whose kid is not cached triggers one refetch, at
// most once per MinRefresh, so a flood of forged kids cannot hammer the
// issuer. At most MaxKeys keys are kept. Safe for concurrent use.
type JWKS struct {
	URL    string
	Client *http.Client
	Policy Policy
	// MaxKeys bounds the cache (default 16); TTL is how long a fetched set
	// is trusted (default 1 h); MinRefresh spaces refetches (default 1 min).
	MaxKeys    int
	TTL        time.Duration
	MinRefresh time.Duration

	mu      sync.Mutex
	keys    map[string]*rsa.PublicKey
	fetched time.Time
}

var _ Verifier = (*JWKS)(nil)

// maxJWKSBytes bounds a JWKS document.
const maxJWKSBytes = 1 << 20

// Verify checks an RS256 token's signature with the key its kid names, then
// its claims.
func (j *JWKS) Verify(ctx context.Context, token string) (Claims, error) {
	p, err := parse(token)
	if err != nil {
		return Claims{}, err
	}
	if p.header.Alg != "RS256" {
		return Claims{}, invalid("alg %q is not accepted (RS256 only)", p.header.Alg)
	}
	if p.header.Kid == "" {
		return Claims{}, invalid("no kid in the header")
	}
	key, err := j.key(ctx, p.header.Kid)
	if err != nil {
		return Claims{}, err
	}
	if err := verifyRS256(key, p); err != nil {
		return Claims{}, err
	}
	return j.Policy.check(p)
}

func (j *JWKS) now() time.Time {
	if j.Policy.Now != nil {
		return j.Policy.Now()
	}
	return time.Now()
}

func orDefault[T int | time.Duration](v, d T) T {
	if v <= 0 {
		return d
	}
	return v
}

// key returns the cached key for kid, fetching the set when it is stale or
// does not hold kid (rate-limited).
func (j *JWKS) key(ctx context.Context, kid string) (*rsa.PublicKey, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	now := j.now()
	stale := j.keys == nil || now.Sub(j.fetched) >= orDefault(j.TTL, time.Hour)
	k, ok := j.keys[kid]
	if ok && !stale {
		return k, nil
	}
	if !stale && now.Sub(j.fetched) < orDefault(j.MinRefresh, time.Minute) {
		return nil, invalid("unknown kid")
	}
	keys, err := j.fetch(ctx)
	if err != nil {
		if ok { // keep serving a known key through an issuer outage
			return k, nil
		}
		return nil, err
	}
	j.keys, j.fetched = keys, now
	if k, ok = keys[kid]; !ok {
		return nil, invalid("unknown kid")
	}
	return k, nil
}

type jwk struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	N   string `json:"n"`
	E   string `json:"e"`
}

func (j *JWKS) fetch(ctx context.Context) (map[string]*rsa.PublicKey, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, j.URL, nil)
	if err != nil {
		return nil, fmt.Errorf("jwks %s: %w", j.URL, err)
	}
	client := j.Client
	if client == nil {
		client = &http.Client{Timeout: 5 * time.Second}
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch jwks %s: %w", j.URL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch jwks %s: HTTP %d", j.URL, resp.StatusCode)
	}
	var doc struct {
		Keys []jwk `json:"keys"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxJWKSBytes)).Decode(&doc); err != nil {
		return nil, fmt.Errorf("decode jwks %s: %w", j.URL, err)
	}
	keys := map[string]*rsa.PublicKey{}
	for _, k := range doc.Keys {
		if len(keys) >= orDefault(j.MaxKeys, 16) {
			break
		}
		if k.Kty != "RSA" || k.Kid == "" || (k.Use != "" && k.Use != "sig") || (k.Alg != "" && k.Alg != "RS256") {
			continue
		}
		pub, err := parseRSA(k.N, k.E)
		if err != nil {
			continue // one bad key does not hide the others
		}
		keys[k.Kid] = pub
	}
	return keys, nil
}

func parseRSA(n, e string) (*rsa.PublicKey, error) {
	nb, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(n, "="))
	if err != nil {
		return nil, err
	}
	eb, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(e, "="))
	if err != nil || len(eb) == 0 || len(eb) > 4 {
		return nil, fmt.Errorf("bad exponent")
	}
	var exp int
	for _, b := range eb {
		exp = exp<<8 | int(b)
	}
	mod := new(big.Int).SetBytes(nb)
	if mod.BitLen() < 2048 {
		return nil, fmt.Errorf("modulus of %d bits is too small", mod.BitLen())
	}
	return &rsa.PublicKey{N: mod, E: exp}, nil
}
