// Package companionapp is the Lambda entry point of the career
// companion's Tasks and HTTP routes (function.KindCompanion, seed 001):
// context records in DynamoDB, inputs and reports in the reports bucket,
// agents on the LLM secret. It imports only the companion's packages and
// the clients it uses, never internal/app (the local composition root,
// which reuses Analyst and API).
package companionapp

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/veredicto/veredicto/internal/app/lambdaenv"
	"github.com/veredicto/veredicto/internal/app/lambdaenv/llmsecret"
	"github.com/veredicto/veredicto/internal/app/lambdaenv/records"
	"github.com/veredicto/veredicto/internal/app/lambdaenv/storage"
	"github.com/veredicto/veredicto/internal/awsclient/dynamodb"
	"github.com/veredicto/veredicto/internal/awsclient/sfn"
	"github.com/veredicto/veredicto/internal/catalog/companionfn"
	"github.com/veredicto/veredicto/internal/catalog/function"
	"github.com/veredicto/veredicto/internal/companion"
	"github.com/veredicto/veredicto/internal/companion/agents"
	dynamoeventlog "github.com/veredicto/veredicto/internal/eventlog/dynamo"
	"github.com/veredicto/veredicto/internal/httpapi"
	"github.com/veredicto/veredicto/internal/httpapi/companionapi"
	"github.com/veredicto/veredicto/internal/llm"
	"github.com/veredicto/veredicto/internal/starter"
)

// Start runs one of the career companion's task functions or its HTTP
// routes: context records in DynamoDB, inputs, report.md and context.json
// in the reports bucket under companion/<tenant>/<id>/, progress in the
// events table (EVENTS_TABLE), applications started on STATE_MACHINE_ARN
// (CompanionApiFunction).
func Start(logicalID string) {
	lambdaenv.Start(logicalID, function.KindCompanion, companionfn.Functions, func(ctx context.Context, cfg lambdaenv.Config, ac aws.Config) (any, error) {
		_, reports, kv, err := storage.New(cfg, ac)
		if err != nil {
			return nil, err
		}
		client, err := llmsecret.Client(ctx, ac, cfg)
		if err != nil {
			return nil, err
		}
		audit, err := records.New(cfg, ac)
		if err != nil {
			return nil, err
		}
		var events companion.Appender
		if cfg.EventsTable != "" { // progress on the execution's stream
			ddb, err := dynamodb.New(ac)
			if err != nil {
				return nil, err
			}
			events = dynamoeventlog.New(ddb, cfg.EventsTable)
		}
		svc := &companion.Service{Store: kv, Blobs: reports, Events: events, Audit: audit,
			Analyst: Analyst(client, nil), Engine: companion.NewEngine(companion.DefaultConfig())}
		var api *httpapi.Gateway
		if cfg.StateMachineARN != "" { // CompanionApiFunction
			states, err := sfn.New(ac)
			if err != nil {
				return nil, err
			}
			st := starter.NewSFN(states, cfg.StateMachineARN)
			api = httpapi.NewGateway(cfg.TenantClaim, companionapi.Routes{API: API(svc, func(ctx context.Context, name string, input []byte) error {
				_, err := st.Start(ctx, name, input)
				return err
			})})
		}
		return &companionfn.Services{Companion: svc, API: api}, nil
	})
}

// Analyst is the career companion's analyst of a client (small runs the
// intent check; nil means client): the LLM agents, or the offline baseline
// when client is nil.
func Analyst(client, small *llm.OpenAI) companion.Analyst {
	if client == nil {
		return companion.Offline{}
	}
	if small == nil {
		small = client
	}
	return agents.New(client, small, "openai", client.Info().Model, small.Info().Model)
}

// API is what the companion's HTTP routes call: svc, its analyst as the
// follow-up phases' analyst, and start for new executions of
// CareerCompanionStateMachine.
func API(svc *companion.Service, start func(ctx context.Context, name string, input []byte) error) *companion.API {
	f, _ := svc.Analyst.(companion.FollowUp) // both analysts implement it
	return &companion.API{Service: svc, FollowUp: f, Start: start}
}
