package searchapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/veredicto/veredicto/internal/httpapi"
	"github.com/veredicto/veredicto/internal/httpapi/searchapi"
	"github.com/veredicto/veredicto/internal/intake"
)

var asHTML = http.Header{"Accept": {"text/html"}}

func TestConsoleRoutes(t *testing.T) {
	rt := world(t, true)
	for _, tt := range []struct {
		name, path string
		header     http.Header
		status     int
		ct         string
		want       []string
	}{
		{"summary json", "/searches/done/summary", nil, 200, "application/json", []string{`"ranking"`, `"search_id": "done"`}},
		{"summary md", "/searches/done/summary", markdown, 200, "text/markdown; charset=utf-8", []string{"## Ranking de candidatos"}},
		{"summary html", "/searches/done/summary", asHTML, 200, "text/html; charset=utf-8", []string{"<h2>Ranking de candidatos</h2>", "<table>",
			`<a class="cite" href="#/fuente/done/kickoff.md">kickoff.md</a>`}},
		{"roster", "/searches/done/candidates", nil, 200, "application/json", []string{`"candidate_id": "c-001"`, `"name": "Mariana Rojas"`, `"candidates/c-001/cv.md"`, `"role": "Director/a de Finanzas (CFO)"`}},
		{"roster of an uploaded search is not served before it starts", "/searches/up/candidates", nil, 404, "application/json", []string{"search up not found"}},
		{"summary of a running search", "/searches/run/summary", nil, 404, "application/json", []string{"summary of search run not found"}},
		{"report html", "/searches/done/candidates/c-001/report", asHTML, 200, "text/html; charset=utf-8", []string{"<h2>Decisión: Aprobado",
			`<a class="cite" href="#/fuente/done/candidates%2Fc-001%2Fcv.md">candidates/c-001/cv.md</a>`}},
		{"report json unchanged", "/searches/done/candidates/c-001/report", nil, 200, "application/json", []string{`"decision": "APROBADO"`}},
		{"source", "/searches/done/sources/candidates/c-001/cv.md", nil, 200, "text/plain; charset=utf-8", []string{"#"}},
		{"source percent-encoded", "/searches/done/sources/candidates%2Fc-001%2Fcv.md", nil, 200, "text/plain; charset=utf-8", []string{"#"}},
		{"source at the top", "/searches/done/sources/jd.md", nil, 200, "text/plain; charset=utf-8", []string{"#"}},
		{"source of an uploaded search is not served before it starts", "/searches/up/sources/jd.md", nil, 404, "application/json", []string{"search up not found"}},
		{"missing source", "/searches/done/sources/candidates/c-001/nope.md", nil, 404, "application/json", []string{"source candidates/c-001/nope.md of search done not found"}},
		{"source leaving the search", "/searches/done/sources/..%2F..%2Fglobex%2Fx%2Fjd.md", nil, 404, "application/json", []string{"route GET /searches/done/sources/..%2F..%2Fglobex%2Fx%2Fjd.md not found"}},
		{"dot segment", "/searches/done/sources/candidates/./c-001/cv.md", nil, 404, "application/json", []string{"not found"}},
		{"hidden file", "/searches/done/sources/.veredicto", nil, 400, "application/json", []string{"source"}},
		{"escaped dot segment", "/searches/done/sources/candidates%2F.%2Fc-001%2Fcv.md", nil, 404, "application/json", []string{"not found"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := serve(rt, "GET", tt.path, "acme", "", tt.header)
			if got.Status != tt.status || got.Header.Get("Content-Type") != tt.ct {
				t.Fatalf("%d %s %s; want %d as %s", got.Status, got.Header.Get("Content-Type"), got.Body, tt.status, tt.ct)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(got.Body), w) {
					t.Errorf("body lacks %q:\n%.600s", w, got.Body)
				}
			}
		})
	}
}

// TestConsoleRoutesOfAnotherTenant: globex's answers about acme's searches
// are byte for byte those about searches that do not exist.
func TestConsoleRoutesOfAnotherTenant(t *testing.T) {
	full, empty := world(t, true), world(t, false)
	for _, id := range []string{"done", "run", "up", "nope"} {
		for _, p := range []struct {
			path   string
			header http.Header
		}{
			{"/searches/" + id + "/summary", nil},
			{"/searches/" + id + "/summary", asHTML},
			{"/searches/" + id + "/candidates/c-001/report", asHTML},
			{"/searches/" + id + "/sources/jd.md", nil},
			{"/searches/" + id + "/candidates", nil},
			{"/searches/" + id + "/sources/candidates/c-001/cv.md", nil},
		} {
			got := serve(full, "GET", p.path, "globex", "", p.header)
			want := serve(empty, "GET", p.path, "globex", "", p.header)
			if got.Status != http.StatusNotFound || got.Status != want.Status || !bytes.Equal(got.Body, want.Body) {
				t.Errorf("globex GET %s: %d %s; a missing search answers %d %s", p.path, got.Status, got.Body, want.Status, want.Body)
			}
		}
	}
	if got, want := serve(full, "GET", "/runs", "globex", "", nil), serve(empty, "GET", "/runs", "globex", "", nil); !bytes.Equal(got.Body, want.Body) || got.Status != 200 {
		t.Errorf("globex runs: %d %s, want %s", got.Status, got.Body, want.Body)
	}
}

func TestRuns(t *testing.T) {
	rt := world(t, true)
	got := serve(rt, "GET", "/runs", "acme", "", nil)
	var body struct{ Runs []intake.Run }
	if err := json.Unmarshal(got.Body, &body); got.Status != 200 || err != nil {
		t.Fatalf("%d %s %v", got.Status, got.Body, err)
	}
	byID := map[string]intake.Run{}
	for _, r := range body.Runs {
		byID[r.ID] = r
	}
	if len(body.Runs) != 2 {
		t.Fatalf("runs %+v, want the two started searches (done, run)", body.Runs)
	}
	done := byID["done"]
	if done.Kind != "search" || done.Status != "SUCCEEDED" || done.Execution != "acme--done" || done.Candidates != 6 || done.StartedAt == "" || done.StoppedAt == "" {
		t.Errorf("done: %+v", done)
	}
	total := 0
	for _, n := range done.Decisions {
		total += n
	}
	if total != 6 || done.Decisions["APROBADO"] == 0 {
		t.Errorf("done decisions %v, want all 6 counted with some APROBADO", done.Decisions)
	}
	if r := byID["run"]; r.Status != "RUNNING" || len(r.Decisions) != 0 {
		t.Errorf("run: %+v, want RUNNING without decisions", r)
	}
	for _, tt := range []struct {
		method, tenant string
		status         int
	}{{"POST", "acme", 405}, {"GET", "", 401}, {"GET", "../x", 403}} {
		if got := serve(rt, tt.method, "/runs", tt.tenant, "", nil); got.Status != tt.status {
			t.Errorf("%s /runs as %q: %d %s, want %d", tt.method, tt.tenant, got.Status, got.Body, tt.status)
		}
	}
}

// TestRunsGroupASearchsReruns: a search run again shows as one row, its
// latest run, with the earlier ones grouped under it (newest first), and
// none of them as a row of its own, even when the other workflows' lister
// names them too.
func TestRunsGroupASearchsReruns(t *testing.T) {
	routes := worldRoutes(t, true)
	for i := 0; i < 2; i++ {
		if _, err := routes.Searches.Start(context.Background(), "acme", "api", intake.StartRequest{SearchID: "done", Rerun: true}); err != nil {
			t.Fatal(err)
		}
	}
	routes.Runs = earlierAsOthers{}
	got := serve(httpapi.New(nil, routes), "GET", "/runs", "acme", "", nil)
	var body struct{ Runs []intake.Run }
	if err := json.Unmarshal(got.Body, &body); got.Status != 200 || err != nil {
		t.Fatalf("%d %s %v", got.Status, got.Body, err)
	}
	var done []intake.Run
	for _, r := range body.Runs {
		if r.ID == "done" || strings.Contains(r.Execution, "done") {
			done = append(done, r)
		}
	}
	if len(done) != 1 {
		t.Fatalf("rows of search done: %+v, want one", done)
	}
	if len(done[0].Reruns) != 2 || done[0].Reruns[1].Execution != "acme--done" || done[0].Execution == "acme--done" {
		t.Errorf("done's row %+v with earlier runs %+v, want the latest with the two before it, the first last", done[0], done[0].Reruns)
	}
}

// earlierAsOthers lists the first run of acme's search done as a local
// control plane lists every execution.
type earlierAsOthers struct{}

func (earlierAsOthers) ListRuns(_ context.Context, tenant string) ([]intake.Run, error) {
	return []intake.Run{{Kind: "executive-search", ID: "done", Execution: "arn:aws:states:us-east-1:000000000000:execution:ExecutiveSearchStateMachine:" + tenant + "--done", Status: "SUCCEEDED"}}, nil
}

// otherRuns lists one run of another workflow per tenant, and repeats a
// search's execution, which GET /runs must list once.
type otherRuns struct{}

func (otherRuns) ListRuns(_ context.Context, tenant string) ([]intake.Run, error) {
	return []intake.Run{
		{Kind: "debate", ID: tenant + "-d1", Execution: tenant + "--d1", Status: "RUNNING", StartedAt: "2099-01-01T00:00:00Z", Decisions: map[string]int{}},
		{Kind: "search", ID: "done", Execution: tenant + "--done", Status: "SUCCEEDED"},
		{Kind: "executive-search", ID: tenant + "--run", Execution: "arn:aws:states:us-east-1:000000000000:execution:ExecutiveSearchStateMachine:" + tenant + "--run", Status: "RUNNING"},
	}, nil
}

func TestRunsOfOtherWorkflowsShowUpGenerically(t *testing.T) {
	routes := worldRoutes(t, true)
	routes.Runs = otherRuns{}
	rt := httpapi.New(nil, routes)
	var body struct{ Runs []intake.Run }
	json.Unmarshal(serve(rt, "GET", "/runs", "acme", "", nil).Body, &body)
	if len(body.Runs) != 3 || body.Runs[0].Kind != "debate" || body.Runs[0].ID != "acme-d1" {
		t.Errorf("runs %+v, want the debate first (newest) and each search once", body.Runs)
	}
	only := httpapi.New(nil, searchapi.Routes{Runs: otherRuns{}})
	json.Unmarshal(serve(only, "GET", "/runs", "acme", "", nil).Body, &body)
	if len(body.Runs) != 3 {
		t.Errorf("without searches mounted: %+v", body.Runs)
	}
}

// TestConsoleRoutesBehindAPIGateway: the same routes through the Lambda
// front, as the console on AWS calls them (lower-case headers, the tenant
// from the authorizer's claims).
func TestConsoleRoutesBehindAPIGateway(t *testing.T) {
	rt := &httpapi.Gateway{Handler: world(t, true)}
	ev := func(path string, headers map[string]string) events.APIGatewayV2HTTPRequest {
		req := events.APIGatewayV2HTTPRequest{RawPath: path, Headers: headers}
		req.RequestContext.HTTP.Method = "GET"
		req.RequestContext.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
			JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: map[string]string{"custom:tenant": "acme"}},
		}
		return req
	}
	for _, tt := range []struct {
		path    string
		headers map[string]string
		ct      string
		want    string
	}{
		{"/runs", nil, "application/json", `"kind": "search"`},
		{"/searches/done/candidates/c-001/report", map[string]string{"accept": "text/html"}, "text/html; charset=utf-8", `<a class="cite" href="#/fuente/done/`},
		{"/searches/done/summary", map[string]string{"accept": "text/html"}, "text/html; charset=utf-8", "<h2>Ranking de candidatos</h2>"},
		{"/searches/done/sources/candidates/c-001/cv.md", nil, "text/plain; charset=utf-8", "#"},
	} {
		resp, err := rt.Handle(context.Background(), ev(tt.path, tt.headers))
		if err != nil || resp.StatusCode != 200 || resp.Headers["Content-Type"] != tt.ct || !strings.Contains(resp.Body, tt.want) {
			t.Errorf("GET %s: %d %v %.200s %v; want 200 %s containing %q", tt.path, resp.StatusCode, resp.Headers, resp.Body, err, tt.ct, tt.want)
		}
	}
}
