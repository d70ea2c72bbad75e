// Package debatefn lists the debate workflow's steps (seed 003), bound to
// the debate kind's services: internal/catalog aggregates it,
// internal/app/debateapp is its Lambda entry point. Its HTTP routes are
// the debate-api kind's (internal/catalog/debateapifn).
package debatefn

import (
	"github.com/veredicto/veredicto/internal/catalog/function"
	"github.com/veredicto/veredicto/internal/debate"
)

// Services are what the debate functions' handlers are bound to.
type Services struct {
	// Debate holds the debate workflow's step handlers.
	Debate *debate.Steps
}

// Functions are the debate workflow's steps.
func Functions() []function.Function {
	return []function.Function{
		function.Bind(debate1("DebatePrepareFunction", "debate-prepare", "validates a debate, routes it and runs the first RAG queries (seed 003).", "debate-prepare.json"),
			debateDeps, (*debate.Steps).PrepareExecution),
		function.Bind(debate1("DebatePositionFunction", "debate-position", "one agent's position in a parallel round (debate_position).", "debate-position.json"),
			debateDeps, (*debate.Steps).Position),
		function.Bind(debate1("DebateCloseRoundFunction", "debate-close-round", "closes a parallel round: convergence checkpoint, loop hash, circuit breaker.", "debate-close-round.json"),
			debateDeps, (*debate.Steps).CloseRound),
		function.Bind(debate1("DebateRebuttalFunction", "debate-rebuttal", "one agent's turn of the sequential round 2 (debate_rebuttal).", "debate-rebuttal.json"),
			debateDeps, (*debate.Steps).Rebuttal),
		function.Bind(debate1("DebateSynthesizeFunction", "debate-synthesize", "the synthesis (debate_synthesis) and the escalation table.", "debate-synthesize.json"),
			debateDeps, (*debate.Steps).Synthesize),
		function.Bind(debate1("DebateVoteFunction", "debate-vote", "one council member's vote (council_vote).", "debate-vote.json"),
			debateDeps, (*debate.Steps).Vote),
		function.Bind(debate1("DebateCouncilFunction", "debate-council", "closes the council: result ≥ 60 decides, else a person.", "debate-council.json"),
			debateDeps, (*debate.Steps).Council),
		function.Bind(debate1("DebateFinishFunction", "debate-finish", "records the debate: log in the table, debate_log.yaml and debate.md in the bucket.", "debate-finish.json"),
			debateDeps, (*debate.Steps).Finish),
	}
}

func debate1(id, folder, doc, sample string) function.Function {
	return function.Function{LogicalID: id, Folder: folder, Kind: function.KindDebate, Doc: doc,
		StateMachines: []string{function.Debate}, Events: []string{sample}}
}

func debateDeps(s *Services) *debate.Steps { return s.Debate }
