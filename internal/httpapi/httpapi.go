// Package httpapi renders the project's HTTP API: the executive-search
// routes of intake and the interview-flags route, with one set of response
// helpers (JSON bodies, the status of each error kind, the tenant).
//
// The routing is a plain function of the request — Router.Serve takes
// method, path, headers, body and the caller's tenant — so it runs behind
// any front: an API Gateway HTTP API (Router.APIGateway, payload 2.0, the
// tenant from a JWT claim its authorizer verified) or a local net/http
// server (Router.Handler, the tenant from whatever authenticated the
// request).
//
//	GET  /searches                                the tenant's searches
//	POST /searches                                start an uploaded search
//	GET  /searches/{id}                           state, per-candidate stages and decisions, usage
//	GET  /searches/{id}/candidates/{cid}/report   report.json, or report.md with Accept: text/markdown
//	POST /flags                                   interview flags for the posted documents
//	GET  /runs, /searches/{id}/summary, /searches/{id}/sources/…   what the web console reads (console.go)
//	/companion/applications…                      the career companion (companion.go)
package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/companion"
	"github.com/veredicto/veredicto/internal/flags"
	"github.com/veredicto/veredicto/internal/intake"
)

// Request is one HTTP request as the router sees it.
type Request struct {
	Method string
	// Path is the request path as sent (still percent-encoded), without
	// the query.
	Path   string
	Header http.Header
	Body   []byte
	// Tenant is the authenticated caller's tenant; "" when the front
	// found none (the search routes then answer 401).
	Tenant string
}

// Response is what the router answers.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Router serves the routes whose services are set; safe for concurrent use.
type Router struct {
	// Searches serves /searches; nil leaves those routes unmounted.
	Searches *intake.Service
	// Executions lists other workflows' runs on GET /runs, besides the
	// searches; nil lists the searches only.
	Executions RunLister
	// Judge serves POST /flags; nil leaves it unmounted.
	Judge flags.ContradictionJudge
	// Companion serves /companion/applications…; nil leaves them unmounted.
	Companion *companion.API
	// Now stamps flags documents (time.Now when nil).
	Now    func() time.Time
	Logger *slog.Logger
	// TenantClaim names the claim the tenant comes from, for the 401
	// message ("custom:tenant" when empty).
	TenantClaim string
}

func (rt *Router) logger() *slog.Logger {
	if rt.Logger != nil {
		return rt.Logger
	}
	return slog.Default()
}

func (rt *Router) tenantClaim() string {
	if rt.TenantClaim != "" {
		return rt.TenantClaim
	}
	return DefaultTenantClaim
}

// DefaultTenantClaim is the JWT claim that carries the tenant.
const DefaultTenantClaim = "custom:tenant"

// Serve routes one request. Errors the caller can fix are 4xx with a
// message; anything else is a 500 without internals.
func (rt *Router) Serve(ctx context.Context, req Request) Response {
	parts, ok := pathParts(req.Path)
	if !ok {
		return errorResponse(http.StatusBadRequest, "the path is not validly percent-encoded")
	}
	if parts[0] == "flags" && len(parts) == 1 && rt.Judge != nil {
		return rt.flags(ctx, req)
	}
	if parts[0] == "companion" && rt.Companion != nil {
		return rt.companion(ctx, req, parts)
	}
	listsRuns := parts[0] == "runs" && len(parts) == 1 && (rt.Searches != nil || rt.Executions != nil)
	if !listsRuns && (parts[0] != "searches" || rt.Searches == nil) {
		return errorResponse(http.StatusNotFound, "no route for "+req.Method+" "+req.Path)
	}
	if req.Tenant == "" {
		return errorResponse(http.StatusUnauthorized, "missing tenant claim "+rt.tenantClaim()+" in the token")
	}
	if !intake.ValidTenant(req.Tenant) {
		return errorResponse(http.StatusForbidden, "the token's tenant is not a valid tenant id")
	}
	if listsRuns {
		return rt.runs(ctx, req)
	}
	return rt.searches(ctx, req, parts)
}

// pathParts splits an escaped request path at its slashes and unescapes
// each part, so an id written with accents (búsqueda-ñ, sent as
// b%C3%BAsqueda-%C3%B1) is read as itself and an escaped slash (%2F) stays
// inside its part. ok is false for invalid percent-encoding.
func pathParts(path string) (parts []string, ok bool) {
	parts = strings.Split(strings.Trim(path, "/"), "/")
	for i, p := range parts {
		s, err := url.PathUnescape(p)
		if err != nil {
			return nil, false
		}
		parts[i] = s
	}
	return parts, true
}

// notAllowed answers a route asked with another method than allow: 405
// with the Allow header.
func notAllowed(req Request, allow string) Response {
	r := errorResponse(http.StatusMethodNotAllowed, req.Method+" is not allowed on "+req.Path+"; use "+allow)
	r.Header.Set("Allow", allow)
	return r
}

// jsonResponse renders v as indented JSON.
func jsonResponse(status int, v any) Response {
	b, _ := json.MarshalIndent(v, "", "  ")
	return Response{Status: status, Body: append(b, '\n'), Header: http.Header{"Content-Type": {"application/json"}}}
}

// errorBody is every error's body; Problems lists each problem of a
// request that has several.
type errorBody struct {
	Error    string   `json:"error"`
	Problems []string `json:"problems,omitempty"`
}

func errorResponse(status int, msg string) Response {
	return jsonResponse(status, errorBody{Error: msg})
}

// errorKind is the vocabulary name of the first error in err's chain that
// has one ("" for none).
func errorKind(err error) string {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if n := veredicto.ErrorName(e); slices.Contains(veredicto.Names(), n) {
			return n
		}
	}
	return ""
}

// statusOf maps an error kind to its HTTP status; 0 for an error the
// caller cannot fix.
func statusOf(err error) int {
	switch errorKind(err) {
	case veredicto.NameInvalidInput:
		return http.StatusBadRequest
	case veredicto.NameMissingInput:
		return http.StatusUnprocessableEntity
	case veredicto.NameNotFound:
		return http.StatusNotFound
	case veredicto.NameConflict:
		return http.StatusConflict
	}
	return 0
}

// failure renders a service error: its kind's status and message, a 503
// for an outage worth retrying, or a logged 500; neither of the last two
// says anything of the internals.
func (rt *Router) failure(ctx context.Context, err error) Response {
	status := statusOf(err)
	if errorKind(err) == veredicto.NameTransient {
		rt.logger().WarnContext(ctx, "api request failed, retryable", "error", err)
		return errorResponse(http.StatusServiceUnavailable, "temporarily unavailable; retry later")
	}
	if status == 0 {
		rt.logger().ErrorContext(ctx, "api request failed", "error", err)
		return errorResponse(http.StatusInternalServerError, "internal error")
	}
	body := errorBody{Error: err.Error()}
	var rej *intake.RequestError
	if errors.As(err, &rej) {
		body.Problems = rej.Problems
	}
	return jsonResponse(status, body)
}

// decodeBody decodes a JSON body strictly into v. Its error is a sentence
// for the caller: what is wrong and where, never a Go type.
func decodeBody(body []byte, v any, shape string) error {
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && dec.More() {
		err = errors.New("trailing data after the JSON value")
	}
	if err == nil {
		return nil
	}
	var (
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
		why string
	)
	switch {
	case errors.As(err, &syn):
		why = fmt.Sprintf("not valid JSON (at byte %d)", syn.Offset)
	case errors.As(err, &typ) && typ.Field != "":
		why = fmt.Sprintf("%s must be %s, not a JSON %s", typ.Field, kindName(typ.Type.Kind().String()), typ.Value)
	case errors.As(err, &typ):
		why = fmt.Sprintf("must be a JSON object, not a JSON %s", typ.Value)
	default:
		why = strings.TrimPrefix(err.Error(), "json: ")
	}
	return fmt.Errorf("body must be JSON %s: %s", shape, why)
}

func kindName(k string) string {
	switch {
	case strings.HasPrefix(k, "int"), strings.HasPrefix(k, "uint"):
		return "a whole number"
	case strings.HasPrefix(k, "float"):
		return "a number"
	case k == "string":
		return "a string"
	case k == "map", k == "struct":
		return "an object"
	case k == "slice", k == "array":
		return "a list"
	case k == "bool":
		return "true or false"
	}
	return "another type"
}
