package sfnapi

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strings"

	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/control"
)

// pageTokens seals the positions ListExecutions pages from into opaque
// tokens bound to the caller: a position in a state machine's list counts
// every tenant's executions before it, which a tenant must not read off a
// token, and a token given to one tenant is no token for another. The key
// lives as long as the server: a token from before a restart is
// InvalidToken, as an expired one is on Step Functions.
type pageTokens struct{ key []byte }

func newPageTokens() pageTokens {
	key := make([]byte, 32)
	rand.Read(key) // never fails (crypto/rand)
	return pageTokens{key: key}
}

func (t pageTokens) mac(p auth.Principal, raw string) []byte {
	m := hmac.New(sha256.New, t.key)
	who := "tenant:" + p.Tenant
	if p.Operator {
		who = "operator"
	}
	m.Write([]byte(who + "\x00" + raw))
	return m.Sum(nil)[:16]
}

// seal makes raw (the backend's token) a token for p.
func (t pageTokens) seal(p auth.Principal, raw string) string {
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(raw)) + "." + enc.EncodeToString(t.mac(p, raw))
}

// open is the backend's token inside a token seal gave p ("" for none);
// any other is InvalidToken.
func (t pageTokens) open(p auth.Principal, token string) (string, error) {
	if token == "" {
		return "", nil
	}
	enc := base64.RawURLEncoding
	body, sum, ok := strings.Cut(token, ".")
	raw, err1 := enc.DecodeString(body)
	mac, err2 := enc.DecodeString(sum)
	if !ok || err1 != nil || err2 != nil || !hmac.Equal(mac, t.mac(p, string(raw))) {
		return "", &control.Error{Code: control.CodeInvalidToken, Message: "Invalid Token: '" + token + "'"}
	}
	return string(raw), nil
}
