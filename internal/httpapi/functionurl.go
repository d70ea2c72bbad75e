package httpapi

import (
	"context"
	"net/http"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdaurl"
)

// FunctionURL serves h from a Lambda Function URL with InvokeMode
// RESPONSE_STREAM: the response streams as it is written (the event
// stream; eventsapi.Routes ends it before the invocation's deadline so the client
// reconnects with Last-Event-ID). The Function URL's AuthType is NONE, so
// h authenticates itself (an Authenticator verifying the HTTP API's JWTs).
func FunctionURL(h http.Handler) func(context.Context, *events.LambdaFunctionURLRequest) (*events.LambdaFunctionURLStreamingResponse, error) {
	return lambdaurl.Wrap(h)
}
