package confirm

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/veredicto/veredicto/internal/auth"
)

// APIGateway serves h behind an API Gateway HTTP API (payload 2.0) whose
// JWT authorizer already verified the token: the tenant is the
// tenantClaim claim (auth.DefaultTenantClaim when empty), the decider the
// sub claim. A request without the claim is a 401 and never reaches h.
func APIGateway(h http.Handler, tenantClaim string) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	if tenantClaim == "" {
		tenantClaim = auth.DefaultTenantClaim
	}
	return func(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		var claims map[string]string
		if a := req.RequestContext.Authorizer; a != nil && a.JWT != nil {
			claims = a.JWT.Claims
		}
		w := &recorder{header: http.Header{}}
		if claims[tenantClaim] == "" {
			writeJSON(w, http.StatusUnauthorized, errBody("missing tenant claim "+tenantClaim+" in the token"))
			return w.response(), nil
		}
		body := req.Body
		if req.IsBase64Encoded {
			b, err := base64.StdEncoding.DecodeString(body)
			if err != nil {
				writeJSON(w, http.StatusBadRequest, errBody("body: is not valid base64"))
				return w.response(), nil
			}
			body = string(b)
		}
		url := req.RawPath
		if req.RawQueryString != "" {
			url += "?" + req.RawQueryString
		}
		hr, err := http.NewRequestWithContext(auth.WithClaims(ctx, auth.Claims{Tenant: claims[tenantClaim], Subject: claims["sub"]}),
			req.RequestContext.HTTP.Method, url, strings.NewReader(body))
		if err != nil {
			writeJSON(w, http.StatusBadRequest, errBody("malformed request"))
			return w.response(), nil
		}
		for k, v := range req.Headers {
			hr.Header.Set(k, v)
		}
		h.ServeHTTP(w, hr)
		return w.response(), nil
	}
}

// recorder is the http.ResponseWriter behind APIGateway.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(s int) {
	if r.status == 0 {
		r.status = s
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(b)
}

func (r *recorder) response() events.APIGatewayV2HTTPResponse {
	out := events.APIGatewayV2HTTPResponse{StatusCode: r.status, Body: r.body.String(), Headers: map[string]string{}}
	if out.StatusCode == 0 {
		out.StatusCode = http.StatusOK
	}
	for k, v := range r.header {
		out.Headers[k] = strings.Join(v, ",")
	}
	return out
}
