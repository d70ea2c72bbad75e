package search

import (
	"context"
	"fmt"
	"log/slog"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/audit"
)

// The buckets' layout (the same keys locally under a data folder):
// searches/<tenant>/<search_id>/… holds a search's documents,
// reports/<tenant>/<search_id>/… its reports.
const (
	SearchesPrefix = "searches"
	ReportsPrefix  = "reports"
)

// InputPrefix is where a tenant's search is uploaded.
func InputPrefix(tenant, searchID string) string { return path.Join(SearchesPrefix, tenant, searchID) }

// ReportPrefix is where a tenant's search's reports are written.
func ReportPrefix(tenant, searchID string) string { return path.Join(ReportsPrefix, tenant, searchID) }

// BucketLayout is the Layout of the buckets (and of a data folder):
// InputPrefix and ReportPrefix.
func BucketLayout(tenant, searchID string) (input, report string) {
	return InputPrefix(tenant, searchID), ReportPrefix(tenant, searchID)
}

// BlobWriter stores reports (a folder locally, S3 in AWS).
type BlobWriter interface {
	Put(ctx context.Context, key string, data []byte, contentType string) error
}

// Service holds the protocol's task handlers: one method per Task state of
// executive_search.asl.json, each the same code the Lambda wraps. It is
// safe for concurrent use.
type Service struct {
	Inputs  BlobReader
	Reports BlobWriter
	Store   KV
	Analyst Analyst
	// PromptVersions maps an agent id to the version of its prompt
	// (recorded in every contract and hashed into stage keys).
	PromptVersions func(agent string) string
	Logger         *slog.Logger
	Now            func() time.Time
	// Limits bound the documents a search may load (DefaultLimits when
	// zero): larger documents or searches are refused by name.
	Limits Limits
	// DefaultConcurrency is how many candidates run at once when the
	// execution input does not say (DefaultConcurrency when zero).
	DefaultConcurrency int
	// Layout, when set, is where the buckets hold a tenant's search (the
	// input prefix) and its reports: every task's prefixes must be these,
	// so no execution input can point a tenant's workflow at another
	// tenant's documents or reports. Nil for a single search folder.
	Layout func(tenant, searchID string) (input, report string)
	// Audit, when set, keeps every execution's audit record: each task
	// records its model calls, decisions, clock readings and the reports
	// it wrote before its result is used (tasks must then name their
	// execution). Nil records nothing.
	Audit Auditor
	// Replay, when set, is the record this service replays: clock
	// readings come from it (its Client answers the model calls).
	Replay *audit.Replay

	mu       sync.Mutex
	searches map[string]*loadedSearch // input prefix → loaded search (at most maxCachedSearches)
	warned   map[string]bool          // damaged stage keys already reported
	order    []string                 // prefixes, oldest first
	rows     rowCache                 // the rows the Report tasks computed, for the summary
}

// checkPrefixes refuses prefixes other than the Layout's for tenant and
// searchID; report "" is not checked (a task that writes no report).
func (svc *Service) checkPrefixes(tenant, searchID, input, report string) error {
	if svc.Layout == nil {
		return nil
	}
	if searchID == "" {
		return &veredicto.InvalidInputError{File: "execution input", Field: "search_id", Problem: "is required"}
	}
	wantIn, wantRep := svc.Layout(tenant, searchID)
	same := func(a, b string) bool { return strings.TrimSuffix(a, "/") == strings.TrimSuffix(b, "/") }
	if !same(input, wantIn) {
		return &veredicto.InvalidInputError{File: "execution input", Field: "input_prefix", Problem: fmt.Sprintf("must be %s/, where tenant %s's search %s is uploaded", wantIn, tenant, searchID)}
	}
	if report != "" && !same(report, wantRep) {
		return &veredicto.InvalidInputError{File: "execution input", Field: "report_prefix", Problem: fmt.Sprintf("must be %s/, where tenant %s's search %s reports", wantRep, tenant, searchID)}
	}
	return nil
}

// firstWarning reports whether key has not been warned about yet by this
// Service (it remembers at most maxWarnedKeys keys).
func (svc *Service) firstWarning(key string) bool {
	svc.mu.Lock()
	defer svc.mu.Unlock()
	if svc.warned[key] {
		return false
	}
	if svc.warned == nil || len(svc.warned) >= maxWarnedKeys {
		svc.warned = map[string]bool{}
	}
	svc.warned[key] = true
	return true
}

// maxWarnedKeys bounds the keys firstWarning remembers.
const maxWarnedKeys = 1024

func (svc *Service) now() time.Time {
	if svc.Now != nil {
		return svc.Now()
	}
	return time.Now()
}

func (svc *Service) logger() *slog.Logger {
	if svc.Logger != nil {
		return svc.Logger
	}
	return slog.Default()
}

// PromptVersion is the prompt version recorded for agent.
func (svc *Service) PromptVersion(agent string) string {
	if svc.PromptVersions == nil {
		return "unversioned"
	}
	return svc.PromptVersions(agent)
}

// boundary is applied to every task handler's error. A failure worth
// retrying anywhere in the chain (storage or LLM, however deeply wrapped)
// goes out as a *veredicto.TransientError, whose name the workflow's Retry
// matches. Every other error keeps its chain intact, so veredicto.ErrorName
// still finds the typed error inside (InvalidInputError, MissingInputError…)
// when the catalog names it at the Lambda boundary.
func boundary(err error) error {
	if err == nil || transientType(err) {
		return err
	}
	if veredicto.ErrorName(err) == veredicto.NameTransient {
		return &veredicto.TransientError{Err: err}
	}
	return err
}

// transientType reports whether err itself (not a wrapper) is one of the
// transient kinds.
func transientType(err error) bool {
	switch err.(type) {
	case *veredicto.TransientError:
		return true
	}
	return false
}
