package httpapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"

	"github.com/aws/aws-lambda-go/events"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/auth"
)

// FromHandler serves an http.Handler (the confirmations API) behind an API
// Gateway HTTP API (payload 2.0) whose JWT authorizer already verified the
// token: the handler finds the tenant (the tenantClaim claim,
// auth.DefaultTenantClaim when empty) and the subject (sub) in the request
// context with auth.ClaimsFrom, as it does behind the local middleware. A
// request without the tenant claim is a 401 and never reaches h.
func FromHandler(h http.Handler, tenantClaim string) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	if tenantClaim == "" {
		tenantClaim = auth.DefaultTenantClaim
	}
	return func(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		var claims map[string]string
		if a := ev.RequestContext.Authorizer; a != nil && a.JWT != nil {
			claims = a.JWT.Claims
		}
		if claims[tenantClaim] == "" {
			return toAPIGateway(errorResponse(http.StatusUnauthorized, "missing tenant claim "+tenantClaim+" in the token")), nil
		}
		if !veredicto.ValidID(claims[tenantClaim]) { // it scopes every key
			return toAPIGateway(errorResponse(http.StatusForbidden, "the token's "+tenantClaim+" claim is not a tenant name ("+veredicto.IDRule+")")), nil
		}
		body := []byte(ev.Body)
		if ev.IsBase64Encoded {
			b, err := base64.StdEncoding.DecodeString(ev.Body)
			if err != nil {
				return toAPIGateway(errorResponse(http.StatusBadRequest, "body is not valid base64")), nil
			}
			body = b
		}
		url := ev.RawPath
		if ev.RawQueryString != "" {
			url += "?" + ev.RawQueryString
		}
		ctx = auth.WithClaims(ctx, auth.Claims{Tenant: claims[tenantClaim], Subject: claims["sub"]})
		r, err := http.NewRequestWithContext(ctx, ev.RequestContext.HTTP.Method, url, bytes.NewReader(body))
		if err != nil {
			return toAPIGateway(errorResponse(http.StatusBadRequest, "malformed request")), nil
		}
		for k, v := range ev.Headers {
			r.Header.Set(k, v)
		}
		w := &responseRecorder{resp: Response{Header: http.Header{}}}
		h.ServeHTTP(w, r)
		if w.resp.Status == 0 {
			w.resp.Status = http.StatusOK
		}
		return toAPIGateway(w.resp), nil
	}
}

// responseRecorder is the http.ResponseWriter behind FromHandler.
type responseRecorder struct {
	resp Response
	body bytes.Buffer
}

func (w *responseRecorder) Header() http.Header { return w.resp.Header }

func (w *responseRecorder) WriteHeader(status int) {
	if w.resp.Status == 0 {
		w.resp.Status = status
	}
}

func (w *responseRecorder) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	n, err := w.body.Write(b)
	w.resp.Body = w.body.Bytes()
	return n, err
}

var _ http.ResponseWriter = (*responseRecorder)(nil)
