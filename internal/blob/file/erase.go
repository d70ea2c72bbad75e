package file

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Erase removes the object key and every object under key/ for good (the
// right to erasure; veredicto audit purge) and returns how many files it
// removed. A link is removed, never followed.
func (d *Dir) Erase(_ context.Context, key string) (int, error) {
	p, err := d.path(key)
	if err != nil {
		return 0, err
	}
	n := 0
	err = filepath.WalkDir(p, func(_ string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !e.IsDir() {
			n++
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return n, os.RemoveAll(p)
}
