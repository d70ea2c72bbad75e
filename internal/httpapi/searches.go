package httpapi

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/intake"
)

// API serves the HTTP API (API Gateway HTTP API, payload format 2.0):
//
//	POST /searches                                start from an uploaded prefix
//	GET  /searches/{id}                           state, per-candidate stages and decisions, usage
//	GET  /searches/{id}/candidates/{cid}/report   report.json, or report.md with Accept: text/markdown
//
// The tenant is a claim of the caller's JWT (validated by the API's JWT
// authorizer); a caller only sees its tenant's searches.
type API struct {
	Service     *intake.Service
	TenantClaim string // e.g. "custom:tenant"
}

type apiError struct {
	Error string `json:"error"`
}

func respondJSON(status int, v any) events.APIGatewayV2HTTPResponse {
	b, _ := json.MarshalIndent(v, "", "  ")
	return events.APIGatewayV2HTTPResponse{StatusCode: status, Body: string(b) + "\n",
		Headers: map[string]string{"Content-Type": "application/json"}}
}

func fail(status int, msg string) events.APIGatewayV2HTTPResponse {
	return respondJSON(status, apiError{Error: msg})
}

// tenant reads the tenant claim. Without an authorizer context (a
// misconfigured route) nothing is served.
func (a *API) tenant(req events.APIGatewayV2HTTPRequest) (string, bool) {
	auth := req.RequestContext.Authorizer
	if auth == nil || auth.JWT == nil {
		return "", false
	}
	t := auth.JWT.Claims[a.TenantClaim]
	return t, t != ""
}

// Handle routes one request. Errors the caller can fix are 4xx with a
// message; anything else is a 500 without internals.
func (a *API) Handle(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	tenant, ok := a.tenant(req)
	if !ok {
		return fail(http.StatusUnauthorized, "missing tenant claim "+a.TenantClaim+" in the token"), nil
	}
	method := req.RequestContext.HTTP.Method
	parts := strings.Split(strings.Trim(req.RawPath, "/"), "/")
	var (
		resp events.APIGatewayV2HTTPResponse
		err  error
	)
	switch {
	case len(parts) == 1 && parts[0] == "searches" && method == http.MethodPost:
		resp, err = a.start(ctx, tenant, req)
	case len(parts) == 2 && parts[0] == "searches" && method == http.MethodGet:
		var st intake.SearchState
		if st, err = a.Service.State(ctx, tenant, parts[1]); err == nil {
			resp = respondJSON(http.StatusOK, st)
		}
	case len(parts) == 5 && parts[0] == "searches" && parts[2] == "candidates" && parts[4] == "report" && method == http.MethodGet:
		md := strings.Contains(header(req, "accept"), "text/markdown")
		var b []byte
		if b, err = a.Service.Report(ctx, tenant, parts[1], parts[3], md); err == nil {
			ct := "application/json"
			if md {
				ct = "text/markdown; charset=utf-8"
			}
			resp = events.APIGatewayV2HTTPResponse{StatusCode: http.StatusOK, Body: string(b), Headers: map[string]string{"Content-Type": ct}}
		}
	case len(parts) >= 1 && parts[0] == "searches":
		return fail(http.StatusMethodNotAllowed, method+" is not allowed on "+req.RawPath), nil
	default:
		return fail(http.StatusNotFound, "no route for "+method+" "+req.RawPath), nil
	}
	if err != nil {
		return a.errorResponse(ctx, err), nil
	}
	return resp, nil
}

func header(req events.APIGatewayV2HTTPRequest, name string) string {
	for k, v := range req.Headers {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

func (a *API) start(ctx context.Context, tenant string, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	var sr intake.StartRequest
	dec := json.NewDecoder(strings.NewReader(req.Body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sr); err != nil {
		return fail(http.StatusBadRequest, "body must be JSON {\"search_id\": …, \"concurrency\": …, \"thresholds\": {…}}: "+err.Error()), nil
	}
	st, err := a.Service.Start(ctx, tenant, "api", sr)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	status := http.StatusAccepted
	if !st.Started {
		status = http.StatusOK
	}
	return respondJSON(status, st), nil
}

func (a *API) errorResponse(ctx context.Context, err error) events.APIGatewayV2HTTPResponse {
	switch veredicto.ErrorName(err) {
	case veredicto.NameMissingInput:
		return fail(http.StatusUnprocessableEntity, err.Error())
	case veredicto.NameInvalidInput:
		return fail(http.StatusBadRequest, err.Error())
	case veredicto.NameNotFound:
		return fail(http.StatusNotFound, err.Error())
	case veredicto.NameConflict:
		return fail(http.StatusConflict, err.Error())
	}
	slog.ErrorContext(ctx, "api request failed", "error", err)
	return fail(http.StatusInternalServerError, "internal error")
}
