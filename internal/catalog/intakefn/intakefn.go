// Package intakefn lists the searches' upload trigger and HTTP API, bound
// to the intake kind's services: internal/catalog aggregates it,
// internal/app/intakeapp is its Lambda entry point.
package intakefn

import (
	"github.com/veredicto/veredicto/internal/catalog/function"
	"github.com/veredicto/veredicto/internal/httpapi"
	"github.com/veredicto/veredicto/internal/intake"
)

// Services are what the intake functions' handlers are bound to.
type Services struct {
	Intake *intake.Service
	// API serves the searches' routes behind API Gateway.
	API *httpapi.Gateway
}

// Functions are the upload trigger and the searches' HTTP API.
func Functions() []function.Function {
	return []function.Function{
		function.Bind(function.Function{LogicalID: "TriggerFunction", Folder: "trigger", Kind: function.KindIntake,
			Doc:    "consumes the inputs queue: one evaluation per searches/<tenant>/<id>/READY upload.",
			Events: []string{"trigger-sqs-batch.json", "trigger-sqs-ready.json"}},
			func(s *Services) *intake.Service { return s.Intake }, (*intake.Service).HandleSQS),
		function.Bind(function.Function{LogicalID: "ApiFunction", Folder: "api", Kind: function.KindIntake,
			Doc:    "the HTTP API (start searches, read state and reports).",
			Events: []string{"api-get-report.json", "api-get-search.json", "api-post-searches.json"}},
			func(s *Services) *httpapi.Gateway { return s.API }, (*httpapi.Gateway).Handle),
	}
}
