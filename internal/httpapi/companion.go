package httpapi

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/veredicto/veredicto/internal/companion"
	"github.com/veredicto/veredicto/internal/intake"
)

// The career companion's routes (seed 001):
//
//	POST /companion/applications                 store the JD and profile, start CareerCompanionStateMachine
//	GET  /companion/applications/{id}            the context (AgentContext), or report.md with Accept: text/markdown
//	POST /companion/applications/{id}/answer     phase 4 (platform preview until confirm is true)
//	POST /companion/applications/{id}/verify     phase 5
//	POST /companion/applications/{id}/audit      phase 6
//	POST /companion/applications/{id}/retro      phase 7 (answers to the 4 questions)
//	POST /companion/applications/{id}/refine     refinement (instruction)
//
// The anti-impostor pause is answered through /api/confirmations.
func (rt *Router) companion(ctx context.Context, req Request, parts []string) Response {
	if req.Tenant == "" {
		return errorResponse(http.StatusUnauthorized, "missing tenant claim "+rt.tenantClaim()+" in the token")
	}
	if !intake.ValidTenant(req.Tenant) {
		return errorResponse(http.StatusForbidden, "the token's tenant is not a valid tenant id")
	}
	if len(parts) < 2 || parts[1] != "applications" || len(parts) > 4 {
		return errorResponse(http.StatusNotFound, "no route for "+req.Method+" "+req.Path)
	}
	switch {
	case len(parts) == 2 && req.Method == http.MethodPost:
		var body companion.CreateRequest
		if err := decodeBody(req.Body, &body, `{"jd": "...", "profile_yaml": "...", "mode": "screening|full|onboarding", "company": "", "platform": "", "refresh": false}`); err != nil {
			return errorResponse(http.StatusBadRequest, err.Error())
		}
		out, err := rt.Companion.Create(ctx, req.Tenant, body)
		if err != nil {
			return rt.failure(ctx, err)
		}
		return jsonResponse(http.StatusAccepted, out)
	case len(parts) == 3 && req.Method == http.MethodGet:
		c, err := rt.Companion.Get(ctx, req.Tenant, parts[2])
		if err != nil {
			return rt.failure(ctx, err)
		}
		if strings.Contains(req.Header.Get("Accept"), "text/markdown") {
			return Response{Status: http.StatusOK, Header: http.Header{"Content-Type": {"text/markdown; charset=utf-8"}}, Body: []byte(companion.Report(c))}
		}
		return jsonResponse(http.StatusOK, c)
	case len(parts) == 4 && req.Method == http.MethodPost && slices.Contains(companion.FollowUpPhases, parts[3]):
		var body companion.FollowUpRequest
		if len(strings.TrimSpace(string(req.Body))) > 0 {
			if err := decodeBody(req.Body, &body, `{"platform": "", "questions": [], "confirm": false, "answers": [], "instruction": ""}`); err != nil {
				return errorResponse(http.StatusBadRequest, err.Error())
			}
		}
		c, preview, err := rt.Companion.RunFollowUp(ctx, req.Tenant, parts[2], parts[3], body)
		if err != nil {
			return rt.failure(ctx, err)
		}
		if preview != nil {
			return jsonResponse(http.StatusAccepted, preview)
		}
		return jsonResponse(http.StatusOK, c)
	case len(parts) == 2, len(parts) == 4 && slices.Contains(companion.FollowUpPhases, parts[3]):
		return notAllowed(req, http.MethodPost)
	case len(parts) == 3:
		return notAllowed(req, http.MethodGet)
	}
	return errorResponse(http.StatusNotFound, "no route for "+req.Method+" "+req.Path)
}
