// Package chatlinkfn lists the function that tells a conversation how the
// workflows it started on AWS change status (issue 32), bound to the
// chatlink kind's services: internal/catalog aggregates it,
// internal/app/chatlinkapp is its Lambda entry point.
package chatlinkfn

import (
	"github.com/veredicto/veredicto/internal/catalog/function"
	"github.com/veredicto/veredicto/internal/chat"
)

// Services are what the function's handler is bound to.
type Services struct {
	// Links finds the conversations linked to an execution and says its
	// status changes there.
	Links *chat.Links
}

// Functions is the EventBridge target of the project's executions' status
// changes.
func Functions() []function.Function {
	return []function.Function{
		function.Bind(function.Function{LogicalID: "ChatLinkFunction", Folder: "chatlink", Kind: function.KindChatLink,
			Doc:    "says the status changes of a search, companion or debate execution (EventBridge) in the conversations that started it: its start, and its end in Spanish with where its report is.",
			Events: []string{"chatlink-running.json", "chatlink-succeeded.json"}},
			func(s *Services) *chat.Links { return s.Links }, (*chat.Links).HandleStatusChange),
	}
}
