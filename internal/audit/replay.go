package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/llm"
)

// Replay is a record read back to run its execution again with no
// provider: it answers each model call by its request hash, each clock
// reading and each person's decision from what was recorded, in the
// order they were recorded, chain by chain.
type Replay struct {
	// Start is the execution's start entry: its workflow, input and
	// documents.
	Start Start
	store Store

	mu      sync.Mutex
	calls   map[string][]ModelCall // chain + request hash → attempts, in order
	clock   map[string][]Clock     // chain → readings, in order
	humans  map[string][]HumanDecision
	reused  []Stage
	pending int   // model calls not answered yet
	first   error // the first divergence met
}

// OpenReplay reads the record in store for a replay. The record should
// have passed Verify: a replay trusts it.
func OpenReplay(ctx context.Context, store Store) (*Replay, error) {
	chains, err := store.Chains(ctx)
	if err != nil {
		return nil, err
	}
	r := &Replay{store: store, calls: map[string][]ModelCall{}, clock: map[string][]Clock{}, humans: map[string][]HumanDecision{}}
	started := false
	for _, chain := range chains {
		lines, err := store.Lines(ctx, chain)
		if err != nil {
			return nil, err
		}
		for i, line := range lines {
			e, why := parseEntry(line)
			if why != "" {
				return nil, fmt.Errorf("audit %s entry %d %s", chain, i, why)
			}
			var derr error
			switch e.Kind {
			case KindStart:
				if !started {
					derr, started = json.Unmarshal(e.Data, &r.Start), true
				}
			case KindModel:
				var c ModelCall
				if derr = json.Unmarshal(e.Data, &c); derr == nil {
					r.calls[chain+"\x00"+c.Request] = append(r.calls[chain+"\x00"+c.Request], c)
					r.pending++
				}
			case KindClock:
				var c Clock
				if derr = json.Unmarshal(e.Data, &c); derr == nil {
					r.clock[chain] = append(r.clock[chain], c)
				}
			case KindHuman:
				var h HumanDecision
				if derr = json.Unmarshal(e.Data, &h); derr == nil {
					r.humans[h.Candidate] = append(r.humans[h.Candidate], h)
				}
			case KindStage:
				var st Stage
				if derr = json.Unmarshal(e.Data, &st); derr == nil && st.Reused {
					r.reused = append(r.reused, st)
				}
			}
			if derr != nil {
				return nil, fmt.Errorf("audit %s entry %d: %w", chain, i, derr)
			}
		}
	}
	if !started {
		return nil, fmt.Errorf("audit: the record has no start entry: nothing to replay")
	}
	return r, nil
}

// Document is the text of an input document, by its path.
func (r *Replay) Document(ctx context.Context, id string) ([]byte, error) {
	h, ok := r.Start.Documents[id]
	if !ok {
		return nil, &veredicto.NotFoundError{What: "recorded document " + id}
	}
	return r.store.Text(ctx, h)
}

// Seed is a stage output an earlier execution had stored, which the
// replayed one read: a replay's store starts with these.
type Seed struct {
	Key    string
	Record []byte
}

// Seeds lists the stage outputs the execution read from before it ran.
func (r *Replay) Seeds(ctx context.Context) ([]Seed, error) {
	var out []Seed
	seen := map[string]bool{}
	for _, st := range r.reused {
		if seen[st.Key] {
			continue
		}
		seen[st.Key] = true
		b, err := r.store.Text(ctx, st.Record)
		if err != nil {
			return nil, fmt.Errorf("audit: stage %s: %w", st.Key, err)
		}
		out = append(out, Seed{Key: st.Key, Record: b})
	}
	return out, nil
}

// HumanFor is the last recorded outcome of the question put to a person
// about candidate ("" for none): what became of it in the run.
func (r *Replay) HumanFor(candidate string) (HumanDecision, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	hs := r.humans[candidate]
	if len(hs) == 0 {
		return HumanDecision{}, false
	}
	return hs[len(hs)-1], true
}

// Diverge notes err as the replay's divergence (the first one met is
// kept: a workflow may catch it and carry on) and returns it.
func (r *Replay) Diverge(err *DivergedError) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.first == nil {
		r.first = err
	}
	return err
}

// Diverged is the first divergence the replay met, nil when none.
func (r *Replay) Diverged() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.first
}

func (r *Replay) clockReading(chain, use string) (time.Time, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rs := r.clock[chain]
	if len(rs) == 0 || rs[0].Use != use {
		want := "nothing more"
		if len(rs) > 0 {
			want = rs[0].Use
		}
		err := &DivergedError{Chain: chain, What: fmt.Sprintf("the clock is read for %s; the run read it next for %s", use, want)}
		if r.first == nil {
			r.first = err
		}
		return time.Time{}, err
	}
	r.clock[chain] = rs[1:]
	return rs[0].At, nil
}

// Complete answers a model request from the record (Replay is the
// llm.Client of a replay): the next attempt recorded in the chain of the
// step ctx carries for the same request hash. A request the record does
// not hold is a *DivergedError naming the agent and the candidate.
func (r *Replay) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	s := ScopeFrom(ctx)
	if s == nil {
		return llm.Response{}, fmt.Errorf("audit replay: a model call outside a recorded step (%s)", req.Schema)
	}
	key := s.Chain + "\x00" + RequestHash(req)
	r.mu.Lock()
	cs := r.calls[key]
	if len(cs) == 0 {
		r.mu.Unlock()
		what := "the request is not one the run made: its prompt, a document or the code changed since"
		if req.Retry != nil {
			what = "the run did not re-ask this answer this way: the code's check of the answer changed since"
		}
		return llm.Response{}, r.Diverge(&DivergedError{Chain: s.Chain, Agent: s.agent(req.Schema), Candidate: s.Candidate, What: what})
	}
	c := cs[0]
	r.calls[key] = cs[1:]
	r.pending--
	r.mu.Unlock()
	if c.Answer == nil {
		return llm.Response{Usage: c.Usage}, &replayedError{name: c.ErrorName, msg: c.Error, deadline: c.DeadlineExceeded}
	}
	b := []byte(*c.Answer)
	return llm.Response{Content: b, Usage: c.Usage, Truncated: c.Truncated}, nil
}

// Unanswered lists the recorded model calls the replay did not make
// ("agent for candidate" each, sorted): a replay that ends with some left
// diverged.
func (r *Replay) Unanswered() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, cs := range r.calls {
		for _, c := range cs {
			who := c.Agent
			if c.Candidate != "" {
				who += " for candidate " + c.Candidate
			}
			out = append(out, who)
		}
	}
	sort.Strings(out)
	return out
}

// UnansweredError is a replay that made fewer model calls than its run.
func (r *Replay) UnansweredError() error {
	if left := r.Unanswered(); len(left) > 0 {
		return &DivergedError{Chain: MainChain, What: "the run made model calls the replay did not: " + strings.Join(left, ", ")}
	}
	return nil
}

// Replayed is a failure as recorded: its ASL name and its message, so
// the workflow retries or catches it as it did.
func Replayed(name, msg string) error { return &replayedError{name: name, msg: msg} }

// replayedError is a provider failure as recorded: its ASL name and its
// message, so the workflow retries or catches it as it did.
type replayedError struct {
	name, msg string
	deadline  bool
}

func (e *replayedError) Error() string     { return e.msg }
func (e *replayedError) ErrorName() string { return e.name }

// Is: a failure recorded after the step's deadline is a
// context.DeadlineExceeded, so the step takes it as the timeout it was.
func (e *replayedError) Is(target error) bool {
	return e.deadline && target == context.DeadlineExceeded
}

var _ veredicto.Named = (*replayedError)(nil)

// Reports lists the files a record says were written, the last entry of
// each path winning.
func Reports(ctx context.Context, store Store) ([]Report, error) {
	chains, err := store.Chains(ctx)
	if err != nil {
		return nil, err
	}
	byPath := map[string]Report{}
	for _, chain := range chains {
		lines, err := store.Lines(ctx, chain)
		if err != nil {
			return nil, err
		}
		for _, line := range lines {
			e, why := parseEntry(line)
			if why != "" || e.Kind != KindReport {
				continue
			}
			var rep Report
			if json.Unmarshal(e.Data, &rep) == nil {
				byPath[rep.Path] = rep
			}
		}
	}
	out := make([]Report, 0, len(byPath))
	for _, rep := range byPath {
		out = append(out, rep)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}
