package debate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/veredicto/veredicto"
)

// The AWS shape of a debate: statemachines/debate.asl.json runs one Lambda
// per step (Prepare, Position, Checkpoint, Rebuttal, Synthesize, Vote,
// Council, Finish) and passes a Flow between them. Each step is the same
// rule code Engine.Run uses; the state machine holds the loop.

// StartInput is DebateStateMachine's execution input:
//
//	{
//	  "tenant": "acme",
//	  "debate_id": "d-c-005-oferta",
//	  "question": {"question": "¿Avanzamos con la oferta a c-005?",
//	               "options": ["avanzar", "no avanzar"],
//	               "participants": [{"id": "cfo", "brief": "…"}, …],
//	               "value_at_risk": {"amount": 80000, "currency": "BRL"},
//	               "config": {"timeout": {"per_agent": 30}}},
//	  "knowledge": ["searches/acme/demo-cfo-andina/", "reports/acme/demo-cfo-andina/c-005/"],
//	  "optional_council": true,
//	  "human_timeout_seconds": 604800
//	}
//
// question has exactly QUESTION.yaml's fields. knowledge lists blob
// prefixes <kind>/<tenant>/…; a prefix of another tenant answers like a
// missing one; the prefixes are read from the inputs bucket (locally, the
// serve data folder's inputs). optional_council defaults to true.
type StartInput struct {
	Tenant          string          `json:"tenant"`
	DebateID        string          `json:"debate_id"`
	Question        json.RawMessage `json:"question"`
	Knowledge       []string        `json:"knowledge,omitempty"`
	OptionalCouncil *bool           `json:"optional_council,omitempty"`
	// HumanTimeoutSeconds bounds the wait for the person's decision
	// (default 7 days); past it the decision is recorded as pending.
	HumanTimeoutSeconds int `json:"human_timeout_seconds,omitempty"`
}

// Flow is the state the debate's steps pass along: the result so far and
// the bookkeeping of the loop.
type Flow struct {
	Tenant          string        `json:"tenant"`
	Knowledge       []string      `json:"knowledge"`
	OptionalCouncil bool          `json:"optional_council"`
	Participants    []Participant `json:"participants"`
	// Library holds each retrieved chunk once; Chunks names, per
	// participant, the ids it was given and Extra those of the refinement
	// queries (the state stays small: no text is repeated). With a log
	// store the library lives there, LibraryRefs naming its batches, and
	// Library is read back only within a step (library.go).
	Library     map[string]Chunk    `json:"library,omitempty"`
	LibraryRefs []string            `json:"library_refs,omitempty"`
	Chunks      map[string][]string `json:"chunks"`
	Extra       []string            `json:"extra"`
	stored      map[string]bool     // the chunks read from LibraryRefs (see openLibrary)
	// KnowledgeChunks is the size of the knowledge base (for the checklist).
	KnowledgeChunks int    `json:"knowledge_chunks"`
	LoopCounter     int    `json:"loop_counter"`
	LastHash        string `json:"last_hash"`
	// Next is the state machine's branch: rebuttal, refine, synthesize,
	// council, human or finish. Index is the next agent of the sequential
	// round or the item of a Map.
	Next       string    `json:"next"`
	Index      int       `json:"index"`
	RoundStart time.Time `json:"round_start"`
	Current    []Answer  `json:"current"`
	// Rebuttals and Invalid collect the sequential round in progress.
	Rebuttals map[string]*Rebuttal `json:"rebuttals,omitempty"`
	Invalid   []string             `json:"invalid,omitempty"`
	// Roster and Council are the Map states' items: who speaks, and the
	// names of the seed's TIMEOUT line when a Task times out.
	Roster  []RosterItem `json:"roster"`
	Members []RosterItem `json:"members"`
	Preview *Preview     `json:"preview,omitempty"`
	// TaskTimeoutSeconds bounds each agent Task in the state machine (a
	// second line behind the step's own per-agent timeout);
	// CouncilTimeoutSeconds each council vote, behind timeout.council.
	TaskTimeoutSeconds    int    `json:"task_timeout_seconds"`
	CouncilTimeoutSeconds int    `json:"council_timeout_seconds"`
	HumanTimeoutSeconds   int    `json:"human_timeout_seconds"`
	Result                Result `json:"result"`
}

// Preview is what the person sees in the debate_decision confirmation.
type Preview struct {
	DebateID    string   `json:"debate_id"`
	Question    string   `json:"question"`
	Options     []string `json:"options"`
	Proposed    string   `json:"proposed_decision"`
	Confidence  float64  `json:"confidence"`
	Summary     string   `json:"summary"`
	Divergences []string `json:"divergences"`
	Reasons     []string `json:"reasons"`
}

// RosterItem is one Map item: the agent's index, id, CARGO and FASE.
type RosterItem struct {
	Index int    `json:"index"`
	ID    string `json:"id"`
	Cargo string `json:"cargo"`
	Fase  string `json:"fase"`
}

func roster(ps []Participant, fase string) []RosterItem {
	out := make([]RosterItem, len(ps))
	for i, p := range ps {
		out[i] = RosterItem{Index: i, ID: p.ID, Cargo: strings.ToUpper(p.ID), Fase: fase}
	}
	return out
}

// Turn is one Map item: the flow and the index of the agent or member.
type Turn struct {
	Flow  Flow `json:"flow"`
	Index int  `json:"index"`
}

// TurnOutput is an agent's answer in a Map.
type TurnOutput struct {
	Answer  Answer          `json:"answer"`
	Vote    *Vote           `json:"vote,omitempty"`
	Invalid bool            `json:"invalid"`
	Event   string          `json:"event,omitempty"`
	Usage   veredicto.Usage `json:"usage"`
}

// RoundInput closes a parallel round: the flow and the Map's outputs.
type RoundInput struct {
	Flow  Flow         `json:"flow"`
	Turns []TurnOutput `json:"turns"`
}

// FinishInput is the last step's input: the flow and, after the human
// step, the confirmation's answer or error.
type FinishInput struct {
	Flow   Flow            `json:"flow"`
	Answer json.RawMessage `json:"answer,omitempty"`
	Error  *struct {
		Error string `json:"Error"`
		Cause string `json:"Cause"`
	} `json:"error,omitempty"`
}

// FinishOutput names where the debate was recorded.
type FinishOutput struct {
	DebateID  string `json:"debate_id"`
	Target    string `json:"escalado_para"`
	Decision  string `json:"decision"`
	Pending   bool   `json:"pending"`
	LogKey    string `json:"log_key"`
	ReportKey string `json:"report_key"`
}

// BlobReader reads the knowledge base (the inputs bucket in AWS, a folder
// locally).
type BlobReader interface {
	List(ctx context.Context, prefix string) ([]string, error)
	Get(ctx context.Context, key string) ([]byte, error)
}

// BlobWriter stores the debate's files (the reports bucket in AWS).
type BlobWriter interface {
	Put(ctx context.Context, key string, data []byte, contentType string) error
}

// LogStore keeps each debate's log (DynamoDB in AWS).
type LogStore interface {
	PutIfAbsent(ctx context.Context, key string, value []byte) (bool, error)
	Get(ctx context.Context, key string) ([]byte, bool, error)
}

// Steps are the debate's Lambda handlers. Safe for concurrent use.
type Steps struct {
	Agents    Agents
	Knowledge BlobReader
	Reports   BlobWriter
	Logs      LogStore
	Now       func() time.Time
	Logger    *slog.Logger
}

func (s *Steps) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Steps) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

// Keys of a debate: every one scoped by tenant.
func LogKey(tenant, id string) string       { return "debate/" + tenant + "/" + id }
func ReportPrefix(tenant, id string) string { return "debates/" + tenant + "/" + id + "/" }

// question re-reads the flow's question (QUESTION.yaml's fields).
func (f *Flow) question() Question { return f.Result.Question }

// ValidateStart checks an execution input without reading anything: ids,
// the question (QUESTION.yaml's fields), the knowledge prefixes' tenant and
// the human timeout. Prepare runs the same checks.
func ValidateStart(in StartInput) error {
	if !validID(in.Tenant) {
		return &veredicto.InvalidInputError{File: "execution input", Field: "tenant", Problem: "is missing or invalid"}
	}
	if !validID(in.DebateID) {
		return &veredicto.InvalidInputError{File: "execution input", Field: "debate_id", Problem: "must be 1-40 letters, digits, '-' or '_'"}
	}
	if len(in.Question) == 0 {
		return &veredicto.InvalidInputError{File: "execution input", Field: "question", Problem: "is required"}
	}
	if _, err := ParseQuestion("question", in.Question); err != nil {
		return err
	}
	if in.HumanTimeoutSeconds < 0 || in.HumanTimeoutSeconds > 366*24*3600 {
		return &veredicto.InvalidInputError{File: "execution input", Field: "human_timeout_seconds", Problem: "must be between 1 second and 366 days"}
	}
	if len(in.Knowledge) > 20 {
		return &veredicto.InvalidInputError{File: "execution input", Field: "knowledge", Problem: "lists more than 20 prefixes"}
	}
	return nil
}

// Prepare validates the input, routes the debate and runs the first RAG
// queries (the question; then the question and each participant's brief).
func (s *Steps) Prepare(ctx context.Context, in StartInput) (Flow, error) {
	if err := ValidateStart(in); err != nil {
		return Flow{}, err
	}
	q, err := ParseQuestion("question", in.Question)
	if err != nil {
		return Flow{}, err
	}
	chunks, err := s.loadKnowledge(ctx, in.Tenant, in.Knowledge)
	if err != nil {
		return Flow{}, err
	}
	f := Flow{Tenant: in.Tenant, Knowledge: in.Knowledge, OptionalCouncil: in.OptionalCouncil == nil || *in.OptionalCouncil,
		Library: map[string]Chunk{}, Chunks: map[string][]string{}, Extra: []string{}, Current: []Answer{}, KnowledgeChunks: len(chunks)}
	r := &f.Result
	r.SessionID, r.Question, r.Start = in.DebateID, q, s.now()
	r.Mode, r.ModeReason = Route(q)
	f.Participants = q.Participants
	if r.Mode == ModeSimple {
		f.Participants = f.Participants[:1]
	}
	rag := NewRAG(retrieverOf(chunks), q.Config.RAG.MaxQueries, Dur(q.Config.RAG.Timeout))
	shared := f.query(ctx, rag, q.Question)
	for _, p := range f.Participants {
		f.Chunks[p.ID] = f.keep(mergeChunks(shared, f.query(ctx, rag, q.Question+" "+p.Brief)))
	}
	f.Result.RAG = rag.Stats()
	f.Roster = roster(f.Participants, fase(1))
	f.Members = roster(DefaultCouncil, "council")
	f.TaskTimeoutSeconds = int(q.Config.Timeout.PerAgent) + 30
	f.CouncilTimeoutSeconds = int(q.Config.Timeout.Council) + 30
	f.HumanTimeoutSeconds = 7 * 24 * 3600
	if in.HumanTimeoutSeconds > 0 {
		f.HumanTimeoutSeconds = in.HumanTimeoutSeconds
	}
	f.RoundStart = s.now()
	f.Next = "round1"
	if err := s.closeLibrary(ctx, &f); err != nil {
		return Flow{}, err
	}
	s.logger().InfoContext(ctx, "debate prepared", "tenant", in.Tenant, "debate_id", in.DebateID, "mode", r.Mode, "chunks", len(chunks))
	return f, nil
}

func retrieverOf(chunks []Chunk) Retriever {
	if len(chunks) == 0 {
		return nil
	}
	return IndexRetriever{NewIndex(chunks)}
}

func (f *Flow) query(ctx context.Context, rag *RAG, text string) []Chunk {
	chunks, err := rag.Query(ctx, text)
	switch {
	case errors.Is(err, ErrQueryBudget):
		f.Result.Events = append(f.Result.Events, fmt.Sprintf("RAG: consulta rechazada, límite de %d consultas por debate alcanzado", rag.maxQueries))
	case err != nil:
		f.Result.Events = append(f.Result.Events, "RAG: consulta abortada por timeout; se continúa sin ella")
	}
	return chunks
}

// loadKnowledge chunks the text blobs under prefixes, each inside the
// tenant's namespace (<kind>/<tenant>/…), within the knowledge bounds.
func (s *Steps) loadKnowledge(ctx context.Context, tenant string, prefixes []string) ([]Chunk, error) {
	var out []Chunk
	files, total := 0, 0
	for i, p := range prefixes {
		parts := strings.Split(p, "/")
		if len(parts) < 3 || parts[1] != tenant || strings.Contains(p, "..") {
			// Another tenant's prefix answers exactly like a missing one.
			return nil, &veredicto.NotFoundError{What: fmt.Sprintf("knowledge[%d] %s", i, p)}
		}
		if s.Knowledge == nil {
			return nil, errors.New("debate: no blob store for the knowledge base")
		}
		keys, err := s.Knowledge.List(ctx, p)
		if err != nil {
			return nil, &veredicto.TransientError{Op: "list knowledge " + p, Err: err}
		}
		if len(keys) == 0 {
			return nil, &veredicto.NotFoundError{What: fmt.Sprintf("knowledge[%d] %s", i, p)}
		}
		for _, k := range keys {
			if !knowledgeExts[strings.ToLower(path.Ext(k))] {
				continue
			}
			if files++; files > MaxKnowledgeFiles {
				return nil, &veredicto.InvalidInputError{File: p, Problem: fmt.Sprintf("holds more than %d documents", MaxKnowledgeFiles)}
			}
			b, err := s.Knowledge.Get(ctx, k)
			var bad *veredicto.InvalidInputError
			switch {
			case errors.As(err, &bad): // too large to read: no retry helps
				return nil, err
			case err != nil:
				return nil, &veredicto.TransientError{Op: "get knowledge " + k, Err: err}
			}
			text, err := knowledgeText(k, b)
			if err != nil {
				return nil, err
			}
			if total += len(b); total > MaxKnowledgeBytes {
				return nil, &veredicto.InvalidInputError{File: p, Problem: fmt.Sprintf("holds more than %d bytes of documents", MaxKnowledgeBytes)}
			}
			// Ids without <kind>/<tenant>/: stable and free of the tenant.
			out = append(out, ChunkText(strings.Join(strings.Split(k, "/")[2:], "/"), text)...)
		}
	}
	return out, nil
}

// agentCtx bounds one agent call by the per-agent timeout and what is left
// of the round's and of the debate's total time (the state machine's Map
// has no timeout of its own: the round's bound is enforced here). A Flow
// without a start time (a step run by hand on a sample event, which
// Prepare did not start) has only the per-agent bound.
func (s *Steps) agentCtx(ctx context.Context, f *Flow) (context.Context, context.CancelFunc) {
	c := f.Result.Question.Config
	now := s.now()
	d := Dur(c.Timeout.PerAgent)
	if left := f.Result.Start.Add(Dur(c.Timeout.Total)).Sub(now); !f.Result.Start.IsZero() && left < d {
		d = left
	}
	if left := f.RoundStart.Add(Dur(c.Timeout.PerRound)).Sub(now); !f.RoundStart.IsZero() && left < d {
		d = left
	}
	if d < 0 {
		d = 0
	}
	return context.WithTimeout(ctx, d)
}

func prevOf(f *Flow, id string) *Position {
	if n := len(f.Result.Rounds); n > 0 {
		for _, a := range f.Result.Rounds[n-1].Answers {
			if a.Participant == id {
				return a.Position
			}
		}
	}
	return nil
}

// turn classifies an agent call's outcome like Engine's rounds.
func turn(p Participant, round int, prev *Position, pos *Position, err error, actx context.Context, u veredicto.Usage) (TurnOutput, error) {
	out := TurnOutput{Usage: u}
	switch {
	case err == nil:
		out.Answer = Answer{Participant: p.ID, Position: pos}
	case actx.Err() != nil:
		out.Answer = Answer{Participant: p.ID, Position: prev, TimedOut: true}
		out.Event = fmt.Sprintf("TIMEOUT: %s em %s", strings.ToUpper(p.ID), fase(round))
	case isInvalid(err):
		out.Answer = Answer{Participant: p.ID, Position: prev}
		out.Invalid = true
		out.Event = fmt.Sprintf("INVALIDA: %s em %s (respuesta inválida tras una repregunta)", strings.ToUpper(p.ID), fase(round))
	default:
		return out, boundary(fmt.Errorf("participant %s round %d: %w", p.ID, round, err))
	}
	return out, nil
}

// boundary makes a retryable failure anywhere in the chain a
// *veredicto.TransientError, so the workflow's Retry matches it.
func boundary(err error) error {
	if err == nil {
		return nil
	}
	var te *veredicto.TransientError
	if errors.As(err, &te) {
		return &veredicto.TransientError{Op: "debate step", Err: err}
	}
	return err
}

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

func lastAnswers(f *Flow) []Answer {
	if n := len(f.Result.Rounds); n > 0 {
		return f.Result.Rounds[n-1].Answers
	}
	return nil
}

// citedIn returns the flow's chunks a position cites.
func citedIn(f *Flow, p *Position) []Chunk {
	if p == nil {
		return nil
	}
	var out []Chunk
	for _, id := range CitedIDs(append(append([]string{}, p.Premises...), p.Reasoning, p.Position)...) {
		if c, ok := f.Library[id]; ok {
			out = append(out, c)
		}
	}
	return out
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

// checkKeys refuses a Flow whose tenant or debate id could not have come
// from Prepare: they make the log store's keys (LogKey, RoundKey), where a
// "/" would reach another debate's or another tenant's.
func (f *Flow) checkKeys() error {
	switch {
	case !validID(f.Tenant):
		return &veredicto.InvalidInputError{File: "state input", Field: "tenant", Problem: "is missing or invalid"}
	case !validID(f.Result.SessionID):
		return &veredicto.InvalidInputError{File: "state input", Field: "result.SessionID", Problem: "is missing or invalid"}
	}
	return nil
}

// RoundKey is where the log store keeps an archived round of debate id.
func RoundKey(tenant, id string, number int) string {
	return LogKey(tenant, id) + "/rounds/" + strconv.Itoa(number)
}

// archive moves the answers of every round but the last out of the state:
// each such round is stored whole under RoundKey (written once, so a retried
// step stores the same round it carried in) and stays in the Flow without
// its answers, marked Archived. The steps before Finish read only the last
// round's answers (and the rebuttals, which stay); Finish restores the rest
// for the report. Without a log store the rounds stay in the state.
func (s *Steps) archive(ctx context.Context, f *Flow) error {
	rounds := f.Result.Rounds
	if s.Logs == nil || len(rounds) < 2 {
		return nil
	}
	if err := f.checkKeys(); err != nil {
		return err
	}
	for i := range len(rounds) - 1 {
		rd := &rounds[i]
		if rd.Archived {
			continue
		}
		b, err := json.Marshal(rd)
		if err != nil {
			return fmt.Errorf("archive round %d: %w", rd.Number, err)
		}
		if _, err := s.Logs.PutIfAbsent(ctx, RoundKey(f.Tenant, f.Result.SessionID, rd.Number), b); err != nil {
			return &veredicto.TransientError{Op: fmt.Sprintf("archive debate %s round %d", f.Result.SessionID, rd.Number), Err: err}
		}
		rd.Answers, rd.Archived = nil, true
	}
	return nil
}

// restore reads the archived rounds back (see archive).
func (s *Steps) restore(ctx context.Context, f *Flow) error {
	for i := range f.Result.Rounds {
		rd := &f.Result.Rounds[i]
		if !rd.Archived {
			continue
		}
		if s.Logs == nil {
			return fmt.Errorf("debate %s: round %d is archived and there is no log store to read it from", f.Result.SessionID, rd.Number)
		}
		b, ok, err := s.Logs.Get(ctx, RoundKey(f.Tenant, f.Result.SessionID, rd.Number))
		if err != nil {
			return &veredicto.TransientError{Op: fmt.Sprintf("read debate %s round %d", f.Result.SessionID, rd.Number), Err: err}
		}
		if !ok {
			return fmt.Errorf("debate %s: round %d is archived but missing from the log store", f.Result.SessionID, rd.Number)
		}
		var whole Round
		if err := json.Unmarshal(b, &whole); err != nil || whole.Number != rd.Number {
			return fmt.Errorf("debate %s: the archived round %d is damaged (%v)", f.Result.SessionID, rd.Number, err)
		}
		whole.Archived = false
		*rd = whole
	}
	return nil
}

// StateBudget bounds the debate's state (the Flow) at a round's close for
// another round to start: Step Functions carries at most 256 KiB between
// states, and a round adds up to one answer per participant (each bounded
// by AgentMaxTokens), then the synthesis and the council add theirs. A
// debate whose state reaches it goes to the synthesis with what it has,
// as when it reaches max_rounds, and its report says why.
const StateBudget = 128 << 10

func flowSize(f *Flow) int {
	b, err := json.Marshal(f)
	if err != nil { // never: a Flow is plain data
		return 0
	}
	return len(b)
}

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

// Vote is one council member's turn, bounded by the council timeout.
func (s *Steps) Vote(ctx context.Context, t Turn) (TurnOutput, error) {
	f := &t.Flow
	r := &f.Result
	if t.Index < 0 || t.Index >= len(DefaultCouncil) {
		return TurnOutput{}, &veredicto.InvalidInputError{File: "state input", Field: "index", Problem: "is not a council member"}
	}
	m := DefaultCouncil[t.Index]
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
	case cctx.Err() != nil:
		out.Event = fmt.Sprintf("TIMEOUT: %s em council", strings.ToUpper(m.ID))
	case isInvalid(err):
		out.Event = fmt.Sprintf("INVALIDA: %s em council (respuesta inválida tras una repregunta)", strings.ToUpper(m.ID))
	default:
		return out, boundary(fmt.Errorf("council member %s: %w", m.ID, err))
	}
	return out, nil
}

// Council closes the council: its result and the end of the escalation flow.
func (s *Steps) Council(_ context.Context, in RoundInput) (Flow, error) {
	f := in.Flow
	r := &f.Result
	out := &CouncilOutcome{Members: DefaultCouncil, Votes: make([]*Vote, len(DefaultCouncil))}
	for i, t := range in.Turns {
		if i >= len(out.Votes) {
			break
		}
		out.Votes[i] = t.Vote
		r.Usage.Add(t.Usage)
		if t.Event != "" {
			r.Events = append(r.Events, t.Event)
			out.TimedOut = out.TimedOut || strings.HasPrefix(t.Event, "TIMEOUT")
		}
	}
	out.Decision, out.Result = CouncilResult(out.Votes, r.Question.Options)
	r.Council = out
	target, why := AfterCouncil(out.Result, out.TimedOut, r.Confidence, r.Question.RiskLevel, r.Question.Config)
	r.FinalReason += "; " + why
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

// Finish records the person's answer (approved, rejected, or pending when
// the confirmation timed out) and writes the debate: debate_log.yaml,
// debate.md and debate.json under debates/<tenant>/<id>/, and the log in
// the log store under debate/<tenant>/<id> (written once: a retried Finish
// finds it and succeeds).
func (s *Steps) Finish(ctx context.Context, in FinishInput) (FinishOutput, error) {
	f := in.Flow
	r := &f.Result
	if err := f.checkKeys(); err != nil {
		return FinishOutput{}, err
	}
	if r.Target == TargetHuman && r.Final == "" {
		switch {
		case len(in.Answer) > 0:
			var a struct {
				Approved bool   `json:"approved"`
				Comment  string `json:"comment"`
				Decision string `json:"decision"`
			}
			if err := json.Unmarshal(in.Answer, &a); err != nil {
				return FinishOutput{}, &veredicto.InvalidInputError{File: "state input", Field: "answer", Problem: "is not a confirmation answer"}
			}
			r.Human = &HumanDecision{Approved: a.Approved, Decision: a.Decision, Comment: a.Comment}
			if a.Approved {
				r.Final = f.Preview.Proposed
				if a.Decision != "" && contains(r.Question.Options, a.Decision) {
					r.Final = a.Decision
				}
			}
		case in.Error != nil && in.Error.Error == veredicto.NameConfirmationRejected:
			// The Cause is the person's answer as JSON (comment, who, when).
			var a struct {
				Comment string `json:"comment"`
			}
			_ = json.Unmarshal([]byte(in.Error.Cause), &a)
			r.Human = &HumanDecision{Approved: false, Comment: a.Comment}
		default:
			r.Pending = true
		}
	}
	if err := s.restore(ctx, &f); err != nil {
		return FinishOutput{}, err
	}
	if err := s.openLibrary(ctx, &f); err != nil {
		return FinishOutput{}, err
	}
	r.End = s.now()
	r.Cited = citedAll(r)
	r.Evidence = map[string]Chunk{}
	for _, id := range r.Cited {
		if c, ok := f.Library[id]; ok {
			r.Evidence[id] = c
		}
	}
	r.Checklists = Checklists(r, knowledgeSize(&f))
	var logYAML bytes.Buffer
	enc := yaml.NewEncoder(&logYAML)
	enc.SetIndent(2)
	if err := enc.Encode(r.DebateLog()); err != nil {
		return FinishOutput{}, fmt.Errorf("encode debate log: %w", err)
	}
	enc.Close()
	full, err := json.Marshal(r)
	if err != nil {
		return FinishOutput{}, fmt.Errorf("encode debate: %w", err)
	}
	prefix := ReportPrefix(f.Tenant, r.SessionID)
	for _, w := range []struct {
		name, ct string
		data     []byte
	}{
		{"debate_log.yaml", "application/yaml", logYAML.Bytes()},
		{"debate.md", "text/markdown; charset=utf-8", []byte(r.Markdown())},
		{"debate.json", "application/json", full},
	} {
		if err := s.Reports.Put(ctx, prefix+w.name, w.data, w.ct); err != nil {
			return FinishOutput{}, &veredicto.TransientError{Op: "put " + prefix + w.name, Err: err}
		}
	}
	logJSON, err := json.Marshal(r.DebateLog())
	if err != nil {
		return FinishOutput{}, fmt.Errorf("encode debate log: %w", err)
	}
	if _, err := s.Logs.PutIfAbsent(ctx, LogKey(f.Tenant, r.SessionID), logJSON); err != nil {
		return FinishOutput{}, &veredicto.TransientError{Op: "put debate log " + r.SessionID, Err: err}
	}
	s.logger().InfoContext(ctx, "debate finished", "tenant", f.Tenant, "debate_id", r.SessionID, "target", r.Target, "pending", r.Pending)
	return FinishOutput{DebateID: r.SessionID, Target: r.Target, Decision: r.Final, Pending: r.Pending,
		LogKey: prefix + "debate_log.yaml", ReportKey: prefix + "debate.md"}, nil
}

func knowledgeSize(f *Flow) int { return f.KnowledgeChunks }

// keep adds chunks to the library and returns their ids.
func (f *Flow) keep(cs []Chunk) []string {
	if f.Library == nil {
		f.Library = map[string]Chunk{}
	}
	ids := make([]string, len(cs))
	for i, c := range cs {
		f.Library[c.ID] = c
		ids[i] = c.ID
	}
	return ids
}

// chunks returns the library's chunks of ids, in order.
func (f *Flow) chunks(ids []string) []Chunk {
	out := make([]Chunk, 0, len(ids))
	for _, id := range ids {
		if c, ok := f.Library[id]; ok {
			out = append(out, c)
		}
	}
	return out
}

func citedAll(r *Result) []string {
	s := &state{r: r}
	return s.cited(nil, r.Council)
}

// ReadLog returns a debate's log for tenant: another tenant's debate
// answers exactly like a missing one (NotFoundError).
func ReadLog(ctx context.Context, logs LogStore, tenant, id string) (Log, error) {
	if !validID(tenant) || !validID(id) {
		return Log{}, &veredicto.NotFoundError{What: "debate " + id}
	}
	b, ok, err := logs.Get(ctx, LogKey(tenant, id))
	if err != nil {
		return Log{}, &veredicto.TransientError{Op: "get debate log " + id, Err: err}
	}
	if !ok {
		return Log{}, &veredicto.NotFoundError{What: "debate " + id}
	}
	var l Log
	if err := json.Unmarshal(b, &l); err != nil {
		return Log{}, fmt.Errorf("decode debate log %s: %w", id, err)
	}
	return l, nil
}
