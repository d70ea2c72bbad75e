package search_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/search"
	"github.com/veredicto/veredicto/internal/store/file"
)

func TestProgress(t *testing.T) {
	ctx := context.Background()
	kv := file.NewMemory()
	put := func(key string, calls int) {
		t.Helper()
		b, _ := json.Marshal(search.StageRecord{Usage: veredicto.Usage{Calls: calls}})
		if _, err := kv.PutIfAbsent(ctx, key, b); err != nil {
			t.Fatal(err)
		}
	}
	// Written out of order, with three QA retries (more than the default
	// two), a stage re-run under a new input hash (in both layouts, see
	// stagePrefix), a repair slot (no stage of its own), and another
	// tenant's search of the same id.
	for _, k := range []string{
		"stage/acme/s-1/c-2/gem4/3/h", "stage/acme/s-1/c-2/correction/3/h", "stage/acme/s-1/c-2/gem4/0/h",
		"stage/acme/s-1/c-2/correction/1/h", "stage/acme/s-1/c-2/gem4/1/h", "stage/acme/s-1/c-2/gem2/0/h",
		"stage/acme/s-1/c-2/gem4/2/h", "stage/acme/s-1/c-2/correction/2/h", "stage/acme/s-1/c-2/gem1/0/h",
		"stage/acme/s-1/c-2/gem3/1/h", "stage/acme/s-1/c-2/gem3/0/h",
		"stage/acme/s-1/c-1/gem1/0/h1", "stage/acme/s-1/c-1/gem1.0.h2", "stage/acme/s-1/c-1/gem1.0.h3/repair-1",
		"stage/acme/s-1/-/gem5/0/h",
		"stage/globex/s-1/c-9/gem1/0/h", "stage/acme/s-10/c-8/gem1/0/h",
	} {
		put(k, 1)
	}
	got, err := search.Progress(ctx, kv, "acme", "s-1")
	if err != nil {
		t.Fatal(err)
	}
	want := []search.CandidateProgress{
		{CandidateID: "c-1", Stages: []string{"gem1"}},
		{CandidateID: "c-2", Stages: []string{"gem1", "gem2", "gem3", "gem3_reask", "gem4", "correction_1", "gem4_retry_1",
			"correction_2", "gem4_retry_2", "correction_3", "gem4_retry_3"}},
	}
	if !slices.EqualFunc(got.Candidates, want, func(a, b search.CandidateProgress) bool {
		return a.CandidateID == b.CandidateID && slices.Equal(a.Stages, b.Stages)
	}) {
		t.Errorf("candidates:\n got %+v\nwant %+v", got.Candidates, want)
	}
	if !slices.Equal(got.Stages, []string{"gem5"}) {
		t.Errorf("search stages: got %v, want [gem5]", got.Stages)
	}
	if got.Usage.Calls != 14 {
		t.Errorf("usage calls: got %d, want 14 (acme/s-1's records only)", got.Usage.Calls)
	}

	empty, err := search.Progress(ctx, kv, "acme", "s-2")
	if err != nil || len(empty.Candidates) != 0 || len(empty.Stages) != 0 {
		t.Errorf("search with no stages: got %+v, %v; want empty", empty, err)
	}
}
