package confirm

import (
	"context"
	"sync"
	"time"

	"github.com/veredicto/veredicto"
)

// MemoryStore keeps confirmations in memory: for runs that record them
// without keeping them (tests, and runs that keep no reviews).
type MemoryStore struct {
	mu   sync.Mutex
	recs map[string]Record // tenant + "\x00" + id
}

var _ Store = (*MemoryStore)(nil)

// NewMemoryStore returns an empty store.
func NewMemoryStore() *MemoryStore { return &MemoryStore{recs: map[string]Record{}} }

// Get returns a confirmation of tenant.
func (m *MemoryStore) Get(_ context.Context, tenant, id string) (Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.recs[tenant+"\x00"+id]
	if !ok {
		return Record{}, notFound(id)
	}
	return r, nil
}

// List returns the tenant's open confirmations, oldest first (Store).
func (m *MemoryStore) List(_ context.Context, tenant string, now time.Time, limit int) ([]Record, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Record
	for _, r := range m.recs {
		if r.Tenant == tenant {
			out = append(out, r)
		}
	}
	recs, more := firstOpen(out, now, limit)
	return recs, more, nil
}

// Put writes r if the stored version is expect (0: absent).
func (m *MemoryStore) Put(_ context.Context, r Record, expect int) error {
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
