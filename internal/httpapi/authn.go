package httpapi

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/auth"
)

// Authenticator is the one authentication middleware of the local server.
// It answers only the Host values that name the server (421 otherwise:
// a page cannot reach it by DNS rebinding), then identifies who a request
// speaks for — a Signature Version 4 made with one of the server's access
// keys, or a bearer JWT the server signed — and puts that principal in the
// request's context (auth.PrincipalFrom), or why its credentials were
// refused (auth.FailureFrom). It refuses nothing else itself: each surface
// says what it requires (RequireTenant for the project's API; the Step
// Functions API answers in AWS's own error shapes).
type Authenticator struct {
	// Hosts, when set, are the Host values answered.
	Hosts *auth.HostPolicy
	// SigV4 verifies signed requests; nil refuses them.
	SigV4 *auth.SigV4
	// Tokens verifies bearer tokens; nil refuses them.
	Tokens auth.Verifier
	// QueryToken lists the GET paths that also take the token as
	// ?access_token= (a browser's EventSource cannot set headers). Off
	// elsewhere: URLs end up in logs.
	QueryToken []string
	Logger     *slog.Logger
}

// Wrap returns next behind the authenticator.
func (a *Authenticator) Wrap(next http.Handler) http.Handler {
	logger := a.Logger
	if logger == nil {
		logger = slog.Default()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r = withLogger(r, logger)
		if a.Hosts != nil && !a.Hosts.Allows(r.Host) {
			WriteError(w, r, &auth.HostError{Host: r.Host})
			return
		}
		ctx := r.Context()
		switch authz := r.Header.Get("Authorization"); {
		case auth.IsSigV4(r):
			if a.SigV4 == nil {
				ctx = auth.WithFailure(ctx, &auth.SigV4Error{Code: auth.CodeUnrecognizedClient, Message: "this server takes no signed requests"})
				break
			}
			body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
			if err != nil {
				WriteError(w, r, Errorf(NameTooLarge, "the request body is over %d bytes", MaxBody))
				return
			}
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
			p, err := a.SigV4.Verify(ctx, r, body, signingService(r))
			var se *auth.SigV4Error
			switch {
			case err == nil:
				ctx = auth.WithPrincipal(ctx, p)
			case errors.As(err, &se):
				ctx = auth.WithFailure(ctx, err)
			default:
				WriteError(w, r, err)
				return
			}
		case authz != "" || (r.Method == http.MethodGet && slices.Contains(a.QueryToken, r.URL.Path) && r.URL.Query().Has("access_token")):
			token, ok := bearer(authz)
			if authz == "" {
				token, ok = r.URL.Query().Get("access_token"), true
			}
			if !ok || a.Tokens == nil {
				ctx = auth.WithFailure(ctx, &auth.InvalidTokenError{Reason: "send Authorization: Bearer <token> or a SigV4 signature"})
				break
			}
			c, err := a.Tokens.Verify(ctx, token)
			var it *auth.InvalidTokenError
			switch {
			case err == nil:
				ctx = auth.WithPrincipal(ctx, auth.FromClaims(c, auth.ViaJWT))
			case errors.As(err, &it):
				ctx = auth.WithFailure(ctx, err)
			default:
				logger.ErrorContext(ctx, "token verification failed", "error", err)
				WriteError(w, r, Errorf(NameServiceUnavailable, "cannot verify tokens right now; retry later"))
				return
			}
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// signingService is the SigV4 service a request must be signed for: the
// Step Functions API's "states" (POST /), Lambda's "lambda" for its
// Invoke API (under /2015-03-31/functions/), or API Gateway's
// "execute-api" for the project's own routes.
func signingService(r *http.Request) string {
	switch {
	case r.URL.Path == "/":
		return "states"
	case strings.HasPrefix(r.URL.Path, LambdaPathPrefix):
		return "lambda"
	}
	return "execute-api"
}

// The Lambda Invoke API's route (internal/lambdaapi serves it) and the
// prefix of every path of Lambda's API.
const (
	LambdaInvokeRoute = "POST " + LambdaPathPrefix + "{name}/invocations"
	LambdaPathPrefix  = "/2015-03-31/functions/"
)

// bearer returns the token of an "Authorization: Bearer <token>" header;
// the scheme is case-insensitive (RFC 9110).
func bearer(h string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(token), true
}

// TenantHandler is a route served for an authenticated tenant.
type TenantHandler func(w http.ResponseWriter, r *http.Request, p auth.Principal)

// RequireTenant serves h only for a request whose principal acts for a
// tenant: 401 naming why without credentials or with refused ones, 403
// for an operator key (it manages the Step Functions API; the project's
// API acts for one tenant).
func RequireTenant(h TenantHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := auth.PrincipalFrom(r.Context())
		switch {
		case ok && p.Tenant != "" && !veredicto.ValidID(p.Tenant):
			// The authenticators never let one through: it would name a
			// folder outside the tenant's.
			WriteError(w, r, Errorf(NameForbidden, "the principal's tenant is not a tenant id (%s)", veredicto.IDRule))
		case ok && p.Tenant != "":
			h(w, r, p)
		case ok:
			WriteError(w, r, Errorf(NameForbidden, "%s is an operator key: the project's API acts for a tenant; use a tenant's key (veredicto credentials --tenant T) or token (veredicto token --tenant T)", p.Name))
		default:
			err := auth.FailureFrom(r.Context())
			var it *auth.InvalidTokenError
			if errors.As(err, &it) {
				WriteError(w, r, &Error{Name: NameUnauthorized, Message: it.Error(), Header: http.Header{"WWW-Authenticate": {`Bearer error="invalid_token"`}}})
				return
			}
			if err != nil {
				WriteError(w, r, &Error{Name: NameUnauthorized, Message: err.Error()})
				return
			}
			WriteError(w, r, &Error{Name: NameUnauthorized, Header: http.Header{"WWW-Authenticate": {"Bearer"}},
				Message: "no credentials: send Authorization: Bearer <token> (veredicto token --tenant T) or sign with a tenant's key (veredicto credentials --tenant T)"})
		}
	})
}
