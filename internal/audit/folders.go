package audit

import (
	"context"
	"errors"
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
	// SyncOnReport: each step's entries are written when the step ends
	// but made durable (fsync) only when a step reports what they record —
	// Scope.Sync before a report or summary is written — and by Sync. For
	// an engine that keeps every step's result in its own process until
	// then ("veredicto search run"): a crash of the process loses nothing
	// written, and nothing was reported that the record on disk lacks.
	// Without it each step's entries are durable before its result goes
	// back (serve keeps every result in a durable history). It needs
	// Single: one record, which Sync reaches.
	SyncOnReport bool

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
	if f.SyncOnReport && !f.Single {
		return nil, errors.New("audit: SyncOnReport keeps one record (Single)")
	}
	p := f.Path(tenant, execution)
	return f.cache.Get(p, func() Store {
		if f.SyncOnReport {
			return NewDirSyncedOnReport(p)
		}
		return NewDir(p)
	}, f.Now), nil
}

// Sync makes every record these Folders hold open durable: with
// SyncOnReport, what runs them calls it before it reports the end (a run
// that failed or was stopped included).
func (f *Folders) Sync(ctx context.Context) error {
	for _, r := range f.cache.all() {
		if s, ok := r.Store().(Syncer); ok {
			if err := s.Sync(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}
