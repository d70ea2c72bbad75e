package file

import (
	"context"
	"errors"
	"io"
	iofs "io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"

	"github.com/veredicto/veredicto"
)

// Walk calls fn with every key under prefix and what Lstat says of its
// file, in the order S3 lists keys (byte order of the whole key), reading
// one folder at a time: a listing of many keys is never held whole. It
// walks what List walks, through the same confined opener, and stops at
// the first symbolic link, device, named pipe or socket under prefix (a
// *veredicto.InvalidInputError naming its key), or at the first error fn
// returns, which it returns.
func (d *Dir) Walk(ctx context.Context, prefix string, fn func(key string, fi iofs.FileInfo) error) error {
	return d.walk(ctx, "walk blobs", prefix, fn, func(key, problem string) error { return refused(key, problem) })
}

// Open opens the object at key for reading, refused like Get (see
// open.go), with what Stat says of it. The caller closes it.
func (d *Dir) Open(_ context.Context, key string) (io.ReadCloser, iofs.FileInfo, error) {
	f, err := d.open("open blob", key)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, failed("open blob", key, err)
	}
	return f, fi, nil
}

// walk visits the keys under prefix in S3's order: visit gets each key,
// refuse each link or special file (its error, if any, ends the walk).
func (d *Dir) walk(ctx context.Context, op, prefix string, visit func(string, iofs.FileInfo) error, refuse func(key, problem string) error) error {
	var segs []string
	if i := strings.LastIndex(prefix, "/"); i > 0 {
		sub := prefix[:i]
		if sub != path.Clean(sub) || strings.HasPrefix(sub, "/") {
			return nil // no key is unclean
		}
		segs = strings.Split(sub, "/")
		for _, seg := range segs {
			if strings.HasPrefix(seg, ".") { // hidden folders (and "..") hold no keys
				return nil
			}
		}
	}
	r, err := d.folder(op, prefix, segs)
	if errors.As(err, new(*veredicto.NotFoundError)) {
		return nil
	}
	if err != nil {
		return err
	}
	defer r.Close()
	w := walker{ctx: ctx, op: op, prefix: prefix, visit: visit, refuse: refuse}
	return w.folder(r, strings.Join(segs, "/"))
}

type walker struct {
	ctx    context.Context
	op     string
	prefix string
	visit  func(string, iofs.FileInfo) error
	refuse func(key, problem string) error
}

// folder walks the folder r, whose key is dir ("" for the root).
func (w *walker) folder(r *os.Root, dir string) error {
	entries, err := iofs.ReadDir(r.FS(), ".")
	if err != nil {
		return failed(w.op, dir, err)
	}
	// S3 orders whole keys: a folder's keys follow "name/", not "name".
	order := func(e iofs.DirEntry) string {
		if e.IsDir() {
			return e.Name() + "/"
		}
		return e.Name()
	}
	slices.SortFunc(entries, func(a, b iofs.DirEntry) int { return strings.Compare(order(a), order(b)) })
	for _, e := range entries {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		if strings.HasPrefix(e.Name(), ".") { // hidden files and folders hold no keys
			continue
		}
		key := path.Join(dir, e.Name())
		if e.IsDir() {
			if !strings.HasPrefix(key+"/", w.prefix) && !strings.HasPrefix(w.prefix, key+"/") {
				continue // a folder beside the prefix
			}
			if err := w.subfolder(r, e, key); err != nil {
				return err
			}
			continue
		}
		if !strings.HasPrefix(key, w.prefix) {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			if errors.Is(err, iofs.ErrNotExist) {
				continue // removed since the folder was read
			}
			return failed(w.op, key, err)
		}
		if problem := irregular(fi.Mode()); problem != "" {
			if err := w.refuse(key, problem); err != nil {
				return err
			}
			continue
		}
		if err := w.visit(key, fi); err != nil {
			return err
		}
	}
	return nil
}

// subfolder walks the folder entry e of r, entered through the Root: one
// swapped for a link or another folder since it was read is refused.
func (w *walker) subfolder(r *os.Root, e iofs.DirEntry, key string) error {
	fi, err := e.Info()
	if err != nil {
		return failed(w.op, key, err)
	}
	sub, err := r.OpenRoot(e.Name())
	if err != nil {
		if errors.Is(err, iofs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil
		}
		return failed(w.op, key, err)
	}
	defer sub.Close()
	got, err := sub.Stat(".")
	if err != nil || !os.SameFile(fi, got) {
		return w.refuse(key, ProblemSwapped)
	}
	return w.folder(sub, key)
}
