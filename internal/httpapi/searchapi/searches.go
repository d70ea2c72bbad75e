// Package searchapi is the HTTP API's executive searches (seed 000):
// /searches… and GET /runs, whose other workflows' runs SFNRuns lists on AWS.
package searchapi

import (
	"context"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/veredicto/veredicto/internal/httpapi"

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

// Routes serves the executive searches (seed 000) and what the web
// console reads of them.
type Routes struct {
	// Searches serves /searches… (none when nil).
	Searches *intake.Service
	// Runs lists other workflows' runs on GET /runs too.
	Runs RunLister
}

func (s Routes) Register(m *httpapi.Mux) {
	m.Handle("GET /runs", httpapi.RequireTenant(s.listRuns))
	if s.Searches == nil {
		return
	}
	m.Handle("GET /searches", httpapi.RequireTenant(s.list))
	m.Handle("POST /searches", httpapi.RequireTenant(s.start))
	m.Handle("GET /searches/{id}", httpapi.RequireTenant(s.state))
	m.Handle("GET /searches/{id}/summary", httpapi.RequireTenant(s.summary))
	m.Handle("GET /searches/{id}/candidates", httpapi.RequireTenant(s.roster))
	m.Handle("GET /searches/{id}/candidates/{cid}/report", httpapi.RequireTenant(s.report))
	m.Handle("GET /searches/{id}/sources/{path...}", httpapi.RequireTenant(s.source))
}

// startShape is POST /searches's body, for error messages.
const startShape = `{"search_id": …, "concurrency": …, "thresholds": {…}, "review": {…}, "rerun": false}`

func (s Routes) start(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	var sr intake.StartRequest
	if err := httpapi.DecodeJSON(w, r, &sr, startShape, 0); err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	st, err := s.Searches.Start(r.Context(), p.Tenant, "api", sr)
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	status := http.StatusAccepted
	if !st.Started {
		status = http.StatusOK
	}
	httpapi.WriteJSON(w, status, st)
}

func (s Routes) list(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	list, err := s.Searches.List(r.Context(), p.Tenant)
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, struct {
		Searches []intake.SearchItem `json:"searches"`
	}{list})
}

func (s Routes) state(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	st, err := s.Searches.State(r.Context(), p.Tenant, r.PathValue("id"))
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, st)
}

// roster answers the search's candidates with their names, in the order
// the workflow evaluates them, and their documents (the console's run
// page and confirmations name people with it).
func (s Routes) roster(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	ro, err := s.Searches.Roster(r.Context(), p.Tenant, r.PathValue("id"))
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, ro)
}

// summary answers summary.json, summary.md (Accept: text/markdown) or its
// safe HTML (Accept: text/html).
func (s Routes) summary(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	id := r.PathValue("id")
	asHTML, md := httpapi.Wants(r)
	b, err := s.Searches.Summary(r.Context(), p.Tenant, id, md || asHTML)
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	document(w, b, md || asHTML, asHTML, id)
}

// report answers a candidate's report.json, report.md (Accept:
// text/markdown) or its safe HTML (Accept: text/html).
func (s Routes) report(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	id := r.PathValue("id")
	asHTML, md := httpapi.Wants(r)
	b, err := s.Searches.Report(r.Context(), p.Tenant, id, r.PathValue("cid"), md || asHTML)
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	document(w, b, md || asHTML, asHTML, id)
}

// source answers the text of a document the reports cite.
func (s Routes) source(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	b, err := s.Searches.Source(r.Context(), p.Tenant, r.PathValue("id"), r.PathValue("path"))
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	httpapi.WriteBody(w, "text/plain; charset=utf-8", b, "X-Content-Type-Options", "nosniff", "Cache-Control", "private, no-store")
}

// listRuns answers the tenant's runs: its searches and, with a RunLister,
// its other workflows' executions, newest first.
func (s Routes) listRuns(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	ctx := r.Context()
	list := []intake.Run{}
	if s.Searches != nil {
		l, err := s.Searches.Runs(ctx, p.Tenant)
		if err != nil {
			httpapi.WriteError(w, r, err)
			return
		}
		list = append(list, l...)
	}
	if s.Runs != nil {
		// A search's execution may also be listed by name or ARN among
		// the executions: it shows once, as the search.
		seen := map[string]bool{}
		for _, run := range list {
			seen[executionName(run.Execution)] = true
			for _, earlier := range run.Reruns {
				seen[executionName(earlier.Execution)] = true
			}
		}
		more, err := s.Runs.ListRuns(ctx, p.Tenant)
		if err != nil {
			httpapi.WriteError(w, r, err)
			return
		}
		for _, run := range more {
			if !seen[executionName(run.Execution)] {
				list = append(list, run)
			}
		}
		sort.SliceStable(list, func(i, j int) bool { return list[i].StartedAt > list[j].StartedAt })
	}
	httpapi.WriteJSON(w, http.StatusOK, struct {
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

// document answers a report or summary: JSON, Markdown, or Markdown
// rendered as safe HTML with citations linked to the search's sources
// ("#/fuente/{id}/{source}", which the console opens with the sources
// route).
func document(w http.ResponseWriter, b []byte, md, asHTML bool, searchID string) {
	switch {
	case asHTML:
		link := func(src string) string { return "#/fuente/" + url.PathEscape(searchID) + "/" + url.PathEscape(src) }
		httpapi.WriteBody(w, "text/html; charset=utf-8", []byte(markdown.HTML(string(b), link)),
			"X-Content-Type-Options", "nosniff", "Content-Security-Policy", "default-src 'none'")
	case md:
		httpapi.WriteBody(w, "text/markdown; charset=utf-8", b)
	default:
		httpapi.WriteBody(w, "application/json", b)
	}
}
