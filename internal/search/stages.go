package search

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/llm"
)

// KV is the context store port: single-item conditional writes.
type KV interface {
	Get(ctx context.Context, key string) ([]byte, bool, error)
	PutIfAbsent(ctx context.Context, key string, value []byte) (bool, error)
}

// StageRecord is one persisted stage output. It is keyed by
// search/candidate/stage/attempt and the hash of everything that went into
// it (documents, upstream outputs, prompt version, model), so a retried task
// or a re-run finds it and never pays twice; a changed input gets a new key
// and nothing is overwritten.
type StageRecord struct {
	SearchID    string              `json:"search_id"`
	CandidateID string              `json:"candidate_id"`
	Stage       string              `json:"stage"`
	Attempt     int                 `json:"attempt"`
	InputHash   string              `json:"input_hash"`
	Output      json.RawMessage     `json:"output"`
	Usage       veredicto.Usage     `json:"usage"`
	LLM         veredicto.ModelInfo `json:"llm"`
	StartedAt   string              `json:"started_at"`
	DurationMS  int64               `json:"duration_ms"`
	// Checksum is the SHA-256 of Output: a record whose output does not
	// match it (a truncated or damaged write) is recomputed, not trusted.
	Checksum string `json:"checksum"`
	// Execution names the execution that computed the stage (when it
	// kept an audit record).
	Execution string `json:"execution,omitempty"`
	// Reused is set, never stored, when this run read the record from the
	// store instead of computing it; Raw then holds the bytes read.
	Reused bool   `json:"-"`
	Raw    []byte `json:"-"`
}

// checksum is the hex SHA-256 of a stage output.
func checksum(output []byte) string {
	sum := sha256.Sum256(output)
	return hex.EncodeToString(sum[:])
}

func stageKey(tenant, searchID, candidateID, stage string, attempt int, hash string) string {
	if candidateID == "" {
		candidateID = "-"
	}
	return stagePrefix(tenant, searchID) + fmt.Sprintf("%s/%s.%d.%s", candidateID, stage, attempt, hash)
}

// legacyStageKey is where the record stageKey names was kept before
// 2026-11-27 (see stagePrefix): read, never written.
func legacyStageKey(tenant, searchID, candidateID, stage string, attempt int, hash string) string {
	if candidateID == "" {
		candidateID = "-"
	}
	return stagePrefix(tenant, searchID) + fmt.Sprintf("%s/%s/%d/%s", candidateID, stage, attempt, hash)
}

// chainHash hashes the parts that determine a stage's output.
func chainHash(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s;", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// docHashes lists the hashes of docs ("absent" for missing ones).
func docHashes(s *Search, docs ...Doc) []string {
	out := make([]string, 0, len(docs))
	for _, d := range docs {
		if d.Missing {
			out = append(out, d.ID+"=absent")
			continue
		}
		out = append(out, d.ID+"="+s.Hashes[d.ID])
	}
	return out
}

// stage names as persisted and reported.
func stageName(agent string, attempt int) string {
	switch {
	case agent == AgentGem4 && attempt > 0:
		return fmt.Sprintf("gem4_retry_%d", attempt)
	case agent == AgentCorrection:
		return fmt.Sprintf("correction_%d", attempt)
	case agent == AgentGem3 && attempt > 0:
		return "gem3_reask"
	}
	return agent
}

// runStage returns the stored output for (stage, hash) or computes it with
// call and stores it. Concurrent or repeated runs of the same stage converge
// on the first stored record.
func runStage[C any](ctx context.Context, svc *Service, s *Search, candidateID, agent string, attempt int, hash string,
	call func() (Answer[C], veredicto.Usage, error)) (Contract[C], StageRecord, error) {
	key := stageKey(s.Tenant, s.Docs.SearchID, candidateID, agent, attempt, hash)
	if e, ok := s.stages.get(key); ok {
		return e.contract.(Contract[C]), e.rec, recordReused(ctx, key, e.rec)
	}
	rec, c, free, err := readStage[C](ctx, svc, key)
	if err != nil {
		return c, rec, err
	}
	if free == "" {
		s.stages.put(key, rec, c)
		return c, rec, recordReused(ctx, key, rec)
	}
	// Kept in the earlier layout: recorded where it was found, so that a
	// replay seeds it there.
	legacy := legacyStageKey(s.Tenant, s.Docs.SearchID, candidateID, agent, attempt, hash)
	switch lrec, lc, lfree, err := readStage[C](ctx, svc, legacy); {
	case errors.As(err, new(*CorruptStageError)): // computed again, under key
	case err != nil:
		return lc, lrec, err
	case lfree == "":
		s.stages.put(key, lrec, lc)
		return lc, lrec, recordReused(ctx, legacy, lrec)
	}
	if call == nil {
		return Contract[C]{}, StageRecord{}, errNotRun
	}
	name := stageName(agent, attempt)
	start, err := svc.clock(ctx, name+" start")
	if err != nil {
		return Contract[C]{}, StageRecord{}, err
	}
	ans, usage, err := call()
	if err != nil {
		// The error goes back unwrapped: its type name is the ASL error name
		// that Retry and Catch match, here and on AWS Lambda.
		svc.logger().ErrorContext(ctx, "agent call failed", "search_id", s.Docs.SearchID,
			"candidate_id", candidateID, "stage", stageName(agent, attempt), "error_name", veredicto.ErrorName(err))
		return Contract[C]{}, StageRecord{}, err
	}
	cited, err := CheckCitations(agent, ans, s.Index)
	if err == nil {
		err = CheckScores(agent, ans.Scores)
	}
	if err == nil {
		err = CheckQuotes(agent, QuotedContent(agent, ans.Content), s.Texts)
	}
	if err != nil {
		// The code's check refuses the answer: recorded with what it found.
		if rerr := record(ctx, func(sc *audit.Scope) error {
			return sc.Decide(ctx, audit.Decision{Name: "check_" + name, Outcome: "rejected", Detail: err.Error()})
		}); rerr != nil {
			return Contract[C]{}, StageRecord{}, rerr
		}
		return Contract[C]{}, StageRecord{}, &llm.InvalidOutputError{Agent: agent, CandidateID: candidateID, Problem: err.Error()}
	}
	c = Contract[C]{
		Meta: Meta{SearchID: s.Docs.SearchID, CandidateID: candidateID, Gem: agent, Timestamp: start.UTC().Format("2006-01-02T15:04:05Z"),
			PromptVersion: svc.PromptVersion(agent), Sources: cited},
		Content: ans.Content, Scores: ans.Scores, IssuesFound: nonNil(ans.IssuesFound), Blockers: nonNil(ans.Blockers),
	}
	out, err := json.Marshal(c)
	if err != nil {
		return Contract[C]{}, StageRecord{}, fmt.Errorf("encode %s: %w", agent, err)
	}
	end, err := svc.clock(ctx, name+" end")
	if err != nil {
		return Contract[C]{}, StageRecord{}, err
	}
	rec = StageRecord{SearchID: s.Docs.SearchID, CandidateID: candidateID, Stage: name, Attempt: attempt,
		InputHash: hash, Output: out, Usage: usage, LLM: svc.Analyst.Info(), StartedAt: c.Meta.Timestamp,
		DurationMS: end.Sub(start).Milliseconds(), Checksum: checksum(out)}
	if sc := audit.ScopeFrom(ctx); sc != nil {
		rec.Execution = sc.Execution
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return Contract[C]{}, StageRecord{}, fmt.Errorf("encode stage record: %w", err)
	}
	wrote, err := svc.Store.PutIfAbsent(ctx, free, b)
	if err != nil {
		return Contract[C]{}, StageRecord{}, fmt.Errorf("put stage %s/%s: %w", candidateID, rec.Stage, err)
	}
	if !wrote { // another attempt finished first: use what it stored
		rec2, c2, free2, err := readStage[C](ctx, svc, key)
		if err != nil {
			return Contract[C]{}, StageRecord{}, fmt.Errorf("reload stage %s/%s: %w", candidateID, rec.Stage, err)
		}
		if free2 == "" {
			s.stages.put(key, rec2, c2)
			return c2, rec2, recordReused(ctx, key, rec2)
		}
		// What the other attempt stored is damaged too: ours is intact.
	}
	// Recorded with the task's other entries, before its result goes back
	// to the workflow. Should the task die before that, its retry finds
	// the stage stored and records it as read (recordReused), so the
	// record never lacks a stage the execution used.
	if err := record(ctx, func(sc *audit.Scope) error {
		return sc.Stage(ctx, audit.Stage{Stage: rec.Stage, Key: key}, b)
	}); err != nil {
		return Contract[C]{}, StageRecord{}, err
	}
	// A later task reads it as it would from the store.
	stored := rec
	stored.Reused, stored.Raw = true, b
	s.stages.put(key, stored, c)
	// Only the write that stored the stage books its cost, so a retried
	// task never counts a call twice.
	if ledger, ok := svc.Store.(UsageLedger); ok && usage.Calls > 0 {
		if err := ledger.AddUsage(ctx, s.Tenant, s.Docs.SearchID, usage); err != nil {
			svc.logger().WarnContext(ctx, "usage ledger", "search_id", s.Docs.SearchID, "stage", rec.Stage, "error", err)
		}
	}
	return c, rec, nil
}

// recordReused records a stage output read from the store, once per
// chain: one an earlier execution computed (a replay of this execution
// starts with it in its store), or one this execution's chain computed but
// never recorded (a task that died after storing it). One this chain
// recorded computing is not recorded again (the key is its own), nor one
// another chain of this execution computed (GEM5, in the main chain).
func recordReused(ctx context.Context, key string, rec StageRecord) error {
	return record(ctx, func(sc *audit.Scope) error {
		mine := rec.Execution == sc.Execution && rec.Execution != ""
		if mine && rec.CandidateID != sc.Candidate {
			return nil // computed by this execution in another chain, recorded there
		}
		// Computed by this execution (a replay recomputes it: its text
		// is not kept; the entry is the computing task's, one per key),
		// or read from before it (kept, to seed a replay's store).
		return sc.Stage(ctx, audit.Stage{Candidate: rec.CandidateID, Stage: rec.Stage, Key: key, Reused: !mine}, rec.Raw)
	})
}

// UsageLedger is an optional capability of the context store: a running
// total of tokens and cost per tenant's search (DynamoDB in AWS).
type UsageLedger interface {
	AddUsage(ctx context.Context, tenant, searchID string, u veredicto.Usage) error
}

// maxRepairs bounds the repair slots of one stage key.
const maxRepairs = 3

// repairKey is where the n-th recomputation of a damaged stage record is
// stored: the context store only writes once per key, so a damaged record
// stays and its replacement goes beside it. The extra path element keeps
// repair keys out of ParseStageKey's listing.
func repairKey(key string, n int) string {
	if n == 0 {
		return key
	}
	return fmt.Sprintf("%s/repair-%d", key, n)
}

// CorruptStageError is a stage whose record and every repair slot are
// damaged: the store keeps losing what is written to it.
type CorruptStageError struct{ Key string }

func (e *CorruptStageError) Error() string {
	return fmt.Sprintf("stage record %s and its %d repairs are damaged", e.Key, maxRepairs)
}

// readStage returns the first intact record among key and its repair slots.
// When none is intact it returns the first free slot, where a recomputed
// record goes; a damaged record is reported (keys only: no personal text)
// and skipped, never trusted and never a permanent failure.
func readStage[C any](ctx context.Context, svc *Service, key string) (StageRecord, Contract[C], string, error) {
	for n := 0; n <= maxRepairs; n++ {
		k := repairKey(key, n)
		b, ok, err := svc.Store.Get(ctx, k)
		if err != nil {
			return StageRecord{}, Contract[C]{}, "", fmt.Errorf("get stage %s: %w", k, err)
		}
		if !ok {
			return StageRecord{}, Contract[C]{}, k, nil
		}
		rec, c, problem := decodeStage[C](b)
		if problem == "" {
			rec.Reused, rec.Raw = true, b
			return rec, c, "", nil
		}
		// The store writes a key once, so a damaged record stays beside
		// its repair: said once per process, named from its key.
		if svc.firstWarning(k) {
			cand, stage, _ := ParseStageKey(key)
			svc.logger().WarnContext(ctx, "stage record damaged; its repair is read or written beside it", "key", k,
				"candidate_id", cand, "stage", stage, "problem", problem)
		}
	}
	return StageRecord{}, Contract[C]{}, "", &CorruptStageError{Key: key}
}

// decodeStage decodes and verifies a stored record; problem names what is
// wrong with it ("" when intact). Records written before checksums existed
// are accepted when they decode.
func decodeStage[C any](b []byte) (rec StageRecord, c Contract[C], problem string) {
	if err := json.Unmarshal(b, &rec); err != nil {
		return rec, c, "record is not valid JSON (truncated?)"
	}
	if rec.Checksum != "" && rec.Checksum != checksum(rec.Output) {
		return rec, c, "output does not match its checksum"
	}
	if err := json.Unmarshal(rec.Output, &c); err != nil {
		return rec, c, "output does not decode as the stage's contract"
	}
	return rec, c, ""
}

func nonNil(is []Issue) []Issue {
	if is == nil {
		return []Issue{}
	}
	return is
}

// CheckScores enforces the contract's score ranges: score_dimension an
// integer 0–10 (null for GEM5 only), confidence 0–1.
func CheckScores(agent string, s Scores) error {
	var problems []string
	switch {
	case agent == AgentGem5 && s.ScoreDimension != nil:
		problems = append(problems, "score_dimension must be null for gem5")
	case agent != AgentGem5 && agent != AgentCorrection && s.ScoreDimension == nil:
		problems = append(problems, "score_dimension is missing")
	case s.ScoreDimension != nil && (*s.ScoreDimension < 0 || *s.ScoreDimension > 10):
		problems = append(problems, fmt.Sprintf("score_dimension %d is outside 0–10", *s.ScoreDimension))
	}
	if s.Confidence < 0 || s.Confidence > 1 {
		problems = append(problems, fmt.Sprintf("confidence %v is outside 0–1", s.Confidence))
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s: %s", agent, strings.Join(problems, "; "))
	}
	return nil
}

// errNotRun ends a load-only chain at the first stage that did not run.
var errNotRun = errors.New("stage did not run")
