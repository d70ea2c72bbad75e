package app

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/veredicto/veredicto/internal/catalog"
	"github.com/veredicto/veredicto/internal/debate"
	"github.com/veredicto/veredicto/internal/llm"
)

// StartDebate runs one of the debate workflow's step functions
// (catalog.KindDebate): knowledge from the inputs bucket, the debate's
// files to the reports bucket, its log to the context table.
func StartDebate(logicalID string) {
	start(logicalID, catalog.KindDebate, func(ctx context.Context, cfg Config, ac aws.Config) (catalog.Services, error) {
		inputs, reports, kv := storage(cfg, ac)
		client, err := awsLLM(ctx, ac, cfg)
		if err != nil {
			return catalog.Services{}, err
		}
		return catalog.Services{Debate: DebateSteps(client, inputs, reports, kv)}, nil
	})
}

// DebateSteps assembles the debate steps: the LLM agents when there is a
// client, otherwise the offline baseline.
func DebateSteps(client *llm.OpenAI, knowledge debate.BlobReader, reports debate.BlobWriter, logs debate.LogStore) *debate.Steps {
	var agents debate.Agents = debate.Offline{}
	if client != nil {
		agents = debate.LLMAgents{Client: client}
	}
	return &debate.Steps{Agents: agents, Knowledge: knowledge, Reports: reports, Logs: logs}
}
