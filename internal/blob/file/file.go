// Package file is the blob store on the local filesystem (an adapter of
// package blob): documents and reports under a folder, with the same keys
// and layout as the S3 adapter (internal/blob/s3). A missing key is a
// *veredicto.NotFoundError.
package file

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/blob"
)

// Dir is a blob store rooted at a folder: key "a/b.md" is file root/a/b.md.
// Writes go to a temporary file renamed into place, so a reader never sees
// half a document. Safe for concurrent use.
type Dir struct {
	root string
}

// NewDir returns a store rooted at root (created on first write).
func NewDir(root string) *Dir { return &Dir{root: root} }

var _ blob.Store = (*Dir)(nil)

func (d *Dir) path(key string) (string, error) {
	clean := filepath.ToSlash(filepath.Clean("/" + key))[1:]
	if clean == "" || clean != strings.TrimSuffix(key, "/") || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("blob key %q is not a clean relative path", key)
	}
	return filepath.Join(d.root, filepath.FromSlash(clean)), nil
}

// Get reads an object.
func (d *Dir) Get(_ context.Context, key string) ([]byte, error) {
	p, err := d.path(key)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, iofs.ErrNotExist) {
		return nil, &veredicto.NotFoundError{What: "blob " + key}
	}
	if err != nil {
		return nil, fmt.Errorf("get blob %s: %w", key, err)
	}
	return b, nil
}

// List returns the keys under prefix, sorted. It walks only the folder
// the prefix's last complete segment names, not the whole bucket, so a
// search's listing costs the same however many searches the bucket holds.
func (d *Dir) List(_ context.Context, prefix string) ([]string, error) {
	var keys []string
	start := d.root
	if i := strings.LastIndex(prefix, "/"); i > 0 {
		sub := prefix[:i]
		if sub == path.Clean(sub) && !strings.HasPrefix(sub, "/") {
			for _, seg := range strings.Split(sub, "/") {
				if strings.HasPrefix(seg, ".") { // hidden folders (and "..") hold no keys
					return nil, nil
				}
			}
			start = filepath.Join(d.root, filepath.FromSlash(sub))
		}
	}
	err := filepath.WalkDir(start, func(p string, e iofs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, iofs.ErrNotExist) && p == start {
				return iofs.SkipAll
			}
			return err
		}
		if e.IsDir() {
			if strings.HasPrefix(e.Name(), ".") && p != d.root {
				return iofs.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(d.root, p)
		if err != nil {
			return err
		}
		key := filepath.ToSlash(rel)
		if strings.HasPrefix(key, prefix) && !strings.HasPrefix(e.Name(), ".") {
			keys = append(keys, key)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list blobs %s: %w", prefix, err)
	}
	sort.Strings(keys)
	return keys, nil
}

// Put writes an object atomically, replacing any previous version.
func (d *Dir) Put(_ context.Context, key string, data []byte, _ string) error {
	p, err := d.path(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("put blob %s: %w", key, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return fmt.Errorf("put blob %s: %w", key, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("put blob %s: %w", key, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("put blob %s: %w", key, err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return fmt.Errorf("put blob %s: %w", key, err)
	}
	return nil
}
