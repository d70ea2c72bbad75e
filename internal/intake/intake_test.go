package intake_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/app"
	fileblob "github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/confirm"
	fileconfirm "github.com/veredicto/veredicto/internal/confirm/file"
	"github.com/veredicto/veredicto/internal/intake"
	"github.com/veredicto/veredicto/internal/search"
	"github.com/veredicto/veredicto/internal/search/offline"
	"github.com/veredicto/veredicto/internal/starter"
	localstarter "github.com/veredicto/veredicto/internal/starter/local"
	filestore "github.com/veredicto/veredicto/internal/store/file"
)

// copyExample uploads examples/search-demo to the local inputs bucket as
// searches/<tenant>/<id>/, without the READY marker.
func copyExample(t *testing.T, data, tenant, id string) {
	t.Helper()
	if err := app.UploadLocal(context.Background(), data, "../../examples/search-demo", tenant, id); err != nil {
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

func (c *countingAnalyst) Gem5(ctx context.Context, in search.Gem5Input) (search.Answer[search.Gem5Content], veredicto.Usage, error) {
	c.gem5++
	return c.Analyst.Gem5(ctx, in)
}

func TestDuplicateS3EventStartsOneEvaluation(t *testing.T) {
	data := t.TempDir()
	copyExample(t, data, "acme", "demo-cfo-andina")
	inputs, _, _ := app.LocalLayout(data)
	os.WriteFile(filepath.Join(inputs, "searches", "acme", "demo-cfo-andina", "READY"), []byte("tenant: acme\nconcurrency: 3\n"), 0o644)
	an := &countingAnalyst{Analyst: offline.New()}
	a := app.NewLocal(data, an, nil)
	ctx := context.Background()
	ev := s3Event("searches/acme/demo-cfo-andina/READY", "searches/acme/demo-cfo-andina/jd.md")
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

func TestTriggerRejectsUploadsThatCannotStartWithoutFailing(t *testing.T) {
	data := t.TempDir()
	inputs, _, _ := app.LocalLayout(data)
	write := func(rel, body string) {
		t.Helper()
		p := filepath.Join(inputs, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("searches/acme/half/jd.md", "# JD\n")
	write("searches/acme/half/READY", "")
	write("searches/acme/odd/READY", "tenant: [x\n")
	write("searches/acme/keys/READY", "tenants: x\nconcurrency: 2.5\n")
	write("searches/acme/frac/READY", "thresholds: {gem1: 6.5}\n")
	write("searches/acme/spoof/READY", "tenant: globex\n")
	write("searches/old-layout/READY", "")
	write("searches/bravo/s9/READY", "")
	if err := os.MkdirAll(filepath.Join(inputs, "searches", "acme", "linked"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.Symlink(filepath.Join(data, "auth", "hs256.key"), filepath.Join(inputs, "searches", "acme", "linked", "READY"))
	os.Symlink(filepath.Join(inputs, "searches", "bravo", "s9"), filepath.Join(inputs, "searches", "acme", "other"))
	a := app.NewLocal(data, offline.New(), nil)
	res, err := a.Intake.HandleS3(context.Background(), s3Event("searches/acme/half/READY", "searches/acme/odd/READY",
		"searches/acme/keys/READY", "searches/acme/frac/READY", "searches/acme/spoof/READY", "searches/old-layout/READY",
		"searches/acme/linked/READY", "searches/acme/other/READY"))
	if err != nil {
		t.Fatalf("an upload that cannot start failed the invocation (S3 would retry it for nothing): %v", err)
	}
	want := []string{
		"searches/acme/half/READY: searches/acme/half/: required document(s) missing: kickoff.md",
		"searches/acme/odd/READY: READY is not valid YAML (line 1: did not find expected ',' or ']')",
		`searches/acme/keys/READY: READY: unknown key "tenants" (allowed: tenant, concurrency, thresholds, review); READY: concurrency must be a whole number from 1 to 40`,
		"searches/acme/frac/READY: thresholds.gem1: 6.5 is not a whole number (gates compare whole scores; a fraction would be truncated): use 6 or 7; searches/acme/frac/: required document(s) missing: jd.md, kickoff.md",
		`searches/acme/spoof/READY: READY names tenant "globex" but was uploaded under tenant "acme"; the folder decides, remove the tenant key`,
		"searches/old-layout/READY: a READY marker belongs at searches/<tenant>/<search_id>/READY",
		"searches/acme/linked/READY: READY is a symbolic link; upload the file itself",
		"searches/acme/other/READY: searches/acme/other: is a symbolic link; upload the file itself",
	}
	if len(res.Started) != 0 || strings.Join(res.Rejected, "\n") != strings.Join(want, "\n") {
		t.Errorf("rejected:\n got %q\nwant %q (started %v)", res.Rejected, want, res.Started)
	}
	for _, r := range res.Rejected {
		if strings.Contains(r, "intake.") || strings.Contains(r, "{") || strings.Contains(r, "Go struct") {
			t.Errorf("rejection %q leaks a Go type or a dump", r)
		}
	}
	// Nothing was recorded: the global search list of acme is empty.
	if l, err := a.Intake.List(context.Background(), "acme"); err != nil || len(l) != 0 {
		t.Errorf("List after rejections: %v %v, want none", l, err)
	}
}

// TestTriggerTenantComesFromThePath: the READY marker of acme's upload
// starts acme's search; globex, whose folder holds the same search id,
// sees nothing, and acme's execution reads only acme's documents.
func TestTriggerTenantComesFromThePath(t *testing.T) {
	data := t.TempDir()
	copyExample(t, data, "acme", "demo-cfo-andina")
	inputs, _, _ := app.LocalLayout(data)
	os.WriteFile(filepath.Join(inputs, "searches", "acme", "demo-cfo-andina", "READY"), nil, 0o644)
	a := app.NewLocal(data, offline.New(), nil)
	ctx := context.Background()
	res, err := a.Intake.HandleS3(ctx, s3Event("searches/acme/demo-cfo-andina/READY"))
	if err != nil || len(res.Started) != 1 {
		t.Fatalf("trigger: %+v %v", res, err)
	}
	if got, want := res.Started[0].Execution, starter.ExecutionName("acme", "demo-cfo-andina"); got != want {
		t.Errorf("execution %q, want %q", got, want)
	}
	_, reports, _ := app.LocalLayout(data)
	if _, err := os.Stat(filepath.Join(reports, "reports", "acme", "demo-cfo-andina", "summary.json")); err != nil {
		t.Errorf("reports not under reports/acme/demo-cfo-andina/: %v", err)
	}
	if _, err := a.Intake.State(ctx, "globex", "demo-cfo-andina"); !isNotFound(err) {
		t.Errorf("globex reads acme's search: %v", err)
	}
	if l, _ := a.Intake.List(ctx, "globex"); len(l) != 0 {
		t.Errorf("globex lists %v", l)
	}
	if l, _ := a.Intake.List(ctx, "acme"); len(l) != 1 || l[0].SearchID != "demo-cfo-andina" || l[0].Origin != "s3" {
		t.Errorf("acme lists %+v", l)
	}
}

// TestBadStartBurnsNoID: a start that fails validation records nothing;
// once the upload is fixed the same id starts normally.
func TestBadStartBurnsNoID(t *testing.T) {
	data := t.TempDir()
	copyExample(t, data, "acme", "s-fix")
	inputs, _, _ := app.LocalLayout(data)
	kickoff := filepath.Join(inputs, "searches", "acme", "s-fix", "kickoff.md")
	saved, err := os.ReadFile(kickoff)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(kickoff)
	os.WriteFile(filepath.Join(inputs, "searches", "acme", "s-fix", "search.yaml"), []byte("search_id: s-fix\n"), 0o644)
	a := app.NewLocal(data, offline.New(), nil)
	ctx := context.Background()
	req := intake.StartRequest{SearchID: "s-fix", Concurrency: 99, Thresholds: map[string]float64{"gem1": 6.5, "gem2": 11, "gem9": 1},
		Review: &search.ReviewOptions{Wait: true, TimeoutSeconds: -5}}
	_, err = a.Intake.Start(ctx, "acme", "api", req)
	var rej *intake.RequestError
	if !errors.As(err, &rej) {
		t.Fatalf("bad start: %v, want *intake.RequestError", err)
	}
	wantProblems := []string{
		"concurrency 99 is out of range 1–40",
		"review.timeout_seconds -5 is out of range 1–31536000 (0: the default, 7 days)",
		"thresholds.gem1: 6.5 is not a whole number (gates compare whole scores; a fraction would be truncated): use 6 or 7",
		// Named even while the documents are missing.
		"thresholds.gem2: 11 is out of range 0–10",
		"thresholds.gem9: unknown threshold (want gem1, gem2, gem3, gem4 or max_qa_retries)",
		"searches/acme/s-fix/: required document(s) missing: kickoff.md",
	}
	if strings.Join(rej.Problems, "\n") != strings.Join(wantProblems, "\n") || rej.MissingOnly {
		t.Errorf("problems:\n got %q\nwant %q", rej.Problems, wantProblems)
	}
	// The documents are fixed; the request still has bad thresholds, each
	// named (search's own Validate judges the range and the names).
	os.WriteFile(kickoff, saved, 0o644)
	_, err = a.Intake.Start(ctx, "acme", "api", intake.StartRequest{SearchID: "s-fix", Thresholds: map[string]float64{"gem2": 11, "gem9": 1}})
	if !errors.As(err, &rej) || len(rej.Problems) != 2 || !strings.Contains(rej.Problems[0], "thresholds.gem2") || !strings.Contains(rej.Problems[1], "thresholds.gem9") {
		t.Fatalf("bad thresholds: %v", err)
	}
	// search.yaml's own gates are checked too, every one of them.
	yml := filepath.Join(inputs, "searches", "acme", "s-fix", "search.yaml")
	os.WriteFile(yml, []byte("search_id: s-fix\ngates: {gem1: 11, gem4: -1}\n"), 0o644)
	_, err = a.Intake.Start(ctx, "acme", "api", intake.StartRequest{SearchID: "s-fix"})
	if !errors.As(err, &rej) || len(rej.Problems) != 1 || !strings.Contains(rej.Problems[0], "gates.gem1") || !strings.Contains(rej.Problems[0], "gates.gem4") {
		t.Fatalf("bad search.yaml: %v", err)
	}
	os.WriteFile(yml, []byte("search_id: s-fix\n"), 0o644)
	if l, _ := a.Intake.List(ctx, "acme"); len(l) != 0 {
		t.Fatalf("rejected starts recorded %v", l)
	}
	st, err := a.Intake.Start(ctx, "acme", "api", intake.StartRequest{SearchID: "s-fix", Thresholds: map[string]float64{"gem1": 7}})
	if err != nil || !st.Started {
		t.Fatalf("corrected start: %+v %v, want it started", st, err)
	}
	state, err := a.Intake.State(ctx, "acme", "s-fix")
	if err != nil || state.Status != "SUCCEEDED" {
		t.Errorf("state after the corrected start: %+v %v", state, err)
	}
}

// failingStarter records executions that end FAILED the way Step
// Functions reports a Lambda error.
type failingStarter struct{ intake.Starter }

func (failingStarter) Describe(_ context.Context, name string) (starter.Status, error) {
	return starter.Status{Name: name, Status: "FAILED", Error: "MandateBlockedError",
		Cause: `{"errorMessage":"GEM5 reported critical blockers","errorType":"MandateBlockedError"}`}, nil
}

func TestStateShowsTheCauseOfAFailedExecution(t *testing.T) {
	data := t.TempDir()
	copyExample(t, data, "acme", "demo-cfo-andina")
	a := app.NewLocal(data, offline.New(), nil)
	ctx := context.Background()
	if _, err := a.Intake.Start(ctx, "acme", "api", intake.StartRequest{SearchID: "demo-cfo-andina"}); err != nil {
		t.Fatal(err)
	}
	svc := *a.Intake
	svc.Starter = failingStarter{a.Intake.Starter}
	st, err := svc.State(ctx, "acme", "demo-cfo-andina")
	if err != nil || st.Status != "FAILED" || st.Error != "MandateBlockedError" || st.Cause != "GEM5 reported critical blockers" {
		t.Errorf("state %+v %v, want FAILED with the cause's message", st, err)
	}
}

// ledgerStore is a context store with a usage ledger that counts reads.
type ledgerStore struct {
	*filestore.Memory
	gets int
}

func (l *ledgerStore) Get(ctx context.Context, key string) ([]byte, bool, error) {
	l.gets++
	return l.Memory.Get(ctx, key)
}

func (l *ledgerStore) Usage(context.Context, string, string) (veredicto.Usage, error) {
	return veredicto.Usage{Calls: 7, PromptTokens: 7000}, nil
}

func TestStateReadsUsageFromTheLedger(t *testing.T) {
	ctx := context.Background()
	kv := &ledgerStore{Memory: filestore.NewMemory()}
	reports := t.TempDir()
	// Still running: no summary.json, one candidate already reported.
	os.MkdirAll(filepath.Join(reports, "reports", "acme", "s1", "c-002"), 0o755)
	os.WriteFile(filepath.Join(reports, "reports", "acme", "s1", "c-002", "report.json"), []byte(`{"decision":"DESCARTADO_GEM1","reason":"gate_gem1"}`), 0o644)
	rec, _ := json.Marshal(intake.SearchRecord{SearchID: "s1", Tenant: "acme", Execution: "acme--s1", Input: search.StartInput{InputPrefix: "searches/acme/s1", ReportPrefix: "reports/acme/s1"}})
	kv.PutIfAbsent(ctx, "search/acme/s1", rec)
	for _, k := range []string{"stage/acme/s1/c-001/gem1/0/h1", "stage/acme/s1/c-001/gem2/0/h2", "stage/acme/s1/c-002/gem1/0/h3"} {
		kv.PutIfAbsent(ctx, k, []byte(`{"usage":{"calls":1}}`))
	}
	svc := &intake.Service{Inputs: fileblob.NewDir(t.TempDir()), Reports: fileblob.NewDir(reports), Records: kv,
		Starter: localstarter.New(filestore.NewMemory(), nil)}
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

// sfnLikeStarter answers a repeated start of a running execution as Step
// Functions does: success, as if it had started it.
type sfnLikeStarter struct{ starts map[string]int }

func (s *sfnLikeStarter) Start(_ context.Context, name string, _ []byte) (starter.Execution, error) {
	s.starts[name]++
	return starter.Execution{Name: name, Started: true}, nil
}

func (s *sfnLikeStarter) Describe(_ context.Context, name string) (starter.Status, error) {
	if s.starts[name] == 0 {
		return starter.Status{}, &veredicto.NotFoundError{What: "execution " + name}
	}
	return starter.Status{Name: name, ARN: "arn:aws:states:us-east-1:000000000000:execution:ExecutiveSearchStateMachine:" + name, Status: "RUNNING"}, nil
}

// TestRepeatedStartSaysNotStarted: POST /searches again while the search
// runs answers started: false (and starts nothing), even where the Step
// Functions API answers a repeated start like a new one; it names the
// running execution by its ARN, which a conversation following it on AWS
// needs.
func TestRepeatedStartSaysNotStarted(t *testing.T) {
	data := t.TempDir()
	copyExample(t, data, "acme", "demo-cfo-andina")
	a := app.NewLocal(data, offline.New(), nil)
	st := &sfnLikeStarter{starts: map[string]int{}}
	svc := *a.Intake
	svc.Starter = st
	ctx := context.Background()
	first, err := svc.Start(ctx, "acme", "api", intake.StartRequest{SearchID: "demo-cfo-andina"})
	if err != nil || !first.Started {
		t.Fatalf("first start: %+v, %v", first, err)
	}
	again, err := svc.Start(ctx, "acme", "api", intake.StartRequest{SearchID: "demo-cfo-andina", Concurrency: 3})
	if err != nil || again.Started || st.starts[first.Execution] != 1 {
		t.Errorf("repeated start: %+v, %v, %d starts; want started false and one start", again, err, st.starts[first.Execution])
	}
	if want := "arn:aws:states:us-east-1:000000000000:execution:ExecutiveSearchStateMachine:" + first.Execution; again.ARN != want {
		t.Errorf("repeated start names ARN %q, want %q", again.ARN, want)
	}
}

// TestRerunAppliesTheSeniorReview: a search that ended with a senior
// review pending runs again on request (rerun: true) once the review is
// decided, under a new execution, and the decision is applied; without
// rerun a known search is not started again.
func TestRerunAppliesTheSeniorReview(t *testing.T) {
	data := t.TempDir()
	copyExample(t, data, "acme", "demo-cfo-andina")
	a := app.NewLocal(data, offline.New(), nil)
	ctx := context.Background()
	req := intake.StartRequest{SearchID: "demo-cfo-andina"}
	if st, err := a.Intake.Start(ctx, "acme", "api", req); err != nil || !st.Started {
		t.Fatalf("first run: %+v, %v", st, err)
	}
	decision := func() string {
		st, err := a.Intake.State(ctx, "acme", "demo-cfo-andina")
		if err != nil || st.Status != "SUCCEEDED" {
			t.Fatalf("state %+v, %v", st, err)
		}
		for _, c := range st.Candidates {
			if c.CandidateID == "c-005" {
				return c.Decision
			}
		}
		return ""
	}
	if d := decision(); d != search.DecisionEscalated {
		t.Fatalf("c-005 first run: %s, want escalated", d)
	}
	store := fileconfirm.Local(data)
	open, _, err := store.List(ctx, "acme", time.Now(), 10)
	if err != nil || len(open) != 1 {
		t.Fatalf("open reviews: %+v, %v", open, err)
	}
	if _, err := (&confirm.Service{Store: store}).Resolve(ctx, "acme", confirm.Resolution{ID: open[0].ID, Approved: true, By: "socia"}); err != nil {
		t.Fatal(err)
	}
	if st, err := a.Intake.Start(ctx, "acme", "api", req); err != nil || st.Started {
		t.Fatalf("a start without rerun: %+v, %v; want started false", st, err)
	}
	req.Rerun = true
	st, err := a.Intake.Start(ctx, "acme", "api", req)
	if err != nil || !st.Started || st.Execution != intake.RerunExecutionName("acme", "demo-cfo-andina", 2) {
		t.Fatalf("rerun: %+v, %v", st, err)
	}
	if d := decision(); d == search.DecisionEscalated || d == "" {
		t.Errorf("c-005 after the approved review and a rerun: %q", d)
	}
	if st, err := a.Intake.State(ctx, "acme", "demo-cfo-andina"); err != nil || st.Execution != intake.RerunExecutionName("acme", "demo-cfo-andina", 2) {
		t.Errorf("state names %q, want the rerun's execution (%v)", st.Execution, err)
	}
	if again, err := a.Intake.Start(ctx, "acme", "api", req); err != nil || !again.Started || again.Execution != intake.RerunExecutionName("acme", "demo-cfo-andina", 3) {
		t.Errorf("a third run: %+v, %v", again, err)
	}
}

// inputStarter records each started execution's input on its way to the
// local starter.
type inputStarter struct {
	intake.Starter
	inputs map[string][]byte
}

func (s *inputStarter) Start(ctx context.Context, name string, input []byte) (starter.Execution, error) {
	s.inputs[name] = input
	return s.Starter.Start(ctx, name, input)
}

// runningSince says every execution it started has run since at, and
// still runs.
type runningSince struct {
	at     time.Time
	starts int
}

func (s *runningSince) Start(_ context.Context, name string, _ []byte) (starter.Execution, error) {
	s.starts++
	return starter.Execution{Name: name, Started: true}, nil
}

func (s *runningSince) Describe(_ context.Context, name string) (starter.Status, error) {
	return starter.Status{Name: name, Status: "RUNNING", StartedAt: s.at}, nil
}

// TestNewReadyUploadRunsTheSearchAgain: a READY written after the search's
// latest run started is a new upload, not a duplicate delivery: once that
// run has ended the search runs again, with the new READY's options; every
// delivery of a READY written before it (the one that started the run,
// duplicates, late ones) starts nothing. While the run goes on, a new
// READY is refused with a sentence saying so.
func TestNewReadyUploadRunsTheSearchAgain(t *testing.T) {
	data := t.TempDir()
	copyExample(t, data, "acme", "demo-cfo-andina")
	inputs, _, _ := app.LocalLayout(data)
	ready := filepath.Join(inputs, "searches", "acme", "demo-cfo-andina", "READY")
	if err := os.WriteFile(ready, []byte("concurrency: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a := app.NewLocal(data, offline.New(), nil)
	st := &inputStarter{Starter: a.Intake.Starter, inputs: map[string][]byte{}}
	svc := *a.Intake
	svc.Starter = st
	ctx := context.Background()
	at := func(when time.Time) events.S3Event {
		ev := s3Event("searches/acme/demo-cfo-andina/READY")
		ev.Records[0].EventTime = when
		return ev
	}
	deliver := func(what string, ev events.S3Event) intake.Started {
		t.Helper()
		res, err := svc.HandleS3(ctx, ev)
		if err != nil || len(res.Started) != 1 || len(res.Rejected) != 0 {
			t.Fatalf("%s: %+v, %v", what, res, err)
		}
		return res.Started[0]
	}
	firstUpload := time.Now().Add(-time.Minute)
	first := deliver("first READY", at(firstUpload))
	if !first.Started {
		t.Fatalf("first READY started nothing: %+v", first)
	}
	if dup := deliver("duplicate", at(firstUpload)); dup.Started || dup.Execution != first.Execution {
		t.Errorf("a duplicate delivery: %+v, want the first run, not started", dup)
	}
	// The consultant adds a candidate and uploads READY again.
	cands := filepath.Join(inputs, "searches", "acme", "demo-cfo-andina", "candidates")
	cv, err := os.ReadFile(filepath.Join(cands, "c-001", "cv.md"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(cands, "c-007"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cands, "c-007", "cv.md"), cv, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ready, []byte("thresholds:\n  gem1: 8\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	secondUpload := time.Now() // after the first run started, before the second
	second := deliver("new READY", at(secondUpload))
	want := intake.RerunExecutionName("acme", "demo-cfo-andina", 2)
	if !second.Started || second.Execution != want {
		t.Fatalf("a READY uploaded after the run: %+v, want %s started", second, want)
	}
	var in search.StartInput
	if err := json.Unmarshal(st.inputs[want], &in); err != nil || in.Thresholds["gem1"] != 8 || in.Concurrency != 0 {
		t.Errorf("the second run's input %s (%v): want the new READY's options", st.inputs[want], err)
	}
	for what, when := range map[string]time.Time{"its duplicate": secondUpload, "a late first READY": firstUpload} {
		if again := deliver(what, at(when)); again.Started || again.Execution != want {
			t.Errorf("%s: %+v, want the second run, not started", what, again)
		}
	}
	if s, err := svc.State(ctx, "acme", "demo-cfo-andina"); err != nil || s.Execution != want || s.Status != "SUCCEEDED" || len(s.Candidates) != 7 {
		t.Errorf("state: %+v, %v; want the second run, with the added candidate", s, err)
	}

	// While a run goes on, a new READY starts nothing and says why.
	runs := &runningSince{at: time.Now().Truncate(time.Millisecond).Add(100 * time.Microsecond)}
	busy := *a.Intake
	busy.Starter = runs
	copyExample(t, data, "beta", "demo-cfo-andina")
	beta := filepath.Join(inputs, "searches", "beta", "demo-cfo-andina", "READY")
	if err := os.WriteFile(beta, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ev := s3Event("searches/beta/demo-cfo-andina/READY")
	ev.Records[0].EventTime = runs.at.Add(-time.Second)
	if res, err := busy.HandleS3(ctx, ev); err != nil || len(res.Started) != 1 || runs.starts != 1 {
		t.Fatalf("beta's first READY: %+v, %v", res, err)
	}
	// Start times are read in whole milliseconds: a READY of the same
	// millisecond as the start it caused is not a new one.
	ev.Records[0].EventTime = runs.at.Add(500 * time.Microsecond)
	if res, err := busy.HandleS3(ctx, ev); err != nil || len(res.Started) != 1 || res.Started[0].Started || runs.starts != 1 {
		t.Errorf("a READY of the start's millisecond: %+v, %v (%d starts)", res, err, runs.starts)
	}
	ev.Records[0].EventTime = runs.at.Add(time.Minute)
	res, err := busy.HandleS3(ctx, ev)
	if err != nil || len(res.Rejected) != 1 || !strings.Contains(res.Rejected[0], "still running") || runs.starts != 1 {
		t.Errorf("a READY uploaded during the run: %+v, %v (%d starts)", res, err, runs.starts)
	}
}

// TestBadReviewTimeoutNamedOnce: a review timeout out of range is one
// problem, with one range, not the request's and the workflow's both.
func TestBadReviewTimeoutNamedOnce(t *testing.T) {
	data := t.TempDir()
	copyExample(t, data, "acme", "demo-cfo-andina")
	a := app.NewLocal(data, offline.New(), nil)
	_, err := a.Intake.Start(context.Background(), "acme", "api", intake.StartRequest{SearchID: "demo-cfo-andina",
		Review: &search.ReviewOptions{Wait: true, TimeoutSeconds: search.MaxReviewTimeoutSeconds + 1}})
	var bad *intake.RequestError
	if !errors.As(err, &bad) || len(bad.Problems) != 1 || !strings.Contains(bad.Problems[0], "review.timeout_seconds") {
		t.Errorf("got %v, want one problem naming review.timeout_seconds", err)
	}
}
