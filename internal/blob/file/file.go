// Package file is the blob store on the local filesystem (an adapter of
// package blob): documents and reports under a folder, with the same keys
// and layout as the S3 adapter (internal/blob/s3). A missing key is a
// *veredicto.NotFoundError. Every read goes through one opener (open.go)
// that reads only regular files the folder holds: a symbolic link (even
// one that stays inside), a device, a named pipe, a socket or a folder
// where a file belongs is a *veredicto.InvalidInputError naming it.
package file

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/blob"
)

// Dir is a blob store rooted at a folder: key "a/b.md" is file root/a/b.md.
// Reads never leave the folder nor follow a link (open.go). Writes go to a
// temporary file renamed into place, so a reader never sees half a
// document. Safe for concurrent use.
type Dir struct {
	root string
}

// NewDir returns a store rooted at root (created on first write).
func NewDir(root string) *Dir { return &Dir{root: root} }

var (
	_ blob.Store  = (*Dir)(nil)
	_ blob.AtMost = (*Dir)(nil)
)

func (d *Dir) path(key string) (string, error) {
	segs, err := segments(key)
	if err != nil {
		return "", err
	}
	return filepath.Join(d.root, filepath.Join(segs...)), nil
}

// Get reads an object of at most blob.MaxObjectBytes through the opener
// (open.go): a symbolic link, a device, a named pipe, a socket or a folder
// at key, or a link anywhere on the way, is a *veredicto.InvalidInputError
// naming it, never followed; so is a larger object, of which no more than
// the limit is read.
func (d *Dir) Get(ctx context.Context, key string) ([]byte, error) {
	b, err := d.GetAtMost(ctx, key, blob.MaxObjectBytes)
	if err != nil {
		return nil, err
	}
	if len(b) > blob.MaxObjectBytes {
		return nil, &veredicto.InvalidInputError{File: key, Problem: fmt.Sprintf("is larger than %d MiB, the most one object read holds", blob.MaxObjectBytes>>20)}
	}
	return b, nil
}

// GetAtMost reads at most n+1 bytes of an object, refused like Get: a
// caller with its own limit (a search's per-document limit) learns that
// the object is larger without the rest being read.
func (d *Dir) GetAtMost(_ context.Context, key string, n int64) ([]byte, error) {
	f, err := d.open("get blob", key)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, n+1))
	if err != nil {
		return nil, fmt.Errorf("get blob %s: %w", key, err)
	}
	return b, nil
}

// Stat describes an object without reading it, refused like Get.
func (d *Dir) Stat(_ context.Context, key string) (iofs.FileInfo, error) {
	r, _, fi, err := d.lookup("stat blob", key)
	if err != nil {
		return nil, err
	}
	r.Close()
	return fi, nil
}

// maxRefusals bounds the refusals one List names; the last counts the
// rest.
const maxRefusals = 20

// List returns the keys under prefix, sorted. It walks only the folder
// the prefix's last complete segment names, not the whole bucket, so a
// search's listing costs the same however many searches the bucket holds.
// Hidden files and folders (a name starting with ".") hold no keys. A
// symbolic link, device, named pipe or socket under prefix is no key
// either: List refuses them, each named by its key (a
// *veredicto.InvalidInputError, several joined), so every key it returns
// is a file Get reads.
func (d *Dir) List(ctx context.Context, prefix string) ([]string, error) {
	var keys []string
	var bad []error
	n := 0 // refusals, named or not
	err := d.walk(ctx, "list blobs", prefix, func(key string, _ iofs.FileInfo) error {
		keys = append(keys, key)
		return nil
	}, func(key, problem string) error {
		if n++; len(bad) < maxRefusals {
			bad = append(bad, refused(key, problem))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if n > maxRefusals {
		bad = append(bad[:maxRefusals-1], refused(prefix, fmt.Sprintf("and %d more links or special files, refused", n-maxRefusals+1)))
	}
	if len(bad) > 0 {
		return nil, errors.Join(bad...)
	}
	return keys, nil
}

// Put writes an object atomically, replacing any previous version. The
// folders on the way are entered (or made) through the opener (open.go),
// so a write never follows a link nor leaves the folder; the object is
// written to a temporary file renamed into place in the same folder.
func (d *Dir) Put(_ context.Context, key string, data []byte, _ string) error {
	segs, err := segments(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(d.root, 0o755); err != nil {
		return fmt.Errorf("put blob %s: %w", key, err)
	}
	r, err := d.enter("put blob", key, segs[:len(segs)-1], true)
	if err != nil {
		return err
	}
	defer r.Close()
	name := segs[len(segs)-1]
	if fi, err := r.Lstat(name); err == nil && !fi.Mode().IsRegular() {
		return refused(key, irregular(fi.Mode()))
	}
	tmp := ".tmp-" + newSuffix()
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("put blob %s: %w", key, err)
	}
	renamed := false
	defer func() {
		if !renamed { // renamed, the name is gone: nothing to remove
			r.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("put blob %s: %w", key, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("put blob %s: %w", key, err)
	}
	if err := r.Rename(tmp, name); err != nil {
		return fmt.Errorf("put blob %s: %w", key, err)
	}
	renamed = true
	return nil
}

// newSuffix names a temporary file.
func newSuffix() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
