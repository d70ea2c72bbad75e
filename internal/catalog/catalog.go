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
	// Handler serves the function's events.
	Handler asl.Handler
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
		{"ValidateFunction", asl.Typed(svc.Validate)},
		{"Gem5Function", asl.Typed(svc.Gem5)},
		{"Gem1Function", asl.Typed(svc.Gem1)},
		{"Gem2Function", asl.Typed(svc.Gem2)},
		{"Gem3Function", asl.Typed(svc.Gem3)},
		{"Gem4Function", asl.Typed(svc.Gem4)},
		{"CorrectionFunction", asl.Typed(svc.Correct)},
		{"ReportFunction", asl.Typed(svc.Report)},
		{"SummaryFunction", asl.Typed(svc.Summarize)},
	}
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
