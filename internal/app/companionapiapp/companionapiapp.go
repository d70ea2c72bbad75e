// Package companionapiapp is the Lambda entry point of the career
// companion's HTTP routes (function.KindCompanionAPI, seed 001): the
// companion's service as its Tasks build it (companionapp.Service), new
// applications started on Step Functions. It imports those routes, the
// companion's builder and the clients they use, never internal/app (the
// local composition root, which reuses API).
package companionapiapp

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/veredicto/veredicto/internal/app/companionapp"
	"github.com/veredicto/veredicto/internal/app/lambdaenv"
	"github.com/veredicto/veredicto/internal/awsclient/sfn"
	"github.com/veredicto/veredicto/internal/catalog/companionapifn"
	"github.com/veredicto/veredicto/internal/catalog/function"
	"github.com/veredicto/veredicto/internal/companion"
	"github.com/veredicto/veredicto/internal/httpapi"
	"github.com/veredicto/veredicto/internal/httpapi/companionapi"
	"github.com/veredicto/veredicto/internal/starter"
)

// executions starts the companion's executions: on Step Functions, or
// with the error that names the missing setting.
type executions interface {
	Start(ctx context.Context, name string, input []byte) (starter.Execution, error)
}

// Start runs CompanionApiFunction: /companion/applications… on the
// companion's service, applications started on STATE_MACHINE_ARN.
func Start(logicalID string) {
	lambdaenv.Start(logicalID, function.KindCompanionAPI, companionapifn.Functions, func(ctx context.Context, cfg lambdaenv.Config, ac aws.Config) (any, error) {
		svc, err := companionapp.Service(ctx, cfg, ac)
		if err != nil {
			return nil, err
		}
		var st executions = starter.Unconfigured{Variable: "STATE_MACHINE_ARN"}
		if cfg.StateMachineARN != "" {
			states, err := sfn.New(ac)
			if err != nil {
				return nil, err
			}
			st = starter.NewSFN(states, cfg.StateMachineARN)
		}
		api := API(svc, func(ctx context.Context, name string, input []byte) error {
			_, err := st.Start(ctx, name, input)
			return err
		})
		return &companionapifn.Services{API: httpapi.NewGateway(cfg.TenantClaim, companionapi.Routes{API: api})}, nil
	})
}

// API is what the companion's HTTP routes call: svc, its analyst as the
// follow-up phases' analyst, and start for new executions of
// CareerCompanionStateMachine.
func API(svc *companion.Service, start func(ctx context.Context, name string, input []byte) error) *companion.API {
	f, _ := svc.Analyst.(companion.FollowUp) // both analysts implement it
	return &companion.API{Service: svc, FollowUp: f, Start: start}
}
