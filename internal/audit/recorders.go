package audit

import (
	"net/url"
	"sync"
	"time"
)

// DefaultTenant names the records of executions without a tenant.
const DefaultTenant = "default"

// RecordKey is where tenant's execution's record is kept among the
// records: "<tenant>/<execution>", each path-escaped, DefaultTenant for
// no tenant. Folders and the reports bucket (audit/<RecordKey>/) keep the
// same layout.
func RecordKey(tenant, execution string) string {
	if tenant == "" {
		tenant = DefaultTenant
	}
	return url.PathEscape(tenant) + "/" + url.PathEscape(execution)
}

// RecorderCache keeps the recorders of the executions in flight, by the
// place their record is kept, at most maxOpen of them (the oldest is
// dropped; it is opened again from its chains when its execution records
// next). Folders keeps one; so does each store of records elsewhere (the
// reports bucket on AWS). The zero value is ready; safe for concurrent use.
type RecorderCache struct {
	mu    sync.Mutex
	open  map[string]*Recorder
	order []string
}

// maxOpen bounds the recorders a long-lived process keeps.
const maxOpen = 64

// Get is the recorder kept under key, or a new one on the store open
// returns, stamping its entries with now (time.Now when nil).
func (c *RecorderCache) Get(key string, open func() Store, now func() time.Time) *Recorder {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.open[key]; ok {
		return r
	}
	if c.open == nil {
		c.open = map[string]*Recorder{}
	}
	if len(c.order) >= maxOpen {
		delete(c.open, c.order[0])
		c.order = c.order[1:]
	}
	r := NewRecorder(open(), now)
	c.open[key] = r
	c.order = append(c.order, key)
	return r
}

// all lists the recorders kept.
func (c *RecorderCache) all() []*Recorder {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*Recorder, 0, len(c.open))
	for _, r := range c.open {
		out = append(out, r)
	}
	return out
}
