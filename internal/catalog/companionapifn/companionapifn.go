// Package companionapifn lists the career companion's HTTP routes (seed
// 001), bound to the companion-api kind's services: internal/catalog
// aggregates it, internal/app/companionapiapp is its Lambda entry point.
package companionapifn

import (
	"github.com/veredicto/veredicto/internal/catalog/function"
	"github.com/veredicto/veredicto/internal/httpapi"
)

// Services are what the function's handler is bound to.
type Services struct {
	// API serves the companion's routes behind API Gateway.
	API *httpapi.Gateway
}

// Functions is the career companion's HTTP API function.
func Functions() []function.Function {
	return []function.Function{
		function.Bind(function.Function{LogicalID: "CompanionApiFunction", Folder: "companion-api", Kind: function.KindCompanionAPI,
			Doc:    "the career companion's HTTP routes (/companion/applications…).",
			Events: []string{"companion-api-post.json", "companion-api-get.json"}},
			func(s *Services) *httpapi.Gateway { return s.API }, (*httpapi.Gateway).Handle),
	}
}
