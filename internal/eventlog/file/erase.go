package file

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// EraseExecution removes for good tenant's event streams of execution
// (streams named by the execution's ARN, which ends in ":" and the name,
// or by the name itself): the right to erasure (veredicto audit purge). It
// returns how many streams it removed. A stream whose name was too long to
// keep in its file name (stored by hash) cannot be told and stays.
func (f *Log) EraseExecution(_ context.Context, tenant, execution string) (int, error) {
	dir := filepath.Join(f.dir, fileName(tenant))
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("erase event streams: %w", err)
	}
	n := 0
	for _, e := range entries {
		enc, ok := strings.CutSuffix(e.Name(), ".jsonl")
		name, err := base64.RawURLEncoding.DecodeString(enc)
		if !ok || err != nil || string(name) != execution && !strings.HasSuffix(string(name), ":"+execution) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		f.mu.Lock()
		delete(f.tails, p)
		f.mu.Unlock()
		if err := os.Remove(p); err != nil {
			return n, fmt.Errorf("erase event stream of %s: %w", execution, err)
		}
		n++
	}
	return n, nil
}
