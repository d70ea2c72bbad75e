// Package peopleapp is the Lambda entry point of the functions that put a
// person in the loop (function.KindPeople, seed 004): ConfirmFunction,
// ConfirmationsFunction and StreamFunction, on DynamoDB and Step Functions.
// It imports only their packages and clients, never internal/app (the
// local composition root, which reuses EventStream).
package peopleapp

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/veredicto/veredicto/internal/app/lambdaenv"
	"github.com/veredicto/veredicto/internal/app/lambdaenv/confirmations"
	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/awsclient/dynamodb"
	"github.com/veredicto/veredicto/internal/awsclient/sfn"
	"github.com/veredicto/veredicto/internal/catalog/function"
	"github.com/veredicto/veredicto/internal/catalog/peoplefn"
	dynamoeventlog "github.com/veredicto/veredicto/internal/eventlog/dynamo"
	"github.com/veredicto/veredicto/internal/httpapi"
	"github.com/veredicto/veredicto/internal/httpapi/confirmapi"
	"github.com/veredicto/veredicto/internal/httpapi/eventsapi"
	"github.com/veredicto/veredicto/internal/stream"
)

// Config is what the confirmation and stream functions read besides
// lambdaenv.Config: EVENTS_TABLE always; the stream's JWT settings and
// state machines.
type Config struct {
	EventsTable   string   // EVENTS_TABLE
	JWTIssuer     string   // JWT_ISSUER (stream)
	JWTAudience   []string // JWT_AUDIENCE, comma-separated (stream; required: the tokens' aud)
	JWKSURL       string   // JWKS_URL (stream; default JWT_ISSUER + /.well-known/jwks.json)
	StateMachines []string // STATE_MACHINE_ARNS, comma-separated (stream)
}

// ConfigFromEnv reads Config; with stream, the stream's settings are
// required too. Missing settings are named.
func ConfigFromEnv(getenv func(string) string, stream bool) (Config, error) {
	c := Config{JWTIssuer: getenv("JWT_ISSUER"), JWTAudience: lambdaenv.SplitList(getenv("JWT_AUDIENCE")), JWKSURL: getenv("JWKS_URL"),
		StateMachines: lambdaenv.SplitList(getenv("STATE_MACHINE_ARNS"))}
	var err error
	if c.EventsTable, err = confirmations.EventsTable(getenv); err != nil {
		return c, err
	}
	if stream {
		if c.JWTIssuer == "" || len(c.JWTAudience) == 0 || len(c.StateMachines) == 0 {
			// No audience would accept any token the issuer signs for
			// another application.
			return c, fmt.Errorf("configuration: JWT_ISSUER, JWT_AUDIENCE and STATE_MACHINE_ARNS must be set")
		}
		if c.JWKSURL == "" {
			c.JWKSURL = strings.TrimSuffix(c.JWTIssuer, "/") + "/.well-known/jwks.json"
		}
	}
	return c, nil
}

// Start runs one of the functions that put a person in the loop:
// ConfirmFunction, the .waitForTaskToken task that stores a pending
// confirmation; ConfirmationsFunction, GET and POST /api/confirmations on
// the HTTP API (JWT authorizer); StreamFunction, the
// execution's events as Server-Sent Events on a Function URL with
// InvokeMode RESPONSE_STREAM, JWTs checked against the issuer's JWKS,
// events read from DynamoDB and the execution's history mirrored into them.
func Start(logicalID string) {
	lambdaenv.Start(logicalID, function.KindPeople, peoplefn.Functions, func(_ context.Context, cfg lambdaenv.Config, ac aws.Config) (any, error) {
		switch logicalID {
		case "ConfirmFunction":
			pc, err := ConfigFromEnv(os.Getenv, false)
			if err != nil {
				return nil, err
			}
			// Creating a confirmation never resumes a task: no sfn client.
			svc, err := confirmations.New(cfg, pc.EventsTable, ac, false)
			if err != nil {
				return nil, err
			}
			return &peoplefn.Services{Confirm: svc}, nil
		case "ConfirmationsFunction":
			pc, err := ConfigFromEnv(os.Getenv, false)
			if err != nil {
				return nil, err
			}
			svc, err := confirmations.New(cfg, pc.EventsTable, ac, true)
			if err != nil {
				return nil, err
			}
			return &peoplefn.Services{API: httpapi.NewGateway(cfg.TenantClaim, confirmapi.Routes{Service: svc})}, nil
		case "StreamFunction":
			pc, err := ConfigFromEnv(os.Getenv, true)
			if err != nil {
				return nil, err
			}
			ddb, err := dynamodb.New(ac)
			if err != nil {
				return nil, err
			}
			states, err := sfn.New(ac)
			if err != nil {
				return nil, err
			}
			log := dynamoeventlog.New(ddb, pc.EventsTable)
			execs := &stream.Executions{API: states, Recorder: &stream.Recorder{Log: log}, Log: log, StateMachines: pc.StateMachines}
			verify := &auth.JWKS{URL: pc.JWKSURL, Policy: auth.Policy{Issuer: pc.JWTIssuer, Audience: pc.JWTAudience, TenantClaim: cfg.TenantClaim}}
			h := peoplefn.Stream(EventStream(&eventsapi.Routes{Log: log, Resolve: execs, Refresh: execs}, verify))
			return &peoplefn.Services{Stream: &h}, nil
		}
		return nil, fmt.Errorf("%s is not a %s function", logicalID, function.KindPeople)
	})
}

// EventStream serves the event stream on a streaming Function URL (AuthType
// NONE): the tokens are verified here, by v, as the bearer header or, for
// browsers' EventSource, ?access_token=.
func EventStream(h *eventsapi.Routes, v auth.Verifier) func(context.Context, *events.LambdaFunctionURLRequest) (*events.LambdaFunctionURLStreamingResponse, error) {
	return httpapi.FunctionURL(eventsapi.EventStream(h, v, slog.Default()))
}
