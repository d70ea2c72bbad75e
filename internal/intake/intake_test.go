package intake_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/app"
	blob "github.com/veredicto/veredicto/internal/blob/fs"
	"github.com/veredicto/veredicto/internal/intake"
	"github.com/veredicto/veredicto/internal/llm"
	"github.com/veredicto/veredicto/internal/offline"
	"github.com/veredicto/veredicto/internal/search"
	"github.com/veredicto/veredicto/internal/starter"
	store "github.com/veredicto/veredicto/internal/store/file"
)

// copyExample uploads examples/search-demo to the local inputs bucket as
// searches/<id>/, without the READY marker.
func copyExample(t *testing.T, data, id string) {
	t.Helper()
	inputs, _, _ := app.LocalLayout(data)
	src := "../../examples/search-demo"
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		dst := filepath.Join(inputs, "searches", id, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func s3Event(keys ...string) events.S3Event {
	var ev events.S3Event
	for _, k := range keys {
		r := events.S3EventRecord{EventName: "ObjectCreated:Put"}
		r.S3.Bucket.Name = "inputs"
		r.S3.Object.Key = k
		ev.Records = append(ev.Records, r)
	}
	return ev
}

// countingAnalyst counts GEM5 calls: one per execution that really ran.
type countingAnalyst struct {
	*offline.Analyst
	gem5 int
}

func (c *countingAnalyst) Gem5(ctx context.Context, in search.Gem5Input) (search.Answer[search.Gem5Content], llm.Usage, error) {
	c.gem5++
	return c.Analyst.Gem5(ctx, in)
}

func TestDuplicateS3EventStartsOneEvaluation(t *testing.T) {
	data := t.TempDir()
	copyExample(t, data, "demo-cfo-andina")
	inputs, _, _ := app.LocalLayout(data)
	os.WriteFile(filepath.Join(inputs, "searches", "demo-cfo-andina", "READY"), []byte("tenant: acme\nconcurrency: 3\n"), 0o644)
	an := &countingAnalyst{Analyst: offline.New()}
	a := app.NewLocal(data, an)
	ctx := context.Background()
	ev := s3Event("searches/demo-cfo-andina/READY", "searches/demo-cfo-andina/jd.md")
	first, err := a.Intake.HandleS3(ctx, ev)
	if err != nil || len(first.Started) != 1 || !first.Started[0].Started || len(first.Ignored) != 1 {
		t.Fatalf("first delivery: %+v %v", first, err)
	}
	second, err := a.Intake.HandleS3(ctx, ev) // S3 delivers at least once
	if err != nil || len(second.Started) != 1 || second.Started[0].Started {
		t.Fatalf("duplicate delivery: %+v %v", second, err)
	}
	if an.gem5 != 1 {
		t.Errorf("GEM5 ran %d times, want 1 (one execution)", an.gem5)
	}
	st, err := a.Intake.State(ctx, "acme", "demo-cfo-andina")
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != "SUCCEEDED" || len(st.Candidates) != 6 {
		t.Fatalf("state %+v", st)
	}
	for _, c := range st.Candidates {
		if c.Decision == "" || c.LastStage == "" {
			t.Errorf("candidate %+v lacks decision or stage", c)
		}
		if c.CandidateID == "c-006" && strings.Join(c.Stages, " ") != "gem1 gem2 gem3 gem4 correction_1 gem4_retry_1" {
			t.Errorf("c-006 stages %v, want them named and ordered as the report does", c.Stages)
		}
	}
	if _, err := a.Intake.State(ctx, "other-tenant", "demo-cfo-andina"); !isNotFound(err) {
		t.Errorf("other tenant sees the search: %v", err)
	}
}

func isNotFound(err error) bool {
	var nf *veredicto.NotFoundError
	return errors.As(err, &nf)
}

func apiRequest(method, path, tenant, body string, headers map[string]string) events.APIGatewayV2HTTPRequest {
	req := events.APIGatewayV2HTTPRequest{RawPath: path, Body: body, Headers: headers}
	req.RequestContext.HTTP.Method = method
	if tenant != "" {
		req.RequestContext.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
			JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: map[string]string{"custom:tenant": tenant}},
		}
	}
	return req
}

func TestAPI(t *testing.T) {
	data := t.TempDir()
	copyExample(t, data, "demo-cfo-andina")
	a := app.NewLocal(data, offline.New())
	ctx := context.Background()
	call := func(req events.APIGatewayV2HTTPRequest) events.APIGatewayV2HTTPResponse {
		t.Helper()
		resp, err := a.API.Handle(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	tests := []struct {
		name   string
		req    events.APIGatewayV2HTTPRequest
		status int
		want   string
	}{
		{"no tenant", apiRequest("GET", "/searches/demo-cfo-andina", "", "", nil), 401, "missing tenant claim"},
		{"start", apiRequest("POST", "/searches", "acme", `{"search_id":"demo-cfo-andina","concurrency":2}`, nil), 202, `"started": true`},
		{"start again", apiRequest("POST", "/searches", "acme", `{"search_id":"demo-cfo-andina"}`, nil), 200, `"started": false`},
		{"other tenant takes the id", apiRequest("POST", "/searches", "zeta", `{"search_id":"demo-cfo-andina"}`, nil), 409, "already in use"},
		{"bad body", apiRequest("POST", "/searches", "acme", `{"search":"x"}`, nil), 400, "unknown field"},
		{"bad id", apiRequest("POST", "/searches", "acme", `{"search_id":"../etc"}`, nil), 400, "search_id"},
		{"not uploaded", apiRequest("POST", "/searches", "acme", `{"search_id":"ghost"}`, nil), 422, "searches/ghost/jd.md"},
		{"state", apiRequest("GET", "/searches/demo-cfo-andina", "acme", "", nil), 200, `"status": "SUCCEEDED"`},
		{"state of another tenant", apiRequest("GET", "/searches/demo-cfo-andina", "zeta", "", nil), 404, "not found"},
		{"unknown search", apiRequest("GET", "/searches/nope", "acme", "", nil), 404, "not found"},
		{"malformed search id", apiRequest("GET", "/searches/%2e%2e", "acme", "", nil), 404, "not found"},
		{"report json", apiRequest("GET", "/searches/demo-cfo-andina/candidates/c-001/report", "acme", "", nil), 200, `"decision": "APROBADO"`},
		{"report markdown", apiRequest("GET", "/searches/demo-cfo-andina/candidates/c-001/report", "acme", "", map[string]string{"Accept": "text/markdown"}), 200, "## Decisión: APROBADO"},
		{"unknown candidate", apiRequest("GET", "/searches/demo-cfo-andina/candidates/c-999/report", "acme", "", nil), 404, "c-999"},
		{"wrong method", apiRequest("DELETE", "/searches/demo-cfo-andina", "acme", "", nil), 405, "not allowed"},
		{"unknown route", apiRequest("GET", "/nope", "acme", "", nil), 404, "no route"},
	}
	for _, tt := range tests {
		resp := call(tt.req)
		if resp.StatusCode != tt.status || !strings.Contains(resp.Body, tt.want) {
			t.Errorf("%s: %d %s; want %d containing %q", tt.name, resp.StatusCode, resp.Body, tt.status, tt.want)
		}
		if resp.StatusCode != http.StatusOK || !strings.Contains(tt.name, "markdown") {
			continue
		}
		if resp.Headers["Content-Type"] != "text/markdown; charset=utf-8" {
			t.Errorf("markdown content type %q", resp.Headers["Content-Type"])
		}
	}
	var st intake.SearchState
	json.Unmarshal([]byte(call(apiRequest("GET", "/searches/demo-cfo-andina", "acme", "", nil)).Body), &st)
	if len(st.Candidates) != 6 {
		t.Errorf("candidates %+v", st.Candidates)
	}
}

func TestTriggerRejectsIncompleteUploadsWithoutFailing(t *testing.T) {
	data := t.TempDir()
	inputs, _, _ := app.LocalLayout(data)
	os.MkdirAll(filepath.Join(inputs, "searches", "half"), 0o755)
	os.WriteFile(filepath.Join(inputs, "searches", "half", "jd.md"), []byte("# JD\n"), 0o644)
	os.WriteFile(filepath.Join(inputs, "searches", "half", "READY"), []byte(""), 0o644)
	os.MkdirAll(filepath.Join(inputs, "searches", "odd"), 0o755)
	os.WriteFile(filepath.Join(inputs, "searches", "odd", "READY"), []byte("tenant: [x\n"), 0o644)
	a := app.NewLocal(data, offline.New())
	res, err := a.Intake.HandleS3(context.Background(), s3Event("searches/half/READY", "searches/odd/READY"))
	if err != nil {
		t.Fatalf("an incomplete upload failed the invocation (S3 would retry it for nothing): %v", err)
	}
	if len(res.Started) != 0 || len(res.Rejected) != 2 || !strings.Contains(res.Rejected[0], "searches/half/kickoff.md") || !strings.Contains(res.Rejected[1], "READY must be empty or YAML") {
		t.Errorf("result %+v", res)
	}
}

// ledgerStore is a context store with a usage ledger that counts reads.
type ledgerStore struct {
	*store.Memory
	gets int
}

func (l *ledgerStore) Get(ctx context.Context, key string) ([]byte, bool, error) {
	l.gets++
	return l.Memory.Get(ctx, key)
}

func (l *ledgerStore) Usage(context.Context, string) (llm.Usage, error) {
	return llm.Usage{Calls: 7, PromptTokens: 7000}, nil
}

func TestStateReadsUsageFromTheLedger(t *testing.T) {
	ctx := context.Background()
	kv := &ledgerStore{Memory: store.NewMemory()}
	reports := t.TempDir()
	// Still running: no summary.json, one candidate already reported.
	os.MkdirAll(filepath.Join(reports, "reports", "s1", "c-002"), 0o755)
	os.WriteFile(filepath.Join(reports, "reports", "s1", "c-002", "report.json"), []byte(`{"decision":"DESCARTADO_GEM1","reason":"gate_gem1"}`), 0o644)
	rec, _ := json.Marshal(intake.SearchRecord{SearchID: "s1", Tenant: "acme", Execution: "acme--s1", Input: search.StartInput{ReportPrefix: "reports/s1"}})
	kv.PutIfAbsent(ctx, "search/s1", rec)
	for _, k := range []string{"stage/s1/c-001/gem1/0/h1", "stage/s1/c-001/gem2/0/h2", "stage/s1/c-002/gem1/0/h3"} {
		kv.PutIfAbsent(ctx, k, []byte(`{"usage":{"calls":1}}`))
	}
	svc := &intake.Service{Inputs: blob.NewDir(t.TempDir()), Reports: blob.NewDir(reports), Records: kv,
		Starter: starter.NewLocal(store.NewMemory(), nil)}
	st, err := svc.State(ctx, "acme", "s1")
	if err != nil {
		t.Fatal(err)
	}
	if st.Usage.Calls != 7 || len(st.Candidates) != 2 || st.Candidates[0].LastStage != "gem2" ||
		st.Candidates[0].Decision != "" || st.Candidates[1].Decision != "DESCARTADO_GEM1" {
		t.Errorf("state %+v", st)
	}
	if kv.gets != 1 {
		t.Errorf("%d reads, want 1 (the search record): stage records must not be read one by one", kv.gets)
	}
}
