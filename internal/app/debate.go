package app

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/veredicto/veredicto/internal/app/lambdaenv"
	"github.com/veredicto/veredicto/internal/app/lambdaenv/llmsecret"
	"github.com/veredicto/veredicto/internal/app/lambdaenv/storage"
	"github.com/veredicto/veredicto/internal/asl"
	fileblob "github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/catalog"
	"github.com/veredicto/veredicto/internal/catalog/debatefn"
	"github.com/veredicto/veredicto/internal/catalog/function"
	"github.com/veredicto/veredicto/internal/confirm"
	"github.com/veredicto/veredicto/internal/debate"
	"github.com/veredicto/veredicto/internal/httpapi"
	"github.com/veredicto/veredicto/internal/llm"
	"github.com/veredicto/veredicto/internal/search"
	"github.com/veredicto/veredicto/internal/starter"
	filestore "github.com/veredicto/veredicto/internal/store/file"
)

// StartDebate runs one of the debate workflow's step functions
// (function.KindDebate): knowledge from the inputs bucket (a search's
// reports from the reports bucket), the debate's
// files to the reports bucket, its log to the context table.
func StartDebate(logicalID string) {
	lambdaenv.Start(logicalID, function.KindDebate, debatefn.Functions, func(ctx context.Context, cfg lambdaenv.Config, ac aws.Config) (any, error) {
		inputs, reports, kv := storage.New(cfg, ac)
		client, err := llmsecret.Client(ctx, ac, cfg)
		if err != nil {
			return nil, err
		}
		var st httpapi.DebateStarter = starter.Unconfigured{Variable: "STATE_MACHINE_ARN"}
		if arn := os.Getenv("DEBATE_STATE_MACHINE_ARN"); arn != "" {
			st = starter.NewSFN(sfn.NewFromConfig(ac), arn)
		}
		api := &httpapi.Debates{Starter: st, Logs: kv, Reports: reports}
		return &debatefn.Services{Debate: DebateSteps(client, knowledgeStores{inputs, reports}, reports, kv, nil),
			API: httpapi.NewGateway(httpapi.Routes{Debates: api}, cfg.TenantClaim)}, nil
	})
}

// DebateSteps assembles the debate steps: the LLM agents when there is a
// client, otherwise the offline baseline.
func DebateSteps(client *llm.OpenAI, knowledge debate.BlobReader, reports debate.BlobWriter, logs debate.LogStore, logger *slog.Logger) *debate.Steps {
	var agents debate.Agents = debate.Offline{}
	if client != nil {
		agents = debate.LLMAgents{Client: client}
	}
	return &debate.Steps{Agents: agents, Knowledge: knowledge, Reports: reports, Logs: logs, Logger: logger}
}

// knowledgeStores reads a debate's knowledge base from the bucket that holds
// each prefix: a search's reports ("reports/<tenant>/…", what a debate on an
// escalated candidate cites) from the reports bucket, every other prefix
// (search folders, uploaded documents) from the inputs bucket.
type knowledgeStores struct {
	inputs, reports debate.BlobReader
}

func (k knowledgeStores) of(key string) debate.BlobReader {
	if strings.HasPrefix(key, search.ReportsPrefix+"/") {
		return k.reports
	}
	return k.inputs
}

func (k knowledgeStores) List(ctx context.Context, prefix string) ([]string, error) {
	return k.of(prefix).List(ctx, prefix)
}

func (k knowledgeStores) Get(ctx context.Context, key string) ([]byte, error) {
	return k.of(key).Get(ctx, key)
}

// localDebate assembles the debate's steps and routes on this machine
// under dir: knowledge from dir/inputs (reports from dir/reports), the
// debate's files to dir/reports, logs in dir/context. st starts
// DebateStateMachine; without one POST /debates runs it in-process
// through the engine (execution records in kv), with the human decision
// recorded by decisions.
func localDebate(dir string, client *llm.OpenAI, kv starter.KV, decisions *confirm.Service, st httpapi.DebateStarter, logger *slog.Logger) (*debate.Steps, *httpapi.Debates) {
	in, rep, ctxDir := LocalLayout(dir)
	inputs, reports, logs := fileblob.NewDir(in), fileblob.NewDir(rep), filestore.NewLocal(ctxDir)
	steps := DebateSteps(client, knowledgeStores{inputs, reports}, reports, logs, logger)
	if st != nil {
		return steps, &httpapi.Debates{Starter: st, Logs: logs, Reports: reports}
	}
	eng := asl.New(catalog.DebateRegistry(steps, decisions))
	local := starter.NewLocal(kv, func(ctx context.Context, name string, input []byte) (*asl.Result, error) {
		var in debate.StartInput
		if err := json.Unmarshal(input, &in); err != nil {
			return nil, fmt.Errorf("execution input: %w", err)
		}
		x, err := catalog.StartDebate(ctx, eng, in, nil)
		if err != nil {
			return nil, err
		}
		return x.Wait(ctx)
	})
	return steps, &httpapi.Debates{Starter: local, Logs: logs, Reports: reports}
}
