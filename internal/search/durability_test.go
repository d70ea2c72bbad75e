package search_test

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/audit"
	fileblob "github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/search"
	filestore "github.com/veredicto/veredicto/internal/store/file"
)

// lazyRecord is an audit store whose appends are written at once and made
// durable only by Sync, as audit.NewDirSyncedOnReport keeps a record: it
// counts, per chain, the entries written and those synced.
type lazyRecord struct {
	mu      sync.Mutex
	lines   map[string][][]byte
	durable map[string]int
	texts   map[string][]byte
}

var (
	_ audit.Store  = (*lazyRecord)(nil)
	_ audit.Syncer = (*lazyRecord)(nil)
)

func (r *lazyRecord) Append(_ context.Context, chain string, seq int, line []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if seq != len(r.lines[chain]) {
		return &veredicto.ConflictError{What: chain}
	}
	r.lines[chain] = append(r.lines[chain], line)
	return nil
}

func (r *lazyRecord) Lines(_ context.Context, chain string) ([][]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.lines[chain]), nil
}

func (r *lazyRecord) Chains(context.Context) ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for c := range r.lines {
		out = append(out, c)
	}
	slices.Sort(out)
	return out, nil
}

func (r *lazyRecord) PutText(_ context.Context, hash string, text []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.texts[hash] = text
	return nil
}

func (r *lazyRecord) Text(_ context.Context, hash string) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.texts[hash], nil
}

func (r *lazyRecord) Sync(_ context.Context, chains ...string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(chains) == 0 {
		for c := range r.lines {
			chains = append(chains, c)
		}
	}
	for _, c := range chains {
		r.durable[c] = len(r.lines[c])
	}
	return nil
}

// undurable lists the chains (all when none is named) holding entries not
// synced yet.
func (r *lazyRecord) undurable(chains ...string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(chains) == 0 {
		for c := range r.lines {
			chains = append(chains, c)
		}
	}
	var out []string
	for _, c := range chains {
		if r.durable[c] < len(r.lines[c]) {
			out = append(out, fmt.Sprintf("%s (%d of %d entries durable)", c, r.durable[c], len(r.lines[c])))
		}
	}
	slices.Sort(out)
	return out
}

// oneRecord opens the same recorder for every task (one execution).
type oneRecord struct{ rec *audit.Recorder }

func (o oneRecord) Open(context.Context, string, string) (*audit.Recorder, error) { return o.rec, nil }

// reportsChecked checks, as each report or summary is written, that the
// record holds durable every entry of what it reports.
type reportsChecked struct {
	search.BlobWriter
	t      *testing.T
	record *lazyRecord
}

func (w reportsChecked) Put(ctx context.Context, key string, data []byte, contentType string) error {
	var chains []string // the summary reports every chain
	if dir, name := path.Split(key); strings.HasPrefix(name, "report.") {
		chains = []string{"candidate/" + path.Base(dir)}
	}
	if bad := w.record.undurable(chains...); len(bad) > 0 {
		w.t.Errorf("%s written before its record was durable: %s", key, strings.Join(bad, ", "))
	}
	return w.BlobWriter.Put(ctx, key, data, contentType)
}

// TestReportsFollowADurableRecord: with a record its steps sync only when
// they report (the CLI's, audit.Folders.SyncOnReport), no report or
// summary is written before every entry it reports on is durable, through
// every path (QA retries, escalations, a technical error), and the record
// is durable when the run ends.
func TestReportsFollowADurableRecord(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	scripts := map[string]script{
		"c-001": {gem1: 8, gem2: 8, gem3: []int{8}, rec: []string{"SI"}, gem4: []qa{{score: 5, blocked: true}, {score: 9}}},
		"c-002": {gem1: 3},
		"c-003": {gem1: 8, gem2: 8, gem3: []int{8}, rec: []string{"SI"}, gem4: []qa{{score: 4, irresolvable: true}}},
		"c-004": {failAt: "gem1"},
	}
	writeSearch(t, in, "c-001", "c-002", "c-003", "c-004")
	record := &lazyRecord{lines: map[string][][]byte{}, durable: map[string]int{}, texts: map[string][]byte{}}
	svc := &search.Service{Inputs: fileblob.NewDir(in), Store: filestore.NewMemory(),
		Reports:        reportsChecked{BlobWriter: fileblob.NewDir(out), t: t, record: record},
		Analyst:        &scripted{scripts: scripts, calls: map[string]int{}},
		PromptVersions: func(a string) string { return a + "-test" },
		Audit:          oneRecord{audit.NewRecorder(record, nil)}}
	runOn(t, svc, search.StartInput{SearchID: "s-test"})
	if bad := record.undurable(); len(bad) > 0 {
		t.Errorf("the run ended with entries not durable: %s", strings.Join(bad, ", "))
	}
	if n := len(record.lines["candidate/c-001"]); n < 6 {
		t.Errorf("c-001's chain holds %d entries: the test recorded nothing", n)
	}
}
