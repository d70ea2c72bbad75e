package file

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/veredicto/veredicto/internal/confirm"
)

// EraseExecution removes for good tenant's confirmations asked by
// execution (its name, or an ARN ending in ":" and the name), previews
// and decisions with them: the right to erasure (veredicto audit purge).
// It returns how many it removed. A damaged file cannot say whose it is
// and stays (doctor lists it).
func (f *Store) EraseExecution(_ context.Context, tenant, execution string) (int, error) {
	dir := f.tenantDir(tenant)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	unlock, err := f.lock(tenant)
	if err != nil {
		return 0, err
	}
	defer unlock()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("erase confirmations: %w", err)
	}
	n := 0
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !confirm.ValidID(id) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		r, err := readRecord(p, tenant, id)
		if err != nil || r.Execution != execution && !strings.HasSuffix(r.Execution, ":"+execution) {
			continue
		}
		if err := os.Remove(p); err != nil {
			return n, fmt.Errorf("erase confirmation %s: %w", id, err)
		}
		n++
	}
	return n, nil
}
