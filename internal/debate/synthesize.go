package debate

import (
	"context"
	"fmt"
	"strings"
)

// Synthesize computes the decision and confidence, has the synthesis
// written (by the code when the total time is up) and applies the
// escalation table.
func (s *Steps) Synthesize(ctx context.Context, f Flow) (Flow, error) {
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
	if r.ReducedByTimeout {
		r.Synthesis, _, _ = Offline{}.Synthesis(ctx, sin)
	} else {
		actx, cancel := s.agentCtx(ctx, &f)
		syn, u, err := s.Agents.Synthesis(actx, sin)
		cancel()
		r.Usage.Add(u)
		switch {
		case err == nil:
			r.Synthesis = syn
		case actx.Err() != nil || isInvalid(err):
			r.Events = append(r.Events, "TIMEOUT: SINTETIZADOR em sintese (o respuesta inválida): síntesis escrita por el código")
			r.Synthesis, _, _ = Offline{}.Synthesis(ctx, sin)
		default:
			return Flow{}, boundary(fmt.Errorf("debate %s synthesis: %w", r.SessionID, err))
		}
	}
	value := 0.0
	if q.ValueAtRisk != nil {
		value = q.ValueAtRisk.Amount
	}
	r.Escalation = Escalate(EscalationInput{Mode: r.Mode, SynthesisConfidence: r.Confidence, ConvergenceFinal: r.Convergence,
		ValueAtRisk: value, Irreversible: q.Irreversible, RiskLevel: q.RiskLevel, CriticalDivergence: r.Synthesis.CriticalDivergence,
		OutOfScope: r.Synthesis.OutOfScope, Trip: r.Trip, OptionalCouncil: f.OptionalCouncil}, q.Config)
	r.Target = r.Escalation.Target
	r.FinalReason = strings.Join(r.Escalation.Reasons, "; ")
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
	proposed := r.Decision
	if r.Council != nil && len(r.Council.Votes) > 0 && !r.Council.TimedOut {
		proposed = r.Council.Decision
	}
	return &Preview{DebateID: r.SessionID, Question: r.Question.Question, Options: r.Question.Options, Proposed: proposed,
		Confidence: r.Confidence, Summary: r.Synthesis.Summary, Divergences: nonNil(divergences), Reasons: strings.Split(r.FinalReason, "; ")}
}
