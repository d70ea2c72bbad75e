// Package intakeapp is the Lambda entry point of the searches' upload
// trigger and HTTP API (function.KindIntake): it builds the intake service
// on S3, DynamoDB and Step Functions and serves the function the bootstrap
// names. It imports only the intake's packages and the clients it uses,
// never internal/app (the local composition root).
package intakeapp

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/veredicto/veredicto/internal/app/lambdaenv"
	"github.com/veredicto/veredicto/internal/app/lambdaenv/storage"
	"github.com/veredicto/veredicto/internal/awsclient/sfn"
	"github.com/veredicto/veredicto/internal/catalog/function"
	"github.com/veredicto/veredicto/internal/catalog/intakefn"
	"github.com/veredicto/veredicto/internal/httpapi"
	"github.com/veredicto/veredicto/internal/httpapi/searchapi"
	"github.com/veredicto/veredicto/internal/intake"
	"github.com/veredicto/veredicto/internal/starter"
)

// Start runs TriggerFunction (the inputs queue's consumer) or ApiFunction
// (the searches' routes behind API Gateway): searches start on
// STATE_MACHINE_ARN, and GET /runs lists RUN_STATE_MACHINE_ARNS' runs too.
func Start(logicalID string) {
	lambdaenv.Start(logicalID, function.KindIntake, intakefn.Functions, build)
}

func build(_ context.Context, cfg lambdaenv.Config, ac aws.Config) (any, error) {
	inputs, reports, kv, err := storage.New(cfg, ac)
	if err != nil {
		return nil, err
	}
	client, err := sfn.New(ac)
	if err != nil {
		return nil, err
	}
	var st intake.Starter = starter.Unconfigured{Variable: "STATE_MACHINE_ARN"}
	if cfg.StateMachineARN != "" {
		st = starter.NewSFN(client, cfg.StateMachineARN)
	}
	var runs searchapi.RunLister
	if len(cfg.RunMachines) > 0 {
		runs = &searchapi.SFNRuns{Client: client, Machines: cfg.RunMachines}
	}
	in := &intake.Service{Inputs: inputs, Reports: reports, Records: kv, Starter: st}
	return &intakefn.Services{Intake: in, API: httpapi.NewGateway(cfg.TenantClaim, searchapi.Routes{Searches: in, Runs: runs})}, nil
}
