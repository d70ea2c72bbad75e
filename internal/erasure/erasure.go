// Package erasure carries out the right to erasure (GDPR Art. 17) for a
// tenant, or for one of its searches: the uploaded documents, the
// reports, the stage and search records, and every execution's audit
// record, which is replaced by a tombstone holding only hashes
// (audit.Purge), so that the record still proves what was there without
// keeping any of it. The same Service runs on a serve data folder and on
// the buckets and table on AWS (internal/app assembles both); on AWS the
// audit records are under an Object Lock retention that only the
// operator's role may bypass.
//
// A purge can be run again: a purge cut short is finished, and what was
// erased already is reported as such.
package erasure

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/search"
)

// Eraser removes a key and every key under key/ for good, and says how
// many it removed: a folder or bucket of documents or reports (every
// version), or the context store.
type Eraser interface {
	Erase(ctx context.Context, key string) (int, error)
}

// Record is one execution's audit record, which a purge replaces by its
// tombstone.
type Record interface {
	audit.Store
	audit.Eraser
}

// Records are the tenants' audit records (audit.Folders under a data
// folder, s3audit.Records in the reports bucket): List lists a tenant's
// executions, Open is one's record.
type Records struct {
	List func(ctx context.Context, tenant string) ([]string, error)
	Open func(tenant, execution string) Record
}

// ExecutionEraser removes what one execution left beside its record: the
// senior reviews it asked (their previews), its event stream.
type ExecutionEraser interface {
	EraseExecution(ctx context.Context, tenant, execution string) (int, error)
}

// Service erases a tenant's data. Its stores are set at construction.
type Service struct {
	Inputs  Eraser // the uploads: searches/<tenant>/<search>/
	Reports Eraser // the reports: reports/<tenant>/<search>/
	Context Eraser // stage/<tenant>/<search>/… and search/<tenant>/<search>
	// Others are more stores keyed like the context store that a
	// tenant's purge erases too (locally, the chat's own folder).
	Others []Eraser
	Audit  Records
	// ByExecution erase, for each purged execution, its confirmations and
	// event stream (none: they are left to expire).
	ByExecution []ExecutionEraser
	Now         func() time.Time
	Logger      *slog.Logger
}

// Request names what to erase and who asks: Search "" erases all of the
// tenant's data.
type Request struct {
	Tenant string
	Search string
	// By is who runs the purge; Reason the request it answers (a ticket,
	// the data subject's request). Both are kept in each tombstone.
	By     string
	Reason string
}

// Result is what a purge erased.
type Result struct {
	Tenant string `json:"tenant"`
	Search string `json:"search_id,omitempty"`
	// Executions are the audit records replaced by their tombstones.
	Executions []Purged `json:"executions"`
	// Unknown are executions of the tenant whose record does not say
	// which search they ran (a record damaged before its start entry):
	// left as they are by a purge of one search.
	Unknown []string `json:"unknown,omitempty"`
	// Documents, Reports and Records count what was removed (files or
	// objects, every version of one counted once; context records).
	Documents int `json:"documents"`
	Reports   int `json:"reports"`
	Records   int `json:"records"`
	// Traces counts the executions' confirmations and event streams.
	Traces int `json:"confirmations_and_events"`
}

// Purged is one execution's record, now a tombstone.
type Purged struct {
	Execution string           `json:"execution"`
	Tombstone *audit.Tombstone `json:"tombstone"`
	// Already: an earlier purge had written the tombstone (this one
	// finished erasing what was left, if anything).
	Already bool `json:"already"`
}

// Purge erases what req names: first the audit records (each replaced by
// its tombstone), then the documents, the reports and the stage and search
// records.
func (s *Service) Purge(ctx context.Context, req Request) (*Result, error) {
	if err := req.check(); err != nil {
		return nil, err
	}
	res := &Result{Tenant: req.Tenant, Search: req.Search, Executions: []Purged{}}
	execs, err := s.Audit.List(ctx, req.Tenant)
	if err != nil {
		return nil, fmt.Errorf("list the audit records of tenant %s: %w", req.Tenant, err)
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	for _, x := range execs {
		rec := s.Audit.Open(req.Tenant, x)
		if req.Search != "" {
			id, err := searchOf(ctx, rec)
			if err != nil {
				return nil, fmt.Errorf("the audit record of %s: %w", x, err)
			}
			if id == "" {
				res.Unknown = append(res.Unknown, x)
				continue
			}
			if id != req.Search {
				continue
			}
		}
		before, err := audit.ReadTombstone(ctx, rec)
		if err != nil {
			return nil, fmt.Errorf("the audit record of %s: %w", x, err)
		}
		t, err := audit.Purge(ctx, rec, rec, audit.Tombstone{Execution: x, Tenant: req.Tenant, PurgedAt: now().UTC(), PurgedBy: req.By, Reason: req.Reason})
		if errors.As(err, new(*veredicto.NotFoundError)) {
			continue // a folder left empty: nothing recorded, nothing to keep
		}
		if err != nil {
			return nil, fmt.Errorf("purge the audit record of %s: %w", x, err)
		}
		res.Executions = append(res.Executions, Purged{Execution: x, Tombstone: t, Already: before != nil})
		for _, e := range s.ByExecution {
			n, err := e.EraseExecution(ctx, req.Tenant, x)
			res.Traces += n
			if err != nil {
				return res, fmt.Errorf("erase what %s left: %w", x, err)
			}
		}
	}
	type erasure struct {
		store Eraser
		key   string
		n     *int
	}
	todo := []erasure{
		{s.Inputs, search.InputPrefix(req.Tenant, req.Search), &res.Documents},
		{s.Reports, search.ReportPrefix(req.Tenant, req.Search), &res.Reports},
		{s.Context, join("stage", req.Tenant, req.Search), &res.Records},     // internal/search/progress.go
		{s.Context, join("search", req.Tenant, req.Search), &res.Records},    // internal/intake: the search record
		{s.Context, join("searchrun", req.Tenant, req.Search), &res.Records}, // internal/intake: its runs
	}
	if req.Search == "" {
		// The whole tenant: every other workflow's data too, in whichever
		// store keeps it (a key a store does not hold erases nothing).
		for _, kind := range tenantKinds {
			todo = append(todo, erasure{s.Inputs, join(kind, req.Tenant, ""), &res.Documents},
				erasure{s.Reports, join(kind, req.Tenant, ""), &res.Reports},
				erasure{s.Context, join(kind, req.Tenant, ""), &res.Records})
			for _, o := range s.Others {
				todo = append(todo, erasure{o, join(kind, req.Tenant, ""), &res.Records})
			}
		}
	}
	for _, e := range todo {
		n, err := e.store.Erase(ctx, e.key)
		*e.n += n
		if err != nil {
			return res, fmt.Errorf("erase %s: %w", e.key, err)
		}
	}
	s.logger().InfoContext(ctx, "purged", "tenant", req.Tenant, "search_id", req.Search, "executions", len(res.Executions),
		"documents", res.Documents, "reports", res.Reports, "records", res.Records, "traces", res.Traces)
	return res, nil
}

func (r Request) check() error {
	var problems []string
	if !veredicto.ValidID(r.Tenant) {
		problems = append(problems, fmt.Sprintf("tenant %q is not a tenant id", r.Tenant))
	}
	if r.Search != "" && !veredicto.ValidID(r.Search) {
		problems = append(problems, fmt.Sprintf("search %q is not a search id", r.Search))
	}
	if r.By == "" {
		problems = append(problems, "who runs the purge is not said")
	}
	if r.Reason == "" {
		problems = append(problems, "the reason (the request it answers) is not said")
	}
	if len(problems) > 0 {
		return &veredicto.InvalidInputError{File: "purge request", Problem: strings.Join(problems, "; ")}
	}
	return nil
}

// tenantKinds are the first key segments under which the other workflows
// keep a tenant's data: the chat's turns, claims and feedback, and the
// workflows its conversations follow (internal/chat), the debates' logs
// and reports (internal/debate), the companion's applications
// (internal/companion), the interview flags (internal/flags), interviews
// and the mail outbox.
var tenantKinds = []string{"chat", "chatlink", "debate", "debates", "companion", "flags", "interviews", "outbox"}

func join(kind, tenant, searchID string) string {
	if searchID == "" {
		return kind + "/" + tenant
	}
	return kind + "/" + tenant + "/" + searchID
}

// FirstEntry is a Record that reads one entry without the rest of its
// chain (s3audit, where each entry is an object).
type FirstEntry interface {
	Entry(ctx context.Context, chain string, seq int) ([]byte, error)
}

// searchOf is the search an execution ran, read from its tombstone or its
// start entry ("" when neither says).
func searchOf(ctx context.Context, rec Record) (string, error) {
	t, err := audit.ReadTombstone(ctx, rec)
	if err != nil || t != nil {
		if t != nil {
			return t.Search, nil
		}
		return "", err
	}
	var first []byte
	if f, ok := rec.(FirstEntry); ok {
		first, err = f.Entry(ctx, audit.MainChain, 0)
		if errors.As(err, new(*veredicto.NotFoundError)) {
			return "", nil
		}
	} else {
		var lines [][]byte
		if lines, err = rec.Lines(ctx, audit.MainChain); err == nil && len(lines) > 0 {
			first = lines[0]
		}
	}
	if err != nil || first == nil {
		return "", err
	}
	var e audit.Entry
	var st audit.Start
	if json.Unmarshal(first, &e) != nil || e.Kind != audit.KindStart || json.Unmarshal(e.Data, &st) != nil {
		return "", nil
	}
	return audit.SearchOf(st), nil
}

func (s *Service) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}
