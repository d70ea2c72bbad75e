package debate

import (
	"context"
	"fmt"
	"strings"

	"github.com/veredicto/veredicto/internal/audit"
)

// Synthesize computes the decision and confidence, has the synthesis
// written (by the code when the total time is up) and applies the
// escalation table.
func (s *Steps) Synthesize(ctx context.Context, f Flow) (Flow, error) {
	ctx, err := s.scope(ctx, &f, audit.MainChain, "")
	if err != nil {
		return Flow{}, err
	}
	if err := s.openLibrary(ctx, &f); err != nil {
		return Flow{}, err
	}
	r := &f.Result
	q := r.Question
	latest := lastAnswers(&f)
	r.Decision = Decide(latest, q.Options)
	r.Confidence = SynthesisConfidence(latest, r.Decision)
	r.ReducedByTimeout = r.Trip != nil && r.Trip.Trigger == TriggerTimeout
	divergences := openDivergences(latest, r.Rounds)
	var cited []Chunk
	for _, a := range latest {
		cited = mergeChunks(cited, citedIn(&f, a.Position))
	}
	sin := SynthesisInput{Question: q, Decision: r.Decision, Confidence: r.Confidence, Stances: stances(latest),
		Divergences: divergences, Impasse: r.Trip != nil && r.Trip.Impasse, Chunks: cited}
	syn, u, events, err := askSynthesis(ctx, s.Agents, sin, func() (context.Context, context.CancelFunc, error) { return s.agentCtx(ctx, &f) }, r.ReducedByTimeout)
	r.Usage.Add(u)
	r.Events = append(r.Events, events...)
	if err != nil {
		return Flow{}, boundary(fmt.Errorf("debate %s synthesis: %w", r.SessionID, err))
	}
	r.Synthesis = syn
	value := 0.0
	if q.ValueAtRisk != nil {
		value = q.ValueAtRisk.Amount
	}
	r.Escalation = Escalate(EscalationInput{Mode: r.Mode, SynthesisConfidence: r.Confidence, ConvergenceFinal: r.Convergence,
		ValueAtRisk: value, Irreversible: q.Irreversible, RiskLevel: q.RiskLevel, CriticalDivergence: r.Synthesis.CriticalDivergence,
		OutOfScope: r.Synthesis.OutOfScope, Trip: r.Trip, OptionalCouncil: f.OptionalCouncil, NoProposal: r.Decision == ""}, q.Config)
	r.Target = r.Escalation.Target
	r.FinalReason = strings.Join(r.Escalation.Reasons, "; ")
	if err := recordEscalation(ctx, r); err != nil {
		return Flow{}, err
	}
	switch r.Target {
	case TargetNone:
		r.Final = r.Decision
		f.Next = "finish"
	case TargetCouncil:
		r.Council = &CouncilOutcome{Members: DefaultCouncil}
		f.Next = "council"
	default:
		f.Next = "human"
		f.Preview = preview(&f, divergences)
	}
	f.dropLibrary()
	return f, nil
}

func preview(f *Flow, divergences []string) *Preview {
	r := &f.Result
	return &Preview{DebateID: r.SessionID, Question: r.Question.Question, Options: r.Question.Options, Proposed: r.Proposed(),
		Confidence: r.Confidence, Summary: r.Synthesis.Summary, Divergences: nonNil(divergences), Reasons: strings.Split(r.FinalReason, "; ")}
}
