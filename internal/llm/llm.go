// Package llm is the project's port to language models: generate structured
// JSON for a named schema. The model only classifies and writes; callers
// validate what comes back (schema, then their own citation checks) and the
// code computes every score, gate and rule.
package llm

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/veredicto/veredicto"
)

// Request asks for one structured completion.
type Request struct {
	// Schema is the schema name sent to the provider; it is the agent id
	// ("gem1", "flags_contradiction", …).
	Schema string
	// JSONSchema is the strict JSON schema the answer must follow
	// (see SchemaFor).
	JSONSchema json.RawMessage
	// System is the instruction prefix. Keep it identical across calls of
	// the same agent so providers can cache it.
	System string
	// User is the per-call message.
	User string
	// Retry carries the previous answer's validation error on a re-ask.
	Retry *Reask
	// MaxOutputTokens bounds this answer (0: the client's default, see
	// OpenAIConfig.MaxOutputTokens).
	MaxOutputTokens int
}

// Reask is a second attempt after an invalid answer.
type Reask struct {
	Previous string // the rejected answer, verbatim
	Problem  string // what was wrong with it
}

// Response is a completion.
type Response struct {
	Content json.RawMessage
	Usage   veredicto.Usage
	// Truncated reports an answer cut off at the output-token bound:
	// Content is then incomplete.
	Truncated bool
}

// Client is the port: one structured completion per call.
type Client interface {
	Complete(ctx context.Context, req Request) (Response, error)
}

// A provider failure worth retrying later (rate limit, server error,
// timeout) that persisted through the client's own retries is a
// *veredicto.TransientError, whose name the workflows' Retry matches.

// ASL error names of this package's own kinds.
const (
	NameInvalidOutput = "InvalidOutputError"
	NameProvider      = "ProviderError"
)

// Names lists the ASL error names this package declares.
func Names() []string { return []string{NameInvalidOutput, NameProvider} }

var (
	_ veredicto.Named = (*InvalidOutputError)(nil)
	_ veredicto.Named = (*ProviderError)(nil)
)

// InvalidOutputError is a model's answer that failed validation: the
// schema's check even after the re-ask that carried the error back to the
// model (Schema), or the caller's own check of an agent's contract after
// that, such as citations or score ranges (Agent and CandidateID, as the
// executive search reports it).
type InvalidOutputError struct {
	Schema      string
	Agent       string
	CandidateID string
	Problem     string
}

func (e *InvalidOutputError) Error() string {
	if e.Agent != "" {
		return fmt.Sprintf("%s output for candidate %q breaks the contract: %s", e.Agent, e.CandidateID, e.Problem)
	}
	return fmt.Sprintf("model output for schema %q is invalid after one re-ask: %s", e.Schema, e.Problem)
}

// ErrorName is the ASL error name a workflow may Catch.
func (*InvalidOutputError) ErrorName() string { return NameInvalidOutput }

// ProviderError is a non-retryable provider failure (bad key, bad request).
type ProviderError struct {
	Op  string
	Err error
}

func (e *ProviderError) Error() string { return fmt.Sprintf("%s: %v", e.Op, e.Err) }
func (e *ProviderError) Unwrap() error { return e.Err }

// ErrorName is the ASL error name a workflow may Catch.
func (*ProviderError) ErrorName() string { return NameProvider }
