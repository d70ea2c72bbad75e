// Package file is the confirmations' store on this machine (an adapter of
// confirm.Store): one JSON file per confirmation under a folder, shared by
// "veredicto serve" and "veredicto confirm".
package file

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/confirm"
	"github.com/veredicto/veredicto/internal/quarantine"
)

// Store keeps one JSON file per confirmation under
// dir/<tenant>/<id>.json. Put holds an exclusive flock on the tenant's
// lock file while it compares versions and replaces the file (write to a
// temporary file, fsync, rename), so serve and "veredicto confirm" in
// another shell can both write. Resolved confirmations older than
// confirm.Retention are pruned by List.
//
// A file that no longer decodes as its confirmation is moved to
// Quarantine, under the same lock, and a confirm.DamagedRecord is written
// in its place (version 0, so the workflow asking again replaces it).
type Store struct {
	dir string
	now func() time.Time
	// Quarantine receives damaged files: DATA/quarantine/confirmations
	// for a store under DATA/confirmations, unless set otherwise before
	// first use.
	Quarantine *quarantine.Box
}

var _ confirm.Store = (*Store)(nil)

// New returns a store under dir.
func New(dir string) *Store {
	return &Store{dir: dir, now: time.Now, Quarantine: quarantine.Beside(dir, nil)}
}

func (f *Store) tenantDir(tenant string) string {
	return filepath.Join(f.dir, base64.RawURLEncoding.EncodeToString([]byte(tenant)))
}

// Get returns a confirmation of tenant.
func (f *Store) Get(_ context.Context, tenant, id string) (confirm.Record, error) {
	if !confirm.ValidID(id) {
		return confirm.Record{}, confirm.NotFound(id)
	}
	return f.load(tenant, id, false)
}

// decodeError is a confirmation file whose bytes are not the record its
// name says.
type decodeError struct{ reason string }

func (e *decodeError) Error() string { return e.reason }

func readRecord(path, tenant, id string) (confirm.Record, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return confirm.Record{}, confirm.NotFound(id)
	}
	if err != nil {
		return confirm.Record{}, fmt.Errorf("read confirmation %s: %w", id, err)
	}
	var r confirm.Record
	if err := json.Unmarshal(b, &r); err != nil {
		return confirm.Record{}, &decodeError{quarantine.Reason(err)}
	}
	if r.ID != id || r.Tenant != tenant {
		return confirm.Record{}, &decodeError{"it holds another confirmation than its name says"}
	}
	return r, nil
}

// load reads a confirmation; a damaged one is quarantined (under the
// tenant's lock, unless the caller holds it) and returned as a
// confirm.DamagedRecord.
func (f *Store) load(tenant, id string, locked bool) (confirm.Record, error) {
	path := filepath.Join(f.tenantDir(tenant), id+".json")
	r, err := readRecord(path, tenant, id)
	var de *decodeError
	if !errors.As(err, &de) {
		return r, err
	}
	if !locked {
		unlock, err := f.lock(tenant)
		if err != nil {
			return confirm.Record{}, err
		}
		defer unlock()
		// another process may have replaced it meanwhile
		if r, err = readRecord(path, tenant, id); !errors.As(err, &de) {
			return r, err
		}
	}
	return f.quarantine(tenant, id, path, de.reason), nil
}

// quarantine moves a damaged file aside and writes the damaged record in
// its place. The caller holds the tenant's lock. If the move cannot be
// made (a full disk), the file stays and the damaged record is returned
// all the same: the confirmation is refused, not lost.
func (f *Store) quarantine(tenant, id, path, reason string) confirm.Record {
	r := confirm.DamagedRecord(tenant, id, reason, f.now())
	_, err := f.Quarantine.Replace(path, reason, func(it quarantine.Item) error {
		r.Damage.Quarantined = it.Quarantined
		return writeRecord(filepath.Dir(path), path, r)
	})
	if err != nil {
		r.Damage.Quarantined = "" // still in place (Replace logged why)
	}
	return r
}

// List returns the tenant's open confirmations, oldest first
// (confirm.Store), damaged ones included. It prunes resolved
// confirmations, and pending ones that expired, once they are older than
// confirm.Retention.
func (f *Store) List(_ context.Context, tenant string, now time.Time, limit int) ([]confirm.Record, bool, error) {
	dir := f.tenantDir(tenant)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("list confirmations: %w", err)
	}
	var out []confirm.Record
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !confirm.ValidID(id) {
			continue
		}
		r, err := f.load(tenant, id, false)
		if err != nil {
			continue // removed meanwhile, or unreadable: not listed
		}
		if r.Open(now) {
			out = append(out, r)
			continue
		}
		if ended := r.EndedAt(); !ended.IsZero() && f.now().Sub(ended) > confirm.Retention {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	recs, more := confirm.FirstOpen(out, now, limit)
	return recs, more, nil
}

// lock takes the tenant's exclusive lock; the returned function releases
// it.
func (f *Store) lock(tenant string) (func(), error) {
	dir := f.tenantDir(tenant)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("lock confirmations: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock confirmations: %w", err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		lock.Close()
		return nil, fmt.Errorf("lock confirmations: %w", err)
	}
	return func() {
		syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
		lock.Close()
	}, nil
}

// Put writes r if the stored version is expect (0: absent).
func (f *Store) Put(_ context.Context, r confirm.Record, expect int) error {
	if !confirm.ValidID(r.ID) || r.Tenant == "" {
		return fmt.Errorf("put confirmation %q: invalid id or tenant", r.ID)
	}
	unlock, err := f.lock(r.Tenant)
	if err != nil {
		return fmt.Errorf("put confirmation %s: %w", r.ID, err)
	}
	defer unlock()

	dir := f.tenantDir(r.Tenant)
	path := filepath.Join(dir, r.ID+".json")
	cur, err := f.load(r.Tenant, r.ID, true)
	var nf *veredicto.NotFoundError
	switch {
	case errors.As(err, &nf):
		cur.Version = 0
	case err != nil:
		return err
	}
	if cur.Version != expect {
		return &veredicto.ConflictError{What: "confirmation " + r.ID, Problem: "written concurrently"}
	}
	r.Version = expect + 1
	if err := writeRecord(dir, path, r); err != nil {
		return fmt.Errorf("put confirmation %s: %w", r.ID, err)
	}
	return nil
}

// writeRecord replaces the file at path with r: a temporary file in dir,
// fsynced, renamed into place, and the rename made durable.
func writeRecord(dir, path string, r confirm.Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode confirmation %s: %w", r.ID, err)
	}
	tmp, err := os.CreateTemp(dir, ".put-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // the rename itself is durable
		d.Close()
	}
	return nil
}

// Local is the store "veredicto serve" and "veredicto confirm" share
// under a data folder: DATA/confirmations, its damaged files going to
// DATA/quarantine/confirmations.
func Local(dataDir string) *Store {
	return New(filepath.Join(dataDir, "confirmations"))
}

// Damaged lists the confirmation files that no longer decode, where they
// are, reading only ("veredicto doctor"); those already moved aside are
// quarantine.List's.
func (f *Store) Damaged() ([]quarantine.Item, error) {
	tenants, err := f.Tenants()
	if err != nil {
		return nil, err
	}
	out := []quarantine.Item{}
	for _, tenant := range tenants {
		dir := f.tenantDir(tenant)
		entries, err := os.ReadDir(dir)
		if err != nil {
			return out, fmt.Errorf("list confirmations: %w", err)
		}
		for _, e := range entries {
			id, ok := strings.CutSuffix(e.Name(), ".json")
			if !ok || !confirm.ValidID(id) {
				continue
			}
			path := filepath.Join(dir, e.Name())
			var de *decodeError
			if _, err := readRecord(path, tenant, id); errors.As(err, &de) {
				out = append(out, f.Quarantine.Found(path, de.reason))
			}
		}
	}
	return out, nil
}

// Tenants returns the tenants that have confirmations in the store, for a
// sweep at start-up (see confirm.Service.RedeliverAll).
func (f *Store) Tenants() ([]string, error) {
	entries, err := os.ReadDir(f.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list confirmation tenants: %w", err)
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		t, err := base64.RawURLEncoding.DecodeString(e.Name())
		if err != nil || len(t) == 0 {
			continue // not a tenant folder this store wrote
		}
		out = append(out, string(t))
	}
	return out, nil
}
