// Package file is the context store on this machine (an adapter of
// package store): one file per key under a folder (Local), and an
// in-process Memory for tests and one-shot runs.
package file

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/veredicto/veredicto/internal/store"
)

// Local keeps one file per key under a folder. PutIfAbsent is atomic
// (hard-link of a fully written temporary file), so concurrent writers of
// the same key never see each other's half-written data. Safe for
// concurrent use, also across processes.
type Local struct {
	dir string
}

// NewLocal returns a store in dir (created on first write).
func NewLocal(dir string) *Local { return &Local{dir: dir} }

var (
	_ store.Store = (*Local)(nil)
	_ store.Store = (*Memory)(nil)
)

// file maps a key to its file: each "/"-separated segment is path-escaped,
// so keys keep their hierarchy on disk and List can walk a prefix. An empty
// key or segment (impossible to map faithfully) is hashed instead.
func (l *Local) file(key string) string {
	segs := strings.Split(key, "/")
	for i, s := range segs {
		if s == "" || s == "." || s == ".." {
			sum := sha256.Sum256([]byte(key))
			return filepath.Join(l.dir, "_hashed", hex.EncodeToString(sum[:])+valueExt)
		}
		segs[i] = url.PathEscape(s)
	}
	return filepath.Join(l.dir, filepath.Join(segs...)+valueExt)
}

const valueExt = ".value"

// List returns the keys that start with prefix, sorted. It walks only the
// folder of the prefix's whole segments ("chat/acme/" walks chat/acme), so
// its cost is the prefix's keys, not the store's.
func (l *Local) List(_ context.Context, prefix string) ([]string, error) {
	root := l.dir
	if i := strings.LastIndex(prefix, "/"); i > 0 {
		segs := strings.Split(prefix[:i], "/")
		whole := true
		for j, s := range segs {
			if s == "" || s == "." || s == ".." { // such keys are hashed, never listed
				whole = false
				break
			}
			segs[j] = url.PathEscape(s)
		}
		if whole {
			root = filepath.Join(l.dir, filepath.Join(segs...))
		}
	}
	var keys []string
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == root {
				return fs.SkipAll
			}
			return err
		}
		if e.IsDir() || !strings.HasSuffix(p, valueExt) || strings.HasPrefix(e.Name(), ".") {
			return nil
		}
		rel, err := filepath.Rel(l.dir, strings.TrimSuffix(p, valueExt))
		if err != nil {
			return err
		}
		segs := strings.Split(filepath.ToSlash(rel), "/")
		if segs[0] == "_hashed" {
			return nil
		}
		for i, s := range segs {
			if segs[i], err = url.PathUnescape(s); err != nil {
				return nil
			}
		}
		if key := strings.Join(segs, "/"); strings.HasPrefix(key, prefix) {
			keys = append(keys, key)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", prefix, err)
	}
	sort.Strings(keys)
	return keys, nil
}

// Get returns the value stored under key.
func (l *Local) Get(_ context.Context, key string) ([]byte, bool, error) {
	b, err := os.ReadFile(l.file(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("get %s: %w", key, err)
	}
	return b, true, nil
}

// PutIfAbsent stores value under key unless the key exists; it reports
// whether it wrote.
func (l *Local) PutIfAbsent(_ context.Context, key string, value []byte) (bool, error) {
	p := l.file(key)
	// The folder is made when the first write into it finds none, not
	// checked before every write.
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return false, fmt.Errorf("put %s: %w", key, err)
		}
		tmp, err = os.CreateTemp(filepath.Dir(p), ".tmp-*")
	}
	if err != nil {
		return false, fmt.Errorf("put %s: %w", key, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(value); err != nil {
		tmp.Close()
		return false, fmt.Errorf("put %s: %w", key, err)
	}
	if err := tmp.Close(); err != nil {
		return false, fmt.Errorf("put %s: %w", key, err)
	}
	if err := os.Link(tmp.Name(), p); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return false, nil
		}
		return false, fmt.Errorf("put %s: %w", key, err)
	}
	return true, nil
}

// Memory is an in-process store for tests and one-shot runs.
type Memory struct {
	mu   sync.Mutex
	data map[string][]byte
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory {
	return &Memory{data: map[string][]byte{}}
}

// Get returns the value stored under key.
func (m *Memory) Get(_ context.Context, key string) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.data[key]
	return v, ok, nil
}

// PutIfAbsent stores value under key unless the key exists.
func (m *Memory) PutIfAbsent(_ context.Context, key string, value []byte) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.data[key]; ok {
		return false, nil
	}
	m.data[key] = append([]byte(nil), value...)
	return true, nil
}

// List returns the keys that start with prefix, sorted.
func (m *Memory) List(_ context.Context, prefix string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var keys []string
	for k := range m.data {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys, nil
}

// Len is the number of keys (for tests).
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.data)
}
