package debate

import (
	"context"
	"fmt"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/audit"
)

// Vote is one council member's turn, bounded by the council timeout.
func (s *Steps) Vote(ctx context.Context, t Turn) (TurnOutput, error) {
	f := &t.Flow
	r := &f.Result
	if t.Index < 0 || t.Index >= len(DefaultCouncil) {
		return TurnOutput{}, &veredicto.InvalidInputError{File: "state input", Field: "index", Problem: "is not a council member"}
	}
	m := DefaultCouncil[t.Index]
	ctx, err := s.scope(ctx, f, councilChain(m.ID), m.ID)
	if err != nil {
		return TurnOutput{}, err
	}
	if err := s.openLibrary(ctx, f); err != nil {
		return TurnOutput{}, err
	}
	latest := lastAnswers(f)
	var cited []Chunk
	for _, a := range latest {
		cited = mergeChunks(cited, citedIn(f, a.Position))
	}
	cctx, cancel := context.WithTimeout(ctx, Dur(r.Question.Config.Timeout.Council))
	defer cancel()
	v, u, err := s.Agents.Vote(cctx, VoteInput{Question: r.Question, Member: m, Decision: r.Decision, Confidence: r.Confidence,
		Synthesis: r.Synthesis, Stances: stances(latest), Divergences: openDivergences(latest, r.Rounds), Impasse: r.Escalation.Impasse, Chunks: cited})
	out := TurnOutput{Usage: u}
	switch {
	case err == nil:
		out.Vote = &v
	case timedOut(cctx, err):
		out.Event = timeoutEvent(m.ID, faseCouncil)
	case isInvalid(err):
		out.Invalid = true
		out.Event = invalidEvent(m.ID, faseCouncil)
	default:
		return out, boundary(fmt.Errorf("council member %s: %w", m.ID, err))
	}
	return out, nil
}

// Council closes the council: its result and the end of the escalation flow.
func (s *Steps) Council(ctx context.Context, in RoundInput) (Flow, error) {
	f := in.Flow
	r := &f.Result
	ctx, err := s.scope(ctx, &f, audit.MainChain, "")
	if err != nil {
		return Flow{}, err
	}
	out := &CouncilOutcome{Members: DefaultCouncil, Votes: make([]*Vote, len(DefaultCouncil))}
	for i, t := range in.Turns {
		if i >= len(out.Votes) {
			break
		}
		out.Votes[i] = t.Vote
		r.Usage.Add(t.Usage)
		if t.Event != "" {
			r.Events = append(r.Events, t.Event)
		}
		switch {
		case t.Vote != nil:
		case t.Invalid:
			// Stayed invalid after the re-ask, or failed (the state
			// machine's VoteFailed): not a TIMEOUT.
			out.Invalid = append(out.Invalid, out.Members[i].ID)
		default:
			out.TimedOut = true
		}
	}
	out.Decision, out.Result = CouncilResult(out.Votes, r.Question.Options)
	r.Council = out
	target, why := AfterCouncil(out.Result, out.TimedOut, r.Confidence, r.Question.RiskLevel, r.Question.Config)
	r.FinalReason += "; " + why
	if err := recordCouncil(ctx, r, target, why); err != nil {
		return Flow{}, err
	}
	switch {
	case target == TargetHuman:
		r.Target = TargetHuman
		f.Next = "human"
		f.Preview = preview(&f, openDivergences(lastAnswers(&f), r.Rounds))
	case out.TimedOut:
		r.Target, r.Final, f.Next = TargetCouncil, r.Decision, "finish"
	default:
		r.Target, r.Final, f.Next = TargetCouncil, out.Decision, "finish"
	}
	return f, nil
}
