package httpapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/auth"
)

// Gateway serves an http.Handler (a Mux of the project's routes) behind an
// API Gateway HTTP API (payload 2.0) whose JWT authorizer verified the
// caller: the principal is the claims' tenant (TenantClaim,
// auth.DefaultTenantClaim when empty) and subject, as the local
// Authenticator puts it in the context. A request without a valid tenant
// claim reaches the routes unauthenticated, which RequireTenant answers 401.
type Gateway struct {
	Handler     http.Handler
	TenantClaim string
}

// NewGateway serves the groups' routes behind API Gateway, the tenant from
// the claim tenantClaim of the JWT the API's authorizer verified; the
// routes log to slog.Default().
func NewGateway(tenantClaim string, groups ...Group) *Gateway {
	return &Gateway{Handler: New(nil, groups...), TenantClaim: tenantClaim}
}

// Handle serves one API Gateway request; the method form of the adapter,
// as the catalog binds Lambda handlers.
func (g *Gateway) Handle(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	claim := g.TenantClaim
	if claim == "" {
		claim = auth.DefaultTenantClaim
	}
	var claims map[string]string
	if a := ev.RequestContext.Authorizer; a != nil && a.JWT != nil {
		claims = a.JWT.Claims
	}
	switch tenant := claims[claim]; {
	case tenant == "":
		ctx = auth.WithFailure(ctx, &auth.InvalidTokenError{Reason: "no " + claim + " claim in the token"})
	case !veredicto.ValidID(tenant): // it scopes every key
		ctx = auth.WithFailure(ctx, &auth.InvalidTokenError{Reason: "the token's " + claim + " claim is not a tenant name (" + veredicto.IDRule + ")"})
	default:
		ctx = auth.WithPrincipal(ctx, auth.FromClaims(auth.Claims{Tenant: tenant, Subject: claims["sub"]}, auth.ViaAPIGateway))
	}
	body := []byte(ev.Body)
	if ev.IsBase64Encoded {
		b, err := base64.StdEncoding.DecodeString(ev.Body)
		if err != nil {
			return gatewayError(http.StatusBadRequest, "body is not valid base64"), nil
		}
		body = b
	}
	target := ev.RawPath
	if target == "" {
		target = "/"
	}
	if ev.RawQueryString != "" {
		target += "?" + ev.RawQueryString
	}
	r, err := http.NewRequestWithContext(ctx, ev.RequestContext.HTTP.Method, target, bytes.NewReader(body))
	if err != nil {
		return gatewayError(http.StatusBadRequest, "malformed request"), nil
	}
	for k, v := range ev.Headers {
		r.Header.Set(k, v)
	}
	r.Host = ev.RequestContext.DomainName
	r.RemoteAddr = ev.RequestContext.HTTP.SourceIP
	rec := &recorder{header: http.Header{}}
	g.Handler.ServeHTTP(rec, r)
	return rec.response(), nil
}

func gatewayError(status int, msg string) events.APIGatewayV2HTTPResponse {
	return events.APIGatewayV2HTTPResponse{StatusCode: status, Headers: map[string]string{"Content-Type": "application/json"},
		Body: `{"error": "` + msg + `"}` + "\n"}
}

// recorder is the http.ResponseWriter behind Gateway: the whole response,
// as API Gateway takes it.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *recorder) Header() http.Header { return w.header }

func (w *recorder) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *recorder) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}

func (w *recorder) response() events.APIGatewayV2HTTPResponse {
	out := events.APIGatewayV2HTTPResponse{StatusCode: w.status, Headers: map[string]string{}}
	if out.StatusCode == 0 {
		out.StatusCode = http.StatusOK
	}
	for k, v := range w.header {
		out.Headers[k] = strings.Join(v, ",")
	}
	if b := w.body.Bytes(); utf8.Valid(b) {
		out.Body = string(b)
	} else {
		out.Body, out.IsBase64Encoded = base64.StdEncoding.EncodeToString(b), true
	}
	return out
}

var _ http.ResponseWriter = (*recorder)(nil)
