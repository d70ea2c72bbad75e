package debate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/audit"
)

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
// prefixes <kind>/<tenant>/…; one outside the tenant's is refused at once
// (ValidateKnowledge); the prefixes are read from the inputs bucket (locally, the
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
	return ValidateKnowledge(in.Tenant, in.Knowledge)
}

// PrepareTask is the first state's input: the execution input and the
// execution's name ("execution.$": "$$.Execution.Name"), which the flow
// carries to every step: the audit record is kept per execution.
type PrepareTask struct {
	Input     StartInput `json:"input"`
	Execution string     `json:"execution"`
}

// PrepareExecution is the first task (Prepare with the execution's name):
// with an Auditor it opens the execution's audit record with the input and
// every knowledge document, and records the route.
func (s *Steps) PrepareExecution(ctx context.Context, t PrepareTask) (Flow, error) {
	if s.Audit != nil {
		if err := validExecution("execution", t.Execution); err != nil {
			return Flow{}, err
		}
	}
	return s.prepare(ctx, t.Input, t.Execution)
}

// Prepare validates the input, reads the knowledge base (the prefixes
// must exist; its size goes to the checklist) and routes the debate. It
// queries nothing: agents retrieve during the rounds, through the tool each
// turn offers, within the debate's budget.
func (s *Steps) Prepare(ctx context.Context, in StartInput) (Flow, error) {
	return s.prepare(ctx, in, "")
}

func (s *Steps) prepare(ctx context.Context, in StartInput, execution string) (Flow, error) {
	if err := ValidateStart(in); err != nil {
		return Flow{}, err
	}
	q, err := ParseQuestion("question", in.Question)
	if err != nil {
		return Flow{}, err
	}
	docs, err := s.loadDocuments(ctx, in.Tenant, in.Knowledge)
	if err != nil {
		return Flow{}, err
	}
	chunks := Chunks(docs)
	f := Flow{Tenant: in.Tenant, Execution: execution, Knowledge: in.Knowledge, OptionalCouncil: in.OptionalCouncil == nil || *in.OptionalCouncil,
		Library: map[string]Chunk{}, Chunks: map[string][]string{}, Current: []Answer{}, KnowledgeChunks: len(chunks)}
	if ctx, err = s.scope(ctx, &f, audit.MainChain, ""); err != nil {
		return Flow{}, err
	}
	if err := recordMachineStart(ctx, in, docs); err != nil {
		return Flow{}, err
	}
	start, err := s.clock(ctx, "debate start")
	if err != nil {
		return Flow{}, err
	}
	r := &f.Result
	r.SessionID, r.Question, r.Start = in.DebateID, q, start
	r.Mode, r.ModeReason = Route(q)
	f.Participants = q.Participants
	if r.Mode == ModeSimple {
		f.Participants = f.Participants[:1]
	}
	f.Roster = roster(f.Participants, fase(1))
	f.Members = roster(DefaultCouncil, faseCouncil)
	f.TaskTimeoutSeconds = int(q.Config.Timeout.PerAgent) + 30
	f.CouncilTimeoutSeconds = int(q.Config.Timeout.Council) + 30
	f.HumanTimeoutSeconds = 7 * 24 * 3600
	if in.HumanTimeoutSeconds > 0 {
		f.HumanTimeoutSeconds = in.HumanTimeoutSeconds
	}
	f.RoundStart = start
	f.Next = "round1"
	if err := recordRoute(ctx, r); err != nil {
		return Flow{}, err
	}
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

// stepTool is a step's retrieval tool, or nil when the budget leaves the
// turn none. Its one query reads the knowledge base then (a turn that does
// not query reads nothing) and counts in *st. A read that may succeed if
// retried is the step's failure (*failed, a TransientError the workflow
// retries); a knowledge base gone since Prepare fails the query only, like
// a timed-out one: the agent goes on without it ("continuar sem"), named
// in the notes.
func (s *Steps) stepTool(f *Flow, offered bool, st *RAGStats, notes *[]string, failed *error) *turnTool {
	if !offered {
		return nil
	}
	c := f.Result.Question.Config
	return newTool(func(ctx context.Context, text string) ([]Chunk, error) {
		chunks, err := s.loadKnowledge(ctx, f.Tenant, f.Knowledge)
		var te *veredicto.TransientError
		switch {
		case errors.As(err, &te):
			*failed = err
			return nil, err
		case err != nil:
			*st = RAGStats{Total: 1}
			*notes = append(*notes, "RAG: la base de conocimiento no se pudo leer; se continúa sin la consulta")
			return nil, err
		}
		rag := NewRAG(retrieverOf(chunks), 1, Dur(c.RAG.Timeout))
		got, err := rag.Query(ctx, text)
		*st = rag.Stats()
		if note := ragNote(err, c.RAG.MaxQueries); note != "" {
			*notes = append(*notes, note)
		}
		return got, err
	})
}

func (a *RAGStats) add(b RAGStats) {
	a.Total += b.Total
	a.Succeeded += b.Succeeded
	a.TimedOut += b.TimedOut
	a.Refused += b.Refused
}

// loadKnowledge chunks the text blobs under prefixes, each inside the
// tenant's namespace (<kind>/<tenant>/…), within the knowledge bounds
// (readKnowledge). A chunk's source is its key without <kind>/<tenant>/:
// stable, and free of the tenant.
func (s *Steps) loadKnowledge(ctx context.Context, tenant string, prefixes []string) ([]Chunk, error) {
	docs, err := s.loadDocuments(ctx, tenant, prefixes)
	return Chunks(docs), err
}

// loadDocuments reads the knowledge documents of loadKnowledge, not
// chunked.
func (s *Steps) loadDocuments(ctx context.Context, tenant string, prefixes []string) ([]Document, error) {
	var out []Document
	var b knowledgeBudget
	same := func(key string) string { return key }
	source := func(key string) string { return strings.Join(strings.Split(key, "/")[2:], "/") }
	for i, p := range prefixes {
		parts := strings.Split(p, "/")
		if len(parts) < 3 || parts[1] != tenant || strings.Contains(p, "..") {
			// Another tenant's prefix answers exactly like a missing one.
			return nil, &veredicto.NotFoundError{What: fmt.Sprintf("knowledge[%d] %s", i, p)}
		}
		if s.Knowledge == nil {
			return nil, errors.New("debate: no blob store for the knowledge base")
		}
		docs, err := readKnowledge(ctx, s.Knowledge, p, p, nil, same, source, &b)
		if errors.As(err, new(*veredicto.NotFoundError)) {
			return nil, &veredicto.NotFoundError{What: fmt.Sprintf("knowledge[%d] %s", i, p)}
		}
		if err != nil {
			return nil, err
		}
		out = append(out, docs...)
	}
	return out, nil
}
