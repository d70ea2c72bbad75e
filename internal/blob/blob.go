// Package blob is the port of the blob stores: documents and reports by
// key, in an S3 bucket on AWS (package s3) and under a folder on this
// machine (package file), with the same keys and layout in both.
//
// Keys are clean relative paths ("searches/acme/s-1/job.md"); one with an
// empty, "." or ".." element, or absolute, is a *veredicto.InvalidInputError
// naming it in every adapter. List returns the keys under a prefix, sorted,
// without hidden ones (a path element starting with "."), so every listed
// key can be passed to Get. A missing key is a *veredicto.NotFoundError in
// every adapter. Keys start <kind>/<tenant>/ (searches/, knowledge/,
// reports/, companion/…): callers build them from the caller's tenant, and
// the folder adapter reads only regular files the folder holds, never
// through a symbolic link, so a key names exactly what is read.
//
// Consumers declare the few methods they call where they call them (a
// search's BlobReader, a debate's BlobWriter); Reader, Writer and Store
// are the whole shape every adapter keeps.
package blob

import (
	"context"
	"errors"
	"path"
	"strconv"
	"strings"

	"github.com/veredicto/veredicto"
)

// MaxObjectBytes bounds one Get in every adapter: the largest object
// anything here reads (a search document, a knowledge file, a report) is a
// few MiB, and a function has 256 MB of memory. A larger object is a
// *veredicto.InvalidInputError naming it, refused without being read
// whole.
const MaxObjectBytes = 32 << 20

// Reader reads objects.
type Reader interface {
	Get(ctx context.Context, key string) ([]byte, error)
	List(ctx context.Context, prefix string) ([]string, error)
}

// Writer writes an object, replacing any previous version.
type Writer interface {
	Put(ctx context.Context, key string, data []byte, contentType string) error
}

// Store reads and writes objects: what each adapter is.
type Store interface {
	Reader
	Writer
}

// AtMost is a Reader that can stop reading an object early: GetAtMost
// returns at most n+1 bytes, so a caller with a limit of its own learns
// that the object is larger without the rest being read (file.Dir).
type AtMost interface {
	GetAtMost(ctx context.Context, key string, n int64) ([]byte, error)
}

// GetAtMost reads key through r, at most n+1 bytes when r is an AtMost,
// else whole (within MaxObjectBytes); the caller checks len > n.
func GetAtMost(ctx context.Context, r interface {
	Get(ctx context.Context, key string) ([]byte, error)
}, key string, n int64) ([]byte, error) {
	if a, ok := r.(AtMost); ok {
		return a.GetAtMost(ctx, key, n)
	}
	return r.Get(ctx, key)
}

// CleanKey validates a key for every adapter: a clean relative path,
// without "..", "." or empty elements, and not absolute; another is a
// *veredicto.InvalidInputError naming it (quoted: it may be empty or odd),
// never read or written. A
// trailing "/" is tolerated and dropped ("a/b/" is the object "a/b").
func CleanKey(key string) (string, error) {
	clean := path.Clean("/" + key)[1:]
	if clean == "" || clean != strings.TrimSuffix(key, "/") {
		return "", &veredicto.InvalidInputError{File: strconv.Quote(key), Problem: `is not a path inside the folder (an absolute path, or a "..", "." or empty segment); refused`}
	}
	return clean, nil
}

// Renamed returns the refusals err holds — one *veredicto.InvalidInputError,
// or several joined, as an adapter names them, by key — each named by
// name(key) instead (the path in a search or knowledge folder). It is nil
// when err holds anything else, for the caller to wrap.
func Renamed(err error, name func(key string) string) error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			n := Renamed(e, name)
			if n == nil {
				return nil
			}
			out = append(out, n)
		}
		return errors.Join(out...)
	}
	var ii *veredicto.InvalidInputError
	if !errors.As(err, &ii) {
		return nil
	}
	named := *ii
	named.File = name(ii.File)
	return &named
}
