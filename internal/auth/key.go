package auth

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// KeyFile is where the local signing key lives under the data folder.
const KeyFile = "auth/hs256.key"

// keyBytes is the key's length: 256 bits, HS256's strength.
const keyBytes = 32

// LoadOrCreateKey returns the HS256 key under dataDir, creating it on first
// use: 32 random bytes in a 0600 file (its folder 0700). Two processes
// starting at once agree on one key: the file is created exclusively and
// fully written before it is linked into place.
func LoadOrCreateKey(dataDir string) ([]byte, error) {
	path := filepath.Join(dataDir, KeyFile)
	key, err := readKey(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create key folder: %w", err)
	}
	fresh := make([]byte, keyBytes)
	if _, err := rand.Read(fresh); err != nil {
		return nil, fmt.Errorf("generate key: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".hs256-*.tmp")
	if err != nil {
		return nil, fmt.Errorf("create key: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("create key: %w", err)
	}
	if _, err := tmp.Write(fresh); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("write key: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("write key: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return nil, fmt.Errorf("write key: %w", err)
	}
	// Link fails if another process won the race; then its key is the key.
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("install key %s: %w", path, err)
	}
	return readKey(path)
}

func readKey(path string) ([]byte, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if info.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("key %s is readable by others (mode %v): chmod 600 it", path, info.Mode().Perm())
	}
	key, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read key: %w", err)
	}
	if len(key) != keyBytes {
		return nil, fmt.Errorf("key %s has %d bytes, want %d", path, len(key), keyBytes)
	}
	return key, nil
}
