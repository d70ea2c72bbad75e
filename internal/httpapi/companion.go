package httpapi

import (
	"net/http"

	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/companion"
)

// companionRoutes serves the career companion (seed 001):
//
//	POST /companion/applications                 store the JD and profile, start CareerCompanionStateMachine
//	GET  /companion/applications/{id}            the context (AgentContext), or report.md with Accept: text/markdown
//	POST /companion/applications/{id}/<phase>    answer (phase 4; a platform preview until confirm is true),
//	                                             verify (5), audit (6), retro (7), refine
//
// The anti-impostor pause is answered through /api/confirmations.
type companionRoutes struct{ api *companion.API }

func (c companionRoutes) register(m *Mux) {
	m.Handle("POST /companion/applications", RequireTenant(c.create))
	m.Handle("GET /companion/applications/{id}", RequireTenant(c.get))
	for _, phase := range companion.FollowUpPhases {
		m.Handle("POST /companion/applications/{id}/"+phase, RequireTenant(c.followUp(phase)))
	}
}

func (c companionRoutes) create(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	var body companion.CreateRequest
	if err := DecodeJSON(w, r, &body, `{"jd": "...", "profile_yaml": "...", "mode": "screening|full|onboarding", "company": "", "platform": "", "refresh": false}`, 0); err != nil {
		WriteError(w, r, err)
		return
	}
	out, err := c.api.Create(r.Context(), p.Tenant, body)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	WriteJSON(w, http.StatusAccepted, out)
}

func (c companionRoutes) get(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	ctx, err := c.api.Get(r.Context(), p.Tenant, r.PathValue("id"))
	if err != nil {
		WriteError(w, r, err)
		return
	}
	if _, md := wants(r); md {
		writeBody(w, "text/markdown; charset=utf-8", []byte(companion.Report(ctx)))
		return
	}
	WriteJSON(w, http.StatusOK, ctx)
}

func (c companionRoutes) followUp(phase string) tenantHandler {
	return func(w http.ResponseWriter, r *http.Request, p auth.Principal) {
		c.runFollowUp(w, r, p, phase)
	}
}

func (c companionRoutes) runFollowUp(w http.ResponseWriter, r *http.Request, p auth.Principal, phase string) {
	var body companion.FollowUpRequest
	if err := DecodeOptionalJSON(w, r, &body, `{"platform": "", "questions": [], "confirm": false, "answers": [], "instruction": ""}`, 0); err != nil {
		WriteError(w, r, err)
		return
	}
	ctx, preview, err := c.api.RunFollowUp(r.Context(), p.Tenant, r.PathValue("id"), phase, body)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	if preview != nil {
		WriteJSON(w, http.StatusAccepted, preview)
		return
	}
	WriteJSON(w, http.StatusOK, ctx)
}
