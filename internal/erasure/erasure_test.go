package erasure_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/erasure"
)

// keys is an Eraser that remembers what it was asked to erase.
type keys struct {
	erased []string
	fail   error
}

func (k *keys) Erase(_ context.Context, key string) (int, error) {
	k.erased = append(k.erased, key)
	return 2, k.fail
}

// fixture records executions of acme's searches s-1 (two runs) and s-2,
// one of acme whose record was damaged before its start, and one of
// globex's s-1, under one records folder.
type fixture struct {
	folders                   *audit.Folders
	inputs, reports, contexts *keys
	svc                       *erasure.Service
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{folders: &audit.Folders{Root: t.TempDir()}, inputs: &keys{}, reports: &keys{}, contexts: &keys{}}
	for _, x := range []struct{ tenant, exec, search string }{{"acme", "s-1-run1", "s-1"}, {"acme", "s-1-run2", "s-1"}, {"acme", "s-2-run1", "s-2"}, {"globex", "s-1-run1", "s-1"}} {
		record(t, f.folders, x.tenant, x.exec, x.search)
	}
	r, _ := f.folders.Open(context.Background(), "acme", "damaged")
	if _, err := r.Append(context.Background(), audit.MainChain, audit.KindClock, audit.Clock{Use: "x", At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	f.svc = &erasure.Service{Inputs: f.inputs, Reports: f.reports, Context: f.contexts,
		Audit: erasure.Records{
			List: func(_ context.Context, tenant string) ([]string, error) { return f.folders.Executions(tenant) },
			Open: func(tenant, execution string) erasure.Record { return audit.NewDir(f.folders.Path(tenant, execution)) },
		},
		Now: func() time.Time { return time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC) }}
	return f
}

func record(t *testing.T, f *audit.Folders, tenant, exec, searchID string) {
	t.Helper()
	ctx := context.Background()
	r, _ := f.Open(ctx, tenant, exec)
	doc, err := r.Text(ctx, "CV de "+exec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Append(ctx, audit.MainChain, audit.KindStart, audit.Start{Workflow: "executive_search", Execution: exec, Tenant: tenant,
		Input: fmt.Appendf(nil, `{"search_id":%q}`, searchID), Documents: map[string]string{"cv.md": doc}}); err != nil {
		t.Fatal(err)
	}
	if err := (&audit.Scope{Recorder: r, Execution: exec, Chain: audit.MainChain}).End(ctx); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) tombstone(t *testing.T, tenant, exec string) *audit.Tombstone {
	t.Helper()
	tomb, err := audit.ReadTombstone(context.Background(), audit.NewDir(f.folders.Path(tenant, exec)))
	if err != nil {
		t.Fatal(err)
	}
	return tomb
}

func purged(res *erasure.Result) (names []string, already []bool) {
	for _, p := range res.Executions {
		names, already = append(names, p.Execution), append(already, p.Already)
	}
	return names, already
}

// TestPurgeASearch: a purge of one search replaces the records of its
// executions, found by the search id their start entry records, by
// tombstones; erases its documents, reports, stage records and search
// record; leaves the tenant's other searches and other tenants alone;
// names the executions it could not tell; and run again, says the
// records were purged already.
func TestPurgeASearch(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	req := erasure.Request{Tenant: "acme", Search: "s-1", By: "dpo@acme", Reason: "solicitud 42"}
	res, err := f.svc.Purge(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	names, already := purged(res)
	if !slices.Equal(names, []string{"s-1-run1", "s-1-run2"}) || slices.Contains(already, true) || !slices.Equal(res.Unknown, []string{"damaged"}) {
		t.Errorf("purged %q (already %v), unknown %q; want both runs of s-1, the damaged record named", names, already, res.Unknown)
	}
	if got := append(append(f.inputs.erased, f.reports.erased...), f.contexts.erased...); !slices.Equal(got,
		[]string{"searches/acme/s-1", "reports/acme/s-1", "stage/acme/s-1", "search/acme/s-1", "searchrun/acme/s-1"}) {
		t.Errorf("erased %q", got)
	}
	if res.Documents != 2 || res.Reports != 2 || res.Records != 6 {
		t.Errorf("counts: %d documents, %d reports, %d records; want what the stores said", res.Documents, res.Reports, res.Records)
	}
	tomb := f.tombstone(t, "acme", "s-1-run1")
	if tomb == nil || tomb.Search != "s-1" || tomb.PurgedBy != "dpo@acme" || tomb.Reason != "solicitud 42" || tomb.Execution != "s-1-run1" ||
		len(tomb.Texts) != 1 || !tomb.PurgedAt.Equal(time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)) {
		t.Errorf("tombstone %+v", tomb)
	}
	for _, x := range [][2]string{{"acme", "s-2-run1"}, {"globex", "s-1-run1"}} {
		if f.tombstone(t, x[0], x[1]) != nil {
			t.Errorf("%s's %s was purged", x[0], x[1])
		}
		if ps, _ := audit.Verify(ctx, audit.NewDir(f.folders.Path(x[0], x[1])), nil); len(ps) != 0 {
			t.Errorf("%s's %s no longer verifies: %v", x[0], x[1], ps)
		}
	}

	res, err = f.svc.Purge(ctx, req)
	if names, already = purged(res); err != nil || !slices.Equal(names, []string{"s-1-run1", "s-1-run2"}) || !slices.Equal(already, []bool{true, true}) {
		t.Errorf("again: %q already %v, %v; want both, purged already", names, already, err)
	}
}

// TestPurgeATenant: without a search, every record of the tenant becomes
// a tombstone (the damaged one too) and the tenant's folders are erased
// whole; another tenant's are not touched.
func TestPurgeATenant(t *testing.T) {
	f := newFixture(t)
	res, err := f.svc.Purge(context.Background(), erasure.Request{Tenant: "acme", By: "dpo@acme", Reason: "baja del cliente"})
	if err != nil {
		t.Fatal(err)
	}
	if names, _ := purged(res); !slices.Equal(names, []string{"damaged", "s-1-run1", "s-1-run2", "s-2-run1"}) || len(res.Unknown) != 0 {
		t.Errorf("purged %q, unknown %q; want every record of acme", names, res.Unknown)
	}
	// Every workflow's keys of the tenant, in each store: the search's,
	// then the chat's, debates', companion's, flags', interviews' and
	// outbox's.
	others := []string{"chat/acme", "chatlink/acme", "debate/acme", "debates/acme", "companion/acme", "flags/acme", "interviews/acme", "outbox/acme"}
	for _, st := range []struct {
		name   string
		got    []string
		search []string
	}{
		{"inputs", f.inputs.erased, []string{"searches/acme"}},
		{"reports", f.reports.erased, []string{"reports/acme"}},
		{"context", f.contexts.erased, []string{"stage/acme", "search/acme", "searchrun/acme"}},
	} {
		if want := append(st.search, others...); !slices.Equal(st.got, want) {
			t.Errorf("erased from %s %q; want %q", st.name, st.got, want)
		}
	}
	if f.tombstone(t, "globex", "s-1-run1") != nil {
		t.Error("globex's record was purged")
	}
}

func TestPurgeRefuses(t *testing.T) {
	f := newFixture(t)
	_, err := f.svc.Purge(context.Background(), erasure.Request{Tenant: "../acme", Search: "s 1"})
	var bad *veredicto.InvalidInputError
	if !errors.As(err, &bad) {
		t.Fatalf("a bad request: %v, want an InvalidInputError", err)
	}
	for _, want := range []string{`tenant "../acme" is not a tenant id`, `search "s 1" is not a search id`, "who runs the purge", "the reason"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v: does not say %q", err, want)
		}
	}
	if len(f.inputs.erased)+len(f.contexts.erased) != 0 {
		t.Error("a refused purge erased something")
	}
	f.reports.fail = errors.New("access denied")
	if _, err := f.svc.Purge(context.Background(), erasure.Request{Tenant: "acme", Search: "s-2", By: "dpo", Reason: "x"}); err == nil ||
		!strings.Contains(err.Error(), "erase reports/acme/s-2: access denied") {
		t.Errorf("a store that fails: %v, want the error naming what was being erased", err)
	}
}
