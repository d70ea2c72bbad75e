// Package peoplefn lists the functions that put a person in the loop (seed
// 004): confirmations and the event stream, bound to the people kind's
// services. internal/catalog aggregates it, internal/app/peopleapp is its
// Lambda entry point.
package peoplefn

import (
	"github.com/aws/aws-lambda-go/events"

	"github.com/veredicto/veredicto/internal/catalog/function"
	"github.com/veredicto/veredicto/internal/confirm"
	"github.com/veredicto/veredicto/internal/httpapi"
)

// Stream is the event stream's handler on a streaming Function URL.
type Stream = function.HandlerFunc[*events.LambdaFunctionURLRequest, *events.LambdaFunctionURLStreamingResponse]

// Services are what the people functions' handlers are bound to.
type Services struct {
	// Confirm is ConfirmFunction's service (the .waitForTaskToken task).
	Confirm *confirm.Service
	// API serves /api/confirmations behind API Gateway.
	API *httpapi.Gateway
	// Stream is the event stream on a streaming Function URL.
	Stream *Stream
}

// Functions are the confirmations and the event stream.
func Functions() []function.Function {
	return []function.Function{
		function.Bind(function.Function{LogicalID: "ConfirmFunction", Folder: "confirm", Kind: function.KindPeople,
			Doc:           "the .waitForTaskToken task that stores a pending confirmation (seed 004 §3).",
			StateMachines: []string{function.ExecutiveSearch, function.Debate, function.CareerCompanion}, Events: []string{"confirm.json"}},
			func(s *Services) *confirm.Service { return s.Confirm }, (*confirm.Service).Confirm),
		function.Bind(function.Function{LogicalID: "ConfirmationsFunction", Folder: "confirmations", Kind: function.KindPeople,
			Doc:    "GET and POST /api/confirmations on the HTTP API (list and resolve confirmations).",
			Events: []string{"confirmations-get.json", "confirmations-post.json"}},
			func(s *Services) *httpapi.Gateway { return s.API }, (*httpapi.Gateway).Handle),
		function.Bind(function.Function{LogicalID: "StreamFunction", Folder: "stream", Kind: function.KindPeople,
			Doc:    "the event stream (Server-Sent Events) on a Function URL with response streaming.",
			Events: []string{"stream.json"}},
			func(s *Services) *Stream { return s.Stream }, (*Stream).Handle),
	}
}
