package confirm

import (
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

func TestAPIGateway(t *testing.T) {
	f := newFixture(t)
	id := f.create(t, "acme", "tok")
	h := APIGateway(&Handler{Service: f.svc}, "")
	req := func(method, body string, claims map[string]string) events.APIGatewayV2HTTPRequest {
		r := events.APIGatewayV2HTTPRequest{RawPath: "/api/confirmations", Body: body}
		r.RequestContext.HTTP.Method = method
		if claims != nil {
			r.RequestContext.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
				JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: claims}}
		}
		return r
	}
	acme := map[string]string{"custom:tenant": "acme", "sub": "user-1"}
	tests := []struct {
		name       string
		req        events.APIGatewayV2HTTPRequest
		wantStatus int
		wantBody   string
	}{
		{"no authorizer", req("GET", "", nil), 401, "missing tenant claim"},
		{"no tenant claim", req("GET", "", map[string]string{"sub": "x"}), 401, "missing tenant claim"},
		{"list", req("GET", "", acme), 200, id},
		{"other tenant", req("POST", `{"id":"`+id+`","approved":true}`, map[string]string{"custom:tenant": "globex"}), 404, "not found"},
		{"approve", req("POST", `{"id":"`+id+`","approved":true}`, acme), 200, `"decided_by": "user-1"`},
		{"again", req("POST", `{"id":"`+id+`","approved":true}`, acme), 409, "already approved"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := h(t.Context(), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.wantStatus || !strings.Contains(resp.Body, tt.wantBody) {
				t.Errorf("got %d %s, want %d containing %q", resp.StatusCode, resp.Body, tt.wantStatus, tt.wantBody)
			}
			if resp.Headers["Content-Type"] != "application/json" {
				t.Errorf("Content-Type = %q", resp.Headers["Content-Type"])
			}
		})
	}
}
