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
)

// Store keeps one JSON file per confirmation under
// dir/<tenant>/<id>.json. Put holds an exclusive flock on the tenant's
// lock file while it compares versions and replaces the file (write to a
// temporary file, fsync, rename), so serve and "veredicto confirm" in
// another shell can both write. Resolved confirmations older than
// confirm.Retention are pruned by List.
type Store struct {
	dir string
	now func() time.Time
}

var _ confirm.Store = (*Store)(nil)

// New returns a store under dir.
func New(dir string) *Store { return &Store{dir: dir, now: time.Now} }

func (f *Store) tenantDir(tenant string) string {
	return filepath.Join(f.dir, base64.RawURLEncoding.EncodeToString([]byte(tenant)))
}

// Get returns a confirmation of tenant.
func (f *Store) Get(_ context.Context, tenant, id string) (confirm.Record, error) {
	if !confirm.ValidID(id) {
		return confirm.Record{}, confirm.NotFound(id)
	}
	return readRecord(filepath.Join(f.tenantDir(tenant), id+".json"), id)
}

func readRecord(path, id string) (confirm.Record, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return confirm.Record{}, confirm.NotFound(id)
	}
	if err != nil {
		return confirm.Record{}, fmt.Errorf("read confirmation %s: %w", id, err)
	}
	var r confirm.Record
	if err := json.Unmarshal(b, &r); err != nil {
		return confirm.Record{}, fmt.Errorf("decode confirmation %s: %w", id, err)
	}
	return r, nil
}

// List returns the tenant's open confirmations, oldest first
// (confirm.Store). It prunes resolved confirmations, and pending ones that
// expired, once they are older than confirm.Retention.
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
		r, err := readRecord(filepath.Join(dir, e.Name()), id)
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

// Put writes r if the stored version is expect (0: absent).
func (f *Store) Put(_ context.Context, r confirm.Record, expect int) error {
	if !confirm.ValidID(r.ID) || r.Tenant == "" {
		return fmt.Errorf("put confirmation %q: invalid id or tenant", r.ID)
	}
	dir := f.tenantDir(r.Tenant)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("put confirmation %s: %w", r.ID, err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("put confirmation %s: %w", r.ID, err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("lock confirmations: %w", err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)

	path := filepath.Join(dir, r.ID+".json")
	cur, err := readRecord(path, r.ID)
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
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode confirmation %s: %w", r.ID, err)
	}
	tmp, err := os.CreateTemp(dir, ".put-*")
	if err != nil {
		return fmt.Errorf("put confirmation %s: %w", r.ID, err)
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
		return fmt.Errorf("put confirmation %s: %w", r.ID, err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // the rename itself is durable
		d.Close()
	}
	return nil
}

// Local is the store "veredicto serve" and "veredicto confirm" share
// under a data folder: DATA/confirmations.
func Local(dataDir string) *Store {
	return New(filepath.Join(dataDir, "confirmations"))
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
