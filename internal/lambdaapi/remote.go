package lambdaapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/smithy-go"

	"github.com/veredicto/veredicto/internal/asl"
)

// InvokeAPI is the Lambda client method Remote needs.
type InvokeAPI interface {
	Invoke(ctx context.Context, in *lambda.InvokeInput, opts ...func(*lambda.Options)) (*lambda.InvokeOutput, error)
}

var _ InvokeAPI = (*lambda.Client)(nil)

// Remote invokes functions on a Lambda endpoint: `sam local
// start-lambda`'s, or any that speaks the Invoke API.
type Remote struct {
	// Endpoint is the endpoint's URL, for messages.
	Endpoint string
	Client   InvokeAPI
	Logger   *slog.Logger
}

// NewRemote is a Remote on endpoint. The endpoint is local: it is signed
// for with a placeholder key, as `sam local start-lambda` takes any.
func NewRemote(endpoint, region string, logger *slog.Logger) *Remote {
	if logger == nil {
		logger = slog.Default()
	}
	client := lambda.New(lambda.Options{
		Region:       region,
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("local", "local", ""),
		// A Task's retries are its state's Retry, not the client's.
		Retryer: aws.NopRetryer{},
	})
	return &Remote{Endpoint: endpoint, Client: client, Logger: logger}
}

// Handler is a Task handler that invokes f on the endpoint, as Step
// Functions invokes a function: synchronously, the function's answer the
// Task's result. The endpoint is given the function's name (and its
// qualifier), not its ARN: a local endpoint knows its functions by name.
//
// A function error fails the Task with the function's errorType as its
// error (Lambda.Unknown when it gives none) and the whole error payload as
// its cause, as in Step Functions; the endpoint's own refusals are
// Lambda.<code> (Lambda.ResourceNotFoundException…), and not reaching it
// at all is Lambda.SdkClientException.
func (r *Remote) Handler(f Function) asl.Handler {
	return func(ctx context.Context, in json.RawMessage) (json.RawMessage, error) {
		input := &lambda.InvokeInput{FunctionName: aws.String(f.Name), Payload: in}
		if f.Qualifier != "" {
			input.Qualifier = aws.String(f.Qualifier)
		}
		out, err := r.Client.Invoke(ctx, input)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err() // the Task's timeout, or the execution stopped
			}
			var ae smithy.APIError
			if errors.As(err, &ae) {
				return nil, &asl.StatesError{Name: "Lambda." + ae.ErrorCode(), Cause: ae.ErrorMessage()}
			}
			r.Logger.WarnContext(ctx, "lambda endpoint unreachable", "endpoint", r.Endpoint, "function", f.Name, "error", err)
			return nil, &asl.StatesError{Name: "Lambda.SdkClientException", Cause: fmt.Sprintf("calling %s on %s: %v", f.Name, r.Endpoint, err)}
		}
		if out.FunctionError != nil {
			var fe struct {
				Type string `json:"errorType"`
			}
			name := "Lambda.Unknown"
			if json.Unmarshal(out.Payload, &fe) == nil && fe.Type != "" {
				name = fe.Type
			}
			return nil, &asl.StatesError{Name: name, Cause: string(out.Payload)}
		}
		return out.Payload, nil
	}
}
