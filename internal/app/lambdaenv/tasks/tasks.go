// Package tasks builds what a workflow's Tasks on AWS share: the inputs
// and reports buckets, the context table, the LLM client of the secret and
// the executions' audit records. The search's, the debate's and the
// companion's entry points import it.
package tasks

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/veredicto/veredicto/internal/app/lambdaenv"
	"github.com/veredicto/veredicto/internal/app/lambdaenv/llmsecret"
	"github.com/veredicto/veredicto/internal/app/lambdaenv/records"
	"github.com/veredicto/veredicto/internal/app/lambdaenv/storage"
	"github.com/veredicto/veredicto/internal/audit/s3audit"
	s3blob "github.com/veredicto/veredicto/internal/blob/s3"
	"github.com/veredicto/veredicto/internal/llm"
	"github.com/veredicto/veredicto/internal/store/dynamo"
)

// Deps are a workflow Task's dependencies.
type Deps struct {
	Inputs, Reports *s3blob.Store
	Store           *dynamo.Store
	// LLM is the model's client, nil without LLM_SECRET_ARN (the offline
	// baselines then).
	LLM   *llm.OpenAI
	Audit *s3audit.Records
}

// New builds them from the Lambda's configuration.
func New(ctx context.Context, cfg lambdaenv.Config, ac aws.Config) (Deps, error) {
	var d Deps
	var err error
	if d.Inputs, d.Reports, d.Store, err = storage.New(cfg, ac); err != nil {
		return Deps{}, err
	}
	if d.LLM, err = llmsecret.Client(ctx, ac, cfg); err != nil {
		return Deps{}, err
	}
	if d.Audit, err = records.New(cfg, ac); err != nil {
		return Deps{}, err
	}
	return d, nil
}
