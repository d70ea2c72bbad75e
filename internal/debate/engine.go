package debate

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/llm"
)

// Agents is the port of the four calls a debate makes. LLMAgents and
// Offline implement it; tests may script it.
type Agents interface {
	Position(ctx context.Context, in PositionInput) (Position, veredicto.Usage, error)
	Rebuttal(ctx context.Context, in RebuttalInput) (Rebuttal, veredicto.Usage, error)
	Synthesis(ctx context.Context, in SynthesisInput) (Synthesis, veredicto.Usage, error)
	Vote(ctx context.Context, in VoteInput) (Vote, veredicto.Usage, error)
}

// Stance is a participant's current position, shown to the others.
type Stance struct {
	Participant string   `json:"participant"`
	Position    Position `json:"position"`
}

// PositionInput is a position call (round 1, and rounds 3+ with Focus).
// Chunks are the ones the agent already holds (retrieved in its earlier
// turns, cited by its previous position); Tool, when the round offers it,
// retrieves more.
type PositionInput struct {
	Question    Question
	Participant Participant
	Round       int
	Chunks      []Chunk
	Tool        Retrieval
	// Focus lists the open divergences a refinement round debates;
	// Previous is the participant's last position. Both empty in round 1.
	Focus    []string
	Previous *Position
}

// RebuttalInput is a round-2 call: the participant sees the others.
// Reask, on a second call, says what was empty in the first answer.
type RebuttalInput struct {
	Question    Question
	Participant Participant
	Own         Position
	Others      []Stance
	Chunks      []Chunk
	Tool        Retrieval
	Reask       string
}

// SynthesisInput is the synthesizer's call: the code's decision and
// confidence, the final stances and the open divergences.
type SynthesisInput struct {
	Question    Question
	Decision    string
	Confidence  float64
	Stances     []Stance
	Divergences []string
	Impasse     bool
	Chunks      []Chunk
	// Reask, on a second call, says what was empty in the first answer.
	Reask string
}

// VoteInput is one council member's call.
type VoteInput struct {
	Question    Question
	Member      Participant
	Decision    string
	Confidence  float64
	Synthesis   Synthesis
	Stances     []Stance
	Divergences []string
	Impasse     bool
	Chunks      []Chunk
}

// DefaultCouncil is the council of three.
var DefaultCouncil = []Participant{
	{ID: "consejo-riesgo", Brief: "Consejero de riesgos: pondera lo irreversible, el peor caso y la exposición legal y reputacional."},
	{ID: "consejo-negocio", Brief: "Consejero de negocio: pondera el valor para la empresa y el costo de no decidir o de decidir tarde."},
	{ID: "consejo-independiente", Brief: "Consejero independiente: pondera la solidez de la evidencia citada y los puntos ciegos del comité."},
}

// Human is the person who decides an escalated debate (through a
// confirmation). A nil Human leaves the decision pending.
type Human interface {
	Decide(ctx context.Context, req HumanRequest) (HumanDecision, error)
}

// HumanRequest is what the person sees: the synthesis and the divergences.
type HumanRequest struct {
	SessionID   string   `json:"session_id"`
	Question    string   `json:"question"`
	Options     []string `json:"options"`
	Proposed    string   `json:"proposed_decision"`
	Confidence  float64  `json:"confidence"`
	Summary     string   `json:"summary"`
	Divergences []string `json:"divergences"`
	Reasons     []string `json:"reasons"`
}

// HumanDecision is the person's answer.
type HumanDecision struct {
	Approved bool
	Decision string
	Comment  string
}

// Engine runs debates. Its fields are set before the first Run and not
// changed after; Run is safe for concurrent use.
type Engine struct {
	Agents    Agents
	Retriever Retriever // nil: an empty knowledge base
	// Chunks is the number of chunks behind Retriever (for the checklist).
	Chunks          int
	OptionalCouncil bool
	Council         []Participant // DefaultCouncil when empty
	Human           Human
	Now             func() time.Time
	NewID           func() string
	Logger          *slog.Logger
}

// Round is one executed round.
type Round struct {
	Number      int
	Kind        string // RoundInitial, RoundRebuttals, RoundRefinement
	Duration    time.Duration
	Convergence float64
	Answers     []Answer
	Rebuttals   map[string]*Rebuttal
	Invalid     []string // agents whose answer stayed invalid after the re-ask
	Changes     int
	Hash        string
	Focus       []string
	// Archived marks a round of the state machine's Flow whose answers are
	// kept in the log store, not the state (see Steps.archive).
	Archived bool `json:",omitempty"`
}

// Responded lists the agents with a fresh answer; TimedOut the agents
// marked TIMEOUT.
func (r Round) Responded() []string {
	var out []string
	for _, a := range r.Answers {
		if a.Answered() && !a.TimedOut {
			out = append(out, a.Participant)
		}
	}
	return out
}

// TimedOut lists the agents marked TIMEOUT in the round.
func (r Round) TimedOut() []string {
	var out []string
	for _, a := range r.Answers {
		if a.TimedOut {
			out = append(out, a.Participant)
		}
	}
	return out
}

// Result is a finished (or pending) debate.
type Result struct {
	SessionID   string
	Start, End  time.Time
	Question    Question
	Mode        string
	ModeReason  string
	Rounds      []Round
	Trip        *Trip
	Convergence float64 // final
	Decision    string  // the synthesis decision (code)
	Confidence  float64 // the synthesis confidence (code)
	// ReducedByTimeout marks a synthesis made at the total timeout
	// ("REDUZIDA POR TIMEOUT").
	ReducedByTimeout bool
	Synthesis        Synthesis
	Escalation       Escalation
	Council          *CouncilOutcome
	// Target is where the decision finally went: NENHUM (emitted by the
	// synthesis), COUNCIL (decided by the council) or HUMANO.
	Target string
	// Final is the emitted decision; empty while a person has not decided.
	Final       string
	FinalReason string
	Pending     bool
	Human       *HumanDecision
	RAG         RAGStats
	Cited       []string
	// Evidence holds the cited chunks (source and text) for the report.
	Evidence   map[string]Chunk
	Usage      veredicto.Usage
	Events     []string // TIMEOUT lines and other notes, in order
	Checklists []Check
}

// CouncilOutcome is the council's votes and result.
type CouncilOutcome struct {
	Members []Participant
	Votes   []*Vote // nil: the member timed out, answered invalidly or failed
	// Invalid lists the members whose vote stayed invalid after the
	// re-ask (or whose call failed): their nil vote is not a TIMEOUT.
	Invalid  []string `json:",omitempty"`
	Decision string
	Result   float64
	TimedOut bool
}

// Run debates q. It returns an error only when the debate cannot go on
// (the provider failed, the context was cancelled); timeouts, invalid
// answers and breakers are part of the result.
func (e *Engine) Run(ctx context.Context, q Question) (*Result, error) {
	now := e.Now
	if now == nil {
		now = time.Now
	}
	newID := e.NewID
	if newID == nil {
		newID = NewSessionID
	}
	log := e.Logger
	if log == nil {
		log = slog.Default()
	}
	c := q.Config
	start, err := clock(ctx, "debate start", now)
	if err != nil {
		return nil, err
	}
	r := &Result{SessionID: newID(), Start: start, Question: q}
	log = log.With("debate_id", r.SessionID)
	r.Mode, r.ModeReason = Route(q)
	log.InfoContext(ctx, "debate routed", "mode", r.Mode, "participants", len(q.Participants))
	if err := recordRoute(ctx, r); err != nil {
		return nil, err
	}

	tctx, cancel := context.WithTimeout(ctx, Dur(c.Timeout.Total))
	defer cancel()
	rag := NewRAG(e.Retriever, c.RAG.MaxQueries, Dur(c.RAG.Timeout))
	s := &state{e: e, r: r, rag: rag, log: log, now: now, total: tctx}

	participants := q.Participants
	if r.Mode == ModeSimple {
		participants = participants[:1]
	}
	// Nothing is retrieved ahead: agents query during the rounds, through
	// the tool each turn offers (OfferedInParallel), within the budget.
	s.chunks = map[string][]Chunk{}

	var loop LoopDetector
	var latest []Answer
	for n := 1; ; n++ {
		round, err := s.round(n, participants, latest)
		if err != nil {
			return nil, err
		}
		latest = round.Answers
		conv, _ := Convergence(latest)
		if r.Mode == ModeSimple && latest[0].Answered() {
			conv = 100 // one voice agrees with itself
		}
		round.Convergence = conv
		round.Hash = PositionsHash(latest)
		loop.Observe(round.Hash)
		r.Rounds = append(r.Rounds, *round)
		r.Convergence = conv
		log.InfoContext(ctx, "debate round", "round", n, "convergence", conv, "responded", len(round.Responded()), "timeouts", len(round.TimedOut()))
		// The checkpoint's clock: the debate's total time is read from it
		// (recorded, so a replay takes the same branch), and from the
		// total timeout's context.
		at, err := clock(ctx, fmt.Sprintf("round %d checkpoint", n), now)
		if err != nil {
			return nil, err
		}
		elapsed := at.Sub(r.Start)
		spent := tctx.Err() != nil || elapsed >= Dur(c.Timeout.Total)
		if r.Mode != ModeDebate {
			if spent {
				r.Trip = Breaker(BreakerState{Rounds: n, Iterations: n, Elapsed: Dur(c.Timeout.Total)}, c)
			}
			if err := recordRound(ctx, *round, c, loop.Counter, r.Trip); err != nil {
				return nil, err
			}
			break
		}
		if spent && elapsed < Dur(c.Timeout.Total) {
			elapsed = Dur(c.Timeout.Total)
		}
		refinements := 0
		if n >= 3 {
			refinements = n - 2
		}
		converged := conv >= c.Convergence.Threshold && n >= c.Debate.Rounds.Min
		trip := Breaker(BreakerState{Rounds: n, Iterations: n, Refinements: refinements, Elapsed: elapsed,
			LoopCounter: loop.Counter, Converged: converged}, c)
		if err := recordRound(ctx, *round, c, loop.Counter, trip); err != nil {
			return nil, err
		}
		if trip != nil {
			r.Trip = trip
			log.WarnContext(ctx, "circuit breaker", "trigger", trip.Trigger, "round", n)
			break
		}
		if converged {
			break
		}
	}

	// Synthesis. With no time left (the total timeout) the code writes it
	// from the current state; so it does when nobody answered.
	r.Decision = Decide(latest, q.Options)
	r.Confidence = SynthesisConfidence(latest, r.Decision)
	r.ReducedByTimeout = r.Trip != nil && r.Trip.Trigger == TriggerTimeout
	divergences := openDivergences(latest, r.Rounds)
	impasse := r.Trip != nil && r.Trip.Impasse
	sin := SynthesisInput{Question: q, Decision: r.Decision, Confidence: r.Confidence, Stances: stances(latest),
		Divergences: divergences, Impasse: impasse, Chunks: s.citedChunks(latest)}
	syn, u, events, err := askSynthesis(ctx, e.Agents, sin, func() (context.Context, context.CancelFunc, error) {
		actx, cancel := context.WithTimeout(tctx, Dur(c.Timeout.PerAgent))
		return actx, cancel, nil
	}, r.ReducedByTimeout)
	r.Usage.Add(u)
	for _, ev := range events {
		s.event(ev)
	}
	if err != nil {
		return nil, fmt.Errorf("debate %s synthesis: %w", r.SessionID, err)
	}
	r.Synthesis = syn

	value := 0.0
	if q.ValueAtRisk != nil {
		value = q.ValueAtRisk.Amount
	}
	r.Escalation = Escalate(EscalationInput{
		Mode: r.Mode, SynthesisConfidence: r.Confidence, ConvergenceFinal: r.Convergence, ValueAtRisk: value,
		Irreversible: q.Irreversible, RiskLevel: q.RiskLevel, CriticalDivergence: r.Synthesis.CriticalDivergence,
		OutOfScope: r.Synthesis.OutOfScope, Trip: r.Trip, OptionalCouncil: e.OptionalCouncil, NoProposal: r.Decision == "",
	}, c)
	r.Target = r.Escalation.Target
	r.FinalReason = strings.Join(r.Escalation.Reasons, "; ")
	if err := recordEscalation(ctx, r); err != nil {
		return nil, err
	}
	switch r.Target {
	case TargetNone:
		r.Final = r.Decision
	case TargetCouncil:
		out, err := s.council(ctx, sin, r.Synthesis, r.Escalation.Impasse)
		if err != nil {
			return nil, err
		}
		r.Council = out
		target, why := AfterCouncil(out.Result, out.TimedOut, r.Confidence, q.RiskLevel, c)
		r.FinalReason += "; " + why
		if err := recordCouncil(ctx, r, target, why); err != nil {
			return nil, err
		}
		switch {
		case target == TargetHuman:
			r.Target = TargetHuman
		case out.TimedOut:
			r.Target, r.Final = TargetCouncil, r.Decision
		default:
			r.Target, r.Final = TargetCouncil, out.Decision
		}
	}
	var human *audit.HumanDecision
	if r.Target == TargetHuman {
		if human, err = s.human(ctx, divergences); err != nil {
			return nil, err
		}
	}
	if err := recordOutcome(ctx, r, human); err != nil {
		return nil, err
	}
	st := rag.Stats()
	r.RAG = st
	r.Cited = s.cited(latest, r.Council)
	r.Evidence = map[string]Chunk{}
	for _, id := range r.Cited {
		if c, ok := rag.chunk(id); ok {
			r.Evidence[id] = c
		}
	}
	if r.End, err = clock(ctx, "debate end", now); err != nil {
		return nil, err
	}
	r.Checklists = Checklists(r, e.Chunks)
	log.InfoContext(ctx, "debate finished", "target", r.Target, "pending", r.Pending, "rounds", len(r.Rounds), "tokens", r.Usage.PromptTokens+r.Usage.CompletionTokens)
	return r, nil
}

type state struct {
	e      *Engine
	r      *Result
	rag    *RAG
	log    *slog.Logger
	now    func() time.Time
	total  context.Context
	chunks map[string][]Chunk // per participant
	mu     sync.Mutex
}

func (s *state) event(line string) {
	s.mu.Lock()
	s.r.Events = append(s.r.Events, line)
	s.mu.Unlock()
	s.log.Warn("debate event", "event", line)
}

// tool is a turn's retrieval tool on the debate's RAG, or nil when the
// budget leaves the turn none; emit takes the report's line of a query
// that did not answer.
func (s *state) tool(offered bool, emit func(string)) *turnTool {
	if !offered {
		return nil
	}
	return newTool(func(ctx context.Context, text string) ([]Chunk, error) {
		chunks, err := s.rag.Query(ctx, text)
		if note := ragNote(err, s.rag.maxQueries); note != "" {
			emit(note)
		}
		return chunks, err
	})
}

// turns collects the outcomes of a round's parallel turns, each under
// its index, so the round reads them in roster order however the turns
// finished: the report (and a replay's) is the same.
type turns struct {
	mu      sync.Mutex
	events  map[int][]string
	invalid map[int]bool
	failed  map[int]error
}

func newTurns() *turns {
	return &turns{events: map[int][]string{}, invalid: map[int]bool{}, failed: map[int]error{}}
}

func (t *turns) emit(i int) func(string) {
	return func(line string) {
		t.mu.Lock()
		t.events[i] = append(t.events[i], line)
		t.mu.Unlock()
	}
}

// firstFailure is the failure of the first turn in roster order, nil when
// none failed.
func (t *turns) firstFailure() error {
	first := -1
	for i := range t.failed {
		if first < 0 || i < first {
			first = i
		}
	}
	if first < 0 {
		return nil
	}
	return t.failed[first]
}

// flush adds the turns' events to the debate and returns the invalid
// turns, in roster order.
func (t *turns) flush(s *state) []int {
	for _, ev := range sortedEvents(t.events) {
		s.event(ev)
	}
	var out []int
	for i := range t.invalid {
		out = append(out, i)
	}
	sort.Ints(out)
	return out
}

// ragNote is the report's line for a query that did not answer.
func ragNote(err error, max int) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrQueryBudget):
		return fmt.Sprintf("RAG: consulta rechazada, límite de %d consultas por debate alcanzado", max)
	default:
		return "RAG: consulta abortada por timeout; se continúa sin ella"
	}
}

// hold adds what a participant's turn retrieved to the chunks it holds.
func (s *state) hold(id string, t *turnTool) {
	if got := t.retrieved(); len(got) > 0 {
		s.mu.Lock()
		s.chunks[id] = mergeChunks(s.chunks[id], got)
		s.mu.Unlock()
	}
}

func (s *state) held(id string) []Chunk {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.chunks[id]
}

func mergeChunks(lists ...[]Chunk) []Chunk {
	seen := map[string]bool{}
	var out []Chunk
	for _, l := range lists {
		for _, c := range l {
			if !seen[c.ID] {
				seen[c.ID] = true
				out = append(out, c)
			}
		}
	}
	return out
}

func citableOf(chunks []Chunk) map[string]bool {
	m := map[string]bool{}
	for _, c := range chunks {
		m[c.ID] = true
	}
	return m
}

func isInvalid(err error) bool {
	var ie *llm.InvalidOutputError
	return errors.As(err, &ie)
}

// round runs round n. Round 1 (and the only round of simple and council)
// is parallel; round 2 is sequential rebuttals; rounds 3+ refine on the
// open divergences. Each participant's calls go to its own chain of the
// audit record.
func (s *state) round(n int, ps []Participant, prev []Answer) (*Round, error) {
	c := s.r.Question.Config
	start, err := clock(s.total, fmt.Sprintf("round %d start", n), s.now)
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithTimeout(s.total, Dur(c.Timeout.PerRound))
	defer cancel()
	rd := &Round{Number: n, Answers: make([]Answer, len(ps))}
	prevOf := map[string]*Position{}
	for _, a := range prev {
		prevOf[a.Participant] = a.Position
	}
	tt := newTurns()
	// record classifies turn i's outcome like the steps' turn.
	record := func(i int, p Participant, pos *Position, err error, actx context.Context) {
		var event string
		tt.mu.Lock()
		switch {
		case err == nil:
			rd.Answers[i] = Answer{Participant: p.ID, Position: pos}
		case timedOut(actx, err):
			// The seed's partial answer: the last position, if any.
			rd.Answers[i] = Answer{Participant: p.ID, Position: prevOf[p.ID], TimedOut: true}
			event = timeoutEvent(p.ID, fase(n))
		case isInvalid(err):
			rd.Answers[i] = Answer{Participant: p.ID, Position: prevOf[p.ID]}
			tt.invalid[i] = true
			event = invalidEvent(p.ID, fase(n))
		default:
			tt.failed[i] = fmt.Errorf("debate %s round %d participant %s: %w", s.r.SessionID, n, p.ID, err)
		}
		tt.mu.Unlock()
		if event != "" {
			tt.emit(i)(event)
		}
	}
	usage := make([]veredicto.Usage, len(ps))
	// agentCtx bounds participant p's turn, its calls recorded in its
	// chain.
	agentCtx := func(p Participant) (context.Context, context.CancelFunc) {
		actx, acancel := context.WithTimeout(rctx, Dur(c.Timeout.PerAgent))
		return agentScope(actx, participantChain(p.ID), p.ID), acancel
	}
	// The tool: in a parallel round the queries left go to the first
	// participants of the roster (OfferedInParallel); in the sequential
	// round each agent has it while a query is left.
	used := s.rag.Stats().Total
	max := c.RAG.MaxQueries
	switch {
	case n == 1:
		rd.Kind = RoundInitial
		var wg sync.WaitGroup
		for i, p := range ps {
			wg.Add(1)
			go func() {
				defer wg.Done()
				actx, acancel := agentCtx(p)
				defer acancel()
				tool := s.tool(OfferedInParallel(i, used, max), tt.emit(i))
				pos, u, err := s.e.Agents.Position(actx, PositionInput{Question: s.r.Question, Participant: p, Round: 1, Chunks: s.held(p.ID), Tool: offer(tool)})
				s.hold(p.ID, tool)
				usage[i] = u
				record(i, p, &pos, err, actx)
			}()
		}
		wg.Wait()
	case n == 2:
		rd.Kind = RoundRebuttals
		rd.Rebuttals = map[string]*Rebuttal{}
		current := append([]Answer(nil), prev...)
		for i, p := range ps {
			actx, acancel := agentCtx(p)
			own := prevOf[p.ID]
			tool := s.tool(s.rag.Stats().Total < max, tt.emit(i))
			if own == nil {
				// Nothing to rebut from: the agent states a position.
				pos, u, err := s.e.Agents.Position(actx, PositionInput{Question: s.r.Question, Participant: p, Round: n, Chunks: s.held(p.ID), Tool: offer(tool)})
				usage[i] = u
				record(i, p, &pos, err, actx)
			} else {
				var others []Stance
				var seen []Chunk
				for _, a := range current {
					if a.Participant != p.ID && a.Answered() {
						others = append(others, Stance{Participant: a.Participant, Position: *a.Position})
						seen = append(seen, s.chunksCited(a.Position)...)
					}
				}
				chunks := mergeChunks(s.held(p.ID), seen)
				reb, u, events, err := askRebuttal(actx, s.e.Agents, RebuttalInput{Question: s.r.Question, Participant: p, Own: *own, Others: others, Chunks: chunks}, tool)
				usage[i] = u
				for _, ev := range events {
					tt.emit(i)(ev)
				}
				if err == nil {
					rd.Rebuttals[p.ID] = &reb
					record(i, p, &reb.Stance, nil, actx)
				} else {
					record(i, p, nil, err, actx)
				}
			}
			s.hold(p.ID, tool)
			acancel()
			if err := tt.firstFailure(); err != nil {
				return nil, err
			}
			// Sequential: the next agent sees this one's new stance.
			for j := range current {
				if current[j].Participant == p.ID && rd.Answers[i].Position != nil {
					current[j] = rd.Answers[i]
				}
			}
		}
	default:
		rd.Kind = RoundRefinement
		rd.Focus = openDivergences(prev, s.r.Rounds)
		var wg sync.WaitGroup
		for i, p := range ps {
			wg.Add(1)
			go func() {
				defer wg.Done()
				actx, acancel := agentCtx(p)
				defer acancel()
				chunks := mergeChunks(s.held(p.ID), s.chunksCited(prevOf[p.ID]))
				tool := s.tool(OfferedInParallel(i, used, max), tt.emit(i))
				pos, u, err := s.e.Agents.Position(actx, PositionInput{Question: s.r.Question, Participant: p, Round: n,
					Chunks: chunks, Tool: offer(tool), Focus: rd.Focus, Previous: prevOf[p.ID]})
				s.hold(p.ID, tool)
				usage[i] = u
				record(i, p, &pos, err, actx)
			}()
		}
		wg.Wait()
	}
	if err := tt.firstFailure(); err != nil {
		return nil, err
	}
	for _, u := range usage {
		s.r.Usage.Add(u)
	}
	for _, i := range tt.flush(s) {
		rd.Invalid = append(rd.Invalid, ps[i].ID)
	}
	for _, a := range rd.Answers {
		if old := prevOf[a.Participant]; old != nil && a.Position != nil && !a.TimedOut && old.Recommendation != a.Position.Recommendation {
			rd.Changes++
		}
	}
	end, err := clock(s.total, fmt.Sprintf("round %d end", n), s.now)
	if err != nil {
		return nil, err
	}
	rd.Duration = end.Sub(start)
	return rd, nil
}

// chunksCited returns the retrieved chunks a position cites, so an agent
// that reads the position can check them too.
func (s *state) chunksCited(p *Position) []Chunk {
	if p == nil {
		return nil
	}
	var out []Chunk
	for _, id := range CitedIDs(append(append([]string{}, p.Premises...), p.Reasoning, p.Position)...) {
		if c, ok := s.rag.chunk(id); ok {
			out = append(out, c)
		}
	}
	return out
}

func (s *state) citedChunks(answers []Answer) []Chunk {
	var out []Chunk
	for _, a := range answers {
		out = mergeChunks(out, s.chunksCited(a.Position))
	}
	return out
}

func (s *state) cited(answers []Answer, council *CouncilOutcome) []string {
	var texts []string
	for _, rd := range s.r.Rounds {
		for _, a := range rd.Answers {
			if a.Position != nil {
				texts = append(texts, a.Position.Premises...)
				texts = append(texts, a.Position.Reasoning, a.Position.Position)
			}
		}
	}
	texts = append(texts, s.r.Synthesis.Summary)
	if council != nil {
		for _, v := range council.Votes {
			if v != nil {
				texts = append(texts, v.Rationale)
				texts = append(texts, v.Premises...)
			}
		}
	}
	ids := CitedIDs(texts...)
	sort.Strings(ids)
	return ids
}

func stances(answers []Answer) []Stance {
	var out []Stance
	for _, a := range answers {
		if a.Answered() {
			out = append(out, Stance{Participant: a.Participant, Position: *a.Position})
		}
	}
	return out
}

// openDivergences lists, in code, the points on which answering agents
// still disagree (recommendation and timing), then the divergences the
// last rebuttals named.
func openDivergences(answers []Answer, rounds []Round) []string {
	var out []string
	group := func(label string, key func(*Position) string) {
		by := map[string][]string{}
		for _, a := range answers {
			if a.Answered() {
				k := key(a.Position)
				by[k] = append(by[k], a.Participant)
			}
		}
		if len(by) < 2 {
			return
		}
		var parts []string
		for k, ids := range by {
			parts = append(parts, fmt.Sprintf("%s: %s", strings.Join(ids, ", "), k))
		}
		sort.Strings(parts)
		out = append(out, label+" — "+strings.Join(parts, " | "))
	}
	group("recomendación", func(p *Position) string { return p.Recommendation })
	group("plazo", func(p *Position) string { return p.Timing })
	for i := len(rounds) - 1; i >= 0; i-- {
		if rounds[i].Rebuttals != nil {
			ids := make([]string, 0, len(rounds[i].Rebuttals))
			for id := range rounds[i].Rebuttals {
				ids = append(ids, id)
			}
			sort.Strings(ids)
			for _, id := range ids {
				for _, d := range rounds[i].Rebuttals[id].Divergences {
					out = append(out, id+": "+d)
				}
			}
			break
		}
	}
	const maxDivergences = 12
	if len(out) > maxDivergences {
		out = out[:maxDivergences]
	}
	return out
}

// council runs the three members in parallel within the council timeout,
// each member's calls recorded in its own chain.
func (s *state) council(ctx context.Context, sin SynthesisInput, syn Synthesis, impasse bool) (*CouncilOutcome, error) {
	c := s.r.Question.Config
	members := s.e.Council
	if len(members) == 0 {
		members = DefaultCouncil
	}
	out := &CouncilOutcome{Members: members, Votes: make([]*Vote, len(members))}
	cctx, cancel := context.WithTimeout(ctx, Dur(c.Timeout.Council))
	defer cancel()
	var wg sync.WaitGroup
	tt := newTurns()
	usage := make([]veredicto.Usage, len(members))
	late := false
	for i, m := range members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mctx := agentScope(cctx, councilChain(m.ID), m.ID)
			v, u, err := s.e.Agents.Vote(mctx, VoteInput{Question: s.r.Question, Member: m, Decision: sin.Decision, Confidence: sin.Confidence,
				Synthesis: syn, Stances: sin.Stances, Divergences: sin.Divergences, Impasse: impasse, Chunks: sin.Chunks})
			usage[i] = u
			var event string
			tt.mu.Lock()
			switch {
			case err == nil:
				out.Votes[i] = &v
			case timedOut(mctx, err):
				late = true
				event = timeoutEvent(m.ID, faseCouncil)
			case isInvalid(err):
				tt.invalid[i] = true
				event = invalidEvent(m.ID, faseCouncil)
			default:
				tt.failed[i] = fmt.Errorf("debate %s council member %s: %w", s.r.SessionID, m.ID, err)
			}
			tt.mu.Unlock()
			if event != "" {
				tt.emit(i)(event)
			}
		}()
	}
	wg.Wait()
	if err := tt.firstFailure(); err != nil {
		return nil, err
	}
	for _, u := range usage {
		s.r.Usage.Add(u)
	}
	for _, i := range tt.flush(s) {
		out.Invalid = append(out.Invalid, members[i].ID)
	}
	out.TimedOut = late || cctx.Err() != nil && ctx.Err() == nil
	sort.Strings(out.Invalid)
	out.Decision, out.Result = CouncilResult(out.Votes, s.r.Question.Options)
	return out, nil
}

// human asks the person, or records the decision as pending; it returns
// what became of the question, for the audit record.
func (s *state) human(ctx context.Context, divergences []string) (*audit.HumanDecision, error) {
	r := s.r
	proposed := r.Proposed()
	req := HumanRequest{SessionID: r.SessionID, Question: r.Question.Question, Options: r.Question.Options, Proposed: proposed,
		Confidence: r.Confidence, Summary: r.Synthesis.Summary, Divergences: divergences, Reasons: strings.Split(r.FinalReason, "; ")}
	if s.e.Human == nil {
		r.Pending = true
		return &audit.HumanDecision{Status: statusPending}, nil
	}
	d, err := s.e.Human.Decide(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("debate %s human decision: %w", r.SessionID, err)
	}
	r.Human = &d
	status := statusRejected
	if d.Approved {
		status = statusApproved
		r.Final = proposed
		if d.Decision != "" && contains(r.Question.Options, d.Decision) {
			r.Final = d.Decision
		}
	}
	preview, _ := json.Marshal(req)
	return &audit.HumanDecision{Status: status, Comment: d.Comment, Preview: audit.Hash(preview)}, nil
}

// NewSessionID is a random UUID (version 4).
func NewSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// Proposed is the decision put to the person: the council's when it voted
// one in time, else the synthesis'; "" when nobody proposed any (no valid
// answer or vote).
func (r *Result) Proposed() string {
	if r.Council != nil && !r.Council.TimedOut && r.Council.Decision != "" {
		return r.Council.Decision
	}
	return r.Decision
}
