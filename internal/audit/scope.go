package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/llm"
)

// Scope is where a workflow step records: one chain of an execution's
// record, about one candidate (or none). Attached to a context
// (WithScope), it is the llm.Observer of the step's model calls.
type Scope struct {
	Recorder *Recorder
	// Execution is the name of the execution the record is of.
	Execution string
	Chain     string
	Candidate string
	// Agent names who the step's model calls are of (a debate's
	// participant); the request's schema when empty.
	Agent string
	// Model names the provider and model answering; PromptVersion the
	// version of an agent's prompt.
	Model         veredicto.ModelInfo
	PromptVersion func(agent string) string
	// Replay, when set, answers the step's clock readings (and, through
	// its Client, its model calls) from the record being replayed.
	Replay *Replay
	// Deferred: entries wait for Flush, so a step's entries are written
	// at once (one write, one sync). The step flushes before it uses
	// what they record — before it stores a model's answer as its output,
	// and before it returns.
	Deferred bool
}

// add records an entry in the scope's chain: now, or with Deferred at
// the next Flush.
func (s *Scope) add(ctx context.Context, kind string, data any) error {
	if s.Deferred {
		return s.Recorder.Defer(ctx, s.Chain, kind, data)
	}
	_, err := s.Recorder.Append(ctx, s.Chain, kind, data)
	return err
}

// Flush writes the scope's deferred entries.
func (s *Scope) Flush(ctx context.Context) error { return s.Recorder.Flush(ctx, s.Chain) }

// Sync writes the scope's deferred entries and makes its chain durable: a
// step calls it before it reports what the chain records (a report
// written, a summary), and at its end when it reported (Recorder.Sync).
func (s *Scope) Sync(ctx context.Context) error { return s.Recorder.Sync(ctx, s.Chain) }

type scopeKey struct{}

// WithScope returns ctx in which the step's model calls and records go to
// s's chain.
func WithScope(ctx context.Context, s *Scope) context.Context {
	ctx = context.WithValue(ctx, scopeKey{}, s)
	return llm.WithObserver(ctx, s)
}

// ScopeFrom is the scope attached to ctx, nil when none.
func ScopeFrom(ctx context.Context) *Scope {
	s, _ := ctx.Value(scopeKey{}).(*Scope)
	return s
}

// RequestHash is the hash of everything a model request sends: what a
// replay finds the recorded answer by.
func RequestHash(r llm.Request) string {
	return requestHash(r, HashString(r.System), HashString(r.User))
}

// requestHash is RequestHash with the system and user messages' hashes
// already taken.
func requestHash(r llm.Request, system, user string) string {
	parts := []string{"schema", r.Schema, "json_schema", Hash(r.JSONSchema), "system", system, "user", user,
		"max_output_tokens", fmt.Sprint(r.MaxOutputTokens)}
	if r.Retry != nil {
		parts = append(parts, "previous", HashString(r.Retry.Previous), "problem", HashString(r.Retry.Problem))
	}
	b, _ := json.Marshal(parts)
	return Hash(b)
}

// Observe records one attempt of a model call before its answer is used.
func (s *Scope) Observe(ctx context.Context, a llm.Attempt) error {
	r := s.Recorder
	system, user := HashString(a.Request.System), HashString(a.Request.User)
	call := ModelCall{Agent: s.agent(a.Request.Schema), Candidate: s.Candidate, Schema: a.Request.Schema, Provider: s.Model.Provider, Model: s.Model.Model,
		Request: requestHash(a.Request, system, user), Attempt: a.Number, Reask: a.Request.Retry != nil, Usage: a.Response.Usage,
		LatencyMS: a.Latency.Milliseconds(), Truncated: a.Response.Truncated, Verdict: "accepted"}
	if s.PromptVersion != nil {
		call.PromptVersion = s.PromptVersion(a.Request.Schema)
	}
	texts := [][3]string{{"system", a.Request.System, system}, {"user", a.Request.User, user}}
	if a.Request.Retry != nil {
		texts = append(texts, [3]string{"previous", a.Request.Retry.Previous, HashString(a.Request.Retry.Previous)},
			[3]string{"problem", a.Request.Retry.Problem, HashString(a.Request.Retry.Problem)})
	}
	for _, t := range texts {
		m := Message{Role: t[0], Hash: t[2]}
		if t[0] == "system" { // the agent's prompt: the same for every call, stored once
			if err := r.textHashed(ctx, t[2], t[1]); err != nil {
				return err
			}
		} else {
			text := t[1]
			m.Text = &text
		}
		call.Messages = append(call.Messages, m)
	}
	switch {
	case a.Err != nil:
		call.ErrorName, call.Error, call.Verdict = veredicto.ErrorName(a.Err), a.Err.Error(), "no answer"
		// The step's deadline had passed: it takes the failure as a
		// timeout, and so must its replay.
		call.DeadlineExceeded = errors.Is(ctx.Err(), context.DeadlineExceeded)
	default:
		answer := string(a.Response.Content)
		call.Answer = &answer
		if a.Problem != "" {
			call.Verdict = a.Problem
		}
	}
	return s.add(ctx, KindModel, call)
}

// agent is who a request of schema is of.
func (s *Scope) agent(schema string) string {
	if s.Agent != "" {
		return s.Agent
	}
	return schema
}

// Decide records a decision the code took.
func (s *Scope) Decide(ctx context.Context, d Decision) error {
	if d.Candidate == "" {
		d.Candidate = s.Candidate
	}
	return s.add(ctx, KindDecision, d)
}

// Human records what became of a question put to a person.
func (s *Scope) Human(ctx context.Context, h HumanDecision) error {
	if h.Candidate == "" {
		h.Candidate = s.Candidate
	}
	return s.add(ctx, KindHuman, h)
}

// Stage records a stage output by the hash of its stored bytes: stored
// by this step, or (reused) read from the store, with its bytes, when the
// chain holds no entry for its key — at most one entry per key and chain.
func (s *Scope) Stage(ctx context.Context, st Stage, record []byte) error {
	st.Record = Hash(record)
	var err error
	if st.Reused { // a replay seeds its store with it
		if _, err = s.Recorder.Text(ctx, string(record)); err != nil {
			return err
		}
	}
	if st.Candidate == "" {
		st.Candidate = s.Candidate
	}
	// One entry per stage key and chain: computed, or read when the chain
	// holds none for it.
	if s.Deferred {
		return s.Recorder.DeferOnce(ctx, s.Chain, KindStage, st.Key, st)
	}
	_, err = s.Recorder.AppendOnce(ctx, s.Chain, KindStage, st.Key, st)
	return err
}

// Report records a file the step wrote, by its content.
func (s *Scope) Report(ctx context.Context, path string, content []byte) error {
	return s.add(ctx, KindReport, Report{Path: path, SHA256: Hash(content), Bytes: len(content)})
}

// Now is the step's clock reading for use (a stage's start…): recorded
// in the chain, or in a replay, read back from it.
func (s *Scope) Now(ctx context.Context, use string) (time.Time, error) {
	return s.read(ctx, use, time.Now)
}

func (s *Scope) read(ctx context.Context, use string, clock func() time.Time) (time.Time, error) {
	if s.Replay != nil {
		return s.Replay.clockReading(s.Chain, use)
	}
	at := clock().UTC()
	return at, s.add(ctx, KindClock, Clock{Use: use, At: at})
}

// Now is the clock reading for use of the step ctx carries a scope of
// (Scope.Now), or time.Now when it carries none.
func Now(ctx context.Context, use string) (time.Time, error) {
	return NowOf(ctx, use, time.Now)
}

// NowOf is Now on the step's own clock (nil: time.Now): its reading, in
// UTC, is recorded, or in a replay read back; with no scope it is
// clock's.
func NowOf(ctx context.Context, use string, clock func() time.Time) (time.Time, error) {
	if clock == nil {
		clock = time.Now
	}
	if s := ScopeFrom(ctx); s != nil {
		return s.read(ctx, use, clock)
	}
	return clock(), nil
}

// storeHead is chain's head in store: its last line's hash and its length.
func storeHead(ctx context.Context, store Store, chain string) (string, int, error) {
	if hs, ok := store.(HeadStore); ok {
		return hs.Head(ctx, chain)
	}
	lines, err := store.Lines(ctx, chain)
	if err != nil || len(lines) == 0 {
		return Genesis(chain), 0, err
	}
	return Hash(lines[len(lines)-1]), len(lines), nil
}

// DivergedError is a replay that does not follow its record: a prompt, a
// document or the code changed since the run.
type DivergedError struct {
	Chain, Agent, Candidate string
	What                    string
}

func (e *DivergedError) Error() string {
	who := e.Chain
	if e.Agent != "" {
		who = e.Agent
		if e.Candidate != "" {
			who += " for candidate " + e.Candidate
		}
	}
	return "replay diverged at " + who + ": " + e.What
}

// ErrorName: a divergence is not retried (its ASL name).
func (e *DivergedError) ErrorName() string { return "ReplayDivergedError" }

// End closes the execution's record: a summary entry in the main chain
// naming every chain's head and length.
func (s *Scope) End(ctx context.Context) error {
	if err := s.Flush(ctx); err != nil {
		return err
	}
	chains, err := s.Recorder.Store().Chains(ctx)
	if err != nil {
		return err
	}
	sum := Summary{Execution: s.Execution, Heads: map[string]string{}, Entries: map[string]int{}}
	for _, c := range chains {
		if c == MainChain {
			continue
		}
		// Read from the store, not this process's heads: the other steps
		// of the execution may have run elsewhere.
		head, n, err := storeHead(ctx, s.Recorder.Store(), c)
		if err != nil {
			return err
		}
		if n == 0 {
			continue
		}
		sum.Heads[c], sum.Entries[c] = head, n
	}
	if _, err = s.Recorder.Append(ctx, MainChain, KindSummary, sum); err != nil {
		return err
	}
	return s.Recorder.Sync(ctx, MainChain)
}
