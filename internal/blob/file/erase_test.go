package file

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestDirErase: a key and everything under it are removed (a link itself,
// never what it points at); a key that merely shares the prefix stays; an
// unclean key is refused.
func TestDirErase(t *testing.T) {
	ctx := context.Background()
	root, outside := t.TempDir(), t.TempDir()
	d := NewDir(root)
	for _, k := range []string{"reports/acme/s-1/c-001/report.md", "reports/acme/s-1/summary.md", "reports/acme/s-10/summary.md"} {
		if err := d.Put(ctx, k, []byte("x"), ""); err != nil {
			t.Fatal(err)
		}
	}
	target := filepath.Join(outside, "keep.md")
	os.WriteFile(target, []byte("x"), 0o600)
	if err := os.Symlink(target, filepath.Join(root, "reports", "acme", "s-1", "link.md")); err != nil {
		t.Fatal(err)
	}
	if n, err := d.Erase(ctx, "reports/acme/s-1"); err != nil || n != 3 {
		t.Errorf("erase: %d, %v; want 3 files (two reports and the link)", n, err)
	}
	if _, err := os.Stat(filepath.Join(root, "reports", "acme", "s-1")); !os.IsNotExist(err) {
		t.Errorf("reports/acme/s-1 is still there: %v", err)
	}
	if _, err := os.Stat(target); err != nil {
		t.Errorf("the link's target outside the folder was removed: %v", err)
	}
	if _, err := d.Get(ctx, "reports/acme/s-10/summary.md"); err != nil {
		t.Errorf("s-10 was erased with s-1: %v", err)
	}
	if n, err := d.Erase(ctx, "reports/acme/nothing"); err != nil || n != 0 {
		t.Errorf("erase of nothing: %d, %v", n, err)
	}
	if _, err := d.Erase(ctx, "../x"); err == nil {
		t.Error("an unclean key was erased")
	}
}
