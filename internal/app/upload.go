package app

import (
	"context"
	"fmt"
	"path"

	"github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/search"
)

// UploadLocal copies the search folder src into the local inputs bucket
// under dir as tenant's search searchID, at the keys an S3 upload would
// use (intake's layout). src is read through file.Dir like any upload: a
// symbolic link, a device, a named pipe or a socket in it is refused by
// name, never followed nor skipped; hidden files are not copied.
func UploadLocal(ctx context.Context, dir, src, tenant, searchID string) error {
	inputs, _, _ := LocalLayout(dir)
	from, dst := file.NewDir(src), file.NewDir(inputs)
	prefix := search.InputPrefix(tenant, searchID)
	keys, err := from.List(ctx, "")
	if err != nil {
		return fmt.Errorf("upload %s as %s: %w", src, prefix, err)
	}
	for _, k := range keys {
		b, err := from.Get(ctx, k)
		if err == nil {
			err = dst.Put(ctx, path.Join(prefix, k), b, "")
		}
		if err != nil {
			return fmt.Errorf("upload %s as %s: %w", src, prefix, err)
		}
	}
	return nil
}
