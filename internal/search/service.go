package search

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/veredicto/veredicto/internal/blob"
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

// boundary is applied to every task handler's error: a storage failure
// worth retrying, however deeply wrapped, goes out as *blob.TransientError,
// whose type name the workflow's Retry matches. Other errors keep their own
// type (their name is what Catch and the report see).
func boundary(err error) error {
	var te *blob.TransientError
	if errors.As(err, &te) && err != error(te) {
		return &blob.TransientError{Err: err}
	}
	return err
}
