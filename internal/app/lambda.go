package app

import (
	"fmt"
	"log/slog"

	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/catalog"
	"github.com/veredicto/veredicto/internal/confirm"
	"github.com/veredicto/veredicto/internal/control"
	"github.com/veredicto/veredicto/internal/lambdaapi"
	"github.com/veredicto/veredicto/internal/sfnmock"
)

// loadMocks loads the mock configuration at path ("" for none): a file
// with problems is an error naming each, so the server does not start.
func loadMocks(path string) (*sfnmock.Config, error) {
	if path == "" {
		return nil, nil
	}
	return sfnmock.Load(path)
}

// serveExternalTasks makes reg serve the Tasks no catalog handler serves,
// as Step Functions would reach what they name: a function of the catalog
// named by its ARN in-process, any other on the Lambda endpoint (when one
// is given), and the rest only where a mock configuration's test case
// mocks them (lambdaapi.Resolver).
func serveExternalTasks(reg *asl.Registry, endpoint string, mocking bool, logger *slog.Logger) {
	r := &lambdaapi.Resolver{Local: reg.Lookup, Mocking: mocking, Region: control.Region, Account: control.Account}
	if endpoint != "" {
		r.Remote = lambdaapi.NewRemote(endpoint, control.Region, logger)
	}
	reg.SetExternal(r.External)
}

// tenantFunctions are the catalog's functions a tenant's key may invoke:
// the workflows' Tasks (a state machine invokes them with a payload that
// names its tenant), but ConfirmFunction, which records a person's
// question. A function an event source invokes (the S3 trigger's queue,
// the chat's turns queue, EventBridge's status changes, API Gateway's
// routes) is an operator's: its identity comes from that source.
func tenantFunctions() map[string]bool {
	out := map[string]bool{}
	for _, f := range catalog.All() {
		if len(f.StateMachines) > 0 && f.LogicalID != ConfirmFunction {
			out[f.LogicalID] = true
		}
	}
	return out
}

// lambdaFunctions are the catalog's functions for the Lambda Invoke API,
// bound to the services the server's Tasks use (ConfirmFunction to the
// server's confirmations, as its Task is).
func lambdaFunctions(a *App, confirmations *confirm.Service) (map[string]any, error) {
	services := a.Services
	services.Confirm = confirmations
	out := map[string]any{}
	for _, f := range catalog.All() {
		h, err := catalog.Lambda(f, &services)
		if err != nil {
			return nil, fmt.Errorf("lambda API: %w", err)
		}
		out[f.LogicalID] = h
	}
	return out, nil
}
