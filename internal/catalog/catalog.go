// Package catalog is the project's list of Task handlers: every function of
// template.yaml, registered under its logical id ("Gem1Function") so the
// local engine resolves "${Gem1FunctionArn}" to the same handler the Lambda
// wraps.
package catalog

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/search"
	"github.com/veredicto/veredicto/statemachines"
)

// Entry is one function of the project.
type Entry struct {
	// LogicalID is the template logical id, e.g. "Gem1Function".
	LogicalID string
	// Handler serves the function's events in the local engine.
	Handler asl.Handler
	// Lambda is the same handler as a typed func(ctx, In) (Out, error), the
	// form lambda.Start takes: aws-lambda-go decodes and encodes it exactly
	// as Step Functions passes state.
	Lambda any
}

// entry registers a typed handler under its logical id in both forms.
func entry[In, Out any](id string, f func(context.Context, In) (Out, error)) Entry {
	return Entry{LogicalID: id, Handler: asl.Typed(f), Lambda: f}
}

// Registry returns a registry holding every entry.
func Registry(entries ...[]Entry) *asl.Registry {
	r := asl.NewRegistry()
	for _, es := range entries {
		for _, e := range es {
			r.Register(e.LogicalID, e.Handler)
		}
	}
	return r
}

// Search lists the executive-search functions (statemachines/executive_search.asl.json).
func Search(svc *search.Service) []Entry {
	return []Entry{
		entry("ValidateFunction", svc.Validate),
		entry("Gem5Function", svc.Gem5),
		entry("Gem1Function", svc.Gem1),
		entry("Gem2Function", svc.Gem2),
		entry("Gem3Function", svc.Gem3),
		entry("Gem4Function", svc.Gem4),
		entry("CorrectionFunction", svc.Correct),
		entry("ReportFunction", svc.Report),
		entry("SummaryFunction", svc.Summarize),
	}
}

// Lambda returns the typed handler of a search function, or nil when
// logicalID is not one.
func Lambda(svc *search.Service, logicalID string) any {
	for _, e := range Search(svc) {
		if e.LogicalID == logicalID {
			return e.Lambda
		}
	}
	return nil
}

// RunSearch runs statemachines/executive_search.asl.json through the local
// engine with the search functions bound to svc: the same definition and
// handlers Step Functions and Lambda run in AWS.
func RunSearch(ctx context.Context, svc *search.Service, in search.StartInput, onEvent func(asl.Event)) (*asl.Result, error) {
	sm, err := asl.Parse(statemachines.ExecutiveSearch)
	if err != nil {
		return nil, fmt.Errorf("executive_search.asl.json: %w", err)
	}
	input, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	eng := asl.New(Registry(Search(svc)))
	return eng.Run(ctx, sm, input, asl.StartOptions{Name: in.SearchID, StateMachineName: "executive_search", OnEvent: onEvent})
}
