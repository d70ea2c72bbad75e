// Package chatfn lists the delegation chat's functions (seed 004 §5–9),
// bound to the chat kind's services: internal/catalog aggregates it,
// internal/app/chatapp is its Lambda entry point.
package chatfn

import (
	"github.com/veredicto/veredicto/internal/catalog/function"
	"github.com/veredicto/veredicto/internal/chat"
	"github.com/veredicto/veredicto/internal/httpapi"
)

// Services are what the chat functions' handlers are bound to.
type Services struct {
	// API serves POST /api/chat and GET /api/chat/metrics behind API
	// Gateway.
	API *httpapi.Gateway
	// Turns runs the queued turns.
	Turns *chat.Service
}

// Functions are the chat's HTTP API and its turns queue's worker.
func Functions() []function.Function {
	return []function.Function{
		function.Bind(function.Function{LogicalID: "ChatFunction", Folder: "chat", Kind: function.KindChat,
			Doc:    "POST /api/chat and GET /api/chat/metrics on the HTTP API: claims a turn of the delegation chat and queues it (seed 004 §5–9).",
			Events: []string{"chat-post.json", "chat-metrics.json"}},
			func(s *Services) *httpapi.Gateway { return s.API }, (*httpapi.Gateway).Handle),
		function.Bind(function.Function{LogicalID: "ChatTurnFunction", Folder: "chatturn", Kind: function.KindChat,
			Doc:    "runs the delegation chat's queued turns: the supervisor, its delegations and confirmations, onto the conversation's stream.",
			Events: []string{"chatturn-sqs.json"}},
			func(s *Services) *chat.Service { return s.Turns }, (*chat.Service).HandleSQS),
	}
}
