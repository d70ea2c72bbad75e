package file

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestLocalErase: a key and the keys under it are removed, with their
// folders; keys that merely share the prefix stay; a key with an empty
// segment is refused.
func TestLocalErase(t *testing.T) {
	ctx := context.Background()
	l := NewLocal(t.TempDir())
	keys := []string{"search/acme/s-1", "search/acme/s-10", "stage/acme/s-1/c-001/gem1/0/a", "stage/acme/s-1/-/gem5/0/b", "stage/acme/s-10/c-001/gem1/0/c"}
	for _, k := range keys {
		if _, err := l.PutIfAbsent(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	for key, want := range map[string]int{"stage/acme/s-1": 2, "search/acme/s-1": 1, "stage/globex": 0} {
		if n, err := l.Erase(ctx, key); err != nil || n != want {
			t.Errorf("erase %s: %d, %v; want %d", key, n, err, want)
		}
	}
	for _, k := range keys {
		_, ok, _ := l.Get(ctx, k)
		if want := k == "search/acme/s-10" || k == "stage/acme/s-10/c-001/gem1/0/c"; ok != want {
			t.Errorf("%s present %v, want %v", k, ok, want)
		}
	}
	if _, err := os.Stat(filepath.Join(l.dir, "stage", "acme", "s-1")); !os.IsNotExist(err) {
		t.Errorf("the erased search's folder is still there: %v", err)
	}
	for _, bad := range []string{"", "stage//x", "stage/../x"} {
		if _, err := l.Erase(ctx, bad); err == nil {
			t.Errorf("erase %q: no error", bad)
		}
	}
}
