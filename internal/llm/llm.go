// Package llm is the project's port to language models: generate structured
// JSON for a named schema. The model only classifies and writes; callers
// validate what comes back (schema, then their own citation checks) and the
// code computes every score, gate and rule.
package llm

import (
	"context"
	"encoding/json"
	"fmt"
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
}

// Reask is a second attempt after an invalid answer.
type Reask struct {
	Previous string // the rejected answer, verbatim
	Problem  string // what was wrong with it
}

// Response is a completion.
type Response struct {
	Content json.RawMessage
	Usage   Usage
}

// Usage is what one or more calls consumed.
type Usage struct {
	Calls            int     `json:"calls"`
	PromptTokens     int     `json:"prompt_tokens"`
	CachedTokens     int     `json:"cached_prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	CostUSD          float64 `json:"cost_usd"`
}

// Add accumulates u2 into u.
func (u *Usage) Add(u2 Usage) {
	u.Calls += u2.Calls
	u.PromptTokens += u2.PromptTokens
	u.CachedTokens += u2.CachedTokens
	u.CompletionTokens += u2.CompletionTokens
	u.CostUSD += u2.CostUSD
}

// Client is the port: one structured completion per call.
type Client interface {
	Complete(ctx context.Context, req Request) (Response, error)
}

// Info names a client's provider and model for reports.
type Info struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
}

// TransientError is a provider failure worth retrying later (rate limit,
// server error, timeout) that persisted through the client's own retries.
// Its name is the ASL error name Retry matches.
type TransientError struct {
	Op  string
	Err error
}

func (e *TransientError) Error() string { return fmt.Sprintf("%s: %v", e.Op, e.Err) }
func (e *TransientError) Unwrap() error { return e.Err }

// InvalidOutputError is an answer that failed validation even after the
// re-ask that carried the error back to the model.
type InvalidOutputError struct {
	Schema  string
	Problem string
}

func (e *InvalidOutputError) Error() string {
	return fmt.Sprintf("model output for schema %q is invalid after one re-ask: %s", e.Schema, e.Problem)
}

// ProviderError is a non-retryable provider failure (bad key, bad request).
type ProviderError struct {
	Op  string
	Err error
}

func (e *ProviderError) Error() string { return fmt.Sprintf("%s: %v", e.Op, e.Err) }
func (e *ProviderError) Unwrap() error { return e.Err }
