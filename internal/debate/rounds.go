package debate

import (
	"context"
	"fmt"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/audit"
)

// Position is one agent's turn in a parallel round (1, or 3+ refining).
// The turn has the retrieval tool when the budget's rule gives it one
// (OfferedInParallel); what the query brings goes out with the answer
// (TurnOutput) for CloseRound to add.
func (s *Steps) Position(ctx context.Context, t Turn) (TurnOutput, error) {
	f := &t.Flow
	if t.Index < 0 || t.Index >= len(f.Participants) {
		return TurnOutput{}, &veredicto.InvalidInputError{File: "state input", Field: "index", Problem: "is not a participant"}
	}
	p := f.Participants[t.Index]
	ctx, err := s.scope(ctx, f, participantChain(p.ID), p.ID)
	if err != nil {
		return TurnOutput{}, err
	}
	if err := s.openLibrary(ctx, f); err != nil {
		return TurnOutput{}, err
	}
	round := len(f.Result.Rounds) + 1
	prev := prevOf(f, p.ID)
	in := PositionInput{Question: f.question(), Participant: p, Round: round, Chunks: f.chunks(f.Chunks[p.ID])}
	if round >= 3 {
		in.Focus = openDivergences(lastAnswers(f), f.Result.Rounds)
		in.Previous = prev
		in.Chunks = mergeChunks(in.Chunks, citedIn(f, prev))
	}
	var st RAGStats
	var notes []string
	var failed error
	tool := s.stepTool(f, OfferedInParallel(t.Index, f.Result.RAG.Total, f.Result.Question.Config.RAG.MaxQueries), &st, &notes, &failed)
	in.Tool = offer(tool)
	actx, cancel, err := s.agentCtx(ctx, f)
	if err != nil {
		return TurnOutput{}, err
	}
	defer cancel()
	pos, u, err := s.Agents.Position(actx, in)
	if failed != nil {
		return TurnOutput{}, boundary(fmt.Errorf("participant %s round %d knowledge: %w", p.ID, round, failed))
	}
	out, err := turn(p, round, prev, &pos, err, actx, u)
	if err != nil {
		return out, err
	}
	out.RAG, out.Notes = st, notes
	if got := tool.retrieved(); len(got) > 0 {
		for _, c := range got {
			out.Retrieved = append(out.Retrieved, c.ID)
		}
		if s.Logs != nil {
			if out.LibraryRef, err = s.storeBatch(ctx, f, got); err != nil {
				return TurnOutput{}, err
			}
		} else {
			out.Chunks = got
		}
	}
	return out, nil
}

// retrieved adds a turn's retrieval to the flow: the query's counts, the
// chunks (or the batch naming them), and their ids to what participant
// id holds.
func (f *Flow) retrieved(id string, t TurnOutput) error {
	f.Result.RAG.add(t.RAG)
	f.Result.Events = append(f.Result.Events, t.Notes...)
	if t.LibraryRef != "" {
		if !validRef(t.LibraryRef) {
			return &veredicto.InvalidInputError{File: "state input", Field: "turns.library_ref", Problem: fmt.Sprintf("%q is not a library batch name", t.LibraryRef)}
		}
		f.addRef(t.LibraryRef)
	}
	if len(t.Chunks) > 0 {
		f.keep(t.Chunks)
	}
	if len(t.Retrieved) > 0 {
		if f.Chunks == nil {
			f.Chunks = map[string][]string{}
		}
		for _, c := range t.Retrieved {
			if !contains(f.Chunks[id], c) {
				f.Chunks[id] = append(f.Chunks[id], c)
			}
		}
	}
	return nil
}

// CloseRound records a parallel round from its Map's outputs and runs the
// convergence checkpoint.
func (s *Steps) CloseRound(ctx context.Context, in RoundInput) (Flow, error) {
	f := in.Flow
	ctx, err := s.scope(ctx, &f, audit.MainChain, "")
	if err != nil {
		return Flow{}, err
	}
	if len(in.Turns) != len(f.Participants) {
		return Flow{}, &veredicto.InvalidInputError{File: "state input", Field: "turns", Problem: "does not hold one answer per participant"}
	}
	n := len(f.Result.Rounds) + 1
	rd := Round{Number: n, Kind: RoundInitial}
	if n >= 3 {
		rd.Kind = RoundRefinement
		rd.Focus = openDivergences(lastAnswers(&f), f.Result.Rounds)
	}
	for _, t := range in.Turns {
		if t.Answer.TimedOut && t.Answer.Position == nil {
			// A Task timed out in the state machine: the seed's partial
			// answer is the agent's last position, if any.
			t.Answer.Position = prevOf(&f, t.Answer.Participant)
		}
		rd.Answers = append(rd.Answers, t.Answer)
		if err := f.retrieved(t.Answer.Participant, t); err != nil {
			return Flow{}, err
		}
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
	ctx, err := s.scope(ctx, &f, audit.MainChain, "")
	if err != nil {
		return Flow{}, err
	}
	// The agent's calls and clock go to its own chain, the round's
	// checkpoint to the main one.
	pctx, err := s.scope(ctx, &f, participantChain(p.ID), p.ID)
	if err != nil {
		return Flow{}, err
	}
	if err := s.openLibrary(ctx, &f); err != nil {
		return Flow{}, err
	}
	own := prevOf(&f, p.ID)
	var actx context.Context
	var cancel context.CancelFunc
	if !in.Skip {
		if actx, cancel, err = s.agentCtx(pctx, &f); err != nil {
			return Flow{}, err
		}
		defer cancel()
	}
	var out TurnOutput
	var reb *Rebuttal
	var st RAGStats
	var notes []string
	var failed error
	tool := s.stepTool(&f, f.Result.RAG.Total < f.Result.Question.Config.RAG.MaxQueries, &st, &notes, &failed)
	if in.Skip {
		// The state machine's Task timeout fired: the agent is TIMEOUT.
		tool = nil
		out = TurnOutput{Answer: Answer{Participant: p.ID, Position: own, TimedOut: true}, Event: timeoutEvent(p.ID, fase(2))}
	} else if own == nil {
		pos, u, cerr := s.Agents.Position(actx, PositionInput{Question: f.question(), Participant: p, Round: 2, Chunks: f.chunks(f.Chunks[p.ID]), Tool: offer(tool)})
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
		r, u, events, cerr := askRebuttal(actx, s.Agents, RebuttalInput{Question: f.question(), Participant: p, Own: *own, Others: others, Chunks: mergeChunks(f.chunks(f.Chunks[p.ID]), seen)}, tool)
		f.Result.Events = append(f.Result.Events, events...)
		var pos *Position
		if cerr == nil {
			reb, pos = &r, &r.Stance
		}
		out, err = turn(p, 2, own, pos, cerr, actx, u)
	}
	if failed != nil {
		return Flow{}, boundary(fmt.Errorf("participant %s round 2 knowledge: %w", p.ID, failed))
	}
	if err != nil {
		return Flow{}, err
	}
	out.RAG, out.Notes = st, notes
	for _, c := range tool.retrieved() {
		out.Retrieved = append(out.Retrieved, c.ID)
	}
	f.keep(tool.retrieved())
	if err := f.retrieved(p.ID, out); err != nil {
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
	at, err := s.clock(ctx, "round 2 turn end")
	if err != nil {
		return Flow{}, err
	}
	if f.Index < len(f.Participants) && (f.RoundStart.IsZero() || at.Sub(f.RoundStart) < Dur(f.Result.Question.Config.Timeout.PerRound)) {
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
		f.Result.Events = append(f.Result.Events, timeoutEvent(id, fase(2)))
	}
	rd := Round{Number: 2, Kind: RoundRebuttals, Answers: f.Current, Rebuttals: f.Rebuttals, Invalid: f.Invalid}
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
	now, err := s.clock(ctx, fmt.Sprintf("round %d checkpoint", rd.Number))
	if err != nil {
		return Flow{}, err
	}
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
	if err := recordRound(ctx, rd, c, f.LoopCounter, trip); err != nil {
		return Flow{}, err
	}
	f.RoundStart = now
	switch {
	case trip != nil, converged, f.Result.Mode != ModeDebate:
		f.Next = "synthesize"
	case n == 1:
		f.Next, f.Index = "rebuttal", 0
		f.Current = append([]Answer(nil), rd.Answers...)
	default:
		// The refinement's agents retrieve through their own tool.
		f.Next = "refine"
	}
	if err := s.closeLibrary(ctx, &f); err != nil {
		return Flow{}, err
	}
	if f.Next == "rebuttal" || f.Next == "refine" {
		if size := flowSize(&f); size >= StateBudget {
			f.Result.Trip = &Trip{Trigger: TriggerStateSize,
				Condition: fmt.Sprintf("estado del debate ≥ %d KiB (%d KiB; Step Functions admite 256 KiB por estado)", StateBudget>>10, size>>10),
				Action:    ActionForceSynthesis}
			f.Next, f.Index, f.Current = "synthesize", 0, nil
			if err := decide(ctx, audit.Decision{Name: "circuit_breaker", Outcome: TriggerStateSize,
				Detail: fmt.Sprintf("round %d: %s → %s", rd.Number, f.Result.Trip.Condition, f.Result.Trip.Action)}); err != nil {
				return Flow{}, err
			}
		}
	}
	return f, nil
}
