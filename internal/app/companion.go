package app

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/veredicto/veredicto/internal/app/lambdaenv"
	"github.com/veredicto/veredicto/internal/app/lambdaenv/llmsecret"
	"github.com/veredicto/veredicto/internal/app/lambdaenv/storage"
	fileblob "github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/catalog/companionfn"
	"github.com/veredicto/veredicto/internal/catalog/function"
	"github.com/veredicto/veredicto/internal/companion"
	"github.com/veredicto/veredicto/internal/companion/agents"
	dynamoeventlog "github.com/veredicto/veredicto/internal/eventlog/dynamo"
	"github.com/veredicto/veredicto/internal/httpapi"
	"github.com/veredicto/veredicto/internal/llm"
	"github.com/veredicto/veredicto/internal/starter"
	filestore "github.com/veredicto/veredicto/internal/store/file"
)

// StartCompanion runs one of the career companion's task functions
// (function.KindCompanion): context records in DynamoDB, inputs, report.md
// and context.json in the reports bucket under companion/<tenant>/<id>/.
func StartCompanion(logicalID string) {
	lambdaenv.Start(logicalID, function.KindCompanion, companionfn.Functions, func(ctx context.Context, cfg lambdaenv.Config, ac aws.Config) (any, error) {
		_, reports, kv := storage.New(cfg, ac)
		client, err := llmsecret.Client(ctx, ac, cfg)
		if err != nil {
			return nil, err
		}
		var events companion.Appender
		if cfg.EventsTable != "" { // progress on the execution's stream
			events = dynamoeventlog.New(dynamodb.NewFromConfig(ac), cfg.EventsTable)
		}
		svc := &companion.Service{Store: kv, Blobs: reports, Events: events,
			Analyst: CompanionAnalyst(client, nil), Engine: companion.NewEngine(companion.DefaultConfig())}
		var api *httpapi.Gateway
		if cfg.StateMachineARN != "" { // CompanionApiFunction
			st := starter.NewSFN(sfn.NewFromConfig(ac), cfg.StateMachineARN)
			api = httpapi.NewGateway(httpapi.Routes{Companion: CompanionAPI(svc, func(ctx context.Context, name string, input []byte) error {
				_, err := st.Start(ctx, name, input)
				return err
			})}, cfg.TenantClaim)
		}
		return &companionfn.Services{Companion: svc, API: api}, nil
	})
}

// CompanionAnalyst is the career companion's analyst of a client (small
// runs the intent check; nil means client): the LLM agents, or the offline
// baseline when client is nil.
func CompanionAnalyst(client, small *llm.OpenAI) companion.Analyst {
	if client == nil {
		return companion.Offline{}
	}
	if small == nil {
		small = client
	}
	return agents.New(client, small, "openai", client.Info().Model, small.Info().Model)
}

// LocalCompanion is the career companion's service on this machine under
// dir: context records in the local context store, inputs and reports in
// the local reports folder (companion/<tenant>/<id>/).
func LocalCompanion(dir string, client *llm.OpenAI, events companion.Appender) *companion.Service {
	_, rep, ctxDir := LocalLayout(dir)
	return &companion.Service{Store: filestore.NewLocal(ctxDir), Blobs: fileblob.NewDir(rep), Events: events,
		Analyst: CompanionAnalyst(client, nil), Engine: companion.NewEngine(companion.DefaultConfig())}
}

// CompanionAPI is what the companion's HTTP routes call: svc, its
// analyst as the follow-up phases' analyst, and start for new executions
// of CareerCompanionStateMachine.
func CompanionAPI(svc *companion.Service, start func(ctx context.Context, name string, input []byte) error) *companion.API {
	f, _ := svc.Analyst.(companion.FollowUp) // both analysts implement it
	return &companion.API{Service: svc, FollowUp: f, Start: start}
}

// ChooseCompanionAnalyst picks the career companion's analyst like
// ChooseLLM: the LLM agents, with the intent check on smallModel
// (default $OPENAI_SMALL_MODEL, else the main model), or the offline
// baseline. The notice is the one line shown to the user.
func ChooseCompanionAnalyst(provider, model, smallModel string, getenv func(string) string) (companion.Analyst, string, error) {
	client, err := ChooseLLM(provider, model, getenv)
	if err != nil {
		return nil, "", err
	}
	if client == nil {
		return companion.Offline{}, "LLM: offline baseline (deterministic; the report is labelled as a baseline, not a model judgment)", nil
	}
	if smallModel == "" {
		smallModel = getenv("OPENAI_SMALL_MODEL")
	}
	small := client
	if smallModel != "" && smallModel != client.Info().Model {
		if small, err = ChooseLLM("openai", smallModel, getenv); err != nil {
			return nil, "", err
		}
	}
	return CompanionAnalyst(client, small), fmt.Sprintf("LLM: openai-compatible, model %s (intent: %s)", client.Info().Model, small.Info().Model), nil
}
