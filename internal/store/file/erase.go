package file

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// Erase removes the record key and every record under key/ for good (the
// right to erasure; veredicto audit purge) and returns how many it
// removed.
func (l *Local) Erase(ctx context.Context, key string) (int, error) {
	for _, seg := range strings.Split(key, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return 0, fmt.Errorf("erase %q: a key of whole segments is needed", key)
		}
	}
	under, err := l.List(ctx, key+"/")
	if err != nil {
		return 0, err
	}
	n := 0
	for _, k := range append(under, key) {
		switch err := os.Remove(l.file(k)); {
		case err == nil:
			n++
		case !errors.Is(err, fs.ErrNotExist):
			return n, fmt.Errorf("erase %s: %w", k, err)
		}
	}
	// The folders the records were in, now empty but for temporary files.
	if dir := strings.TrimSuffix(l.file(key+"/x"), "x"+valueExt); dir != l.dir {
		if err := os.RemoveAll(dir); err != nil {
			return n, fmt.Errorf("erase %s: %w", key, err)
		}
	}
	return n, nil
}
