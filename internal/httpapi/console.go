package httpapi

import (
	"context"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/veredicto/veredicto/internal/intake"
	"github.com/veredicto/veredicto/internal/markdown"
)

// The routes the web console reads besides the searches' own (any client
// may use them):
//
//	GET /runs                                     the tenant's runs: status, times, decisions so far
//	GET /searches/{id}/summary                    summary.json, summary.md (Accept: text/markdown) or HTML (Accept: text/html)
//	GET /searches/{id}/candidates/{cid}/report    also as HTML with Accept: text/html
//	GET /searches/{id}/sources/{path…}            the text of a document the reports cite
//
// The HTML is markdown.HTML's: every character of the report escaped,
// citations as links "#/fuente/{id}/{source}" that the console opens
// with the sources route.

// RunLister lists a tenant's runs of other workflows (companion, debate,
// chat…) for GET /runs, in the shape of a search's run; another tenant's
// runs are never listed.
type RunLister interface {
	ListRuns(ctx context.Context, tenant string) ([]intake.Run, error)
}

// runs serves GET /runs; req.Tenant is set and valid.
func (rt *Router) runs(ctx context.Context, req Request) Response {
	if req.Method != http.MethodGet {
		return errorResponse(http.StatusMethodNotAllowed, req.Method+" is not allowed on "+req.Path)
	}
	list := []intake.Run{}
	if rt.Searches != nil {
		l, err := rt.Searches.Runs(ctx, req.Tenant)
		if err != nil {
			return rt.failure(ctx, err)
		}
		list = append(list, l...)
	}
	if rt.Executions != nil {
		// A search's execution may also be listed by name or ARN among
		// the executions: it shows once, as the search.
		seen := map[string]bool{}
		for _, r := range list {
			seen[executionName(r.Execution)] = true
		}
		more, err := rt.Executions.ListRuns(ctx, req.Tenant)
		if err != nil {
			return rt.failure(ctx, err)
		}
		for _, r := range more {
			if !seen[executionName(r.Execution)] {
				list = append(list, r)
			}
		}
		sort.SliceStable(list, func(i, j int) bool { return list[i].StartedAt > list[j].StartedAt })
	}
	return jsonResponse(http.StatusOK, struct {
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

// consoleRoutes serves the console's search routes; ok is false for a
// path they do not cover (the searches' own routes then answer).
func (rt *Router) consoleRoutes(ctx context.Context, req Request, parts []string) (Response, bool) {
	svc, tenant := rt.Searches, req.Tenant
	accept := req.Header.Get("Accept")
	htmlWanted := strings.Contains(accept, "text/html")
	get := req.Method == http.MethodGet
	switch {
	case len(parts) == 3 && parts[2] == "summary" && get:
		md := htmlWanted || strings.Contains(accept, "text/markdown")
		b, err := svc.Summary(ctx, tenant, parts[1], md)
		if err != nil {
			return rt.failure(ctx, err), true
		}
		return document(b, md, htmlWanted, parts[1]), true
	case len(parts) == 5 && parts[2] == "candidates" && parts[4] == "report" && get && htmlWanted:
		b, err := svc.Report(ctx, tenant, parts[1], parts[3], true)
		if err != nil {
			return rt.failure(ctx, err), true
		}
		return document(b, true, true, parts[1]), true
	case len(parts) >= 4 && parts[2] == "sources" && get:
		b, err := svc.Source(ctx, tenant, parts[1], strings.Join(parts[3:], "/"))
		if err != nil {
			return rt.failure(ctx, err), true
		}
		return Response{Status: http.StatusOK, Body: b, Header: http.Header{
			"Content-Type":           {"text/plain; charset=utf-8"},
			"X-Content-Type-Options": {"nosniff"},
			"Cache-Control":          {"private, no-store"},
		}}, true
	}
	return Response{}, false
}

// document answers a report or summary: JSON, Markdown, or Markdown
// rendered as safe HTML with citations linked to the search's sources.
func document(b []byte, md, asHTML bool, searchID string) Response {
	switch {
	case asHTML:
		link := func(src string) string { return "#/fuente/" + url.PathEscape(searchID) + "/" + url.PathEscape(src) }
		return Response{Status: http.StatusOK, Body: []byte(markdown.HTML(string(b), link)), Header: http.Header{
			"Content-Type":            {"text/html; charset=utf-8"},
			"X-Content-Type-Options":  {"nosniff"},
			"Content-Security-Policy": {"default-src 'none'"},
		}}
	case md:
		return Response{Status: http.StatusOK, Body: b, Header: http.Header{"Content-Type": {"text/markdown; charset=utf-8"}}}
	}
	return Response{Status: http.StatusOK, Body: b, Header: http.Header{"Content-Type": {"application/json"}}}
}
