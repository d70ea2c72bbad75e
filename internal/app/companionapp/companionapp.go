// Package companionapp is the Lambda entry point of the career
// companion's Tasks (function.KindCompanion, seed 001): context records in
// DynamoDB, inputs and reports in the reports bucket, agents on the LLM
// secret. It imports only the companion's packages and the clients it
// uses, never the HTTP API (the routes are internal/app/companionapiapp's,
// which reuses Service) nor internal/app (the local composition root,
// which reuses Analyst).
package companionapp

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/veredicto/veredicto/internal/app/lambdaenv"
	"github.com/veredicto/veredicto/internal/app/lambdaenv/tasks"
	"github.com/veredicto/veredicto/internal/awsclient/dynamodb"
	"github.com/veredicto/veredicto/internal/catalog/companionfn"
	"github.com/veredicto/veredicto/internal/catalog/function"
	"github.com/veredicto/veredicto/internal/companion"
	"github.com/veredicto/veredicto/internal/companion/agents"
	dynamoeventlog "github.com/veredicto/veredicto/internal/eventlog/dynamo"
	"github.com/veredicto/veredicto/internal/llm"
)

// Start runs one of the career companion's task functions on Service.
func Start(logicalID string) {
	lambdaenv.Start(logicalID, function.KindCompanion, companionfn.Functions, func(ctx context.Context, cfg lambdaenv.Config, ac aws.Config) (any, error) {
		svc, err := Service(ctx, cfg, ac)
		if err != nil {
			return nil, err
		}
		return &companionfn.Services{Companion: svc}, nil
	})
}

// Service is the career companion on AWS, as its Tasks and its HTTP
// routes (internal/app/companionapiapp) use it: context records in
// DynamoDB, inputs, report.md and context.json in the reports bucket under
// companion/<tenant>/<id>/, progress in the events table (EVENTS_TABLE),
// the audit record in the reports bucket, the agents on the LLM secret.
func Service(ctx context.Context, cfg lambdaenv.Config, ac aws.Config) (*companion.Service, error) {
	d, err := tasks.New(ctx, cfg, ac)
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
	return &companion.Service{Store: d.Store, Blobs: d.Reports, Events: events, Audit: d.Audit,
		Analyst: Analyst(d.LLM, nil), Engine: companion.NewEngine(companion.DefaultConfig())}, nil
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
