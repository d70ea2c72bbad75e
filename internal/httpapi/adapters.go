package httpapi

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"strings"

	"github.com/aws/aws-lambda-go/events"
)

// MaxBody bounds a request body read by Handler (API Gateway bounds its
// own at 10 MiB).
const MaxBody = 10 << 20

// APIGateway is the Lambda handler of an API Gateway HTTP API (payload
// 2.0) in front of the router: the tenant is the claim rt.TenantClaim of
// the JWT the API's authorizer already verified.
func (rt *Router) APIGateway() func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	return rt.HandleAPIGateway
}

// HandleAPIGateway serves one API Gateway HTTP API (payload 2.0) request:
// the method form of APIGateway, as the catalog binds handlers.
func (rt *Router) HandleAPIGateway(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	return serveAPIGateway(ctx, ev, rt.tenantClaim(), rt.Serve), nil
}

// serveAPIGateway decodes an API Gateway HTTP API (payload 2.0) request,
// the tenant from the JWT claim the API's authorizer verified, for serve.
func serveAPIGateway(ctx context.Context, ev events.APIGatewayV2HTTPRequest, claim string, serve func(context.Context, Request) Response) events.APIGatewayV2HTTPResponse {
	req := Request{Method: ev.RequestContext.HTTP.Method, Path: ev.RawPath, Header: http.Header{}, Body: []byte(ev.Body)}
	if ev.IsBase64Encoded {
		b, err := base64.StdEncoding.DecodeString(ev.Body)
		if err != nil {
			return toAPIGateway(errorResponse(http.StatusBadRequest, "body is not valid base64"))
		}
		req.Body = b
	}
	for k, v := range ev.Headers {
		req.Header.Set(k, v)
	}
	if a := ev.RequestContext.Authorizer; a != nil && a.JWT != nil {
		req.Tenant = a.JWT.Claims[claim]
	}
	return toAPIGateway(serve(ctx, req))
}

func toAPIGateway(r Response) events.APIGatewayV2HTTPResponse {
	out := events.APIGatewayV2HTTPResponse{StatusCode: r.Status, Body: string(r.Body), Headers: map[string]string{}}
	for k, v := range r.Header {
		out.Headers[k] = strings.Join(v, ",")
	}
	return out
}

// Handler serves the router on net/http (a local server): tenant reports
// the authenticated tenant of a request ("" when there is none, which the
// search routes answer with 401).
func (rt *Router) Handler(tenant func(*http.Request) string) http.Handler {
	return netHTTP(rt.Serve, tenant)
}

// netHTTP serves serve on net/http, the body bounded by MaxBody.
func netHTTP(serve func(context.Context, Request) Response, tenant func(*http.Request) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
		var resp Response
		if err != nil {
			resp = errorResponse(http.StatusRequestEntityTooLarge, "the request body is larger than 10 MiB or could not be read")
		} else {
			resp = serve(r.Context(), Request{Method: r.Method, Path: r.URL.EscapedPath(), Header: r.Header, Body: body, Tenant: tenant(r)})
		}
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.Status)
		w.Write(resp.Body)
	})
}
