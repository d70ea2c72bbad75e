package audit

import (
	"context"
	"path/filepath"
	"time"
)

// Folders keeps records in folders on this machine: one per execution,
// Root/<tenant>/<execution>/ ("default" for no tenant), or with Single
// every execution's in Root itself (a CLI run's OUT/audit, one execution
// per output folder). Recorders are kept open for the executions in
// flight (RecorderCache).
type Folders struct {
	Root   string
	Single bool
	// Now stamps the entries (time.Now when nil).
	Now func() time.Time

	cache RecorderCache
}

// Path is the folder of tenant's execution's record.
func (f *Folders) Path(tenant, execution string) string {
	if f.Single {
		return f.Root
	}
	return filepath.Join(f.Root, filepath.FromSlash(RecordKey(tenant, execution)))
}

// Open is the recorder of tenant's execution.
func (f *Folders) Open(_ context.Context, tenant, execution string) (*Recorder, error) {
	p := f.Path(tenant, execution)
	return f.cache.Get(p, func() Store { return NewDir(p) }, f.Now), nil
}
