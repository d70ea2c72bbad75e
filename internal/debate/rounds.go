package debate

import (
	"context"
	"fmt"
	"strings"

	"github.com/veredicto/veredicto"
)

// Position is one agent's turn in a parallel round (1, or 3+ refining).
func (s *Steps) Position(ctx context.Context, t Turn) (TurnOutput, error) {
	f := &t.Flow
	if t.Index < 0 || t.Index >= len(f.Participants) {
		return TurnOutput{}, &veredicto.InvalidInputError{File: "state input", Field: "index", Problem: "is not a participant"}
	}
	p := f.Participants[t.Index]
	if err := s.openLibrary(ctx, f); err != nil {
		return TurnOutput{}, err
	}
	round := len(f.Result.Rounds) + 1
	prev := prevOf(f, p.ID)
	in := PositionInput{Question: f.question(), Participant: p, Round: round, Chunks: f.chunks(f.Chunks[p.ID])}
	if round >= 3 {
		in.Focus = openDivergences(lastAnswers(f), f.Result.Rounds)
		in.Previous = prev
		in.Chunks = mergeChunks(in.Chunks, f.chunks(f.Extra), citedIn(f, prev))
	}
	actx, cancel := s.agentCtx(ctx, f)
	defer cancel()
	pos, u, err := s.Agents.Position(actx, in)
	return turn(p, round, prev, &pos, err, actx, u)
}

// CloseRound records a parallel round from its Map's outputs and runs the
// convergence checkpoint.
func (s *Steps) CloseRound(ctx context.Context, in RoundInput) (Flow, error) {
	f := in.Flow
	if len(in.Turns) != len(f.Participants) {
		return Flow{}, &veredicto.InvalidInputError{File: "state input", Field: "turns", Problem: "does not hold one answer per participant"}
	}
	n := len(f.Result.Rounds) + 1
	rd := Round{Number: n, Kind: "posicoes_iniciais"}
	if n >= 3 {
		rd.Kind = "refinamento"
		rd.Focus = openDivergences(lastAnswers(&f), f.Result.Rounds)
	}
	for _, t := range in.Turns {
		if t.Answer.TimedOut && t.Answer.Position == nil {
			// A Task timed out in the state machine: the seed's partial
			// answer is the agent's last position, if any.
			t.Answer.Position = prevOf(&f, t.Answer.Participant)
		}
		rd.Answers = append(rd.Answers, t.Answer)
		f.Result.Usage.Add(t.Usage)
		if t.Event != "" {
			f.Result.Events = append(f.Result.Events, t.Event)
		}
		if t.Invalid {
			rd.Invalid = append(rd.Invalid, t.Answer.Participant)
		}
	}
	return s.checkpoint(ctx, f, rd)
}

// Rebuttal is one agent's turn of the sequential round 2; after the last
// agent it runs the convergence checkpoint.
func (s *Steps) Rebuttal(ctx context.Context, in RebuttalStep) (Flow, error) {
	f := in.Flow
	if f.Index < 0 || f.Index >= len(f.Participants) {
		return Flow{}, &veredicto.InvalidInputError{File: "state input", Field: "index", Problem: "is not a participant"}
	}
	p := f.Participants[f.Index]
	if err := s.openLibrary(ctx, &f); err != nil {
		return Flow{}, err
	}
	own := prevOf(&f, p.ID)
	actx, cancel := s.agentCtx(ctx, &f)
	defer cancel()
	var out TurnOutput
	var reb *Rebuttal
	var err error
	if in.Skip {
		// The state machine's Task timeout fired: the agent is TIMEOUT.
		out = TurnOutput{Answer: Answer{Participant: p.ID, Position: own, TimedOut: true},
			Event: fmt.Sprintf("TIMEOUT: %s em %s", strings.ToUpper(p.ID), fase(2))}
	} else if own == nil {
		pos, u, cerr := s.Agents.Position(actx, PositionInput{Question: f.question(), Participant: p, Round: 2, Chunks: f.chunks(f.Chunks[p.ID])})
		out, err = turn(p, 2, nil, &pos, cerr, actx, u)
	} else {
		var others []Stance
		var seen []Chunk
		for _, a := range f.Current {
			if a.Participant != p.ID && a.Answered() {
				others = append(others, Stance{Participant: a.Participant, Position: *a.Position})
				seen = append(seen, citedIn(&f, a.Position)...)
			}
		}
		r, u, cerr := s.Agents.Rebuttal(actx, RebuttalInput{Question: f.question(), Participant: p, Own: *own, Others: others, Chunks: mergeChunks(f.chunks(f.Chunks[p.ID]), seen)})
		var pos *Position
		if cerr == nil {
			reb, pos = &r, &r.Stance
		}
		out, err = turn(p, 2, own, pos, cerr, actx, u)
	}
	if err != nil {
		return Flow{}, err
	}
	f.Result.Usage.Add(out.Usage)
	if out.Event != "" {
		f.Result.Events = append(f.Result.Events, out.Event)
	}
	// Current holds the round's answers so far, then the last round's.
	if len(f.Current) != len(f.Participants) {
		f.Current = append([]Answer(nil), lastAnswers(&f)...)
	}
	f.Current[f.Index] = out.Answer
	if reb != nil {
		if f.Rebuttals == nil {
			f.Rebuttals = map[string]*Rebuttal{}
		}
		f.Rebuttals[p.ID] = reb
	}
	if out.Invalid {
		f.Invalid = append(f.Invalid, p.ID)
	}
	f.Index++
	if f.Index < len(f.Participants) && (f.RoundStart.IsZero() || s.now().Sub(f.RoundStart) < Dur(f.Result.Question.Config.Timeout.PerRound)) {
		f.Next = "rebuttal"
		if err := s.closeLibrary(ctx, &f); err != nil {
			return Flow{}, err
		}
		return f, nil
	}
	// The round ends: every agent heard, or the round's time is up (the
	// ones not heard keep their last position, marked TIMEOUT).
	for i := f.Index; i < len(f.Participants); i++ {
		id := f.Participants[i].ID
		f.Current[i] = Answer{Participant: id, Position: prevOf(&f, id), TimedOut: true}
		f.Result.Events = append(f.Result.Events, fmt.Sprintf("TIMEOUT: %s em %s", strings.ToUpper(id), fase(2)))
	}
	rd := Round{Number: 2, Kind: "rebatidas", Answers: f.Current, Rebuttals: f.Rebuttals, Invalid: f.Invalid}
	if rd.Rebuttals == nil {
		rd.Rebuttals = map[string]*Rebuttal{}
	}
	f.Current, f.Rebuttals, f.Invalid = []Answer{}, nil, nil
	return s.checkpoint(ctx, f, rd)
}

// RebuttalStep is the sequential round's state input; Skip marks the
// current agent TIMEOUT without a call (after a Task timeout).
type RebuttalStep struct {
	Flow Flow `json:"flow"`
	Skip bool `json:"skip"`
}

// checkpoint appends rd and decides the next branch: the convergence
// checkpoint, the loop detector and the circuit breaker.
func (s *Steps) checkpoint(ctx context.Context, f Flow, rd Round) (Flow, error) {
	c := f.Result.Question.Config
	prev := map[string]*Position{}
	for _, a := range lastAnswers(&f) {
		prev[a.Participant] = a.Position
	}
	for _, a := range rd.Answers {
		if old := prev[a.Participant]; old != nil && a.Position != nil && !a.TimedOut && old.Recommendation != a.Position.Recommendation {
			rd.Changes++
		}
	}
	rd.Convergence, _ = Convergence(rd.Answers)
	if f.Result.Mode == ModeSimple && len(rd.Answers) == 1 && rd.Answers[0].Answered() {
		rd.Convergence = 100
	}
	rd.Hash = PositionsHash(rd.Answers)
	if f.LastHash != "" && rd.Hash == f.LastHash {
		f.LoopCounter++
	}
	f.LastHash = rd.Hash
	now := s.now()
	rd.Duration = now.Sub(f.RoundStart)
	f.Result.Rounds = append(f.Result.Rounds, rd)
	if err := s.archive(ctx, &f); err != nil {
		return Flow{}, err
	}
	f.Result.Convergence = rd.Convergence
	f.Roster = roster(f.Participants, fase(rd.Number+1))
	n := rd.Number
	elapsed := now.Sub(f.Result.Start)
	refinements := 0
	if n >= 3 {
		refinements = n - 2
	}
	converged := rd.Convergence >= c.Convergence.Threshold && n >= c.Debate.Rounds.Min
	trip := Breaker(BreakerState{Rounds: n, Iterations: n, Refinements: refinements, Elapsed: elapsed, LoopCounter: f.LoopCounter, Converged: converged}, c)
	f.Result.Trip = trip
	f.RoundStart = now
	switch {
	case trip != nil, converged, f.Result.Mode != ModeDebate:
		f.Next = "synthesize"
	case n == 1:
		f.Next, f.Index = "rebuttal", 0
		f.Current = append([]Answer(nil), rd.Answers...)
	default:
		f.Next = "refine"
		rag := NewRAG(nil, c.RAG.MaxQueries, Dur(c.RAG.Timeout))
		if f.Result.RAG.Total < c.RAG.MaxQueries {
			chunks, err := s.loadKnowledge(ctx, f.Tenant, f.Knowledge)
			if err != nil {
				return Flow{}, err
			}
			rag = NewRAG(retrieverOf(chunks), c.RAG.MaxQueries, Dur(c.RAG.Timeout))
		}
		rag.resume(f.Result.RAG)
		if err := s.openLibrary(ctx, &f); err != nil { // the refinement adds to it
			return Flow{}, err
		}
		focus := openDivergences(rd.Answers, f.Result.Rounds)
		f.Extra = f.keep(mergeChunks(f.chunks(f.Extra), f.query(ctx, rag, f.Result.Question.Question+" "+strings.Join(focus, " "))))
		f.Result.RAG = rag.Stats()
	}
	if err := s.closeLibrary(ctx, &f); err != nil {
		return Flow{}, err
	}
	if f.Next == "rebuttal" || f.Next == "refine" {
		if size := flowSize(&f); size >= StateBudget {
			f.Result.Trip = &Trip{Trigger: TriggerStateSize,
				Condition: fmt.Sprintf("estado >= %d KiB (%d KiB; limite de 256 KiB por estado do Step Functions)", StateBudget>>10, size>>10),
				Action:    "Forcar sintese com divergencias"}
			f.Next, f.Index, f.Current = "synthesize", 0, nil
		}
	}
	return f, nil
}
