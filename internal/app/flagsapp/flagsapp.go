// Package flagsapp is the Lambda entry point of interview flags over HTTP
// (function.KindFlags): it builds POST /flags on the contradiction judge
// and serves FlagsFunction. It imports only the flags' packages and the
// LLM secret, the reports bucket (its audit records and outputs), never internal/app (the local composition root, which reuses
// Judge).
package flagsapp

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/app/lambdaenv"
	"github.com/veredicto/veredicto/internal/app/lambdaenv/llmsecret"
	"github.com/veredicto/veredicto/internal/app/lambdaenv/records"
	"github.com/veredicto/veredicto/internal/awsclient/s3"
	s3blob "github.com/veredicto/veredicto/internal/blob/s3"
	"github.com/veredicto/veredicto/internal/catalog/flagsfn"
	"github.com/veredicto/veredicto/internal/catalog/function"
	"github.com/veredicto/veredicto/internal/flags"
	"github.com/veredicto/veredicto/internal/httpapi"
	"github.com/veredicto/veredicto/internal/httpapi/flagsapi"
	"github.com/veredicto/veredicto/internal/llm"
)

// Start runs FlagsFunction: POST /flags behind API Gateway, judged by the
// LLM when the LLM secret is set (offline otherwise).
func Start(logicalID string) {
	lambdaenv.Start(logicalID, function.KindFlags, flagsfn.Functions, build)
}

func build(ctx context.Context, cfg lambdaenv.Config, ac aws.Config) (any, error) {
	client, err := llmsecret.Client(ctx, ac, cfg)
	if err != nil {
		return nil, err
	}
	// Each classification is an execution of its own, recorded in the
	// reports bucket like every workflow's (audit/<tenant>/<execution>/),
	// its output beside the other reports.
	s3c, err := s3.New(ac, false)
	if err != nil {
		return nil, err
	}
	audit, err := records.New(cfg, ac)
	if err != nil {
		return nil, err
	}
	record := &flagsapi.Record{Audit: audit, Reports: s3blob.New(s3c, cfg.ReportsBucket, ""), Model: Model(client)}
	return &flagsfn.Services{API: httpapi.NewGateway(cfg.TenantClaim, flagsapi.Routes{Judge: flags.NewJudge(client), Record: record})}, nil
}

// OfflineModel names the flags' offline contradiction judge in records.
var OfflineModel = veredicto.ModelInfo{Provider: "offline", Model: "flags-offline-judge"}

// Model is the judge's model as a record names it.
func Model(client *llm.OpenAI) veredicto.ModelInfo {
	if client == nil {
		return OfflineModel
	}
	return client.Info()
}
