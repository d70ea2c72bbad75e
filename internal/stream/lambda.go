package stream

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdaurl"

	"github.com/veredicto/veredicto/internal/auth"
)

// FunctionURL serves h from a Lambda Function URL with InvokeMode
// RESPONSE_STREAM (the Function URL's AuthType is NONE): every request
// must carry a JWT that v accepts (on AWS a JWKS verifier for the HTTP
// API's issuer), as "Authorization: Bearer" or, for browsers' EventSource,
// "?access_token=". The response streams as it is written; Handler ends it
// before the invocation's deadline so the client reconnects with
// Last-Event-ID.
func FunctionURL(h http.Handler, v auth.Verifier, logger *slog.Logger) func(context.Context, *events.LambdaFunctionURLRequest) (*events.LambdaFunctionURLStreamingResponse, error) {
	return lambdaurl.Wrap(auth.Middleware(v, auth.MiddlewareOptions{QueryToken: true, Logger: logger})(h))
}
