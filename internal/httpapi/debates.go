package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/debate"
	"github.com/veredicto/veredicto/internal/intake"
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
	Starter     DebateStarter
	Logs        debate.LogStore
	Reports     ReportReader
	TenantClaim string
}

// debateRequest is POST /debates's body: debate.StartInput without the
// tenant, which comes from the token.
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

// Serve routes one request.
func (d *Debates) Serve(ctx context.Context, req Request) Response {
	parts, ok := pathParts(req.Path)
	if !ok {
		return errorResponse(http.StatusBadRequest, "the path is not validly percent-encoded")
	}
	if parts[0] != "debates" {
		return errorResponse(http.StatusNotFound, "no route for "+req.Method+" "+req.Path)
	}
	if req.Tenant == "" {
		claim := d.TenantClaim
		if claim == "" {
			claim = DefaultTenantClaim
		}
		return errorResponse(http.StatusUnauthorized, "missing tenant claim "+claim+" in the token")
	}
	if !intake.ValidTenant(req.Tenant) {
		return errorResponse(http.StatusForbidden, "the token's tenant is not a valid tenant id")
	}
	switch {
	case len(parts) == 1 && req.Method == http.MethodPost:
		return d.start(ctx, req)
	case len(parts) == 2 && req.Method == http.MethodGet:
		return d.get(ctx, req.Tenant, parts[1])
	case len(parts) == 3 && parts[2] == "report" && req.Method == http.MethodGet:
		return d.report(ctx, req.Tenant, parts[1])
	case len(parts) == 1:
		return notAllowed(req, http.MethodPost)
	case len(parts) == 2, len(parts) == 3 && parts[2] == "report":
		return notAllowed(req, http.MethodGet)
	}
	return errorResponse(http.StatusNotFound, "no route for "+req.Method+" "+req.Path)
}

func (d *Debates) start(ctx context.Context, req Request) Response {
	var body debateRequest
	if err := decodeBody(req.Body, &body, "{debate_id, question, knowledge, optional_council, human_timeout_seconds}"); err != nil {
		return errorResponse(http.StatusBadRequest, err.Error())
	}
	in := debate.StartInput{Tenant: req.Tenant, DebateID: body.DebateID, Question: body.Question, Knowledge: body.Knowledge,
		OptionalCouncil: body.OptionalCouncil, HumanTimeoutSeconds: body.HumanTimeoutSeconds}
	// Bad input is refused here, before an execution exists.
	if err := debate.ValidateStart(in); err != nil {
		return d.failure(ctx, err)
	}
	input, err := json.Marshal(in)
	if err != nil {
		return d.failure(ctx, err)
	}
	x, err := d.Starter.Start(ctx, starter.ExecutionName(req.Tenant, body.DebateID), input)
	if err != nil {
		return d.failure(ctx, err)
	}
	if !x.Started {
		return errorResponse(http.StatusConflict, "debate "+body.DebateID+" already exists with another input")
	}
	return jsonResponse(http.StatusAccepted, DebateView{DebateID: body.DebateID, Execution: x.Name, Status: "RUNNING"})
}

// notFound is the answer for a debate id nobody (or another tenant) has,
// naming the id as the caller wrote it, never an execution or a key.
func notFound(id string) Response {
	return errorResponse(http.StatusNotFound, "debate "+id+" not found")
}

func (d *Debates) get(ctx context.Context, tenant, id string) Response {
	name := starter.ExecutionName(tenant, id)
	st, err := d.Starter.Describe(ctx, name)
	var missing *veredicto.NotFoundError
	if errors.As(err, &missing) {
		return notFound(id)
	}
	if err != nil {
		return d.failure(ctx, err)
	}
	v := DebateView{DebateID: id, Execution: name, Status: st.Status, Error: st.Error}
	log, err := debate.ReadLog(ctx, d.Logs, tenant, id)
	var nf *veredicto.NotFoundError
	switch {
	case err == nil:
		v.Log = &log
	case errors.As(err, &nf):
	default:
		return d.failure(ctx, err)
	}
	return jsonResponse(http.StatusOK, v)
}

func (d *Debates) report(ctx context.Context, tenant, id string) Response {
	if !intake.ValidTenant(tenant) || strings.ContainsAny(id, "/.") || id == "" {
		return notFound(id)
	}
	b, err := d.Reports.Get(ctx, debate.ReportPrefix(tenant, id)+"debate.md")
	var missing *veredicto.NotFoundError
	if errors.As(err, &missing) {
		return errorResponse(http.StatusNotFound, "debate "+id+" has no report: it does not exist or has not finished")
	}
	if err != nil {
		return d.failure(ctx, err)
	}
	return Response{Status: http.StatusOK, Body: b, Header: http.Header{"Content-Type": {"text/markdown; charset=utf-8"}}}
}

func (d *Debates) failure(ctx context.Context, err error) Response {
	return (&Router{}).failure(ctx, err)
}

// Handler serves the routes on net/http; tenant names the authenticated
// caller's tenant.
func (d *Debates) Handler(tenant func(*http.Request) string) http.Handler {
	return netHTTP(d.Serve, tenant)
}

// HandleAPIGateway serves an API Gateway HTTP API (payload 2.0) request,
// the tenant from the JWT claim its authorizer verified.
func (d *Debates) HandleAPIGateway(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	claim := d.TenantClaim
	if claim == "" {
		claim = DefaultTenantClaim
	}
	return serveAPIGateway(ctx, ev, claim, d.Serve), nil
}
