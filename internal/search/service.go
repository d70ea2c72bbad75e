package search

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/veredicto/veredicto"
)

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

	mu       sync.Mutex
	searches map[string]*loadedSearch // input prefix → loaded search (at most maxCachedSearches)
	order    []string                 // prefixes, oldest first
}

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
