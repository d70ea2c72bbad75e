package companion

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"

	"gopkg.in/yaml.v3"

	"github.com/veredicto/veredicto"
)

// File names in an application's output folder.
const (
	ContextFile = "context.json"
	ReportFile  = "report.md"
)

// writeAtomic writes data to path through a temporary file and a rename,
// so a reader never sees a half-written file.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// SaveDir writes DIR/context.json and DIR/report.md, each atomically,
// and records both (by their names, relative to DIR) in the audit scope
// ctx carries.
func SaveDir(ctx context.Context, dir string, c *Context) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("save context: %w", err)
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("save context: %w", err)
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{ContextFile, append(b, '\n')}, {ReportFile, []byte(Report(c))}} {
		if err := writeAtomic(filepath.Join(dir, f.name), f.data); err != nil {
			return fmt.Errorf("save %s %s: %w", f.name, dir, err)
		}
		if err := RecordFile(ctx, f.name, f.data); err != nil {
			return err
		}
	}
	return nil
}

// LoadDir reads DIR/context.json; a missing one is a *veredicto.NotFoundError.
func LoadDir(dir string) (*Context, error) {
	path := filepath.Join(dir, ContextFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &veredicto.NotFoundError{What: path}
	}
	if err != nil {
		return nil, fmt.Errorf("load context: %w", err)
	}
	var c Context
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, &veredicto.InvalidInputError{File: path, Problem: "is not a companion context: " + err.Error()}
	}
	return &c, nil
}

var (
	appIDRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)
)

// FileCache is the local classification cache:
// DIR/<tenant>/classifications/<input_hash>.json.
type FileCache struct {
	Dir    string
	Tenant string
}

var _ Cache = FileCache{}

var hashRE = regexp.MustCompile(`^[0-9a-f]{64}$`)

func (f FileCache) path(hash string) (string, error) {
	if !veredicto.ValidID(f.Tenant) {
		return "", fmt.Errorf("classification cache: invalid tenant %q", f.Tenant)
	}
	if !hashRE.MatchString(hash) {
		return "", fmt.Errorf("classification cache: invalid input hash %q", hash)
	}
	return filepath.Join(f.Dir, f.Tenant, "classifications", hash+".json"), nil
}

// GetClassification reads the classification stored for hash.
func (f FileCache) GetClassification(ctx context.Context, hash string) (Classification, bool, error) {
	var c Classification
	p, err := f.path(hash)
	if err != nil {
		return c, false, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return c, false, nil
	}
	if err != nil {
		return c, false, fmt.Errorf("classification cache %s: %w", hash, err)
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, false, nil // unreadable: classify again
	}
	return c, true, nil
}

// PutClassification stores c for hash (replacing an older one: the newest
// classification is the reference of the next drift check).
func (f FileCache) PutClassification(ctx context.Context, hash string, c Classification) error {
	p, err := f.path(hash)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("classification cache %s: %w", hash, err)
	}
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("classification cache %s: %w", hash, err)
	}
	if err := writeAtomic(p, b); err != nil {
		return fmt.Errorf("classification cache %s: %w", hash, err)
	}
	return nil
}

// RefinedProfileFile is the profile a refinement with factual corrections
// writes next to the application, with the corrections recorded.
const RefinedProfileFile = "profile.refined.yaml"

// SaveProfile writes p as ProfileSnapshot YAML, atomically.
func SaveProfile(path string, p ProfileSnapshot) error {
	var buf bytes.Buffer
	buf.WriteString("# ProfileSnapshot updated by \"veredicto companion refine\"; corrections lists each change.\n")
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(p); err != nil {
		return fmt.Errorf("save profile %s: %w", path, err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("save profile %s: %w", path, err)
	}
	if err := writeAtomic(path, buf.Bytes()); err != nil {
		return fmt.Errorf("save profile %s: %w", path, err)
	}
	return nil
}
