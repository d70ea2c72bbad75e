// Package searchapp is the Lambda entry point of the executive-search
// workflow's Tasks (function.KindSearch): it builds the search service on
// S3, DynamoDB and the LLM secret and serves the function the bootstrap
// names. It imports only the search's packages and the clients it uses,
// never internal/app (the local composition root, which reuses it).
package searchapp

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/veredicto/veredicto/internal/app/lambdaenv"
	"github.com/veredicto/veredicto/internal/app/lambdaenv/tasks"
	"github.com/veredicto/veredicto/internal/catalog/function"
	"github.com/veredicto/veredicto/internal/catalog/searchfn"
	"github.com/veredicto/veredicto/internal/llm"
	"github.com/veredicto/veredicto/internal/search"
	"github.com/veredicto/veredicto/internal/search/gems"
	"github.com/veredicto/veredicto/internal/search/offline"
	"github.com/veredicto/veredicto/prompts"
)

// Start runs one of the executive-search task functions: stage records in
// DynamoDB, documents and reports in the buckets, the audit record in the
// reports bucket, the LLM agents when the LLM secret is set (the offline
// baseline otherwise).
func Start(logicalID string) {
	lambdaenv.Start(logicalID, function.KindSearch, searchfn.Functions, build)
}

func build(ctx context.Context, cfg lambdaenv.Config, ac aws.Config) (any, error) {
	d, err := tasks.New(ctx, cfg, ac)
	if err != nil {
		return nil, err
	}
	analyst, _ := Analyst(d.LLM)
	return &searchfn.Services{Search: &search.Service{Inputs: d.Inputs, Reports: d.Reports, Store: d.Store, Analyst: analyst,
		PromptVersions: prompts.PromptVersion, DefaultConcurrency: cfg.MaxConcurrency, Layout: search.BucketLayout,
		Audit: d.Audit}}, nil
}

// Analyst is the executive-search analyst of a client: the LLM agents, or
// the offline baseline when client is nil. The notice is the one line
// shown to the user.
func Analyst(client *llm.OpenAI) (search.Analyst, string) {
	if client == nil {
		return offline.New(), "LLM: offline lexical baseline (no OPENAI_API_KEY set): reports are labelled as a baseline, not a model judgment"
	}
	return gems.New(client, client.Info()), "LLM: openai-compatible, model " + client.Info().Model
}
