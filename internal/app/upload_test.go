package app_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/veredicto/veredicto/internal/app"
	"github.com/veredicto/veredicto/internal/blob/file/filetest"
)

// TestUploadLocalCopiesOnlyRegularFiles: a link or special file in the
// folder being uploaded is refused by name, never followed nor skipped in
// silence; nothing it points at lands in the inputs bucket.
func TestUploadLocalCopiesOnlyRegularFiles(t *testing.T) {
	for _, h := range filetest.All() {
		if h.Name == "folder" {
			continue // a folder is uploaded with what it holds
		}
		t.Run(h.Name, func(t *testing.T) {
			src, data := t.TempDir(), t.TempDir()
			if err := os.WriteFile(filepath.Join(src, "jd.md"), []byte("JD"), 0o644); err != nil {
				t.Fatal(err)
			}
			named := h.Plant(t, src, "candidates/c-003/cv.md", filetest.NewSecrets(t))
			var err error
			filetest.Promptly(t, func() { err = app.UploadLocal(context.Background(), data, src, "acme", "s3") })
			filetest.Refused(t, err, named, h.Problem)
			filepath.WalkDir(data, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					if b, _ := os.ReadFile(p); filetest.Leaks(string(b)) {
						t.Errorf("%s holds what a link points at", p)
					}
				}
				return nil
			})
		})
	}
}
