// Package debateapi is the HTTP API's debates (seed 003): POST /debates,
// GET /debates/{id}[/report].
package debateapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/veredicto/veredicto/internal/httpapi"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/debate"
	"github.com/veredicto/veredicto/internal/starter"
)

// Starter starts and describes DebateStateMachine executions.
type Starter interface {
	Start(ctx context.Context, name string, input []byte) (starter.Execution, error)
	Describe(ctx context.Context, name string) (starter.Status, error)
}

// ReportReader reads a debate's files from the reports store.
type ReportReader interface {
	Get(ctx context.Context, key string) ([]byte, error)
}

// Routes serves the debate routes (seed 003), for the caller's tenant:
//
//	POST /debates                   start a debate (idempotent for the same input; 409 for another input under the same id): {"debate_id", "question", "knowledge", "optional_council", "human_timeout_seconds"}
//	GET  /debates/{id}              the execution's status and, once finished, the seed's debate_log
//	GET  /debates/{id}/report       debate.md (text/markdown)
//
// Another tenant's debate answers 404 exactly like a missing one.
type Routes struct {
	Starter Starter
	Logs    debate.LogStore
	Reports ReportReader
}

func (d *Routes) Register(m *httpapi.Mux) {
	m.Handle("POST /debates", httpapi.RequireTenant(d.start))
	m.Handle("GET /debates/{id}", httpapi.RequireTenant(d.get))
	m.Handle("GET /debates/{id}/report", httpapi.RequireTenant(d.report))
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

// View is GET /debates/{id}.
type View struct {
	DebateID  string      `json:"debate_id"`
	Execution string      `json:"execution"`
	Status    string      `json:"status"`
	Error     string      `json:"error,omitempty"`
	Log       *debate.Log `json:"log,omitempty"`
}

func (d *Routes) start(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	var body debateRequest
	if err := httpapi.DecodeJSON(w, r, &body, "{debate_id, question, knowledge, optional_council, human_timeout_seconds}", 0); err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	in := debate.StartInput{Tenant: p.Tenant, DebateID: body.DebateID, Question: body.Question, Knowledge: body.Knowledge,
		OptionalCouncil: body.OptionalCouncil, HumanTimeoutSeconds: body.HumanTimeoutSeconds}
	// Bad input is refused here, before an execution exists.
	if err := debate.ValidateStart(in); err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	input, err := json.Marshal(in)
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	x, err := d.Starter.Start(r.Context(), starter.ExecutionName(p.Tenant, body.DebateID), input)
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	if !x.Started {
		httpapi.WriteError(w, r, &veredicto.ConflictError{What: "debate " + body.DebateID, Problem: "already exists with another input"})
		return
	}
	httpapi.WriteJSON(w, http.StatusAccepted, View{DebateID: body.DebateID, Execution: x.Name, Status: "RUNNING"})
}

func (d *Routes) get(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	ctx, id := r.Context(), r.PathValue("id")
	name := starter.ExecutionName(p.Tenant, id)
	st, err := d.Starter.Describe(ctx, name)
	var missing *veredicto.NotFoundError
	if errors.As(err, &missing) {
		// Named as the caller wrote it, never an execution or a key.
		httpapi.WriteError(w, r, &veredicto.NotFoundError{What: "debate " + id})
		return
	}
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	v := View{DebateID: id, Execution: name, Status: st.Status, Error: st.Error}
	log, err := debate.ReadLog(ctx, d.Logs, p.Tenant, id)
	switch {
	case err == nil:
		v.Log = &log
	case errors.As(err, &missing):
	default:
		httpapi.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, v)
}

func (d *Routes) report(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	id := r.PathValue("id")
	if strings.ContainsAny(id, "/.") || !veredicto.ValidID(id) {
		httpapi.WriteError(w, r, &veredicto.NotFoundError{What: "debate " + id})
		return
	}
	b, err := d.Reports.Get(r.Context(), debate.ReportPrefix(p.Tenant, id)+"debate.md")
	var missing *veredicto.NotFoundError
	if errors.As(err, &missing) {
		httpapi.WriteError(w, r, httpapi.Errorf(veredicto.NameNotFound, "debate %s has no report: it does not exist or has not finished", id))
		return
	}
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	httpapi.WriteBody(w, "text/markdown; charset=utf-8", b)
}
