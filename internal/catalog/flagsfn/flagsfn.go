// Package flagsfn lists interview flags over HTTP (seed 002), bound to the
// flags kind's services: internal/catalog aggregates it,
// internal/app/flagsapp is its Lambda entry point.
package flagsfn

import (
	"github.com/veredicto/veredicto/internal/catalog/function"
	"github.com/veredicto/veredicto/internal/httpapi"
)

// Services are what the flags function's handler is bound to.
type Services struct {
	// API serves POST /flags behind API Gateway.
	API *httpapi.Gateway
}

// Functions are interview flags over HTTP.
func Functions() []function.Function {
	return []function.Function{
		function.Bind(function.Function{LogicalID: "FlagsFunction", Folder: "flags", Kind: function.KindFlags,
			Doc:    "POST /flags classifies interview answers with the Flags schema v1.1 (seed 002).",
			Events: []string{"flags-post.json"}},
			func(s *Services) *httpapi.Gateway { return s.API }, (*httpapi.Gateway).Handle),
	}
}
