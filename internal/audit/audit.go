// Package audit is the tamper-evident record of an execution: every model
// call (the request's messages by hash, the raw answer, usage, latency, the
// code check's verdict), every code decision (a gate's score, threshold and
// outcome; a rule that fired), every human decision (who, when, what they
// saw) and the hash of every report written. Entries are JSON lines in
// hash chains: each line carries the SHA-256 of the line before it, so
// changing, removing or reordering any byte breaks the chain at the first
// bad entry. Work that runs in parallel (a Map's candidates) keeps a chain
// each; the execution's summary entry joins their heads.
//
// The record is written before a step's result is used, and it is what
// Verify checks and what a replay answers model calls from. It is durable
// before what it records is reported: synced with each step where the
// engine keeps every step's result durably (serve, Step Functions), or
// before each report a step writes where the engine keeps results in its
// own process (Folders.SyncOnReport: "veredicto search run").
package audit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"github.com/veredicto/veredicto"
)

// Entry kinds.
const (
	KindStart     = "start"          // the execution's input, by hash; the main chain's first entry (Start)
	KindStage     = "stage"          // a stage output the step stored, or read from before the execution (Stage)
	KindModel     = "model_call"     // one attempt of a model call (ModelCall)
	KindDecision  = "decision"       // a decision the code took (Decision)
	KindHuman     = "human_decision" // a person's decision (HumanDecision)
	KindReport    = "report"         // a file written (Report)
	KindClock     = "clock"          // a clock reading a step used (Clock)
	KindSummary   = "summary"        // the execution's end: every chain's head (Summary)
	KindTombstone = "tombstone"      // what remains after erasure: the hashes only
)

// MainChain is the chain of the execution itself (start, the work done
// once, the summary); parallel work has chains of its own.
const MainChain = "main"

// Entry is one line of a chain.
type Entry struct {
	Seq   int             `json:"seq"`
	Chain string          `json:"chain"`
	Kind  string          `json:"kind"`
	At    time.Time       `json:"at"`
	Data  json.RawMessage `json:"data"`
	// Prev is the SHA-256 (hex) of the chain's previous line, or of the
	// chain's genesis for the first entry.
	Prev string `json:"prev"`
}

// line encodes e as json.Marshal does, without scanning its Data again:
// the data of an entry the Recorder writes was encoded by json.Marshal
// when deferred (compact, HTML-escaped, valid), and it is the bulk of the
// entry (a model call's 20 KB message), which json.Marshal would check
// and copy once more.
func (e Entry) line() ([]byte, error) {
	chain, err := json.Marshal(e.Chain)
	if err != nil {
		return nil, err
	}
	kind, err := json.Marshal(e.Kind)
	if err != nil {
		return nil, err
	}
	at, err := e.At.MarshalJSON()
	if err != nil {
		return nil, err
	}
	prev, err := json.Marshal(e.Prev)
	if err != nil {
		return nil, err
	}
	data := []byte(e.Data)
	if data == nil {
		data = []byte("null")
	}
	b := make([]byte, 0, len(data)+len(chain)+len(kind)+len(at)+len(prev)+64)
	b = strconv.AppendInt(append(b, `{"seq":`...), int64(e.Seq), 10)
	b = append(append(b, `,"chain":`...), chain...)
	b = append(append(b, `,"kind":`...), kind...)
	b = append(append(b, `,"at":`...), at...)
	b = append(append(b, `,"data":`...), data...)
	b = append(append(b, `,"prev":`...), prev...)
	return append(b, '}'), nil
}

// Genesis is what a chain's first entry points at: the hash of its name,
// so an entry moved to another chain breaks it.
func Genesis(chain string) string { return Hash([]byte("veredicto audit chain\x00" + chain)) }

// Hash is the SHA-256 of b, in hex.
func Hash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// HashString is Hash of a text, without copying it into a byte slice
// first (a model call's messages are tens of KB).
func HashString(s string) string {
	// Sum256 only reads its argument and keeps nothing of it.
	return Hash(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// Store keeps a record's chains and the texts their entries name by hash.
type Store interface {
	// Append adds line as entry seq of chain; a seq already taken is a
	// *veredicto.ConflictError (two writers of one chain).
	Append(ctx context.Context, chain string, seq int, line []byte) error
	// Lines returns a chain's lines in order (none for an unknown chain).
	Lines(ctx context.Context, chain string) ([][]byte, error)
	// Chains lists the chains, sorted.
	Chains(ctx context.Context) ([]string, error)
	// PutText stores text under its hash (idempotent); Text reads it.
	PutText(ctx context.Context, hash string, text []byte) error
	Text(ctx context.Context, hash string) ([]byte, error)
}

// Recorder appends to one execution's record. Safe for concurrent use;
// each chain is written by one goroutine at a time.
type Recorder struct {
	store Store
	now   func() time.Time

	mu    sync.Mutex
	heads map[string]*head
}

type head struct {
	mu   sync.Mutex
	seq  int // next seq; -1 until read from the store
	hash string
	keys map[string]bool // the keys of the chain's stage entries (AppendOnce), pending ones included
	// pending are entries deferred until the chain's next Flush.
	pending []pendingEntry
}

// pendingEntry is a deferred entry: chained (seq, prev) when written.
type pendingEntry struct {
	kind string
	at   time.Time
	data json.RawMessage
	key  string
}

// HeadStore is a Store that reads a chain's head — its last line's hash
// and its length, Genesis and 0 for an empty chain — without handing out
// every line.
type HeadStore interface {
	Head(ctx context.Context, chain string) (hash string, n int, err error)
}

// Syncer is a Store whose appends are made durable when asked (Sync),
// not each on its own: the chains named, or every chain written since.
type Syncer interface {
	Sync(ctx context.Context, chains ...string) error
}

// BatchStore is a Store that writes several entries of a chain at once
// (one write, one sync): a step's entries recorded together.
type BatchStore interface {
	AppendLines(ctx context.Context, chain string, seq int, lines [][]byte) error
}

// NewRecorder records into store, stamping entries with now (time.Now
// when nil).
func NewRecorder(store Store, now func() time.Time) *Recorder {
	if now == nil {
		now = time.Now
	}
	return &Recorder{store: store, now: now, heads: map[string]*head{}}
}

// Store is where the record is kept.
func (r *Recorder) Store() Store { return r.store }

func (r *Recorder) head(chain string) *head {
	r.mu.Lock()
	defer r.mu.Unlock()
	h, ok := r.heads[chain]
	if !ok {
		h = &head{seq: -1}
		r.heads[chain] = h
	}
	return h
}

// maxConflicts bounds how often one write re-reads a chain another writer
// moved (two Lambdas of one execution writing its main chain).
const maxConflicts = 16

// maxPending bounds the entries a chain defers: past it, they are written.
const maxPending = 256

// Append adds an entry of kind with data to chain, with any entries
// deferred before it, and returns the chain's head hash. It returns once
// they are stored: a step that records before it uses its result never
// uses an unrecorded one.
func (r *Recorder) Append(ctx context.Context, chain, kind string, data any) (string, error) {
	if err := r.Defer(ctx, chain, kind, data); err != nil {
		return "", err
	}
	return r.flushHead(ctx, chain)
}

// AppendOnce is Append for an entry the chain holds at most once, by key
// (a stage read from the store by several steps): nothing is added when
// the chain holds key already.
func (r *Recorder) AppendOnce(ctx context.Context, chain, kind, key string, data any) (string, error) {
	if err := r.DeferOnce(ctx, chain, kind, key, data); err != nil {
		return "", err
	}
	return r.flushHead(ctx, chain)
}

func (r *Recorder) flushHead(ctx context.Context, chain string) (string, error) {
	if err := r.Flush(ctx, chain); err != nil {
		return "", err
	}
	h, _, err := r.Head(ctx, chain)
	return h, err
}

// Defer adds an entry to chain when the chain is next flushed: entries
// of one step written at once. Whoever defers flushes before the step's
// result is used.
func (r *Recorder) Defer(ctx context.Context, chain, kind string, data any) error {
	return r.defer_(ctx, chain, kind, "", data)
}

// DeferOnce is Defer for an entry the chain holds at most once, by key.
func (r *Recorder) DeferOnce(ctx context.Context, chain, kind, key string, data any) error {
	return r.defer_(ctx, chain, kind, key, data)
}

func (r *Recorder) defer_(ctx context.Context, chain, kind, key string, data any) error {
	if chain == "" {
		return fmt.Errorf("audit: an entry needs a chain")
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("audit %s %s: %w", chain, kind, err)
	}
	h := r.head(chain)
	h.mu.Lock()
	if h.seq < 0 {
		if err := h.load(ctx, r.store, chain); err != nil {
			h.mu.Unlock()
			return err
		}
	}
	if key != "" && h.keys[key] {
		h.mu.Unlock()
		return nil
	}
	h.pending = append(h.pending, pendingEntry{kind: kind, at: r.now().UTC(), data: raw, key: key})
	if key != "" {
		h.keys[key] = true
	}
	full := len(h.pending) >= maxPending
	h.mu.Unlock()
	if full {
		return r.Flush(ctx, chain)
	}
	return nil
}

// Flush writes chain's deferred entries, chained to its head, with one
// write where the store allows it.
func (r *Recorder) Flush(ctx context.Context, chain string) error {
	h := r.head(chain)
	h.mu.Lock()
	defer h.mu.Unlock()
	for conflicts := 0; len(h.pending) > 0; {
		if h.seq < 0 {
			if err := h.load(ctx, r.store, chain); err != nil {
				return err
			}
		}
		lines := make([][]byte, len(h.pending))
		prev := h.hash
		for i, p := range h.pending {
			line, err := Entry{Seq: h.seq + i, Chain: chain, Kind: p.kind, At: p.at, Data: p.data, Prev: prev}.line()
			if err != nil {
				return fmt.Errorf("audit %s %s: %w", chain, p.kind, err)
			}
			lines[i], prev = line, Hash(line)
		}
		written, err := r.write(ctx, chain, h.seq, lines)
		h.seq += written
		if written > 0 {
			h.hash = Hash(lines[written-1])
		}
		h.pending = h.pending[written:]
		if err == nil {
			continue
		}
		seq := h.seq
		h.seq = -1 // read the chain again: another writer moved it, or a write failed halfway
		if errors.As(err, new(*veredicto.ConflictError)) && conflicts < maxConflicts {
			conflicts++
			// Two writers racing for one chain take turns: a random
			// pause, growing with each lost race, lets the other finish.
			pause := time.Duration(rand.Int64N(int64(time.Millisecond) << min(conflicts, 6)))
			select {
			case <-ctx.Done():
				return fmt.Errorf("audit %s entry %d: %w", chain, seq, ctx.Err())
			case <-time.After(pause):
			}
			continue
		}
		return fmt.Errorf("audit %s entry %d: %w", chain, seq, err)
	}
	return nil
}

// write stores lines as entries seq… of chain and says how many it wrote.
func (r *Recorder) write(ctx context.Context, chain string, seq int, lines [][]byte) (int, error) {
	if b, ok := r.store.(BatchStore); ok {
		if err := b.AppendLines(ctx, chain, seq, lines); err != nil {
			return 0, err
		}
		return len(lines), nil
	}
	for i, line := range lines {
		if err := r.store.Append(ctx, chain, seq+i, line); err != nil {
			return i, err
		}
	}
	return len(lines), nil
}

// Sync writes chain's deferred entries and makes every entry written to
// it durable, when its store leaves that to Sync (a Syncer); otherwise
// each write was durable already.
func (r *Recorder) Sync(ctx context.Context, chain string) error {
	if err := r.Flush(ctx, chain); err != nil {
		return err
	}
	if s, ok := r.store.(Syncer); ok {
		return s.Sync(ctx, chain)
	}
	return nil
}

// SyncAll makes every chain written durable, when the store leaves that
// to Sync: a step that reports on every chain (the summary) calls it.
func (r *Recorder) SyncAll(ctx context.Context) error {
	if s, ok := r.store.(Syncer); ok {
		return s.Sync(ctx)
	}
	return nil
}

// Head is a chain's last hash and its length (Genesis and 0 for an empty
// chain), entries not yet flushed left out.
func (r *Recorder) Head(ctx context.Context, chain string) (hash string, n int, err error) {
	h := r.head(chain)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.seq < 0 {
		if err := h.load(ctx, r.store, chain); err != nil {
			return "", 0, err
		}
	}
	return h.hash, h.seq, nil
}

func (h *head) load(ctx context.Context, store Store, chain string) error {
	lines, err := store.Lines(ctx, chain)
	if err != nil {
		return fmt.Errorf("audit: read chain %s: %w", chain, err)
	}
	h.seq, h.hash, h.keys = len(lines), Genesis(chain), map[string]bool{}
	for _, p := range h.pending {
		if p.key != "" {
			h.keys[p.key] = true
		}
	}
	if len(lines) > 0 {
		h.hash = Hash(lines[len(lines)-1])
	}
	for _, line := range lines {
		var e struct {
			Kind string `json:"kind"`
			Data struct {
				Key string `json:"key"`
			} `json:"data"`
		}
		if json.Unmarshal(line, &e) == nil && e.Kind == KindStage && e.Data.Key != "" {
			h.keys[e.Data.Key] = true
		}
	}
	return nil
}

// Text stores a message's text once, by its hash, and returns the hash.
func (r *Recorder) Text(ctx context.Context, text string) (string, error) {
	h := HashString(text)
	return h, r.textHashed(ctx, h, text)
}

// textHashed is Text for a text whose hash h is taken.
func (r *Recorder) textHashed(ctx context.Context, h, text string) error {
	if d, ok := r.store.(*Dir); ok && d.stored(h) {
		return nil
	}
	if err := r.store.PutText(ctx, h, []byte(text)); err != nil {
		return fmt.Errorf("audit: store text %s: %w", h[:12], err)
	}
	return nil
}

// Message is one message of a model request: its role, its text's hash,
// and the text itself when no other call sends it (the user message, a
// re-ask's parts): a text several calls share (a system prompt) is stored
// once in the record's texts, by hash.
type Message struct {
	Role string  `json:"role"` // system, user, previous (the answer a re-ask rejects), problem
	Hash string  `json:"sha256"`
	Text *string `json:"text,omitempty"`
}

// ModelCall is one attempt of one model call.
type ModelCall struct {
	Agent         string `json:"agent"`
	Candidate     string `json:"candidate,omitempty"`
	Schema        string `json:"schema"`
	PromptVersion string `json:"prompt_version,omitempty"`
	Provider      string `json:"provider,omitempty"`
	Model         string `json:"model,omitempty"`
	// Request is the hash of everything sent: what a replay looks the
	// answer up by.
	Request  string    `json:"request"`
	Messages []Message `json:"messages"`
	Attempt  int       `json:"attempt"`
	Reask    bool      `json:"reask,omitempty"`
	// Answer is the model's raw answer, as it came (nil when there was
	// none); ErrorName and Error the provider's failure then.
	Answer    *string `json:"answer,omitempty"`
	ErrorName string  `json:"error_name,omitempty"`
	Error     string  `json:"error,omitempty"`
	// DeadlineExceeded: the failure came after the step's deadline, which
	// the step took as a timeout.
	DeadlineExceeded bool            `json:"deadline_exceeded,omitempty"`
	Truncated        bool            `json:"truncated,omitempty"`
	Usage            veredicto.Usage `json:"usage"`
	LatencyMS        int64           `json:"latency_ms"`
	// Verdict is the code's check of the answer: "accepted", or the
	// problem that made it re-ask or refuse.
	Verdict string `json:"verdict"`
}

// Decision is a decision the code took: a gate (Score against Threshold),
// a rule that fired, a state a candidate entered, the outcome applied.
type Decision struct {
	Name      string   `json:"name"` // gate_gem1, rule, state…
	Candidate string   `json:"candidate,omitempty"`
	Score     *float64 `json:"score,omitempty"`
	Threshold *float64 `json:"threshold,omitempty"`
	Outcome   string   `json:"outcome"`
	// Evidence lists the source ids behind the score; Detail says more
	// (a rule's span, a re-asked inconsistency).
	Evidence []string `json:"evidence,omitempty"`
	Detail   string   `json:"detail,omitempty"`
	// Confirmation and Applies: a decision applied from a person's answer
	// names the confirmation and the status it relies on (approved,
	// rejected); Verify checks the record agrees.
	Confirmation string `json:"confirmation,omitempty"`
	Applies      string `json:"applies,omitempty"`
}

// Start opens an execution: what ran, on what. The documents are stored
// as texts, so a replay needs nothing but the record.
type Start struct {
	Workflow  string              `json:"workflow"` // executive_search, career_companion, debate, flags, chat
	Execution string              `json:"execution"`
	Tenant    string              `json:"tenant,omitempty"`
	Input     json.RawMessage     `json:"input"`
	Model     veredicto.ModelInfo `json:"model"`
	// Prompts maps each agent to its prompt's version.
	Prompts map[string]string `json:"prompts,omitempty"`
	// Documents maps each input document (its path) to its text's hash.
	Documents map[string]string `json:"documents"`
}

// Stage is a stage output: stored by the step (Reused false), or read
// from the store where an earlier execution left it (Reused true; a
// replay seeds its store with these). Record is the hash of the stored
// bytes; the record holds the bytes themselves (a text) for a reused
// stage only: a replay computes the others again.
type Stage struct {
	Candidate string `json:"candidate,omitempty"`
	Stage     string `json:"stage"`
	Key       string `json:"key"`
	Reused    bool   `json:"reused,omitempty"`
	Record    string `json:"record_sha256"`
}

// HumanDecision is a person's decision on a confirmation, or what became
// of the question (pending, expired, unavailable).
type HumanDecision struct {
	Confirmation string    `json:"confirmation,omitempty"`
	Candidate    string    `json:"candidate,omitempty"`
	Status       string    `json:"status"` // approved, rejected, expired, pending, unavailable
	Principal    string    `json:"principal,omitempty"`
	DecidedAt    time.Time `json:"decided_at,omitzero"`
	Comment      string    `json:"comment,omitempty"`
	// Preview is the hash of what the person was shown.
	Preview string `json:"preview_sha256,omitempty"`
	// Error and Cause: why the question could not be asked (unavailable).
	Error string `json:"error,omitempty"`
	Cause string `json:"cause,omitempty"`
}

// Report is a file the execution wrote.
type Report struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Bytes  int    `json:"bytes"`
}

// Clock is a clock reading a step used (a report's date): a replay uses
// it again.
type Clock struct {
	Use string    `json:"use"`
	At  time.Time `json:"at"`
}

// Summary ends an execution: every chain's head when it ended.
type Summary struct {
	Execution string            `json:"execution"`
	Heads     map[string]string `json:"heads"`
	Entries   map[string]int    `json:"entries"`
}
