package file

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/blob"
)

// The one way a file under a Dir is opened: every Get, Stat, List, Walk
// and Open goes through here, and so does Put's way to the folder it
// writes in, so every consumer of the local buckets —
// the search loader, the sources route, a debate's knowledge, the
// companion's stored JD and profile, the queue's READY watcher — reads
// only the regular files the folder itself holds.
//
// The walk starts at an os.Root of the Dir's folder and enters one path
// element at a time: each element is Lstat-ed first (a symbolic link, a
// device, a named pipe, a socket or a folder where a file belongs is
// refused by name, never opened), then opened through the Root (which
// cannot leave the folder, whatever the element turns into meanwhile)
// and Stat-ed again; an element that is not the file Lstat saw (swapped
// between the two calls) is refused. The file itself is opened with
// O_NONBLOCK, so a named pipe slipped in after the Lstat cannot block the
// read. os.Root rather than openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS):
// it is the standard library's, the same on Linux and macOS, and the
// per-element Lstat refuses every link, not only those that leave.

// Problems of a refused path, after its name.
const (
	// ProblemLink is every link's, a file's or a folder's on the way:
	// List cannot tell what a link points at without following it, and
	// one message keeps List's and Get's refusals the same.
	ProblemLink      = "is a symbolic link; upload the file itself"
	ProblemFolder    = "is a folder, not a file"
	ProblemPipe      = "is a named pipe (FIFO), not a file; upload the file itself"
	ProblemDevice    = "is a device, not a file"
	ProblemSocket    = "is a socket, not a file"
	ProblemIrregular = "is not a regular file"
	ProblemSwapped   = "changed while it was being opened (replaced by a link or another file); refused"
)

// irregular says why a file of mode m is not read ("" for a regular file).
func irregular(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return ""
	case m&fs.ModeSymlink != 0:
		return ProblemLink
	case m.IsDir():
		return ProblemFolder
	case m&fs.ModeNamedPipe != 0:
		return ProblemPipe
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		return ProblemDevice
	case m&fs.ModeSocket != 0:
		return ProblemSocket
	}
	return ProblemIrregular
}

func refused(name, problem string) error {
	return &veredicto.InvalidInputError{File: name, Problem: problem}
}

func notFound(key string) error { return &veredicto.NotFoundError{What: "blob " + key} }

// segments splits key into its path elements; a key that is not a clean
// relative path is refused, named (blob.CleanKey).
func segments(key string) ([]string, error) {
	clean, err := blob.CleanKey(key)
	if err != nil {
		return nil, err
	}
	return strings.Split(clean, "/"), nil
}

// failed maps an error met on the way to key: a missing element (or a
// file where a folder belongs: a path through it names nothing, as in S3)
// is NotFound, anything else is wrapped with op and key.
func failed(op, key string, err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return notFound(key)
	}
	return fmt.Errorf("%s %s: %w", op, key, err)
}

// folder opens the folder segs names under the Dir's root, refusing a
// symbolic link on the way (named by its path, at); key names the object
// sought in errors. The caller closes the Root.
func (d *Dir) folder(op, key string, segs []string) (*os.Root, error) {
	return d.enter(op, key, segs, false)
}

// enter is folder; with create, a missing folder on the way is made
// (through the Root: it cannot be made anywhere but where it belongs).
func (d *Dir) enter(op, key string, segs []string, create bool) (*os.Root, error) {
	r, err := os.OpenRoot(d.root)
	if err != nil {
		return nil, failed(op, key, err)
	}
	for i, name := range segs {
		at := strings.Join(segs[:i+1], "/")
		fi, err := r.Lstat(name)
		if create && errors.Is(err, fs.ErrNotExist) {
			if err = r.Mkdir(name, 0o755); err == nil || errors.Is(err, fs.ErrExist) {
				fi, err = r.Lstat(name)
			}
		}
		if err != nil {
			r.Close()
			return nil, failed(op, key, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			r.Close()
			return nil, refused(at, ProblemLink)
		}
		if !fi.IsDir() {
			r.Close()
			if create {
				return nil, refused(at, "is a file where a folder of "+key+" belongs")
			}
			return nil, notFound(key)
		}
		sub, err := r.OpenRoot(name)
		r.Close()
		if err != nil {
			return nil, failed(op, key, err)
		}
		got, err := sub.Stat(".")
		if err != nil || !os.SameFile(fi, got) {
			sub.Close()
			return nil, refused(at, ProblemSwapped)
		}
		r = sub
	}
	return r, nil
}

// lookup finds the regular file at key: the folder that holds it (to be
// closed by the caller), its name there and what Lstat says of it.
func (d *Dir) lookup(op, key string) (*os.Root, string, fs.FileInfo, error) {
	segs, err := segments(key)
	if err != nil {
		return nil, "", nil, err
	}
	r, err := d.folder(op, key, segs[:len(segs)-1])
	if err != nil {
		return nil, "", nil, err
	}
	name := segs[len(segs)-1]
	fi, err := r.Lstat(name)
	if err != nil {
		r.Close()
		return nil, "", nil, failed(op, key, err)
	}
	if problem := irregular(fi.Mode()); problem != "" {
		r.Close()
		return nil, "", nil, refused(key, problem)
	}
	return r, name, fi, nil
}

// open opens the regular file at key for reading (see the top of this
// file for what is refused).
func (d *Dir) open(op, key string) (*os.File, error) {
	r, name, fi, err := d.lookup(op, key)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	f, err := r.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, failed(op, key, err)
	}
	got, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s %s: %w", op, key, err)
	}
	if !os.SameFile(fi, got) || !got.Mode().IsRegular() {
		f.Close()
		return nil, refused(key, ProblemSwapped)
	}
	return f, nil
}
