// Package debateapiapp is the Lambda entry point of the debate's HTTP
// routes (function.KindDebateAPI, seed 003): debates started on Step
// Functions, their logs and reports read from the context table and the
// reports bucket. It imports only those routes and the clients they use:
// no LLM, no debate steps, never internal/app (the local composition
// root).
package debateapiapp

import (
	"context"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/veredicto/veredicto/internal/app/lambdaenv"
	"github.com/veredicto/veredicto/internal/app/lambdaenv/storage"
	"github.com/veredicto/veredicto/internal/awsclient/sfn"
	"github.com/veredicto/veredicto/internal/catalog/debateapifn"
	"github.com/veredicto/veredicto/internal/catalog/function"
	"github.com/veredicto/veredicto/internal/httpapi"
	"github.com/veredicto/veredicto/internal/httpapi/debateapi"
	"github.com/veredicto/veredicto/internal/starter"
)

// Start runs DebateApiFunction: POST /debates starts a debate on
// DEBATE_STATE_MACHINE_ARN, GET /debates/{id}[/report] reads its log from
// the context table and its report from the reports bucket.
func Start(logicalID string) {
	lambdaenv.Start(logicalID, function.KindDebateAPI, debateapifn.Functions, func(_ context.Context, cfg lambdaenv.Config, ac aws.Config) (any, error) {
		_, reports, kv, err := storage.New(cfg, ac)
		if err != nil {
			return nil, err
		}
		var st debateapi.Starter = starter.Unconfigured{Variable: "DEBATE_STATE_MACHINE_ARN"}
		if arn := os.Getenv("DEBATE_STATE_MACHINE_ARN"); arn != "" {
			states, err := sfn.New(ac)
			if err != nil {
				return nil, err
			}
			st = starter.NewSFN(states, arn)
		}
		api := &debateapi.Routes{Starter: st, Logs: kv, Reports: reports}
		return &debateapifn.Services{API: httpapi.NewGateway(cfg.TenantClaim, api)}, nil
	})
}
