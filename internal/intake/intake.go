// Package intake is how evaluations start and how their state is read: the
// S3 trigger (a search uploaded under searches/<id>/ plus a READY marker
// starts exactly one evaluation) and the HTTP API (start from an uploaded
// prefix, read state, fetch reports), both scoped to a tenant.
package intake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/llm"
	"github.com/veredicto/veredicto/internal/search"
	"github.com/veredicto/veredicto/internal/starter"
)

// Layout of the buckets (the same keys locally under a data folder).
const (
	SearchesPrefix = "searches"
	ReportsPrefix  = "reports"
	ReadyMarker    = "READY"
	DefaultTenant  = "default"
)

// Blobs reads objects (inputs and reports buckets).
type Blobs interface {
	Get(ctx context.Context, key string) ([]byte, error)
}

// Records is the context store: search records and stage records.
type Records interface {
	Get(ctx context.Context, key string) ([]byte, bool, error)
	PutIfAbsent(ctx context.Context, key string, value []byte) (bool, error)
	List(ctx context.Context, prefix string) ([]string, error)
}

// UsageReader is the optional usage ledger of the context store.
type UsageReader interface {
	Usage(ctx context.Context, searchID string) (llm.Usage, error)
}

// Starter starts and describes executions by deterministic name.
type Starter interface {
	Start(ctx context.Context, name string, input []byte) (starter.Execution, error)
	Describe(ctx context.Context, name string) (starter.Status, error)
}

// Service holds the intake's dependencies; safe for concurrent use.
type Service struct {
	Inputs  Blobs
	Reports Blobs
	Records Records
	Starter Starter
	Logger  *slog.Logger
	Now     func() time.Time
}

func (s *Service) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// SearchRecord is what the intake keeps about a started search.
type SearchRecord struct {
	SearchID  string            `json:"search_id"`
	Tenant    string            `json:"tenant"`
	Execution string            `json:"execution"`
	CreatedAt string            `json:"created_at"`
	Input     search.StartInput `json:"input"`
	Origin    string            `json:"origin"` // "s3" or "api"
}

func recordKey(searchID string) string { return "search/" + searchID }

// InvalidRequestError is a request the caller must fix (HTTP 400/422).
type InvalidRequestError struct {
	Field   string
	Problem string
	Status  int
}

func (e *InvalidRequestError) Error() string {
	if e.Field == "" {
		return e.Problem
	}
	return fmt.Sprintf("%s: %s", e.Field, e.Problem)
}

// StartRequest starts the evaluation of an uploaded search.
type StartRequest struct {
	SearchID    string         `json:"search_id" yaml:"search_id"`
	Concurrency int            `json:"concurrency,omitempty" yaml:"concurrency"`
	Thresholds  map[string]int `json:"thresholds,omitempty" yaml:"thresholds"`
}

// Started is the outcome of a start.
type Started struct {
	SearchID  string `json:"search_id"`
	Execution string `json:"execution"`
	Started   bool   `json:"started"` // false: it was already started
}

// Start records the search for tenant and starts its evaluation under a
// deterministic execution name. Repeating it is harmless: the record and
// the execution name are claimed once.
func (s *Service) Start(ctx context.Context, tenant, origin string, req StartRequest) (Started, error) {
	if !search.ValidID(req.SearchID) {
		return Started{}, &InvalidRequestError{Field: "search_id", Problem: fmt.Sprintf("%q must be 1–64 letters, digits, '.', '_' or '-', starting with a letter or digit", req.SearchID), Status: 400}
	}
	if req.Concurrency < 0 || req.Concurrency > 40 {
		return Started{}, &InvalidRequestError{Field: "concurrency", Problem: fmt.Sprintf("%d is out of range 1–40", req.Concurrency), Status: 400}
	}
	prefix := path.Join(SearchesPrefix, req.SearchID)
	var missing []string
	for _, f := range []string{"jd.md", "kickoff.md"} {
		if _, err := s.Inputs.Get(ctx, path.Join(prefix, f)); err != nil {
			var nf *veredicto.NotFoundError
			if !errors.As(err, &nf) {
				return Started{}, fmt.Errorf("check %s/%s: %w", prefix, f, err)
			}
			missing = append(missing, path.Join(prefix, f))
		}
	}
	if len(missing) > 0 {
		return Started{}, &InvalidRequestError{Field: "search_id", Problem: "search blocked: required document(s) missing: " + strings.Join(missing, ", "), Status: 422}
	}
	name := starter.ExecutionName(tenant, req.SearchID)
	rec := SearchRecord{
		SearchID: req.SearchID, Tenant: tenant, Execution: name, CreatedAt: s.now().UTC().Format(time.RFC3339), Origin: origin,
		Input: search.StartInput{SearchID: req.SearchID, InputPrefix: prefix, ReportPrefix: path.Join(ReportsPrefix, req.SearchID),
			Concurrency: req.Concurrency, Thresholds: req.Thresholds},
	}
	b, _ := json.Marshal(rec)
	if _, err := s.Records.PutIfAbsent(ctx, recordKey(req.SearchID), b); err != nil {
		return Started{}, fmt.Errorf("record search %s: %w", req.SearchID, err)
	}
	// Whoever wrote first owns the search; use its record (and input), so a
	// duplicate never starts a differently configured execution.
	stored, err := s.record(ctx, req.SearchID)
	if err != nil {
		return Started{}, err
	}
	if stored.Tenant != tenant {
		return Started{}, &veredicto.ConflictError{What: "search id " + req.SearchID, Problem: "already in use"}
	}
	input, _ := json.Marshal(stored.Input)
	ex, err := s.Starter.Start(ctx, stored.Execution, input)
	if err != nil {
		return Started{}, err
	}
	s.logger().InfoContext(ctx, "search start", "search_id", req.SearchID, "tenant", tenant, "execution", ex.Name, "started", ex.Started, "origin", origin)
	return Started{SearchID: req.SearchID, Execution: ex.Name, Started: ex.Started}, nil
}

func (s *Service) record(ctx context.Context, searchID string) (SearchRecord, error) {
	b, ok, err := s.Records.Get(ctx, recordKey(searchID))
	if err != nil {
		return SearchRecord{}, fmt.Errorf("read search %s: %w", searchID, err)
	}
	if !ok {
		return SearchRecord{}, &veredicto.NotFoundError{What: "search " + searchID}
	}
	var rec SearchRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return SearchRecord{}, fmt.Errorf("decode search %s: %w", searchID, err)
	}
	return rec, nil
}

// visible returns the record when tenant owns it; otherwise NotFound, so a
// caller cannot probe other tenants' search ids.
func (s *Service) visible(ctx context.Context, tenant, searchID string) (SearchRecord, error) {
	if !search.ValidID(searchID) {
		return SearchRecord{}, &veredicto.NotFoundError{What: fmt.Sprintf("search %q", searchID)}
	}
	rec, err := s.record(ctx, searchID)
	if err != nil {
		return rec, err
	}
	if rec.Tenant != tenant {
		return SearchRecord{}, &veredicto.NotFoundError{What: "search " + searchID}
	}
	return rec, nil
}

// CandidateState is one candidate's progress.
type CandidateState struct {
	CandidateID string   `json:"candidate_id"`
	Stages      []string `json:"stages"`
	LastStage   string   `json:"last_stage"`
	Decision    string   `json:"decision,omitempty"`
	Reason      string   `json:"reason,omitempty"`
}

// SearchState answers GET /searches/{id}.
type SearchState struct {
	SearchID   string           `json:"search_id"`
	Status     string           `json:"status"`
	StartedAt  string           `json:"started_at,omitempty"`
	StoppedAt  string           `json:"stopped_at,omitempty"`
	Error      string           `json:"error,omitempty"`
	Candidates []CandidateState `json:"candidates"`
	Usage      llm.Usage        `json:"usage"`
}

// State reads a search's execution status, per-candidate stages and
// decisions, and usage.
func (s *Service) State(ctx context.Context, tenant, searchID string) (SearchState, error) {
	rec, err := s.visible(ctx, tenant, searchID)
	if err != nil {
		return SearchState{}, err
	}
	st := SearchState{SearchID: searchID, Status: "PENDING", Candidates: []CandidateState{}}
	switch ex, err := s.Starter.Describe(ctx, rec.Execution); {
	case err == nil:
		st.Status, st.Error = ex.Status, ex.Error
		if !ex.StartedAt.IsZero() {
			st.StartedAt = ex.StartedAt.UTC().Format(time.RFC3339)
		}
		if !ex.StoppedAt.IsZero() {
			st.StoppedAt = ex.StoppedAt.UTC().Format(time.RFC3339)
		}
	case errors.As(err, new(*veredicto.NotFoundError)):
	default:
		return SearchState{}, err
	}
	keys, err := s.Records.List(ctx, "stage/"+searchID+"/")
	if err != nil {
		return SearchState{}, fmt.Errorf("list stages of %s: %w", searchID, err)
	}
	// With a usage ledger (DynamoDB) the totals are one read; otherwise
	// they are summed from the stage records.
	ledger, _ := s.Records.(UsageReader)
	if ledger != nil {
		if st.Usage, err = ledger.Usage(ctx, searchID); err != nil {
			return SearchState{}, fmt.Errorf("read usage of %s: %w", searchID, err)
		}
	}
	byCand := map[string]*CandidateState{}
	for _, k := range keys {
		cand, stage, ok := search.ParseStageKey(k)
		if !ok {
			continue
		}
		if ledger == nil {
			b, ok, err := s.Records.Get(ctx, k)
			if err != nil {
				return SearchState{}, fmt.Errorf("read %s: %w", k, err)
			}
			if ok {
				var r search.StageRecord
				if json.Unmarshal(b, &r) == nil {
					st.Usage.Add(r.Usage)
				}
			}
		}
		if cand == "-" {
			continue // search-level stage (gem5)
		}
		c := byCand[cand]
		if c == nil {
			c = &CandidateState{CandidateID: cand}
			byCand[cand] = c
		}
		c.Stages = append(c.Stages, stage)
	}
	ids := make([]string, 0, len(byCand))
	for id := range byCand {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	// A finished search has every decision in summary.json (one read);
	// while it runs, each decided candidate has its report.json.
	var sum search.Summary
	if err := s.readReport(ctx, path.Join(rec.Input.ReportPrefix, "summary.json"), &sum); err != nil {
		return SearchState{}, err
	}
	decided := map[string]search.CandidateResult{}
	for _, r := range sum.Ranking {
		decided[r.CandidateID] = r
	}
	for _, id := range ids {
		c := byCand[id]
		sort.SliceStable(c.Stages, func(i, j int) bool { return stageOrder(c.Stages[i]) < stageOrder(c.Stages[j]) })
		c.LastStage = c.Stages[len(c.Stages)-1]
		if r, ok := decided[id]; ok {
			c.Decision, c.Reason = r.Decision, r.Reason
		} else {
			var r search.Report
			if err := s.readReport(ctx, path.Join(rec.Input.ReportPrefix, id, "report.json"), &r); err != nil {
				return SearchState{}, err
			}
			c.Decision, c.Reason = r.Decision, r.Reason
		}
		st.Candidates = append(st.Candidates, *c)
	}
	return st, nil
}

// readReport decodes a report file into v; a report not written yet
// leaves v zero. Storage errors are returned, not taken for "no report".
func (s *Service) readReport(ctx context.Context, key string, v any) error {
	b, err := s.Reports.Get(ctx, key)
	var nf *veredicto.NotFoundError
	switch {
	case errors.As(err, &nf):
		return nil
	case err != nil:
		return fmt.Errorf("read %s: %w", key, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decode %s: %w", key, err)
	}
	return nil
}

// stageOrder sorts stage names in the order the protocol runs them.
func stageOrder(stage string) int {
	order := []string{"gem1", "gem2", "gem3", "gem3_reask", "gem4", "correction_1", "gem4_retry_1", "correction_2", "gem4_retry_2"}
	for i, s := range order {
		if s == stage {
			return i
		}
	}
	return len(order)
}

// Report returns a candidate's report.json or report.md.
func (s *Service) Report(ctx context.Context, tenant, searchID, candidateID string, markdown bool) ([]byte, error) {
	rec, err := s.visible(ctx, tenant, searchID)
	if err != nil {
		return nil, err
	}
	if !search.ValidID(candidateID) {
		return nil, &InvalidRequestError{Field: "candidate_id", Problem: fmt.Sprintf("%q is not a valid candidate id", candidateID), Status: 400}
	}
	name := "report.json"
	if markdown {
		name = "report.md"
	}
	b, err := s.Reports.Get(ctx, path.Join(rec.Input.ReportPrefix, candidateID, name))
	var nf *veredicto.NotFoundError
	if errors.As(err, &nf) {
		return nil, &veredicto.NotFoundError{What: fmt.Sprintf("report of candidate %s in search %s", candidateID, searchID)}
	}
	return b, err
}
