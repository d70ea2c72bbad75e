package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/debate"
	"github.com/veredicto/veredicto/internal/starter"
)

// DebateStarter starts and describes DebateStateMachine executions.
type DebateStarter interface {
	Start(ctx context.Context, name string, input []byte) (starter.Execution, error)
	Describe(ctx context.Context, name string) (starter.Status, error)
}

// ReportReader reads a debate's files from the reports store.
type ReportReader interface {
	Get(ctx context.Context, key string) ([]byte, error)
}

// Debates serves the debate routes (seed 003), for the caller's tenant:
//
//	POST /debates                   start a debate (idempotent for the same input; 409 for another input under the same id): {"debate_id", "question", "knowledge", "optional_council", "human_timeout_seconds"}
//	GET  /debates/{id}              the execution's status and, once finished, the seed's debate_log
//	GET  /debates/{id}/report       debate.md (text/markdown)
//
// Another tenant's debate answers 404 exactly like a missing one.
type Debates struct {
	Starter DebateStarter
	Logs    debate.LogStore
	Reports ReportReader
}

func (d *Debates) register(m *Mux) {
	m.Handle("POST /debates", RequireTenant(d.start))
	m.Handle("GET /debates/{id}", RequireTenant(d.get))
	m.Handle("GET /debates/{id}/report", RequireTenant(d.report))
}

// debateRequest is POST /debates's body: debate.StartInput without the
// tenant, which comes from the principal.
type debateRequest struct {
	DebateID            string          `json:"debate_id"`
	Question            json.RawMessage `json:"question"`
	Knowledge           []string        `json:"knowledge"`
	OptionalCouncil     *bool           `json:"optional_council"`
	HumanTimeoutSeconds int             `json:"human_timeout_seconds"`
}

// DebateView is GET /debates/{id}.
type DebateView struct {
	DebateID  string      `json:"debate_id"`
	Execution string      `json:"execution"`
	Status    string      `json:"status"`
	Error     string      `json:"error,omitempty"`
	Log       *debate.Log `json:"log,omitempty"`
}

func (d *Debates) start(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	var body debateRequest
	if err := DecodeJSON(w, r, &body, "{debate_id, question, knowledge, optional_council, human_timeout_seconds}", 0); err != nil {
		WriteError(w, r, err)
		return
	}
	in := debate.StartInput{Tenant: p.Tenant, DebateID: body.DebateID, Question: body.Question, Knowledge: body.Knowledge,
		OptionalCouncil: body.OptionalCouncil, HumanTimeoutSeconds: body.HumanTimeoutSeconds}
	// Bad input is refused here, before an execution exists.
	if err := debate.ValidateStart(in); err != nil {
		WriteError(w, r, err)
		return
	}
	input, err := json.Marshal(in)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	x, err := d.Starter.Start(r.Context(), starter.ExecutionName(p.Tenant, body.DebateID), input)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	if !x.Started {
		WriteError(w, r, &veredicto.ConflictError{What: "debate " + body.DebateID, Problem: "already exists with another input"})
		return
	}
	WriteJSON(w, http.StatusAccepted, DebateView{DebateID: body.DebateID, Execution: x.Name, Status: "RUNNING"})
}

func (d *Debates) get(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	ctx, id := r.Context(), r.PathValue("id")
	name := starter.ExecutionName(p.Tenant, id)
	st, err := d.Starter.Describe(ctx, name)
	var missing *veredicto.NotFoundError
	if errors.As(err, &missing) {
		// Named as the caller wrote it, never an execution or a key.
		WriteError(w, r, &veredicto.NotFoundError{What: "debate " + id})
		return
	}
	if err != nil {
		WriteError(w, r, err)
		return
	}
	v := DebateView{DebateID: id, Execution: name, Status: st.Status, Error: st.Error}
	log, err := debate.ReadLog(ctx, d.Logs, p.Tenant, id)
	switch {
	case err == nil:
		v.Log = &log
	case errors.As(err, &missing):
	default:
		WriteError(w, r, err)
		return
	}
	WriteJSON(w, http.StatusOK, v)
}

func (d *Debates) report(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	id := r.PathValue("id")
	if strings.ContainsAny(id, "/.") || !veredicto.ValidID(id) {
		WriteError(w, r, &veredicto.NotFoundError{What: "debate " + id})
		return
	}
	b, err := d.Reports.Get(r.Context(), debate.ReportPrefix(p.Tenant, id)+"debate.md")
	var missing *veredicto.NotFoundError
	if errors.As(err, &missing) {
		WriteError(w, r, Errorf(veredicto.NameNotFound, "debate %s has no report: it does not exist or has not finished", id))
		return
	}
	if err != nil {
		WriteError(w, r, err)
		return
	}
	writeBody(w, "text/markdown; charset=utf-8", b)
}
