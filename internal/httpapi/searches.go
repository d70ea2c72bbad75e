package httpapi

import (
	"context"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/intake"
	"github.com/veredicto/veredicto/internal/markdown"
)

// RunLister lists a tenant's runs of other workflows (companion, debate,
// chat…) for GET /runs, in the shape of a search's run; another tenant's
// runs are never listed.
type RunLister interface {
	ListRuns(ctx context.Context, tenant string) ([]intake.Run, error)
}

// searchRoutes serves the executive searches (seed 000) and what the web
// console reads of them.
type searchRoutes struct {
	svc  *intake.Service
	runs RunLister
}

func (s searchRoutes) register(m *Mux) {
	m.Handle("GET /runs", RequireTenant(s.listRuns))
	if s.svc == nil {
		return
	}
	m.Handle("GET /searches", RequireTenant(s.list))
	m.Handle("POST /searches", RequireTenant(s.start))
	m.Handle("GET /searches/{id}", RequireTenant(s.state))
	m.Handle("GET /searches/{id}/summary", RequireTenant(s.summary))
	m.Handle("GET /searches/{id}/candidates", RequireTenant(s.roster))
	m.Handle("GET /searches/{id}/candidates/{cid}/report", RequireTenant(s.report))
	m.Handle("GET /searches/{id}/sources/{path...}", RequireTenant(s.source))
}

// startShape is POST /searches's body, for error messages.
const startShape = `{"search_id": …, "concurrency": …, "thresholds": {…}, "review": {…}, "rerun": false}`

func (s searchRoutes) start(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	var sr intake.StartRequest
	if err := DecodeJSON(w, r, &sr, startShape, 0); err != nil {
		WriteError(w, r, err)
		return
	}
	st, err := s.svc.Start(r.Context(), p.Tenant, "api", sr)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	status := http.StatusAccepted
	if !st.Started {
		status = http.StatusOK
	}
	WriteJSON(w, status, st)
}

func (s searchRoutes) list(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	list, err := s.svc.List(r.Context(), p.Tenant)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	WriteJSON(w, http.StatusOK, struct {
		Searches []intake.SearchItem `json:"searches"`
	}{list})
}

func (s searchRoutes) state(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	st, err := s.svc.State(r.Context(), p.Tenant, r.PathValue("id"))
	if err != nil {
		WriteError(w, r, err)
		return
	}
	WriteJSON(w, http.StatusOK, st)
}

// roster answers the search's candidates with their names, in the order
// the workflow evaluates them, and their documents (the console's run
// page and confirmations name people with it).
func (s searchRoutes) roster(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	ro, err := s.svc.Roster(r.Context(), p.Tenant, r.PathValue("id"))
	if err != nil {
		WriteError(w, r, err)
		return
	}
	WriteJSON(w, http.StatusOK, ro)
}

// summary answers summary.json, summary.md (Accept: text/markdown) or its
// safe HTML (Accept: text/html).
func (s searchRoutes) summary(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	id := r.PathValue("id")
	asHTML, md := wants(r)
	b, err := s.svc.Summary(r.Context(), p.Tenant, id, md || asHTML)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	document(w, b, md || asHTML, asHTML, id)
}

// report answers a candidate's report.json, report.md (Accept:
// text/markdown) or its safe HTML (Accept: text/html).
func (s searchRoutes) report(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	id := r.PathValue("id")
	asHTML, md := wants(r)
	b, err := s.svc.Report(r.Context(), p.Tenant, id, r.PathValue("cid"), md || asHTML)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	document(w, b, md || asHTML, asHTML, id)
}

// source answers the text of a document the reports cite.
func (s searchRoutes) source(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	b, err := s.svc.Source(r.Context(), p.Tenant, r.PathValue("id"), r.PathValue("path"))
	if err != nil {
		WriteError(w, r, err)
		return
	}
	writeBody(w, "text/plain; charset=utf-8", b, "X-Content-Type-Options", "nosniff", "Cache-Control", "private, no-store")
}

// listRuns answers the tenant's runs: its searches and, with a RunLister,
// its other workflows' executions, newest first.
func (s searchRoutes) listRuns(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	ctx := r.Context()
	list := []intake.Run{}
	if s.svc != nil {
		l, err := s.svc.Runs(ctx, p.Tenant)
		if err != nil {
			WriteError(w, r, err)
			return
		}
		list = append(list, l...)
	}
	if s.runs != nil {
		// A search's execution may also be listed by name or ARN among
		// the executions: it shows once, as the search.
		seen := map[string]bool{}
		for _, run := range list {
			seen[executionName(run.Execution)] = true
			for _, earlier := range run.Reruns {
				seen[executionName(earlier.Execution)] = true
			}
		}
		more, err := s.runs.ListRuns(ctx, p.Tenant)
		if err != nil {
			WriteError(w, r, err)
			return
		}
		for _, run := range more {
			if !seen[executionName(run.Execution)] {
				list = append(list, run)
			}
		}
		sort.SliceStable(list, func(i, j int) bool { return list[i].StartedAt > list[j].StartedAt })
	}
	WriteJSON(w, http.StatusOK, struct {
		Runs []intake.Run `json:"runs"`
	}{list})
}

// executionName is the name of an execution given by name or by ARN
// (arn:…:execution:<machine>:<name>).
func executionName(ref string) string {
	if i := strings.LastIndexByte(ref, ':'); i >= 0 && strings.HasPrefix(ref, "arn:") {
		return ref[i+1:]
	}
	return ref
}

// wants reads Accept: HTML, else Markdown, else JSON.
func wants(r *http.Request) (asHTML, md bool) {
	accept := r.Header.Get("Accept")
	return strings.Contains(accept, "text/html"), strings.Contains(accept, "text/markdown")
}

// document answers a report or summary: JSON, Markdown, or Markdown
// rendered as safe HTML with citations linked to the search's sources
// ("#/fuente/{id}/{source}", which the console opens with the sources
// route).
func document(w http.ResponseWriter, b []byte, md, asHTML bool, searchID string) {
	switch {
	case asHTML:
		link := func(src string) string { return "#/fuente/" + url.PathEscape(searchID) + "/" + url.PathEscape(src) }
		writeBody(w, "text/html; charset=utf-8", []byte(markdown.HTML(string(b), link)),
			"X-Content-Type-Options", "nosniff", "Content-Security-Policy", "default-src 'none'")
	case md:
		writeBody(w, "text/markdown; charset=utf-8", b)
	default:
		writeBody(w, "application/json", b)
	}
}
