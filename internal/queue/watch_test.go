package queue_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/blob/file/filetest"
	"github.com/veredicto/veredicto/internal/queue"
)

// TestWatcherNotifiesOnlyUploadedMarkers: a READY marker that is a link
// (to the signing key, another tenant's marker, anything), sits in a
// linked search folder, or is a folder, a named pipe (without blocking),
// a socket or a device is never notified; each is logged once, by name,
// however often the folder is scanned. A plain marker beside them is.
func TestWatcherNotifiesOnlyUploadedMarkers(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	c := &clock{t: time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)}
	inputs := filepath.Join(data, "inputs")
	writeFile(t, inputs, "searches/acme/plain/READY", "")
	s := filetest.NewSecrets(t)
	var want []string
	for i, h := range filetest.All() {
		if named, ok := h.TryPlant(t, inputs, fmt.Sprintf("searches/acme/s%02d/READY", i), s); ok {
			want = append(want, named+": "+h.Problem)
		}
	}
	var logs bytes.Buffer
	w := &queue.Watcher{Inputs: inputs, Bucket: "veredicto-inputs", Queue: open(t, filepath.Join(data, "queue"), c),
		Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	for range 3 {
		var n int
		var err error
		filetest.Promptly(t, func() { n, err = w.Scan(ctx) })
		if err != nil || n > 1 {
			t.Fatalf("scan queued %d (%v), want only the plain marker", n, err)
		}
	}
	got, err := w.Queue.Receive(ctx, 10)
	if err != nil || len(got) != 1 || !strings.Contains(got[0].Body, "searches/acme/plain/READY") {
		t.Fatalf("queued %v (%v), want the plain marker alone", got, err)
	}
	for _, wl := range want {
		if n := strings.Count(logs.String(), wl); n != 1 {
			t.Errorf("%q logged %d times, want once:\n%s", wl, n, logs.String())
		}
	}
	if filetest.Leaks(logs.String()) || strings.Contains(logs.String(), file.ProblemSwapped) {
		t.Errorf("logs:\n%s", logs.String())
	}
}
