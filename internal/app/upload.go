package app

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/intake"
)

// UploadLocal copies the search folder src into the local inputs bucket
// under dir as tenant's search searchID, at the keys an S3 upload would
// use (intake's layout). Only regular files are copied; links are never
// followed.
func UploadLocal(ctx context.Context, dir, src, tenant, searchID string) error {
	inputs, _, _ := LocalLayout(dir)
	dst := file.NewDir(inputs)
	prefix := intake.InputPrefix(tenant, searchID)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return dst.Put(ctx, path.Join(prefix, filepath.ToSlash(rel)), b, "")
	})
	if err != nil {
		return fmt.Errorf("upload %s as %s: %w", src, prefix, err)
	}
	return nil
}
