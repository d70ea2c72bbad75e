// Package batchnote carries, through a batch handler's context, why it
// failed each message: the local inputs queue (internal/queue) asks for
// the reasons, the handler (internal/intake, also a Lambda) gives them.
// A leaf, so a Lambda links none of the local queue to give a reason; on
// Lambda no one asks, and the handler's log is where the reason is.
package batchnote

import (
	"context"
	"sync"
)

type key struct{}

// Notes are the reasons a handler gave, by message id.
type Notes struct {
	mu  sync.Mutex
	why map[string]string
}

// With returns ctx in which a handler's reasons are kept in the Notes
// returned.
func With(ctx context.Context) (context.Context, *Notes) {
	n := &Notes{why: map[string]string{}}
	return context.WithValue(ctx, key{}, n), n
}

// Note records why the handler fails message id, when ctx asks.
func Note(ctx context.Context, id, reason string) {
	if n, ok := ctx.Value(key{}).(*Notes); ok {
		n.mu.Lock()
		n.why[id] = reason
		n.mu.Unlock()
	}
}

// Why is the reason noted for message id ("" for none).
func (n *Notes) Why(id string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.why[id]
}
