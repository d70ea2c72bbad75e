package search_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/veredicto/veredicto"
	fileblob "github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/search"
	filestore "github.com/veredicto/veredicto/internal/store/file"
)

// countingKV counts the reads of each key; with damage set, the stage
// records of that stage come back damaged (as damaging does).
type countingKV struct {
	*filestore.Memory
	mu     sync.Mutex
	gets   map[string]int
	damage string
}

func newCountingKV() *countingKV {
	return &countingKV{Memory: filestore.NewMemory(), gets: map[string]int{}}
}

func (k *countingKV) Get(ctx context.Context, key string) ([]byte, bool, error) {
	k.mu.Lock()
	k.gets[key]++
	damage := k.damage
	k.mu.Unlock()
	b, ok, err := k.Memory.Get(ctx, key)
	if ok && damage != "" && strings.Contains(key, "/"+damage+".") && !strings.Contains(key, "/repair-") {
		b = b[:len(b)/2]
	}
	return b, ok, err
}

// reads returns the reads of each key since the last call.
func (k *countingKV) reads() map[string]int {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := k.gets
	k.gets = map[string]int{}
	return out
}

// TestStageRecordsReadOnceEachRun: within a run, every later task of a
// candidate (GEM4 reads GEM5–GEM3, the report all of them) takes the
// stages the process already holds, so each stage record is read from the
// store once, when it is first asked for; a second run in the same
// process starts from the store again (Validate reloads the search), so a
// record damaged since is recomputed, never served from memory.
func TestStageRecordsReadOnceEachRun(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	writeSearch(t, in, "c-001", "c-002")
	scripts := map[string]script{
		"c-001": {gem1: 8, gem2: 8, gem3: []int{8}, rec: []string{"SI"}, gem4: []qa{{score: 5, blocked: true}, {score: 9}}},
		"c-002": {gem1: 7, gem2: 7, gem3: []int{7}, rec: []string{"SI"}, gem4: []qa{{score: 8}}},
	}
	kv := newCountingKV()
	an := &scripted{scripts: scripts, calls: map[string]int{}}
	svc := &search.Service{Inputs: fileblob.NewDir(in), Reports: fileblob.NewDir(out), Store: kv, Analyst: an,
		PromptVersions: func(a string) string { return a + "-test" }}

	runOn(t, svc, search.StartInput{SearchID: "s-test"})
	first := kv.reads()
	stages := 0
	for key, n := range first {
		if !strings.HasPrefix(key, "stage/") {
			continue
		}
		stages++
		if n != 1 {
			t.Errorf("first run read %s %d times, want once", key, n)
		}
	}
	if stages < 10 { // gem5, 2 × gem1–gem4, a correction and a second audit
		t.Fatalf("first run read %d stage keys: %v", stages, first)
	}

	kv.mu.Lock()
	kv.damage = "gem2"
	kv.mu.Unlock()
	runOn(t, svc, search.StartInput{SearchID: "s-test"})
	for _, c := range []string{"c-001", "c-002"} {
		if n := an.Calls(c, "gem2"); n != 2 {
			t.Errorf("%s: gem2 called %d times over two runs, want 2 (recomputed once damaged)", c, n)
		}
		if n := an.Calls(c, "gem1"); n != 1 {
			t.Errorf("%s: gem1 called %d times over two runs, want 1 (the second run reads it)", c, n)
		}
	}
	second := kv.reads()
	stored, err := kv.List(t.Context(), "stage/")
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range stored {
		if first[key] == 1 && second[key] == 0 {
			t.Errorf("second run did not read %s from the store", key)
		}
	}
}

// cvReader is the scripted analyst, noting the CV each GEM1 call read.
type cvReader struct {
	*scripted
	mu  sync.Mutex
	cvs []string
}

func (r *cvReader) Gem1(ctx context.Context, in search.Gem1Input) (search.Answer[search.Gem1Content], veredicto.Usage, error) {
	r.mu.Lock()
	r.cvs = append(r.cvs, in.Candidate.CV.Text)
	r.mu.Unlock()
	return r.scripted.Gem1(ctx, in)
}

// TestStagesStayInTheirTenant: two tenants upload the same search (same
// id, same search documents, the candidate's CV differs); one process runs
// both. Each tenant's agents read its own documents, and its stages are
// computed and stored for it, never taken from the other tenant's — GEM5's
// too, whose inputs are the same for both.
func TestStagesStayInTheirTenant(t *testing.T) {
	root, out := t.TempDir(), t.TempDir()
	for _, tenant := range []string{"acme", "globex"} {
		dir := filepath.Join(root, "searches", tenant, "s-test")
		writeSearch(t, dir, "c-001")
		if err := os.WriteFile(filepath.Join(dir, "candidates", "c-001", "cv.md"), []byte("CV en "+tenant), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	layout := func(tenant, id string) (string, string) {
		return "searches/" + tenant + "/" + id, "reports/" + tenant + "/" + id
	}
	kv := newCountingKV()
	an := &cvReader{scripted: &scripted{scripts: map[string]script{"c-001": {gem1: 8, gem2: 8, gem3: []int{8}, rec: []string{"SI"}, gem4: []qa{{score: 9}}}}, calls: map[string]int{}}}
	svc := &search.Service{Inputs: fileblob.NewDir(root), Reports: fileblob.NewDir(out), Store: kv, Analyst: an, Layout: layout,
		PromptVersions: func(a string) string { return a + "-test" }}
	for i, tenant := range []string{"acme", "globex"} {
		in, rep := layout(tenant, "s-test")
		runOn(t, svc, search.StartInput{Tenant: tenant, SearchID: "s-test", InputPrefix: in, ReportPrefix: rep})
		if got := an.cvs[len(an.cvs)-1]; got != "CV en "+tenant {
			t.Errorf("%s's GEM1 read %q", tenant, got)
		}
		if n := an.Calls("-", "gem5"); n != i+1 {
			t.Errorf("after %s's run: gem5 called %d times, want %d (each tenant's own)", tenant, n, i+1)
		}
		for _, agent := range []string{"gem1", "gem2", "gem3", "gem4"} {
			if n := an.Calls("c-001", agent); n != i+1 {
				t.Errorf("after %s's run: %s called %d times, want %d (each tenant's own)", tenant, agent, n, i+1)
			}
		}
		for key := range kv.reads() {
			if strings.HasPrefix(key, "stage/") && !strings.HasPrefix(key, "stage/"+tenant+"/") {
				t.Errorf("%s's run read %s", tenant, key)
			}
		}
	}
}
