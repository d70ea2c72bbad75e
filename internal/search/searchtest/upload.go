package searchtest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// Upload copies the search folder src into a blob store (a bucket, or a
// data folder's inputs) under prefix (searches/<tenant>/<id>), each file
// passed through edit (nil: as it is).
func Upload(tb testing.TB, dst interface {
	Put(ctx context.Context, key string, data []byte, contentType string) error
}, src, prefix string, edit func(rel string, b []byte) []byte) {
	tb.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if edit != nil {
			b = edit(filepath.ToSlash(rel), b)
		}
		return dst.Put(context.Background(), prefix+"/"+filepath.ToSlash(rel), b, "text/markdown")
	})
	if err != nil {
		tb.Fatalf("upload %s as %s: %v", src, prefix, err)
	}
}

// AsSearch is an Upload edit of examples/search-demo: its search.yaml
// names searchID, and candidate c-001's CV ends with marker, a text a test
// can look for (after an erasure, say).
func AsSearch(searchID, marker string) func(rel string, b []byte) []byte {
	return func(rel string, b []byte) []byte {
		switch rel {
		case "search.yaml":
			return bytes.Replace(b, []byte("search_id: demo-cfo-andina"), []byte("search_id: "+searchID), 1)
		case "candidates/c-001/cv.md":
			return append(append([]byte{}, b...), "\n"+marker+"\n"...)
		}
		return b
	}
}
