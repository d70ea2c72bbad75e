// Package blob is the port of the blob stores: documents and reports by
// key, in an S3 bucket on AWS (package s3) and under a folder on this
// machine (package file), with the same keys and layout in both.
//
// Keys are clean relative paths ("searches/acme/s-1/job.md"); List returns
// the keys under a prefix, sorted, without hidden ones (a path element
// starting with "."), so every listed key can be passed to Get. A missing
// key is a *veredicto.NotFoundError in every adapter.
//
// Consumers declare the few methods they call where they call them (a
// search's BlobReader, a debate's BlobWriter); Reader, Writer and Store
// are the whole shape every adapter keeps.
package blob

import "context"

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
