package dynamo

import (
	"context"
	"github.com/veredicto/veredicto"
	"reflect"
	"sync"
	"testing"

	"github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/search"
	"github.com/veredicto/veredicto/internal/search/offline"
)

// billedAnalyst is the offline analyst reporting one billed call per agent
// call, and counting them.
type billedAnalyst struct {
	*offline.Analyst
	mu    sync.Mutex
	calls map[string]int
}

var bill = veredicto.Usage{Calls: 1, PromptTokens: 1000, CompletionTokens: 200, CostUSD: 0.0012}

func (b *billedAnalyst) count(agent string) {
	b.mu.Lock()
	b.calls[agent]++
	b.mu.Unlock()
}

func (b *billedAnalyst) Gem5(ctx context.Context, in search.Gem5Input) (search.Answer[search.Gem5Content], veredicto.Usage, error) {
	b.count("gem5")
	a, _, err := b.Analyst.Gem5(ctx, in)
	return a, bill, err
}

func (b *billedAnalyst) Gem1(ctx context.Context, in search.Gem1Input) (search.Answer[search.Gem1Content], veredicto.Usage, error) {
	b.count("gem1")
	a, _, err := b.Analyst.Gem1(ctx, in)
	return a, bill, err
}

// TestDynamoRetriedTaskDoesNotCallTheLLMAgain: a GEM1 task whose Lambda
// stored its stage and then died (a timeout, a crash) is retried by Step
// Functions; the retry finds the stage in DynamoDB and neither calls the
// model nor books its cost again.
func TestDynamoRetriedTaskDoesNotCallTheLLMAgain(t *testing.T) {
	kv, _, _ := newStore(t, newLarge(t))
	an := &billedAnalyst{Analyst: &offline.Analyst{Year: 2026}, calls: map[string]int{}}
	newService := func() *search.Service { // a fresh Lambda instance per attempt
		return &search.Service{Inputs: file.NewDir("../../../examples/search-demo"), Reports: file.NewDir(t.TempDir()),
			Store: kv, Analyst: an, PromptVersions: func(a string) string { return a + "@test" }}
	}
	ctx := context.Background()
	task := search.CandidateTask{Tenant: "acme", SearchID: "demo-cfo-andina", CandidateID: "c-001"}
	first, err := newService().Gem1(ctx, task)
	if err != nil {
		t.Fatal(err)
	}
	retry, err := newService().Gem1(ctx, task)
	if err != nil {
		t.Fatal(err)
	}
	if !retry.Reused {
		t.Errorf("retry result %+v does not say it was reused from the store", retry)
	}
	retry.Reused = false // the only field a reuse changes
	if !reflect.DeepEqual(first, retry) {
		t.Errorf("retry returned %+v, first %+v", retry, first)
	}
	if an.calls["gem1"] != 1 || an.calls["gem5"] != 1 {
		t.Errorf("LLM calls %v, want gem1 and gem5 once each", an.calls)
	}
	u, err := kv.Usage(ctx, "acme", "demo-cfo-andina")
	if err != nil {
		t.Fatal(err)
	}
	if u.Calls != 2 || u.PromptTokens != 2000 {
		t.Errorf("ledger %+v, want exactly the two calls that ran", u)
	}
}
