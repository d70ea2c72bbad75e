package file

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/veredicto/veredicto"
)

func TestDirPutGetList(t *testing.T) {
	ctx := context.Background()
	d := NewDir(t.TempDir())
	for _, k := range []string{"searches/s1/jd.md", "searches/s1/candidates/c1/cv.md", "reports/s1/summary.md"} {
		if err := d.Put(ctx, k, []byte("x "+k), "text/markdown"); err != nil {
			t.Fatal(err)
		}
	}
	got, err := d.Get(ctx, "searches/s1/jd.md")
	if err != nil || string(got) != "x searches/s1/jd.md" {
		t.Errorf("Get = %q, %v", got, err)
	}
	keys, err := d.List(ctx, "searches/s1/")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(keys) != "[searches/s1/candidates/c1/cv.md searches/s1/jd.md]" {
		t.Errorf("List = %v", keys)
	}
	var nf *veredicto.NotFoundError
	if _, err := d.Get(ctx, "searches/s1/nope.md"); !errors.As(err, &nf) {
		t.Errorf("Get missing: %v, want *NotFoundError", err)
	}
}

func TestDirRejectsEscapingKeys(t *testing.T) {
	d := NewDir(t.TempDir())
	for _, k := range []string{"../etc/passwd", "a/../../b", "/abs", "", "a//b"} {
		if err := d.Put(context.Background(), k, nil, ""); err == nil {
			t.Errorf("Put(%q) succeeded, want an error", k)
		}
	}
}

// TestListWalksOnlyThePrefixFolder: a prefix that ends inside a folder
// name still matches every key that starts with it, and hidden folders
// hold no keys.
func TestListWalksOnlyThePrefixFolder(t *testing.T) {
	ctx := context.Background()
	d := NewDir(t.TempDir())
	for _, k := range []string{"searches/a/s1/x", "searches/a/s10/y", "searches/b/s1/z", ".hidden/a/k"} {
		if err := d.Put(ctx, k, []byte("v"), ""); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		prefix string
		want   []string
	}{
		{"searches/a/s1", []string{"searches/a/s1/x", "searches/a/s10/y"}},
		{"searches/a/s1/", []string{"searches/a/s1/x"}},
		{"searches/", []string{"searches/a/s1/x", "searches/a/s10/y", "searches/b/s1/z"}},
		{"searches/c/", nil},
		{".hidden/a/", nil},
		{"../", nil},
	}
	for _, c := range cases {
		got, err := d.List(ctx, c.prefix)
		if err != nil || strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("List(%q) = %q, %v; want %q", c.prefix, got, err, c.want)
		}
	}
}
