package auth

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/textproto"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// SigV4 error codes, as AWS names them in a JSON protocol's __type.
const (
	CodeMissingAuthenticationToken = "MissingAuthenticationTokenException"
	CodeUnrecognizedClient         = "UnrecognizedClientException"
	CodeInvalidSignature           = "InvalidSignatureException"
	CodeIncompleteSignature        = "IncompleteSignatureException"
	CodeAccessDenied               = "AccessDeniedException"
)

// SigV4Error is a request whose Signature Version 4 AWS would refuse.
// Code is the AWS error code; Message never quotes a secret.
type SigV4Error struct {
	Code    string
	Message string
}

func (e *SigV4Error) Error() string { return e.Code + ": " + e.Message }

// ErrorName is the HTTP surface's name: a missing or unusable credential
// is unauthenticated (401), a refused scope forbidden (403).
func (e *SigV4Error) ErrorName() string {
	if e.Code == CodeAccessDenied {
		return NameForbidden
	}
	return NameUnauthorized
}

func sigErr(code, format string, args ...any) *SigV4Error {
	return &SigV4Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// sigV4Algorithm is the only signing algorithm accepted.
const sigV4Algorithm = "AWS4-HMAC-SHA256"

// MaxClockSkew is how far a request's X-Amz-Date may be from the server's
// clock, as AWS allows: an older signed request is not replayable.
const MaxClockSkew = 15 * time.Minute

// KeyLookup finds an access key by id.
type KeyLookup interface {
	Lookup(accessKeyID string) (Key, bool, error)
}

// SigV4 verifies requests signed with Signature Version 4 against the
// server's access keys: the credential scope (date, region, service,
// aws4_request), the clock skew, the payload hash, and the signature
// recomputed with aws-sdk-go-v2's signer over the headers the client
// signed.
type SigV4 struct {
	Keys   KeyLookup
	Region string
	// Now is the clock (time.Now when nil).
	Now func() time.Time

	once   sync.Once
	signer *v4.Signer // one for every request: it keeps the signing keys it derived (four HMACs each)
}

// IsSigV4 reports whether r carries a SigV4 Authorization header.
func IsSigV4(r *http.Request) bool {
	return strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-")
}

type authorization struct {
	accessKeyID, date, region, service, terminal string
	signedHeaders                                []string
	signedHeadersStr                             string
	signature                                    string
}

func parseAuthorization(h string) (authorization, error) {
	alg, rest, _ := strings.Cut(h, " ")
	if alg != sigV4Algorithm {
		return authorization{}, sigErr(CodeIncompleteSignature, "Unsupported AWS 'algorithm': '%s'", clip(alg))
	}
	var a authorization
	fields := map[string]string{}
	for _, part := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return a, sigErr(CodeIncompleteSignature, "Authorization header requires each component to be of the form key=value")
		}
		if _, dup := fields[k]; dup {
			return a, sigErr(CodeIncompleteSignature, "Authorization header repeats %s", clip(k))
		}
		fields[k] = v
	}
	for _, k := range []string{"Credential", "SignedHeaders", "Signature"} {
		if fields[k] == "" {
			return a, sigErr(CodeIncompleteSignature, "Authorization header requires '%s' parameter", k)
		}
	}
	scope := strings.Split(fields["Credential"], "/")
	if len(scope) != 5 {
		return a, sigErr(CodeIncompleteSignature, "Credential must have exactly 5 slash-delimited elements, e.g. keyid/date/region/service/term")
	}
	a.accessKeyID, a.date, a.region, a.service, a.terminal = scope[0], scope[1], scope[2], scope[3], scope[4]
	a.signedHeadersStr = fields["SignedHeaders"]
	a.signedHeaders = strings.Split(a.signedHeadersStr, ";")
	a.signature = fields["Signature"]
	return a, nil
}

// Verify authenticates r, whose body is body, for service ("states" for
// the Step Functions API, "execute-api" for the project's HTTP API).
func (v *SigV4) Verify(ctx context.Context, r *http.Request, body []byte, service string) (Principal, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return Principal{}, sigErr(CodeMissingAuthenticationToken, "Missing Authentication Token")
	}
	a, err := parseAuthorization(h)
	if err != nil {
		return Principal{}, err
	}
	amzDate := r.Header.Get("X-Amz-Date")
	if amzDate == "" {
		return Principal{}, sigErr(CodeIncompleteSignature, "Authorization header requires existence of a 'X-Amz-Date' header")
	}
	signed, err := time.Parse("20060102T150405Z", amzDate)
	if err != nil {
		return Principal{}, sigErr(CodeIncompleteSignature, "X-Amz-Date must be in the ISO8601 basic format yyyyMMdd'T'HHmmss'Z'")
	}
	switch {
	case a.terminal != "aws4_request":
		return Principal{}, sigErr(CodeInvalidSignature, "Credential should be scoped with a valid terminator: 'aws4_request', not '%s'.", clip(a.terminal))
	case a.date != signed.Format("20060102"):
		return Principal{}, sigErr(CodeInvalidSignature, "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '%s' != '%s'", clip(a.date), signed.Format("20060102"))
	case a.region != v.Region:
		return Principal{}, sigErr(CodeInvalidSignature, "Credential should be scoped to a valid region, not '%s'; this server's region is %s.", clip(a.region), v.Region)
	case a.service != service:
		return Principal{}, sigErr(CodeInvalidSignature, "Credential should be scoped to correct service: '%s'.", service)
	case !slices.Contains(a.signedHeaders, "host"):
		return Principal{}, sigErr(CodeInvalidSignature, "'Host' must be a 'SignedHeader' in the AWS Authorization.")
	}
	now := time.Now()
	if v.Now != nil {
		now = v.Now()
	}
	if d := now.Sub(signed); d > MaxClockSkew || d < -MaxClockSkew {
		return Principal{}, sigErr(CodeInvalidSignature, "Signature expired: %s is now earlier than %s (%s - 15 min.)",
			signed.Format("20060102T150405Z"), now.Add(-MaxClockSkew).UTC().Format("20060102T150405Z"), now.UTC().Format("20060102T150405Z"))
	}
	if r.Header.Get("X-Amz-Security-Token") != "" {
		return Principal{}, sigErr(CodeUnrecognizedClient, "The security token included in the request is invalid.")
	}
	key, ok, err := v.Keys.Lookup(a.accessKeyID)
	if err != nil {
		return Principal{}, fmt.Errorf("read access keys: %w", err)
	}
	if !ok {
		return Principal{}, sigErr(CodeUnrecognizedClient, "The security token included in the request is invalid.")
	}
	sum := sha256.Sum256(body)
	payloadHash := hex.EncodeToString(sum[:])
	if claimed := r.Header.Get("X-Amz-Content-Sha256"); claimed != "" && claimed != payloadHash && claimed != "UNSIGNED-PAYLOAD" {
		return Principal{}, sigErr(CodeInvalidSignature, "The provided 'x-amz-content-sha256' header does not match what was computed.")
	}
	want, err := v.expected(ctx, r, a, key, payloadHash, signed, int64(len(body)))
	if err != nil {
		return Principal{}, err
	}
	if !hmac.Equal([]byte(want), []byte(a.signature)) {
		return Principal{}, sigErr(CodeInvalidSignature, "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.")
	}
	return key.Principal(), nil
}

// expected signs a copy of r holding only the headers the client signed,
// with the key's secret, and returns the signature the SDK computes.
func (v *SigV4) expected(ctx context.Context, r *http.Request, a authorization, key Key, payloadHash string, at time.Time, length int64) (string, error) {
	c, err := http.NewRequestWithContext(ctx, r.Method, "http://placeholder/", nil)
	if err != nil {
		return "", sigErr(CodeInvalidSignature, "cannot rebuild the request")
	}
	u := *r.URL
	u.Scheme, u.Host = "http", r.Host
	c.URL, c.Host = &u, r.Host
	for _, name := range a.signedHeaders {
		switch name {
		case "host":
		case "content-length":
			c.ContentLength = length
		default:
			vals := r.Header.Values(name)
			if len(vals) == 0 {
				return "", sigErr(CodeInvalidSignature, "The request signature we calculated does not match the signature you provided: signed header '%s' is missing.", clip(name))
			}
			c.Header[textproto.CanonicalMIMEHeaderKey(name)] = vals
		}
	}
	creds := aws.Credentials{AccessKeyID: key.AccessKeyID, SecretAccessKey: key.SecretAccessKey}
	v.once.Do(func() { v.signer = v4.NewSigner() })
	if err := v.signer.SignHTTP(ctx, creds, c, payloadHash, a.service, a.region, at); err != nil {
		return "", fmt.Errorf("sigv4: %w", err)
	}
	got, err := parseAuthorization(c.Header.Get("Authorization"))
	if err != nil {
		return "", err
	}
	if got.signedHeadersStr != a.signedHeadersStr {
		// The client signed headers this signer never signs (User-Agent…):
		// no signature computed here can match.
		return "", sigErr(CodeInvalidSignature, "The request signature we calculated does not match the signature you provided: SignedHeaders %s are not the canonical set %s.", clip(a.signedHeadersStr), got.signedHeadersStr)
	}
	return got.signature, nil
}

// clip bounds an echoed request value.
func clip(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}
