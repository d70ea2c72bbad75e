package debate

import (
	"context"
	"fmt"
	"strings"

	"github.com/veredicto/veredicto"
)

// The seed's log lines of an agent's turn, in Spanish: the report shows
// them. fase names where it happened ("la ronda 2", "el consejo").

func fase(n int) string { return fmt.Sprintf("la ronda %d", n) }

const faseCouncil = "el consejo"

func timeoutEvent(id, where string) string {
	return fmt.Sprintf("TIMEOUT: %s en %s", strings.ToUpper(id), where)
}

func invalidEvent(id, where string) string {
	return fmt.Sprintf("RESPUESTA INVÁLIDA: %s en %s, tras una repregunta", strings.ToUpper(id), where)
}

// askSynthesis has the synthesis written. The code writes it (Offline's
// synthesis) when the total time is spent (reduced), when no agent
// answered (there is nothing to synthesize), and when the synthesizer
// times out or stays invalid. An empty synthesis or divergence
// (SynthesisProblem: no claim, no citation) is re-asked once; if the
// summary is still empty the code writes it, and empty divergences are
// dropped; either way the incident is named in the events. The error is
// only a failure the debate cannot go on from (the provider).
func askSynthesis(ctx context.Context, agents Agents, sin SynthesisInput, agentCtx func() (context.Context, context.CancelFunc, error), reduced bool) (Synthesis, veredicto.Usage, []string, error) {
	var total veredicto.Usage
	code := func() Synthesis {
		s, _, _ := Offline{}.Synthesis(ctx, sin)
		return s
	}
	if reduced || len(sin.Stances) == 0 {
		return code(), total, nil, nil
	}
	var events []string
	for attempt := 0; attempt < 2; attempt++ {
		actx, cancel, err := agentCtx()
		if err != nil {
			return Synthesis{}, total, events, err
		}
		syn, u, err := agents.Synthesis(actx, sin)
		late := timedOut(actx, err)
		cancel()
		total.Add(u)
		switch {
		case err == nil:
		case late:
			return code(), total, append(events, timeoutEvent("sintetizador", "la síntesis")+": la escribe el código"), nil
		case isInvalid(err):
			return code(), total, append(events, invalidEvent("sintetizador", "la síntesis")+": la escribe el código"), nil
		default:
			return Synthesis{}, total, events, err
		}
		problem := SynthesisProblem(syn)
		if problem == "" {
			return syn, total, events, nil
		}
		if attempt == 0 {
			sin.Reask = problem
			continue
		}
		if Vacuous(syn.Summary) {
			return code(), total, append(events, "SÍNTESIS VACÍA: el sintetizador no afirmó ni citó nada, tampoco tras una repregunta: la escribe el código"), nil
		}
		var n int
		syn.Divergences, n = dropVacuous(syn.Divergences)
		return syn, total, append(events, fmt.Sprintf("DIVERGENCIA VACÍA en la síntesis, sin afirmación ni cita tampoco tras una repregunta: descartadas %d", n)), nil
	}
	panic("unreachable")
}

// askRebuttal asks one agent's rebuttal within actx. A divergence that
// says nothing (RebuttalProblem) is re-asked once, without the tool (its
// query, if any, was made: its chunks go along); what is still empty
// after that is dropped and named in the events. An error is the first
// call's, for the caller to classify (timeout, invalid, failure).
func askRebuttal(actx context.Context, agents Agents, in RebuttalInput, tool *turnTool) (Rebuttal, veredicto.Usage, []string, error) {
	in.Tool = offer(tool)
	reb, u, err := agents.Rebuttal(actx, in)
	if err != nil {
		return reb, u, nil, err
	}
	problem := RebuttalProblem(reb)
	if problem == "" {
		return reb, u, nil, nil
	}
	in.Tool, in.Chunks, in.Reask = nil, mergeChunks(in.Chunks, tool.retrieved()), problem
	again, u2, err := agents.Rebuttal(actx, in)
	u.Add(u2)
	if err == nil && checkStance(again, in.Question.Options) {
		if RebuttalProblem(again) == "" {
			return again, u, nil, nil
		}
		reb = again
	}
	var n int
	reb.Divergences, n = dropVacuous(reb.Divergences)
	return reb, u, []string{fmt.Sprintf("DIVERGENCIA VACÍA: %s en la ronda 2, sin afirmación ni cita tampoco tras una repregunta: descartadas %d",
		strings.ToUpper(in.Participant.ID), n)}, nil
}

// checkStance accepts a re-asked rebuttal only with a stance on one of the
// options (a scripted or broken agent could return less).
func checkStance(r Rebuttal, options []string) bool {
	return contains(options, r.Stance.Recommendation)
}
