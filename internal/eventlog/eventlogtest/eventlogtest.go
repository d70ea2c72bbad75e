// Package eventlogtest is what the event log's adapters, and the tests of
// its readers, share: an event built or the test stopped, the ids of the
// events a Read returned, and a stream file of the file adapter damaged.
package eventlogtest

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/veredicto/veredicto/internal/eventlog"
)

// Event is eventlog.New's event; an error fails t.
func Event(t testing.TB, typ, key string, v any) eventlog.Event {
	t.Helper()
	ev, err := eventlog.New(typ, key, v)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// IDs are the ids of evs, in order.
func IDs(evs []eventlog.Event) []int64 {
	out := make([]int64, len(evs))
	for i, e := range evs {
		out[i] = e.ID
	}
	return out
}

// StreamFile is the one stream file the file adapter keeps under dir.
func StreamFile(t testing.TB, dir string) string {
	t.Helper()
	var found []string
	filepath.WalkDir(dir, func(p string, _ fs.DirEntry, _ error) error {
		if strings.HasSuffix(p, ".jsonl") {
			found = append(found, p)
		}
		return nil
	})
	if len(found) != 1 {
		t.Fatalf("%d stream files under %s, want one", len(found), dir)
	}
	return found[0]
}

// CorruptLine replaces line n (from 1) of a stream file with with, as
// damage on disk would, and returns the file's lines as they were.
func CorruptLine(t testing.TB, path string, n int, with string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	damaged := append([]string(nil), lines...)
	damaged[n-1] = with + "\n"
	if err := os.WriteFile(path, []byte(strings.Join(damaged, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	return lines
}
