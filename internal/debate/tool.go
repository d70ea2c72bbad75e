package debate

import (
	"context"
	"errors"
	"strings"
	"sync"
)

// Retrieval is the tool a round offers an agent: one query to the
// internal knowledge base ("agentes podem consultar RAG para buscar
// evidências"), counted against the debate's budget (rag.max_queries, 5
// per debate) and bounded by rag.timeout. The chunks it returns join the
// ones the agent may cite. A turn without the tool (PositionInput.Tool
// nil) is one the budget leaves none for.
type Retrieval interface {
	Query(ctx context.Context, text string) ([]Chunk, error)
}

// ErrToolUsed is a second query in one turn: the tool answers one.
var ErrToolUsed = errors.New("the retrieval tool answers one query per turn")

// MaxQueryChars bounds a query's text.
const MaxQueryChars = 300

// turnTool is one turn's Retrieval: at most one query, run by run (the
// engine's shared RAG, or a step's own), and what it brought.
type turnTool struct {
	run func(ctx context.Context, text string) ([]Chunk, error)

	mu   sync.Mutex
	used bool
	got  []Chunk
}

var _ Retrieval = (*turnTool)(nil)

func newTool(run func(ctx context.Context, text string) ([]Chunk, error)) *turnTool {
	return &turnTool{run: run}
}

// Query runs the turn's one query; an empty text is no query.
func (t *turnTool) Query(ctx context.Context, text string) ([]Chunk, error) {
	text = strings.Join(strings.Fields(text), " ")
	if text == "" {
		return nil, errors.New("empty query")
	}
	if r := []rune(text); len(r) > MaxQueryChars {
		text = string(r[:MaxQueryChars])
	}
	t.mu.Lock()
	if t.used {
		t.mu.Unlock()
		return nil, ErrToolUsed
	}
	t.used = true
	t.mu.Unlock()
	cs, err := t.run(ctx, text)
	t.mu.Lock()
	t.got = cs
	t.mu.Unlock()
	return cs, err
}

// retrieved is what the turn's query brought (nil for a nil tool).
func (t *turnTool) retrieved() []Chunk {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.got
}

// offer is t as the turn's Retrieval: nil when the turn has no tool (not
// a typed nil, so agents can test it).
func offer(t *turnTool) Retrieval {
	if t == nil {
		return nil
	}
	return t
}

// OfferedInParallel is the budget's rule in a parallel round (round 1,
// rounds 3+, and the only round of simple and council): the queries left
// go to the first participants of the roster, one each. Nothing is spent
// until an agent queries; a query left unused stays for the next rounds.
// In the sequential round 2 each agent in turn has the tool while a query
// is left. So the debate never runs, or refuses, a query past the budget.
func OfferedInParallel(index, used, max int) bool { return index < max-used }
