// Package memory is the confirmations' store in memory (an adapter of
// confirm.Store): for runs that record confirmations without keeping them.
package memory

import (
	"context"
	"sync"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/confirm"
)

// Store keeps confirmations in memory: for runs that record them
// without keeping them (tests, and runs that keep no reviews).
type Store struct {
	mu   sync.Mutex
	recs map[string]confirm.Record // tenant + "\x00" + id
}

var _ confirm.Store = (*Store)(nil)

// New returns an empty store.
func New() *Store { return &Store{recs: map[string]confirm.Record{}} }

// Get returns a confirmation of tenant.
func (m *Store) Get(_ context.Context, tenant, id string) (confirm.Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.recs[tenant+"\x00"+id]
	if !ok {
		return confirm.Record{}, confirm.NotFound(id)
	}
	return r, nil
}

// List returns the tenant's open confirmations, oldest first (confirm.Store).
func (m *Store) List(_ context.Context, tenant string, now time.Time, limit int) ([]confirm.Record, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []confirm.Record
	for _, r := range m.recs {
		if r.Tenant == tenant {
			out = append(out, r)
		}
	}
	recs, more := confirm.FirstOpen(out, now, limit)
	return recs, more, nil
}

// Put writes r if the stored version is expect (0: absent).
func (m *Store) Put(_ context.Context, r confirm.Record, expect int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := r.Tenant + "\x00" + r.ID
	if m.recs[k].Version != expect {
		return &veredicto.ConflictError{What: "confirmation " + r.ID, Problem: "written concurrently"}
	}
	r.Version = expect + 1
	m.recs[k] = r
	return nil
}
