// Package debateapp is the Lambda entry point of the debate workflow's
// steps (function.KindDebate, seed 003): the steps on the LLM secret, the
// buckets and the context table. It imports only the debate's packages and
// the clients it uses, never the HTTP API (the debate's routes are
// internal/app/debateapiapp's) nor internal/app (the local composition
// root, which reuses Steps and Knowledge).
package debateapp

import (
	"context"
	"log/slog"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/app/lambdaenv"
	"github.com/veredicto/veredicto/internal/app/lambdaenv/tasks"
	"github.com/veredicto/veredicto/internal/catalog/debatefn"
	"github.com/veredicto/veredicto/internal/catalog/function"
	"github.com/veredicto/veredicto/internal/debate"
	"github.com/veredicto/veredicto/internal/llm"
	"github.com/veredicto/veredicto/internal/search"
)

// Start runs one of the debate workflow's step functions: knowledge from
// the inputs bucket (a search's reports from the reports bucket), the
// debate's files to the reports bucket, its log to the context table.
func Start(logicalID string) {
	lambdaenv.Start(logicalID, function.KindDebate, debatefn.Functions, func(ctx context.Context, cfg lambdaenv.Config, ac aws.Config) (any, error) {
		d, err := tasks.New(ctx, cfg, ac)
		if err != nil {
			return nil, err
		}
		steps := Recorded(Steps(d.LLM, Knowledge{Inputs: d.Inputs, Reports: d.Reports}, d.Reports, d.Store, nil), d.Audit)
		return &debatefn.Services{Debate: steps}, nil
	})
}

// Steps assembles the debate steps: the LLM agents when there is a
// client, otherwise the offline baseline.
func Steps(client *llm.OpenAI, knowledge debate.BlobReader, reports debate.BlobWriter, logs debate.LogStore, logger *slog.Logger) *debate.Steps {
	var agents debate.Agents = debate.Offline{}
	model := OfflineModel
	if client != nil {
		agents, model = debate.LLMAgents{Client: client}, client.Info()
	}
	return &debate.Steps{Agents: agents, Knowledge: knowledge, Reports: reports, Logs: logs, Logger: logger, Model: model}
}

// OfflineModel names the debate's offline baseline in audit records.
var OfflineModel = veredicto.ModelInfo{Provider: "offline", Model: "debate-lexical-baseline"}

// Recorded is steps keeping each execution's audit record in records.
func Recorded(steps *debate.Steps, records debate.Auditor) *debate.Steps {
	steps.Audit = records
	return steps
}

// Knowledge reads a debate's knowledge base from the bucket that holds
// each prefix: a search's reports ("reports/<tenant>/…", what a debate on an
// escalated candidate cites) from the reports bucket, every other prefix
// (search folders, uploaded documents) from the inputs bucket.
type Knowledge struct {
	Inputs, Reports debate.BlobReader
}

func (k Knowledge) of(key string) debate.BlobReader {
	if strings.HasPrefix(key, search.ReportsPrefix+"/") {
		return k.Reports
	}
	return k.Inputs
}

// List lists the keys under prefix in the bucket that holds it.
func (k Knowledge) List(ctx context.Context, prefix string) ([]string, error) {
	return k.of(prefix).List(ctx, prefix)
}

// Get reads key from the bucket that holds it.
func (k Knowledge) Get(ctx context.Context, key string) ([]byte, error) {
	return k.of(key).Get(ctx, key)
}
