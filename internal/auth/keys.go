package auth

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/veredicto/veredicto"
)

// KeysFile is where the access keys of the local Step Functions API live
// under the data folder (mode 0600, its folder 0700).
const KeysFile = "auth/credentials.json"

// Key is an access key: an AWS-style key id and secret issued to a named
// person or service, scoped to one tenant or to the operator.
type Key struct {
	AccessKeyID     string    `json:"access_key_id"`
	SecretAccessKey string    `json:"secret_access_key"`
	Name            string    `json:"name"`
	Tenant          string    `json:"tenant,omitempty"`
	Operator        bool      `json:"operator,omitempty"`
	Service         bool      `json:"service,omitempty"`
	Created         time.Time `json:"created"`
}

// Principal is who a request signed with k speaks for.
func (k Key) Principal() Principal {
	return Principal{Name: k.Name, Tenant: k.Tenant, Operator: k.Operator, Service: k.Service, Via: ViaSigV4}
}

// KeySpec asks for the key of a name in a scope: exactly one of Tenant and
// Operator.
type KeySpec struct {
	Name     string
	Tenant   string
	Operator bool
	Service  bool
}

func (s KeySpec) check() error {
	switch {
	case s.Name == "" || len(s.Name) > 128 || !printable(s.Name):
		return &veredicto.InvalidInputError{Field: "name", Problem: "must be 1–128 printable characters"}
	case s.Operator == (s.Tenant != ""):
		return &veredicto.InvalidInputError{Field: "scope", Problem: "give either a tenant or the operator scope"}
	case s.Tenant != "" && !veredicto.ValidID(s.Tenant):
		return &veredicto.InvalidInputError{Field: "tenant", Problem: "is not a tenant id (" + veredicto.IDRule + ")"}
	}
	return nil
}

func (s KeySpec) matches(k Key) bool {
	return k.Name == s.Name && k.Tenant == s.Tenant && k.Operator == s.Operator && k.Service == s.Service
}

func printable(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// Keys is the store of access keys under a data folder. Lookups read the
// file again when it changed (a key "veredicto credentials" created while
// the server runs works at once). Safe for concurrent use, and across
// processes: writers take a lock file.
type Keys struct {
	path string

	mu    sync.Mutex
	byID  map[string]Key
	stamp fileStamp
}

type fileStamp struct {
	mod  time.Time
	size int64
}

// OpenKeys returns the key store under dataDir (the file is created by the
// first key).
func OpenKeys(dataDir string) *Keys {
	return &Keys{path: filepath.Join(dataDir, KeysFile)}
}

type keysDoc struct {
	Keys []Key `json:"keys"`
}

// load reads the file when it changed since the last read; a missing file
// holds no key.
func (s *Keys) load() error {
	info, err := os.Stat(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		s.byID, s.stamp = map[string]Key{}, fileStamp{}
		return nil
	}
	if err != nil {
		return err
	}
	st := fileStamp{info.ModTime(), info.Size()}
	if s.byID != nil && st == s.stamp {
		return nil
	}
	if info.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s is readable by others (mode %v): chmod 600 it", s.path, info.Mode().Perm())
	}
	b, err := os.ReadFile(s.path)
	if err != nil {
		return err
	}
	var doc keysDoc
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return fmt.Errorf("%s is damaged: %v", s.path, err)
	}
	m := make(map[string]Key, len(doc.Keys))
	for _, k := range doc.Keys {
		m[k.AccessKeyID] = k
	}
	s.byID, s.stamp = m, st
	return nil
}

// Lookup returns the key with this id.
func (s *Keys) Lookup(id string) (Key, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.load(); err != nil {
		return Key{}, false, err
	}
	k, ok := s.byID[id]
	return k, ok, nil
}

// Ensure returns the key of spec, creating it on first use: a name has one
// key per scope, printed again as often as asked.
func (s *Keys) Ensure(spec KeySpec) (Key, error) {
	if err := spec.check(); err != nil {
		return Key{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.load(); err != nil {
		return Key{}, err
	}
	if k, ok := s.find(spec); ok {
		return k, nil
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return Key{}, fmt.Errorf("create %s: %w", filepath.Dir(s.path), err)
	}
	unlock, err := lockFile(s.path + ".lock")
	if err != nil {
		return Key{}, err
	}
	defer unlock()
	// Another process may have written under the lock since.
	s.byID = nil
	if err := s.load(); err != nil {
		return Key{}, err
	}
	if k, ok := s.find(spec); ok {
		return k, nil
	}
	k := Key{AccessKeyID: "VKIA" + randomString(16, upperAlnum), SecretAccessKey: randomString(40, secretAlphabet),
		Name: spec.Name, Tenant: spec.Tenant, Operator: spec.Operator, Service: spec.Service, Created: time.Now().UTC().Truncate(time.Second)}
	doc := keysDoc{Keys: make([]Key, 0, len(s.byID)+1)}
	for _, old := range s.byID {
		doc.Keys = append(doc.Keys, old)
	}
	doc.Keys = append(doc.Keys, k)
	sortKeys(doc.Keys)
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return Key{}, err
	}
	if err := writeFileAtomic(s.path, append(b, '\n'), 0o600); err != nil {
		return Key{}, fmt.Errorf("write %s: %w", s.path, err)
	}
	s.byID = nil
	if err := s.load(); err != nil {
		return Key{}, err
	}
	return k, nil
}

func (s *Keys) find(spec KeySpec) (Key, bool) {
	for _, k := range s.byID {
		if spec.matches(k) {
			return k, true
		}
	}
	return Key{}, false
}

// sortKeys orders the file oldest first, so it reads as a log of issues.
func sortKeys(ks []Key) {
	slices.SortFunc(ks, func(a, b Key) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.AccessKeyID, b.AccessKeyID)
	})
}

const (
	upperAlnum     = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	secretAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
)

// randomString draws n characters of alphabet (a power-of-two size, so
// every character is equally likely).
func randomString(n int, alphabet string) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand: " + err.Error()) // never fails on supported platforms
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// lockFile takes an exclusive advisory lock on path (created 0600).
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// writeFileAtomic writes b to path through a synced temporary file renamed
// into place, so a reader sees the old file or the new one, never half.
func writeFileAtomic(path string, b []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
