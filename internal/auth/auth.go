// Package auth verifies the JSON Web Tokens that carry a caller's tenant:
// HS256 tokens signed with a key kept under the local data folder (what
// "veredicto serve" accepts and "veredicto token" prints), and RS256 tokens
// checked against an issuer's JWKS (what the AWS stream function accepts,
// the same tokens API Gateway's JWT authorizer checks); Signature Version
// 4 with the local server's access keys (keys.go, sigv4.go); the Host
// values a server answers (host.go). What a request speaks for is a
// Principal; internal/httpapi's Authenticator puts it in the context.
package auth

import (
	"bytes"
	"context"
	"crypto"
	"crypto/hmac"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/veredicto/veredicto"
)

// DefaultTenantClaim is the claim that names the caller's tenant, the same
// one the HTTP API reads on AWS (template parameter TenantClaim).
const DefaultTenantClaim = "custom:tenant"

// Claims are the verified claims of a token.
type Claims struct {
	Subject   string
	Tenant    string
	Issuer    string
	Audience  []string
	IssuedAt  time.Time
	ExpiresAt time.Time
	NotBefore time.Time
}

// InvalidTokenError is a token that is missing, malformed, badly signed,
// expired or not meant for us. Reason is safe to show to the caller: it
// never quotes the token.
type InvalidTokenError struct{ Reason string }

func (e *InvalidTokenError) Error() string { return "invalid token: " + e.Reason }

// ErrorName is the HTTP surface's name for it (401).
func (*InvalidTokenError) ErrorName() string { return NameUnauthorized }

// Names of the refusals of this package on the HTTP surface.
const (
	NameUnauthorized = "UnauthorizedError"       // 401: no usable credentials
	NameForbidden    = "ForbiddenError"          // 403: credentials outside their scope
	NameMisdirected  = "MisdirectedRequestError" // 421: a Host that names another server
)

func invalid(format string, args ...any) error {
	return &InvalidTokenError{Reason: fmt.Sprintf(format, args...)}
}

// Verifier checks a compact JWS and returns its claims.
type Verifier interface {
	Verify(ctx context.Context, token string) (Claims, error)
}

// Policy is what every verifier checks besides the signature.
type Policy struct {
	// Issuer, when set, must equal the iss claim.
	Issuer string
	// Audience, when set, must contain the aud claim or one of its values
	// (or the client_id claim, as API Gateway's JWT authorizer accepts for
	// Cognito access tokens).
	Audience []string
	// TenantClaim names the tenant claim; DefaultTenantClaim when empty.
	TenantClaim string
	// Leeway tolerates clock skew on exp and nbf.
	Leeway time.Duration
	// MaxLifetime, when set, refuses a token meant to live longer: exp
	// minus iat (or minus now, without iat) over it.
	MaxLifetime time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// header is a JWS protected header.
type header struct {
	Alg string `json:"alg"`
	Typ string `json:"typ,omitempty"`
	Kid string `json:"kid,omitempty"`
}

// parsed is a token split and decoded, not yet verified.
type parsed struct {
	header       header
	claims       map[string]json.RawMessage
	signingInput string
	signature    []byte
}

// maxTokenBytes bounds what is decoded from an untrusted header.
const maxTokenBytes = 16 << 10

func parse(token string) (*parsed, error) {
	if token == "" {
		return nil, invalid("no token")
	}
	if len(token) > maxTokenBytes {
		return nil, invalid("token longer than %d bytes", maxTokenBytes)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, invalid("not a compact JWS (header.payload.signature)")
	}
	var p parsed
	hb, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil || json.Unmarshal(hb, &p.header) != nil {
		return nil, invalid("malformed header")
	}
	// Two readers of one token must read the same thing: a header or a
	// claim given twice is refused, not resolved by whichever wins.
	if err := uniqueMembers(hb); err != nil {
		return nil, invalid("header: %v", err)
	}
	var members map[string]json.RawMessage
	_ = json.Unmarshal(hb, &members)
	if _, ok := members["crit"]; ok {
		// RFC 7515 §4.1.11: extensions a recipient does not understand
		// must be refused; this one understands none.
		return nil, invalid("header parameter crit is not supported")
	}
	pb, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil || json.Unmarshal(pb, &p.claims) != nil || p.claims == nil {
		return nil, invalid("malformed claims")
	}
	if err := uniqueMembers(pb); err != nil {
		return nil, invalid("claims: %v", err)
	}
	if p.signature, err = base64.RawURLEncoding.DecodeString(parts[2]); err != nil {
		return nil, invalid("malformed signature")
	}
	p.signingInput = parts[0] + "." + parts[1]
	return &p, nil
}

func (p *parsed) str(name string) (string, error) {
	raw, ok := p.claims[name]
	if !ok {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", invalid("claim %s is not a string", name)
	}
	return s, nil
}

func (p *parsed) time(name string) (time.Time, error) {
	raw, ok := p.claims[name]
	if !ok {
		return time.Time{}, nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		return time.Time{}, invalid("claim %s is not a number", name)
	}
	return time.Unix(int64(f), 0), nil
}

func (p *parsed) audience() ([]string, error) {
	raw, ok := p.claims["aud"]
	if !ok {
		return nil, nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, invalid("claim aud is neither a string nor an array of strings")
	}
	return many, nil
}

// check applies the policy to a token whose signature is already verified.
func (pol Policy) check(p *parsed) (Claims, error) {
	var c Claims
	var err error
	if c.Subject, err = p.str("sub"); err != nil {
		return Claims{}, err
	}
	if c.Issuer, err = p.str("iss"); err != nil {
		return Claims{}, err
	}
	if c.Audience, err = p.audience(); err != nil {
		return Claims{}, err
	}
	if c.IssuedAt, err = p.time("iat"); err != nil {
		return Claims{}, err
	}
	if c.ExpiresAt, err = p.time("exp"); err != nil {
		return Claims{}, err
	}
	if c.NotBefore, err = p.time("nbf"); err != nil {
		return Claims{}, err
	}
	claim := pol.TenantClaim
	if claim == "" {
		claim = DefaultTenantClaim
	}
	if c.Tenant, err = p.str(claim); err != nil {
		return Claims{}, err
	}
	now := time.Now()
	if pol.Now != nil {
		now = pol.Now()
	}
	switch {
	case c.ExpiresAt.IsZero():
		return Claims{}, invalid("no exp claim")
	case !now.Before(c.ExpiresAt.Add(pol.Leeway)):
		return Claims{}, invalid("expired")
	case !c.NotBefore.IsZero() && now.Add(pol.Leeway).Before(c.NotBefore):
		return Claims{}, invalid("not valid yet (nbf)")
	case pol.Issuer != "" && c.Issuer != pol.Issuer:
		return Claims{}, invalid("issuer is not %s", pol.Issuer)
	case pol.MaxLifetime > 0 && lifetime(c, now) > pol.MaxLifetime+pol.Leeway:
		return Claims{}, invalid("lifetime over the %s this server accepts", pol.MaxLifetime)
	case c.Tenant == "":
		return Claims{}, invalid("no %s claim", claim)
	case !veredicto.ValidID(c.Tenant):
		// The tenant scopes every key: one with a '/' could read into
		// another tenant's keys.
		return Claims{}, invalid("the %s claim is not a tenant name (%s)", claim, veredicto.IDRule)
	}
	if len(pol.Audience) > 0 {
		clientID, err := p.str("client_id")
		if err != nil {
			return Claims{}, err
		}
		ok := clientID != "" && slices.Contains(pol.Audience, clientID)
		for _, a := range c.Audience {
			ok = ok || slices.Contains(pol.Audience, a)
		}
		if !ok {
			return Claims{}, invalid("audience not accepted")
		}
	}
	return c, nil
}

// lifetime is how long a token was issued for: exp minus iat, or minus now
// when it has no iat (it is valid that long from now at least).
func lifetime(c Claims, now time.Time) time.Duration {
	from := c.IssuedAt
	if from.IsZero() || from.After(now) {
		from = now
	}
	return c.ExpiresAt.Sub(from)
}

// uniqueMembers refuses a JSON document in which an object names a member
// twice, at any depth.
func uniqueMembers(doc []byte) error {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var value func(depth int) error
	value = func(depth int) error {
		if depth > 32 {
			return errors.New("nested too deeply")
		}
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				name, _ := k.(string)
				if seen[name] {
					return fmt.Errorf("member %q appears twice", name)
				}
				seen[name] = true
				if err := value(depth + 1); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		case json.Delim('['):
			for dec.More() {
				if err := value(depth + 1); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		}
		return nil
	}
	return value(0)
}

// HS256 verifies tokens signed with a shared key, the local server's. Any
// other alg ("none", "RS256", "HS512"…) is rejected.
type HS256 struct {
	Key    []byte
	Policy Policy
}

var _ Verifier = (*HS256)(nil)

// Verify checks the signature first, then the claims.
func (v *HS256) Verify(_ context.Context, token string) (Claims, error) {
	p, err := parse(token)
	if err != nil {
		return Claims{}, err
	}
	if p.header.Alg != "HS256" {
		return Claims{}, invalid("alg %q is not accepted (HS256 only)", p.header.Alg)
	}
	if len(v.Key) == 0 {
		return Claims{}, errors.New("auth: HS256 verifier has no key")
	}
	mac := hmac.New(sha256.New, v.Key)
	mac.Write([]byte(p.signingInput))
	if !hmac.Equal(mac.Sum(nil), p.signature) {
		return Claims{}, invalid("bad signature")
	}
	return v.Policy.check(p)
}

// verifyRS256 checks an RS256 signature.
func verifyRS256(pub *rsa.PublicKey, p *parsed) error {
	sum := sha256.Sum256([]byte(p.signingInput))
	if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], p.signature); err != nil {
		return invalid("bad signature")
	}
	return nil
}

// SignHS256 returns a compact HS256 JWS of claims (sub, iss, aud, iat, exp,
// nbf and the tenant under tenantClaim).
func SignHS256(key []byte, c Claims, tenantClaim string) (string, error) {
	if len(key) == 0 {
		return "", errors.New("sign token: empty key")
	}
	if tenantClaim == "" {
		tenantClaim = DefaultTenantClaim
	}
	m := map[string]any{tenantClaim: c.Tenant}
	if c.Subject != "" {
		m["sub"] = c.Subject
	}
	if c.Issuer != "" {
		m["iss"] = c.Issuer
	}
	if len(c.Audience) == 1 {
		m["aud"] = c.Audience[0]
	} else if len(c.Audience) > 1 {
		m["aud"] = c.Audience
	}
	for name, t := range map[string]time.Time{"iat": c.IssuedAt, "exp": c.ExpiresAt, "nbf": c.NotBefore} {
		if !t.IsZero() {
			m[name] = t.Unix()
		}
	}
	hb, _ := json.Marshal(header{Alg: "HS256", Typ: "JWT"})
	pb, err := json.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("sign token: %w", err)
	}
	in := base64.RawURLEncoding.EncodeToString(hb) + "." + base64.RawURLEncoding.EncodeToString(pb)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(in))
	return in + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil)), nil
}
