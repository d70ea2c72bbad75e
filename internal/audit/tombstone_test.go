package audit_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/audit/audittest"
)

// TestDirConformance: the folder store passes the checks every store of
// records passes (s3audit runs the same).
func TestDirConformance(t *testing.T) {
	audittest.Store(t, func(t *testing.T) audit.Store { return audit.NewDir(t.TempDir()) })
}

// TestATamperedTombstoneIsNamed: a tombstone that does not decode, is
// not where a purge writes it, has company in its chain, or beside which
// a chain reappeared is named. (A tombstone rewritten whole, its hashes
// recomputed, links as well as the original: nothing left in the record
// can tell, as with any record rewritten whole. Object Lock keeps it on
// AWS; docs/AUDIT.md.)
func TestATamperedTombstoneIsNamed(t *testing.T) {
	ctx := context.Background()
	purged := func(t *testing.T) string {
		dir := t.TempDir()
		st := audit.NewDir(dir)
		audittest.Execution(t, st)
		if _, err := audit.Purge(ctx, st, st, audit.Tombstone{Execution: "x-1", PurgedAt: time.Now(), PurgedBy: "dpo", Reason: "supresión"}); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	tests := []struct {
		name   string
		tamper func(t *testing.T, dir string)
		want   string
	}{
		{"a field renamed", func(t *testing.T, dir string) {
			editLines(t, chainFile(dir, audit.TombstoneChain), func(ls [][]byte) [][]byte {
				ls[0] = []byte(strings.Replace(string(ls[0]), `"heads":`, `"cabezas":`, 1))
				return ls
			})
		}, "tombstone entry 0: is a tombstone that does not decode"},
		{"moved to another chain", func(t *testing.T, dir string) {
			editLines(t, chainFile(dir, audit.TombstoneChain), func(ls [][]byte) [][]byte {
				ls[0] = []byte(strings.Replace(string(ls[0]), `"chain":"tombstone"`, `"chain":"main"`, 1))
				return ls
			})
		}, `tombstone entry 0: is a tombstone entry numbered 0 of chain "main"`},
		{"a second entry", func(t *testing.T, dir string) {
			editLines(t, chainFile(dir, audit.TombstoneChain), func(ls [][]byte) [][]byte { return append(ls, ls[0]) })
		}, "tombstone entry 0: the tombstone chain holds 2 entries"},
		{"a chain written after it", func(t *testing.T, dir string) {
			audit.NewRecorder(audit.NewDir(dir), nil).Append(ctx, audit.MainChain, audit.KindClock, audit.Clock{Use: "x", At: time.Now()})
		}, "main: the record was purged, yet this chain remains"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := purged(t)
			tt.tamper(t, dir)
			ps := verify(t, dir, t.TempDir())
			if len(ps) == 0 || !strings.Contains(ps[0].String(), tt.want) {
				t.Errorf("problems %v, want the first to say %q", ps, tt.want)
			}
		})
	}
	dir := purged(t)
	editLines(t, chainFile(dir, audit.TombstoneChain), func(ls [][]byte) [][]byte { return append(ls, ls[0]) })
	if _, err := audit.ReadTombstone(ctx, audit.NewDir(dir)); !errors.As(err, new(*veredicto.DamagedError)) {
		t.Errorf("ReadTombstone of a tombstone chain of two entries: %v, want a *veredicto.DamagedError", err)
	}
}

func TestPurgeRefuses(t *testing.T) {
	ctx := context.Background()
	st := audit.NewDir(t.TempDir())
	_, err := audit.Purge(ctx, st, st, audit.Tombstone{PurgedAt: time.Now(), PurgedBy: "dpo", Reason: "supresión"})
	if !errors.As(err, new(*veredicto.NotFoundError)) {
		t.Errorf("purging an empty record: %v, want a *veredicto.NotFoundError", err)
	}
	audittest.Execution(t, st)
	for _, by := range []audit.Tombstone{{PurgedAt: time.Now(), Reason: "x"}, {PurgedAt: time.Now(), PurgedBy: "dpo"}, {PurgedBy: "dpo", Reason: "x"}} {
		if _, err := audit.Purge(ctx, st, st, by); err == nil || !strings.Contains(err.Error(), "who purged, when and why") {
			t.Errorf("purge by %+v: %v; want it refused, naming what is missing", by, err)
		}
	}
	if chains, _ := st.Chains(ctx); slices.Contains(chains, audit.TombstoneChain) {
		t.Error("a refused purge wrote a tombstone")
	}
}

// TestFoldersListATenantsExecutions: a tenant's executions are the
// folders of its records, escaped names read back.
func TestFoldersListATenantsExecutions(t *testing.T) {
	ctx := context.Background()
	f := &audit.Folders{Root: t.TempDir()}
	for _, x := range []struct{ tenant, execution string }{{"acme", "s-2-run"}, {"acme", "s-1 run"}, {"globex", "g-1"}, {"", "local-1"}} {
		r, _ := f.Open(ctx, x.tenant, x.execution)
		if _, err := r.Append(ctx, audit.MainChain, audit.KindClock, audit.Clock{Use: "x", At: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(f.Root, "acme", "stray-file"), []byte("x"), 0o600)
	for tenant, want := range map[string][]string{"acme": {"s-1 run", "s-2-run"}, "globex": {"g-1"}, "": {"local-1"}, "initech": nil} {
		if got, err := f.Executions(tenant); err != nil || !slices.Equal(got, want) {
			t.Errorf("executions of %q: %q %v, want %q", tenant, got, err, want)
		}
	}
}
