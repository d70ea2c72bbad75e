package httpapi

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdaurl"

	"github.com/veredicto/veredicto/internal/auth"
)

// FunctionURL serves h from a Lambda Function URL with InvokeMode
// RESPONSE_STREAM: the response streams as it is written (the event
// stream; Events ends it before the invocation's deadline so the client
// reconnects with Last-Event-ID). The Function URL's AuthType is NONE, so
// h authenticates itself (an Authenticator verifying the HTTP API's JWTs).
func FunctionURL(h http.Handler) func(context.Context, *events.LambdaFunctionURLRequest) (*events.LambdaFunctionURLStreamingResponse, error) {
	return lambdaurl.Wrap(h)
}

// EventStream serves the event stream as its Function URL does: at the
// URL's root and at /api/events, with tokens verified by v (the HTTP API's
// issuer), sent as "Authorization: Bearer" or, for a browser's
// EventSource, as ?access_token=.
func EventStream(h *Events, v auth.Verifier, logger *slog.Logger) http.Handler {
	m := NewMux(logger)
	h.register(m)
	m.Handle("GET /{$}", RequireTenant(h.serveHTTP))
	authn := &Authenticator{Tokens: v, QueryToken: []string{"/", "/api/events"}, Logger: logger}
	return authn.Wrap(m)
}
