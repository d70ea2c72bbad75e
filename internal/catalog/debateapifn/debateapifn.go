// Package debateapifn lists the debate's HTTP routes (seed 003), bound to
// the debate-api kind's services: internal/catalog aggregates it,
// internal/app/debateapiapp is its Lambda entry point.
package debateapifn

import (
	"github.com/veredicto/veredicto/internal/catalog/function"
	"github.com/veredicto/veredicto/internal/httpapi"
)

// Services are what the function's handler is bound to.
type Services struct {
	// API serves the debate routes behind API Gateway.
	API *httpapi.Gateway
}

// Functions is the debate's HTTP API function.
func Functions() []function.Function {
	return []function.Function{
		function.Bind(function.Function{LogicalID: "DebateApiFunction", Folder: "debate-api", Kind: function.KindDebateAPI,
			Doc:    "the debate routes of the HTTP API: POST /debates, GET /debates/{id}[/report].",
			Events: []string{"debate-api-post.json", "debate-api-get.json"}},
			func(s *Services) *httpapi.Gateway { return s.API }, (*httpapi.Gateway).Handle),
	}
}
