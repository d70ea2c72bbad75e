package httpapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/veredicto/veredicto/internal/intake"
)

// searches serves /searches/…; req.Tenant is set and valid.
func (rt *Router) searches(ctx context.Context, req Request, parts []string) Response {
	if resp, ok := rt.consoleRoutes(ctx, req, parts); ok {
		return resp
	}
	svc, tenant := rt.Searches, req.Tenant
	switch {
	case len(parts) == 1 && req.Method == http.MethodPost:
		var sr intake.StartRequest
		if err := decodeBody(req.Body, &sr, `{"search_id": …, "concurrency": …, "thresholds": {…}, "review": {…}, "rerun": false}`); err != nil {
			return errorResponse(http.StatusBadRequest, err.Error())
		}
		st, err := svc.Start(ctx, tenant, "api", sr)
		if err != nil {
			return rt.failure(ctx, err)
		}
		if !st.Started {
			return jsonResponse(http.StatusOK, st)
		}
		return jsonResponse(http.StatusAccepted, st)
	case len(parts) == 1 && req.Method == http.MethodGet:
		list, err := svc.List(ctx, tenant)
		if err != nil {
			return rt.failure(ctx, err)
		}
		return jsonResponse(http.StatusOK, struct {
			Searches []intake.SearchItem `json:"searches"`
		}{list})
	case len(parts) == 2 && req.Method == http.MethodGet:
		st, err := svc.State(ctx, tenant, parts[1])
		if err != nil {
			return rt.failure(ctx, err)
		}
		return jsonResponse(http.StatusOK, st)
	case len(parts) == 5 && parts[2] == "candidates" && parts[4] == "report" && req.Method == http.MethodGet:
		md := strings.Contains(req.Header.Get("Accept"), "text/markdown")
		b, err := svc.Report(ctx, tenant, parts[1], parts[3], md)
		if err != nil {
			return rt.failure(ctx, err)
		}
		ct := "application/json"
		if md {
			ct = "text/markdown; charset=utf-8"
		}
		return Response{Status: http.StatusOK, Body: b, Header: http.Header{"Content-Type": {ct}}}
	}
	return errorResponse(http.StatusMethodNotAllowed, req.Method+" is not allowed on "+req.Path)
}
