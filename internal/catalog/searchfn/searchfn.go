// Package searchfn lists the executive-search workflow's functions (seed
// 000), bound to the search kind's services: internal/catalog aggregates it,
// internal/app/searchapp is its Lambda entry point.
package searchfn

import (
	"github.com/veredicto/veredicto/internal/catalog/function"
	"github.com/veredicto/veredicto/internal/search"
)

// Services are what the search functions' handlers are bound to.
type Services struct {
	Search *search.Service
}

// Functions are the executive-search workflow's Tasks, in template order.
func Functions() []function.Function {
	search1 := func(id, folder, doc, sample string) function.Function {
		return function.Function{LogicalID: id, Folder: folder, Kind: function.KindSearch, Doc: doc,
			StateMachines: []string{function.ExecutiveSearch}, Events: []string{sample}}
	}
	return []function.Function{
		function.Bind(search1("ValidateFunction", "validate", "validates a search's inputs and plans the evaluation.", "validate.json"),
			searchDeps, (*search.Service).ValidateExecution),
		function.Bind(search1("Gem5Function", "gem5", "GEM5 mandate analysis, once per search.", "gem5.json"),
			searchDeps, (*search.Service).Gem5),
		function.Bind(search1("Gem1Function", "gem1", "GEM1 trajectory and achievements.", "gem1.json"),
			searchDeps, (*search.Service).Gem1),
		function.Bind(search1("Gem2Function", "gem2", "GEM2 business assessment.", "gem2.json"),
			searchDeps, (*search.Service).Gem2),
		function.Bind(search1("Gem3Function", "gem3", "GEM3 verdict and 360 references.", "gem3.json"),
			searchDeps, (*search.Service).Gem3),
		function.Bind(search1("Gem4Function", "gem4", "GEM4 QA audit.", "gem4.json"),
			searchDeps, (*search.Service).Gem4),
		function.Bind(search1("CorrectionFunction", "correction", "the correction step after a blocking QA audit.", "correction.json"),
			searchDeps, (*search.Service).Correct),
		function.Bind(search1("ReportFunction", "report", "a candidate's decision and reports.", "report.json"),
			searchDeps, (*search.Service).Report),
		function.Bind(search1("SummaryFunction", "summary", "the search summary and protocol metrics.", "summary.json"),
			searchDeps, (*search.Service).Summarize),
	}
}

func searchDeps(s *Services) *search.Service { return s.Search }
