package httpapi

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/veredicto/veredicto/internal/auth"
)

func TestFromHandlerPassesTheAuthorizersClaims(t *testing.T) {
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, ok := auth.ClaimsFrom(r.Context())
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/plain")
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusCreated)
		}
		fmt.Fprintf(w, "%v tenant=%s sub=%s %s %s q=%s h=%s body=%s", ok, c.Tenant, c.Subject, r.Method, r.URL.Path, r.URL.Query().Get("x"), r.Header.Get("X-Test"), b)
	})
	h := FromHandler(echo, "")
	req := func(method, body string, b64 bool, claims map[string]string) events.APIGatewayV2HTTPRequest {
		r := events.APIGatewayV2HTTPRequest{RawPath: "/api/confirmations", RawQueryString: "x=1", Body: body, IsBase64Encoded: b64,
			Headers: map[string]string{"x-test": "yes"}}
		r.RequestContext.HTTP.Method = method
		if claims != nil {
			r.RequestContext.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
				JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: claims}}
		}
		return r
	}
	acme := map[string]string{"custom:tenant": "acme", "sub": "user-1"}
	tests := []struct {
		name   string
		req    events.APIGatewayV2HTTPRequest
		status int
		body   string
	}{
		{"no authorizer", req("GET", "", false, nil), 401, "missing tenant claim custom:tenant"},
		{"no tenant claim", req("GET", "", false, map[string]string{"sub": "x"}), 401, "missing tenant claim"},
		{"tenant with a slash", req("GET", "", false, map[string]string{"custom:tenant": "acme/x"}), 403, "is not a tenant name"},
		{"claims reach the handler", req("GET", "", false, acme), 200, "true tenant=acme sub=user-1 GET /api/confirmations q=1 h=yes body="},
		{"status and body", req("POST", `{"id":"c"}`, false, acme), 201, `body={"id":"c"}`},
		{"base64 body", req("POST", base64.StdEncoding.EncodeToString([]byte(`{"a":1}`)), true, acme), 201, `body={"a":1}`},
		{"bad base64", req("POST", "%%%", true, acme), 400, "not valid base64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := h(t.Context(), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.status || !strings.Contains(resp.Body, tt.body) {
				t.Errorf("got %d %q, want %d containing %q", resp.StatusCode, resp.Body, tt.status, tt.body)
			}
		})
	}
}
