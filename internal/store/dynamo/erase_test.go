package dynamo

import (
	"context"
	"slices"
	"testing"
)

// TestDynamoErase (dynalite): Erase removes a key and the keys under it,
// with their large values, and nothing that merely shares the prefix
// ("s-10" for "s-1") or belongs to another tenant; a partition key erases
// a tenant's whole partition; the usage ledger and keys above a partition
// are refused.
func TestDynamoErase(t *testing.T) {
	ctx := t.Context()
	st, client, table := newStore(t, newLarge(t))
	big := make([]byte, MaxInline+1)
	keys := []string{"stage/acme/s-1/c-001/gem1/0/a", "stage/acme/s-1/-/gem5/0/b", "stage/acme/s-10/c-001/gem1/0/c", "stage/acme/s-2/c-001/gem1/0/d",
		"stage/globex/s-1/c-001/gem1/0/e", "search/acme/s-1", "search/acme/s-10"}
	for _, k := range keys {
		if _, err := st.PutIfAbsent(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.PutIfAbsent(ctx, "stage/acme/s-1/c-001/gem2/0/big", big); err != nil {
		t.Fatal(err)
	}
	var larges []string
	e := &Eraser{Client: client, Table: table, Large: func(_ context.Context, key string) (int, error) {
		larges = append(larges, key)
		return 1, nil
	}}
	for _, tc := range []struct {
		key  string
		want int
	}{{"stage/acme/s-1", 3}, {"search/acme/s-1", 1}, {"stage/acme/s-1", 0}} {
		if n, err := e.Erase(ctx, tc.key); err != nil || n != tc.want {
			t.Errorf("erase %s: %d, %v; want %d records", tc.key, n, err, tc.want)
		}
	}
	if !slices.Equal(larges, []string{largeKey(big)}) {
		t.Errorf("large values erased %q, want the big stage's %s", larges, largeKey(big))
	}
	for _, k := range keys {
		_, ok, err := st.Get(ctx, k)
		if want := k != "stage/acme/s-1/c-001/gem1/0/a" && k != "stage/acme/s-1/-/gem5/0/b" && k != "search/acme/s-1"; err != nil || ok != want {
			t.Errorf("%s after erasing s-1: present %v (%v), want %v", k, ok, err, want)
		}
	}
	if n, err := e.Erase(ctx, "stage/acme"); err != nil || n != 2 {
		t.Errorf("erase acme's stage partition: %d, %v; want s-10's and s-2's records", n, err)
	}
	if l, _ := st.List(ctx, "stage/globex/"); len(l) != 1 {
		t.Errorf("globex's records after erasing acme's: %q", l)
	}
	for _, bad := range []string{"stage", "stage/", "/acme", "usage/acme"} {
		if _, err := e.Erase(ctx, bad); err == nil {
			t.Errorf("erase %q: no error; want it refused", bad)
		}
	}
}
