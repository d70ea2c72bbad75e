// Package intake is how evaluations start and how their state is read: the
// trigger (a search uploaded under searches/<tenant>/<id>/ plus a READY
// marker, notified by S3 through the inputs queue, starts exactly one
// evaluation) and the operations behind the HTTP
// API (start an uploaded search, list, read state, fetch reports). Every
// input and record is scoped by tenant: another tenant's search answers
// exactly as a search that does not exist.
package intake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/search"
	"github.com/veredicto/veredicto/internal/starter"
)

// A search's READY marker, under its folder (search.InputPrefix), and the
// tenant of a search uploaded without one.
const (
	ReadyMarker   = "READY"
	DefaultTenant = "default"
)

// Blobs reads objects (inputs and reports buckets).
type Blobs interface {
	Get(ctx context.Context, key string) ([]byte, error)
	List(ctx context.Context, prefix string) ([]string, error)
}

// Records is the context store: search records and stage records.
type Records interface {
	Get(ctx context.Context, key string) ([]byte, bool, error)
	PutIfAbsent(ctx context.Context, key string, value []byte) (bool, error)
	List(ctx context.Context, prefix string) ([]string, error)
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
	// Limits bound a search's documents, as the workflow's loader bounds
	// them: the start's check and the sources route read with them
	// (search.DefaultLimits when zero).
	Limits search.Limits
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

// recordKey is a search record's key: one partition per tenant, so a
// tenant's searches are listed with one query and never another's.
func recordKey(tenant, searchID string) string { return "search/" + tenant + "/" + searchID }

// notFound is the one answer for a search the caller cannot see: absent,
// malformed or another tenant's are indistinguishable.
func notFound(searchID string) error {
	return &veredicto.NotFoundError{What: "search " + searchID}
}

func (s *Service) record(ctx context.Context, tenant, searchID string) (SearchRecord, bool, error) {
	b, ok, err := s.Records.Get(ctx, recordKey(tenant, searchID))
	if err != nil || !ok {
		if err != nil {
			err = fmt.Errorf("read search %s: %w", searchID, err)
		}
		return SearchRecord{}, false, err
	}
	var rec SearchRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return SearchRecord{}, false, fmt.Errorf("decode search %s: %w", searchID, err)
	}
	return rec, true, nil
}

// visible returns the tenant's record of searchID, or NotFound.
func (s *Service) visible(ctx context.Context, tenant, searchID string) (SearchRecord, error) {
	if !veredicto.ValidID(tenant) || !veredicto.ValidID(searchID) {
		return SearchRecord{}, notFound(searchID)
	}
	rec, ok, err := s.record(ctx, tenant, searchID)
	switch {
	case err != nil:
		return SearchRecord{}, err
	case !ok || rec.Tenant != tenant:
		return SearchRecord{}, notFound(searchID)
	case strings.TrimSuffix(rec.Input.InputPrefix, "/") != search.InputPrefix(tenant, searchID) ||
		strings.TrimSuffix(rec.Input.ReportPrefix, "/") != search.ReportPrefix(tenant, searchID):
		// Every read of a search starts from these prefixes: a record
		// naming another folder (damaged, or written by hand) is never
		// followed.
		s.logger().WarnContext(ctx, "search record names folders outside its tenant's; answered as missing", "tenant", tenant, "search_id", searchID)
		return SearchRecord{}, notFound(searchID)
	}
	return rec, nil
}

// SearchItem is one entry of a tenant's list of searches.
type SearchItem struct {
	SearchID  string `json:"search_id"`
	CreatedAt string `json:"created_at"`
	Origin    string `json:"origin"`
}

// List returns the tenant's started searches, sorted by id.
func (s *Service) List(ctx context.Context, tenant string) ([]SearchItem, error) {
	out := []SearchItem{}
	if !veredicto.ValidID(tenant) {
		return out, nil
	}
	keys, err := s.Records.List(ctx, "search/"+tenant+"/")
	if err != nil {
		return nil, fmt.Errorf("list searches: %w", err)
	}
	for _, k := range keys {
		rec, ok, err := s.record(ctx, tenant, path.Base(k))
		if err != nil {
			return nil, err
		}
		if ok && rec.Tenant == tenant {
			out = append(out, SearchItem{SearchID: rec.SearchID, CreatedAt: rec.CreatedAt, Origin: rec.Origin})
		}
	}
	return out, nil
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
	SearchID string `json:"search_id"`
	Status   string `json:"status"`
	// Execution is the name of the search's latest run.
	Execution string `json:"execution,omitempty"`
	StartedAt string `json:"started_at,omitempty"`
	StoppedAt string `json:"stopped_at,omitempty"`
	// Error and Cause say why an execution failed: the ASL error name and
	// its message.
	Error      string           `json:"error,omitempty"`
	Cause      string           `json:"cause,omitempty"`
	Candidates []CandidateState `json:"candidates"`
	Usage      veredicto.Usage  `json:"usage"`
}

// State reads a search's execution status, per-candidate stages and
// decisions, and usage.
func (s *Service) State(ctx context.Context, tenant, searchID string) (SearchState, error) {
	rec, err := s.visible(ctx, tenant, searchID)
	if err != nil {
		return SearchState{}, err
	}
	st := SearchState{SearchID: searchID, Status: "PENDING", Candidates: []CandidateState{}}
	cur, _, err := s.current(ctx, rec)
	if err != nil {
		return SearchState{}, err
	}
	st.Execution = cur
	switch ex, err := s.Starter.Describe(ctx, cur); {
	case err == nil:
		st.Status, st.Error, st.Cause = ex.Status, ex.Error, causeMessage(ex.Cause)
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
	prog, err := search.Progress(ctx, s.Records, tenant, searchID)
	if err != nil {
		return SearchState{}, err
	}
	st.Usage = prog.Usage
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
	for _, cp := range prog.Candidates {
		c := CandidateState{CandidateID: cp.CandidateID, Stages: cp.Stages}
		if len(c.Stages) > 0 {
			c.LastStage = c.Stages[len(c.Stages)-1]
		}
		if r, ok := decided[c.CandidateID]; ok {
			c.Decision, c.Reason = r.Decision, r.Reason
		} else {
			var r search.Report
			if err := s.readReport(ctx, path.Join(rec.Input.ReportPrefix, c.CandidateID, "report.json"), &r); err != nil {
				return SearchState{}, err
			}
			c.Decision, c.Reason = r.Decision, r.Reason
		}
		st.Candidates = append(st.Candidates, c)
	}
	// A candidate decided without any stage (escalated before GEM1 for
	// want of its minimum documents) is in the summary only.
	for _, r := range sum.Ranking {
		if !slices.ContainsFunc(st.Candidates, func(c CandidateState) bool { return c.CandidateID == r.CandidateID }) {
			st.Candidates = append(st.Candidates, CandidateState{CandidateID: r.CandidateID, Stages: []string{}, Decision: r.Decision, Reason: r.Reason})
		}
	}
	slices.SortFunc(st.Candidates, func(a, b CandidateState) int { return strings.Compare(a.CandidateID, b.CandidateID) })
	return st, nil
}

// causeMessage is the readable part of an execution's cause: Step Functions
// records a Lambda error as JSON {"errorMessage", "errorType", …}; a person
// needs the message.
func causeMessage(cause string) string {
	var lambdaErr struct {
		Message string `json:"errorMessage"`
	}
	if strings.HasPrefix(strings.TrimSpace(cause), "{") && json.Unmarshal([]byte(cause), &lambdaErr) == nil && lambdaErr.Message != "" {
		return lambdaErr.Message
	}
	return cause
}

// readReport decodes a report file into v; a report not written yet
// leaves v zero. Storage errors are returned, not taken for "no report".
func (s *Service) readReport(ctx context.Context, key string, v any) error {
	b, err := s.Reports.Get(ctx, key)
	switch {
	case errors.As(err, new(*veredicto.NotFoundError)):
		return nil
	case err != nil:
		return fmt.Errorf("read %s: %w", key, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decode %s: %w", key, err)
	}
	return nil
}

// Report returns a candidate's report.json or report.md.
func (s *Service) Report(ctx context.Context, tenant, searchID, candidateID string, markdown bool) ([]byte, error) {
	rec, err := s.visible(ctx, tenant, searchID)
	if err != nil {
		return nil, err
	}
	if !veredicto.ValidID(candidateID) {
		return nil, &veredicto.InvalidInputError{File: "request path", Field: "candidate_id", Problem: fmt.Sprintf("%q is not a valid candidate id", candidateID)}
	}
	missing := &veredicto.NotFoundError{What: fmt.Sprintf("report of candidate %s in search %s", candidateID, searchID)}
	name := "report.json"
	if markdown {
		name = "report.md"
	}
	b, err := s.Reports.Get(ctx, path.Join(rec.Input.ReportPrefix, candidateID, name))
	if errors.As(err, new(*veredicto.NotFoundError)) {
		return nil, missing
	}
	return b, err
}
