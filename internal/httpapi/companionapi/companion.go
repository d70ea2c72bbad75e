// Package companionapi is the HTTP API's career companion (seed 001):
// /companion/applications….
package companionapi

import (
	"net/http"

	"github.com/veredicto/veredicto/internal/httpapi"

	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/companion"
)

// Routes serves the career companion (seed 001):
//
//	POST /companion/applications                 store the JD and profile, start CareerCompanionStateMachine
//	GET  /companion/applications/{id}            the context (AgentContext), or report.md with Accept: text/markdown
//	POST /companion/applications/{id}/<phase>    answer (phase 4; a platform preview until confirm is true),
//	                                             verify (5), audit (6), retro (7), refine
//
// The anti-impostor pause is answered through /api/confirmations.
type Routes struct{ API *companion.API }

func (c Routes) Register(m *httpapi.Mux) {
	m.Handle("POST /companion/applications", httpapi.RequireTenant(c.create))
	m.Handle("GET /companion/applications/{id}", httpapi.RequireTenant(c.get))
	for _, phase := range companion.FollowUpPhases {
		m.Handle("POST /companion/applications/{id}/"+phase, httpapi.RequireTenant(c.followUp(phase)))
	}
}

func (c Routes) create(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	var body companion.CreateRequest
	if err := httpapi.DecodeJSON(w, r, &body, `{"jd": "...", "profile_yaml": "...", "mode": "screening|full|onboarding", "company": "", "platform": "", "refresh": false}`, 0); err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	out, err := c.API.Create(r.Context(), p.Tenant, body)
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusAccepted, out)
}

func (c Routes) get(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	ctx, err := c.API.Get(r.Context(), p.Tenant, r.PathValue("id"))
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	if _, md := httpapi.Wants(r); md {
		httpapi.WriteBody(w, "text/markdown; charset=utf-8", []byte(companion.Report(ctx)))
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, ctx)
}

func (c Routes) followUp(phase string) httpapi.TenantHandler {
	return func(w http.ResponseWriter, r *http.Request, p auth.Principal) {
		c.runFollowUp(w, r, p, phase)
	}
}

func (c Routes) runFollowUp(w http.ResponseWriter, r *http.Request, p auth.Principal, phase string) {
	var body companion.FollowUpRequest
	if err := httpapi.DecodeOptionalJSON(w, r, &body, `{"platform": "", "questions": [], "confirm": false, "answers": [], "instruction": ""}`, 0); err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	ctx, preview, err := c.API.RunFollowUp(r.Context(), p.Tenant, r.PathValue("id"), phase, body)
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	if preview != nil {
		httpapi.WriteJSON(w, http.StatusAccepted, preview)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, ctx)
}
