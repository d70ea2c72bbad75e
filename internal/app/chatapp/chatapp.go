// Package chatapp is the Lambda entry point of the delegation chat
// (function.KindChat, seed 004 §5–9): its HTTP API and its turns queue's
// worker, on DynamoDB, S3, SQS, Step Functions and the LLM secret. It
// imports the chat's packages, the clients it uses and the confirmations'
// builder (internal/app/lambdaenv/confirmations), never another kind's
// entry point nor internal/app (the local composition root).
package chatapp

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/veredicto/veredicto/examples/delegation/corpus"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/veredicto/veredicto/internal/app/lambdaenv"
	"github.com/veredicto/veredicto/internal/app/lambdaenv/confirmations"
	"github.com/veredicto/veredicto/internal/app/lambdaenv/llmsecret"
	"github.com/veredicto/veredicto/internal/app/lambdaenv/records"
	"github.com/veredicto/veredicto/internal/app/lambdaenv/storage"
	"github.com/veredicto/veredicto/internal/awsclient/dynamodb"
	"github.com/veredicto/veredicto/internal/awsclient/sfn"
	"github.com/veredicto/veredicto/internal/awsclient/sqs"
	"github.com/veredicto/veredicto/internal/catalog/chatfn"
	"github.com/veredicto/veredicto/internal/catalog/function"
	"github.com/veredicto/veredicto/internal/chat"
	dynamoeventlog "github.com/veredicto/veredicto/internal/eventlog/dynamo"
	"github.com/veredicto/veredicto/internal/flags"
	"github.com/veredicto/veredicto/internal/httpapi"
	"github.com/veredicto/veredicto/internal/httpapi/chatapi"
	"github.com/veredicto/veredicto/internal/intake"
	"github.com/veredicto/veredicto/internal/llm"
	"github.com/veredicto/veredicto/internal/starter"
	"github.com/veredicto/veredicto/prompts"
)

// chatConfig is what the chat functions read besides lambdaenv.Config.
type chatConfig struct {
	EventsTable   string // EVENTS_TABLE (the confirmations' events)
	TurnsQueueURL string // CHAT_TURNS_QUEUE_URL (ChatFunction)
	CompanionARN  string // COMPANION_STATE_MACHINE_ARN (empty: the tool says it is not deployed)
	DebateARN     string // DEBATE_STATE_MACHINE_ARN (idem)
	// Options: CHAT_DELEGATION_ONLY, DEBUG_DELEGATION_INTENT, and the
	// confirmation wait that fits one invocation.
	chat.Options
}

func chatConfigFromEnv(getenv func(string) string, logicalID string) (chatConfig, error) {
	c := chatConfig{TurnsQueueURL: getenv("CHAT_TURNS_QUEUE_URL"), CompanionARN: getenv("COMPANION_STATE_MACHINE_ARN"),
		DebateARN: getenv("DEBATE_STATE_MACHINE_ARN"), Options: chat.OptionsFromEnv(getenv)}
	var err error
	if c.EventsTable, err = confirmations.EventsTable(getenv); err != nil {
		return c, err
	}
	if logicalID == "ChatFunction" && c.TurnsQueueURL == "" {
		return c, fmt.Errorf("configuration: CHAT_TURNS_QUEUE_URL is not set")
	}
	// A turn runs in one invocation (at most 15 minutes): a confirmation
	// waits up to 12, leaving time for the rest of the turn.
	c.Options.ConfirmWait = 12 * time.Minute
	return c, nil
}

// chatService assembles the chat on AWS: turns in the context table
// (chat/<tenant>/… keys), events in the events table, confirmations and
// the links of the workflows a conversation starts (chatlink/<tenant>/…)
// in the context table, the search tools on S3 and Step Functions, the
// companion's and the debate's machines on Step Functions, outgoing mail
// as JSON under outbox/<tenant>/ in the reports bucket (for the mail
// gateway), the supervisor on the LLM secret (offline without one).
func chatService(ctx context.Context, cfg lambdaenv.Config, cc chatConfig, ac aws.Config) (*chat.Service, error) {
	reg, err := chat.LoadRegistry(prompts.AgentsFile, prompts.AgentsYAML, chat.KnownActions())
	if err != nil {
		return nil, err
	}
	inputs, reports, kv, err := storage.New(cfg, ac)
	if err != nil {
		return nil, err
	}
	sfnClient, err := sfn.New(ac)
	if err != nil {
		return nil, err
	}
	audit, err := records.New(cfg, ac)
	if err != nil {
		return nil, err
	}
	var st intake.Starter = starter.Unconfigured{Variable: "STATE_MACHINE_ARN"}
	if cfg.StateMachineARN != "" {
		st = starter.NewSFN(sfnClient, cfg.StateMachineARN)
	}
	searches := &intake.Service{Inputs: inputs, Reports: reports, Records: kv, Starter: st}
	// One read of the secret serves the flags judge's client and the
	// supervisor's model.
	key, err := llmsecret.Key(ctx, ac, cfg)
	if err != nil {
		return nil, err
	}
	var client *llm.OpenAI
	var model chat.Model
	if key != "" {
		if client, err = llm.NewOpenAI(llm.OpenAIConfig{APIKey: key, BaseURL: cfg.BaseURL, Model: cfg.Model, CallTimeout: cfg.OpenAITimeout}); err != nil {
			return nil, err
		}
		if model, err = chat.NewOpenAIModel(key, cfg.BaseURL, cfg.Model); err != nil {
			return nil, err
		}
	}
	confirms, err := confirmations.New(cfg, cc.EventsTable, ac, false)
	if err != nil {
		return nil, err
	}
	ddb, err := dynamodb.New(ac)
	if err != nil {
		return nil, err
	}
	events := dynamoeventlog.New(ddb, cc.EventsTable)
	svc := &chat.Service{
		Registry: reg, Model: model, Store: kv, Events: events,
		// The workflows a conversation starts are linked to it in the
		// context table; ChatLinkFunction says their status changes
		// there, and an end that came before the turn kept the link is
		// said when it is kept.
		Links: &chat.Links{Store: kv, Events: events, Log: events, Describe: chat.DescribeWith(sfnClient)},
		// Each tenant's promoted intent model lives in the reports bucket.
		Intents:       &chat.IntentModels{Registry: reg, Blobs: reports},
		Confirmations: confirms, ConfirmationStore: confirms.Store, Options: cc.Options,
		// Each conversation's audit record, like every workflow's.
		Audit: audit,
		Tools: map[string]chat.Tool{
			chat.ActionSearch:    chat.SearchTool{Searches: searches},
			chat.ActionFlags:     chat.FlagsTool{Inputs: inputs, Judge: flags.NewJudge(client)},
			chat.ActionCompanion: chat.CompanionTool(sfnClient, cc.CompanionARN),
			chat.ActionDebate:    chat.DebateTool(sfnClient, cc.DebateARN),
			chat.ActionReports:   chat.ReportsTool{Searches: searches, Outbox: chat.BlobOutbox{Blobs: reports}},
		},
	}
	// The weekly schedule's message recalibrates on the embedded corpus.
	if svc.Corpus, err = EmbeddedCorpus(); err != nil {
		return nil, err
	}
	return svc, svc.Validate()
}

// EmbeddedCorpus is the delegation corpus built into the binary
// (examples/delegation/corpus): what a recalibration fits on and is judged
// by.
func EmbeddedCorpus() (chat.Corpus, error) {
	train, err := chat.LoadCorpus(corpus.TrainFile, corpus.Train)
	if err != nil {
		return chat.Corpus{}, err
	}
	heldout, err := chat.LoadCorpus(corpus.HeldoutFile, corpus.Heldout)
	if err != nil {
		return chat.Corpus{}, err
	}
	return chat.Corpus{Train: train, Heldout: heldout}, nil
}

// Start runs ChatFunction (POST /api/chat and GET /api/chat/metrics
// behind the HTTP API's JWT authorizer: the turn is claimed and queued)
// or ChatTurnFunction (the turns queue's worker).
func Start(logicalID string) {
	lambdaenv.Start(logicalID, function.KindChat, chatfn.Functions, func(ctx context.Context, cfg lambdaenv.Config, ac aws.Config) (any, error) {
		cc, err := chatConfigFromEnv(os.Getenv, logicalID)
		if err != nil {
			return nil, err
		}
		svc, err := chatService(ctx, cfg, cc, ac)
		if err != nil {
			return nil, err
		}
		switch logicalID {
		case "ChatFunction":
			queue, err := sqs.New(ac)
			if err != nil {
				return nil, err
			}
			h := &chatapi.Routes{Service: svc, Enqueue: chat.SQSEnqueuer{Client: queue, QueueURL: cc.TurnsQueueURL}}
			return &chatfn.Services{API: httpapi.NewGateway(cfg.TenantClaim, h)}, nil
		case "ChatTurnFunction":
			return &chatfn.Services{Turns: svc}, nil
		}
		return nil, fmt.Errorf("%s is not a %s function", logicalID, function.KindChat)
	})
}
