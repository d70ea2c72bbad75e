// Package store is the port of the context store: stage outputs, the usage
// ledger and other small records, written once per key with single-item
// conditional writes, in DynamoDB on AWS (package dynamo) and in a folder
// on this machine (package file, which also holds an in-memory store for
// tests and one-shot runs).
//
// Consumers declare the few methods they call where they call them (a
// search's KV, a debate's LogStore); Store and Ledger are the whole shape
// the adapters keep.
package store

import (
	"context"

	"github.com/veredicto/veredicto"
)

// Store keeps records written once per key: what each adapter is. Get
// reports a missing key with ok false, not an error; PutIfAbsent reports
// whether it wrote (false: the key was already there, left untouched);
// List returns the keys that start with prefix, sorted.
type Store interface {
	Get(ctx context.Context, key string) (value []byte, ok bool, err error)
	PutIfAbsent(ctx context.Context, key string, value []byte) (bool, error)
	List(ctx context.Context, prefix string) ([]string, error)
}

// Ledger is the running total of tokens and cost per tenant's search: an
// optional capability only the DynamoDB adapter has.
type Ledger interface {
	AddUsage(ctx context.Context, tenant, searchID string, u veredicto.Usage) error
	Usage(ctx context.Context, tenant, searchID string) (veredicto.Usage, error)
}
