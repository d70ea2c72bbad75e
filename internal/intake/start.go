package intake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/search"
	"github.com/veredicto/veredicto/internal/starter"
)

// MaxConcurrency bounds how many candidates one search evaluates at once.
const MaxConcurrency = 40

// StartRequest starts the evaluation of an uploaded search. Thresholds are
// numbers so that a fractional gate ("gem1: 6.5") is refused by name rather
// than silently truncated.
type StartRequest struct {
	SearchID    string             `json:"search_id" yaml:"search_id"`
	Concurrency int                `json:"concurrency,omitempty" yaml:"concurrency"`
	Thresholds  map[string]float64 `json:"thresholds,omitempty" yaml:"thresholds"`
	// Review, when Wait is set, makes each escalated candidate wait for the
	// senior consultant's decision (GET/POST /api/confirmations) instead of
	// ending escalated with the review pending.
	Review *search.ReviewOptions `json:"review,omitempty" yaml:"review"`
	// Rerun evaluates a search whose last run has ended again, with the
	// options it was first started with (a senior review decided since
	// then is applied; finished stages are reused). Without it a start of
	// a known search answers started: false.
	Rerun bool `json:"rerun,omitempty" yaml:"-"`
	// uploaded is when the READY marker that asks for this start was
	// written (the S3 notification's eventTime); zero for API requests.
	// A READY written after the search's latest run started is a new
	// upload: it runs the search again, with this READY's options.
	uploaded time.Time
}

// MaxReruns bounds the runs of one search after its first.
const MaxReruns = 100

// runKey records the n-th run (n ≥ 2) of a search: its execution name.
// Its prefix is not the search records', so List never takes it for one.
func runKey(tenant, searchID string, n int) string {
	return fmt.Sprintf("searchrun/%s/%s/%04d", tenant, searchID, n)
}

// RerunExecutionName is the execution of a search's n-th run: '#' is no
// id's letter, so the name is hashed and meets no other search's.
func RerunExecutionName(tenant, searchID string, n int) string {
	return starter.ExecutionName(tenant, fmt.Sprintf("%s#%d", searchID, n))
}

// current is the execution of a search's latest run and that run's
// number (1: the first, under the record's name).
func (s *Service) current(ctx context.Context, rec SearchRecord) (string, int, error) {
	keys, err := s.Records.List(ctx, fmt.Sprintf("searchrun/%s/%s/", rec.Tenant, rec.SearchID))
	if err != nil {
		return "", 0, fmt.Errorf("list runs of search %s: %w", rec.SearchID, err)
	}
	if len(keys) == 0 {
		return rec.Execution, 1, nil
	}
	last := keys[len(keys)-1] // zero-padded: the newest sorts last
	b, ok, err := s.Records.Get(ctx, last)
	switch {
	case err != nil: // wrapped, so a transient store error keeps its name
		return "", 0, fmt.Errorf("read run %s: %w", last, err)
	case !ok:
		return "", 0, fmt.Errorf("read run %s: listed but gone", last)
	}
	return string(b), len(keys) + 1, nil
}

// MaxReviewTimeout bounds how long a senior review may wait: Step Functions
// ends a Standard execution after a year.
const MaxReviewTimeout = search.MaxReviewTimeoutSeconds

// Started is the outcome of a start.
type Started struct {
	SearchID  string `json:"search_id"`
	Execution string `json:"execution"`
	// ARN is the execution's ARN when the start made or found it by its
	// ARN (Step Functions and serve), "" otherwise.
	ARN     string `json:"arn,omitempty"`
	Started bool   `json:"started"` // false: it was already started
}

// RequestError is a start request that cannot run as given. It names every
// problem, so one correction fixes them all; nothing was recorded or
// started, so the same id starts once the upload or request is fixed.
type RequestError struct {
	SearchID string
	Problems []string
	// MissingOnly: the only problem is a required document not uploaded yet.
	MissingOnly bool
}

func (e *RequestError) Error() string {
	if e.SearchID == "" {
		return "the search cannot start: " + strings.Join(e.Problems, "; ")
	}
	return fmt.Sprintf("search %s cannot start: %s", e.SearchID, strings.Join(e.Problems, "; "))
}

// ProblemList lists each problem, for an HTTP answer's "problems".
func (e *RequestError) ProblemList() []string { return e.Problems }

// ErrorName is MissingInputError when only documents are missing,
// InvalidInputError otherwise.
func (e *RequestError) ErrorName() string {
	if e.MissingOnly {
		return veredicto.NameMissingInput
	}
	return veredicto.NameInvalidInput
}

// check validates a start request the way the workflow's first task will,
// before anything is recorded or started: the request's own fields, then
// the uploaded search through search's own loader and Validate, once with
// the search's defaults and once per requested threshold, so every bad
// threshold is named, not only the first.
func (s *Service) check(ctx context.Context, tenant string, req StartRequest) (search.StartInput, error) {
	rej := &RequestError{SearchID: req.SearchID}
	if req.SearchID == "" {
		rej.Problems = append(rej.Problems, "search_id is required")
		return search.StartInput{}, rej
	}
	if !veredicto.ValidID(req.SearchID) {
		rej.Problems = append(rej.Problems, fmt.Sprintf("search_id %q must be 1–64 letters, digits, '.', '_' or '-', starting with a letter or digit", req.SearchID))
		return search.StartInput{}, rej
	}
	if req.Concurrency < 0 || req.Concurrency > MaxConcurrency {
		rej.Problems = append(rej.Problems, fmt.Sprintf("concurrency %d is out of range 1–%d", req.Concurrency, MaxConcurrency))
	}
	in := search.StartInput{Tenant: tenant, SearchID: req.SearchID, InputPrefix: search.InputPrefix(tenant, req.SearchID),
		ReportPrefix: search.ReportPrefix(tenant, req.SearchID), Concurrency: req.Concurrency, Review: req.Review}
	if r := req.Review; r != nil && (r.TimeoutSeconds < 0 || r.TimeoutSeconds > MaxReviewTimeout) {
		rej.Problems = append(rej.Problems, fmt.Sprintf("review.timeout_seconds %d is out of range 1–%d (0: the default, 7 days)", r.TimeoutSeconds, MaxReviewTimeout))
		in.Review = nil // named once: not again by the workflow's check below
	}
	names := make([]string, 0, len(req.Thresholds))
	for k := range req.Thresholds {
		names = append(names, k)
	}
	sort.Strings(names)
	whole := map[string]int{}
	for _, k := range names {
		v := req.Thresholds[k]
		if err := search.CheckWhole(v); err != nil {
			rej.Problems = append(rej.Problems, fmt.Sprintf("thresholds.%s: %v", k, err))
			continue
		}
		if err := search.CheckInputThreshold(k, int(v)); err != nil {
			// named by the request's own field, not as the execution input
			var ii *veredicto.InvalidInputError
			if errors.As(err, &ii) {
				rej.Problems = append(rej.Problems, ii.Field+": "+ii.Problem)
			} else {
				rej.Problems = append(rej.Problems, err.Error())
			}
			continue
		}
		whole[k] = int(v)
	}
	// The workflow's Validate task logs the search's warnings when it runs;
	// this check only needs the verdict.
	v := &search.Service{Inputs: s.Inputs, Limits: s.Limits, Logger: slog.New(slog.DiscardHandler)}
	add := func(err error) error {
		switch veredicto.Kind(err) {
		case veredicto.NameMissingInput:
			rej.Problems = append(rej.Problems, fmt.Sprintf("%s/: %s", in.InputPrefix, err))
			rej.MissingOnly = len(rej.Problems) == 1
		case veredicto.NameInvalidInput:
			rej.Problems = append(rej.Problems, err.Error())
			rej.MissingOnly = false
		default:
			return fmt.Errorf("check %s: %w", in.InputPrefix, err)
		}
		return nil
	}
	if _, err := v.Validate(ctx, in); err != nil {
		if err := add(err); err != nil {
			return search.StartInput{}, err
		}
	}
	if len(rej.Problems) > 0 {
		return search.StartInput{}, rej
	}
	if len(whole) > 0 {
		in.Thresholds = whole
	}
	return in, nil
}

// Start validates the request, records the search for tenant and starts
// its evaluation under a deterministic execution name. A request that
// cannot run is a *RequestError and leaves no trace. Repeating a good
// request is harmless: the record and the execution name are claimed once.
func (s *Service) Start(ctx context.Context, tenant, origin string, req StartRequest) (Started, error) {
	if !veredicto.ValidID(tenant) {
		return Started{}, &RequestError{SearchID: req.SearchID, Problems: []string{fmt.Sprintf("tenant %q must be 1–64 letters, digits, '.', '_' or '-', starting with a letter or digit", tenant)}}
	}
	in, err := s.check(ctx, tenant, req)
	if err != nil {
		return Started{}, err
	}
	// A start is recorded before it is made; one that cannot be made (the
	// state machine is missing) is refused first, so it leaves no run.
	if r, ok := s.Starter.(interface{ Ready(context.Context) error }); ok {
		if err := r.Ready(ctx); err != nil {
			return Started{}, err
		}
	}
	name := starter.ExecutionName(tenant, req.SearchID)
	rec := SearchRecord{SearchID: req.SearchID, Tenant: tenant, Execution: name, CreatedAt: s.now().UTC().Format(time.RFC3339),
		Origin: origin, Input: in}
	b, _ := json.Marshal(rec)
	wrote, err := s.Records.PutIfAbsent(ctx, recordKey(tenant, req.SearchID), b)
	if err != nil {
		return Started{}, fmt.Errorf("record search %s: %w", req.SearchID, err)
	}
	// Whoever wrote first owns the record; use its input, so a duplicate
	// never starts a differently configured execution.
	stored, ok, err := s.record(ctx, tenant, req.SearchID)
	if err != nil {
		return Started{}, err
	}
	if !ok {
		return Started{}, fmt.Errorf("search %s: record missing after it was written", req.SearchID)
	}
	// A repeated request finds its execution: not started again, and
	// said so (Step Functions answers a repeated StartExecution of a
	// running execution as if it had started it).
	name = stored.Execution
	if !wrote {
		cur, n, err := s.current(ctx, stored)
		if err != nil {
			return Started{}, err
		}
		st, err := s.Starter.Describe(ctx, cur)
		// A READY uploaded after the latest run started is new: a
		// duplicate delivery, or the READY that started the run, was
		// written before it. Both times are compared in whole
		// milliseconds, the precision of S3's eventTime and of Step
		// Functions' startDate, so a start rounded down never passes
		// for one older than the READY that caused it.
		fresh := err == nil && !req.uploaded.IsZero() && req.uploaded.UnixMilli() > st.StartedAt.UnixMilli()
		var nf *veredicto.NotFoundError
		switch {
		case fresh && st.Status == "RUNNING":
			return Started{}, &RequestError{SearchID: req.SearchID, Problems: []string{fmt.Sprintf(
				"READY was uploaded while search %s is still running (execution %s); nothing new was started: upload READY again once the run has ended", req.SearchID, cur)}}
		case err == nil && (req.Rerun || fresh) && st.Status != "RUNNING":
			if n > MaxReruns {
				return Started{}, &RequestError{SearchID: req.SearchID, Problems: []string{fmt.Sprintf("search %s has run %d times, the most one search runs", req.SearchID, n)}}
			}
			next := RerunExecutionName(tenant, req.SearchID, n+1)
			if won, err := s.Records.PutIfAbsent(ctx, runKey(tenant, req.SearchID, n+1), []byte(next)); err != nil {
				return Started{}, fmt.Errorf("record run %d of search %s: %w", n+1, req.SearchID, err)
			} else if !won { // another request started that run
				return Started{SearchID: req.SearchID, Execution: next, Started: false}, nil
			}
			name = next
			if fresh { // this READY says how to run the search now
				stored.Input = in
			}
		case err == nil:
			s.logger().InfoContext(ctx, "search start", "search_id", req.SearchID, "tenant", tenant, "execution", cur, "started", false, "origin", origin)
			if !req.uploaded.IsZero() {
				s.logger().InfoContext(ctx, "READY not taken for a new upload: written before the search's latest run started (a duplicate or late notification); write READY again to run the search again",
					"search_id", req.SearchID, "tenant", tenant, "ready_written", req.uploaded.UTC().Format(time.RFC3339Nano), "run_started", st.StartedAt.UTC().Format(time.RFC3339Nano))
			}
			// Its ARN, where it has one: what follows it (a conversation
			// on AWS) is keyed by the ARN the status changes carry.
			return Started{SearchID: req.SearchID, Execution: cur, ARN: executionARN(st.ARN), Started: false}, nil
		case !errors.As(err, &nf):
			return Started{}, err
		default:
			name = cur // recorded but never started (a crash in between): start it now
		}
	}
	input, _ := json.Marshal(stored.Input)
	ex, err := s.Starter.Start(ctx, name, input)
	if err != nil {
		return Started{}, err
	}
	s.logger().InfoContext(ctx, "search start", "search_id", req.SearchID, "tenant", tenant, "execution", ex.Name, "started", ex.Started, "origin", origin)
	return Started{SearchID: req.SearchID, Execution: ex.Name, ARN: executionARN(ex.ARN), Started: ex.Started}, nil
}

// executionARN is arn when it is one: the in-process starter's "local:"
// names no execution.
func executionARN(arn string) string {
	if !strings.HasPrefix(arn, "arn:") {
		return ""
	}
	return arn
}
