package audit

import (
	"context"
	"net/url"
	"path/filepath"
	"sync"
	"time"
)

// Folders keeps records in folders on this machine: one per execution,
// Root/<tenant>/<execution>/ ("default" for no tenant), or with Single
// every execution's in Root itself (a CLI run's OUT/audit, one execution
// per output folder). Recorders are kept open for the executions in
// flight, at most maxOpen.
type Folders struct {
	Root   string
	Single bool
	// Now stamps the entries (time.Now when nil).
	Now func() time.Time

	mu    sync.Mutex
	open  map[string]*Recorder
	order []string
}

// maxOpen bounds the recorders a long-lived server keeps; one dropped is
// opened again from its chains when its execution records next.
const maxOpen = 64

// Path is the folder of tenant's execution's record.
func (f *Folders) Path(tenant, execution string) string {
	if f.Single {
		return f.Root
	}
	if tenant == "" {
		tenant = "default"
	}
	return filepath.Join(f.Root, url.PathEscape(tenant), url.PathEscape(execution))
}

// Open is the recorder of tenant's execution.
func (f *Folders) Open(_ context.Context, tenant, execution string) (*Recorder, error) {
	p := f.Path(tenant, execution)
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, ok := f.open[p]; ok {
		return r, nil
	}
	if f.open == nil {
		f.open = map[string]*Recorder{}
	}
	if len(f.order) >= maxOpen {
		delete(f.open, f.order[0])
		f.order = f.order[1:]
	}
	r := NewRecorder(NewDir(p), f.Now)
	f.open[p] = r
	f.order = append(f.order, p)
	return r, nil
}
