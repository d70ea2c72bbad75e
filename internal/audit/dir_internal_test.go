package audit

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestSyncWaitsForTheSyncUnderWay: a Sync that finds a chain clean while
// another Sync's fsync of it is still under way returns once that fsync
// has ended, with its error — never before the chain is durable.
func TestSyncWaitsForTheSyncUnderWay(t *testing.T) {
	ctx := context.Background()
	d := NewDirSyncedOnReport(t.TempDir())
	if err := d.AppendLines(ctx, MainChain, 0, [][]byte{[]byte(`{"n":1}`)}); err != nil {
		t.Fatal(err)
	}
	started, release := make(chan struct{}), make(chan struct{})
	failed := errors.New("the disk refused it")
	syncChain = func(string) error {
		close(started)
		<-release
		return failed
	}
	t.Cleanup(func() { syncChain = syncFile })
	first := make(chan error, 1)
	go func() { first <- d.Sync(ctx, MainChain) }()
	<-started
	second := make(chan error, 1)
	go func() { second <- d.Sync(ctx, MainChain) }()
	select {
	case err := <-second:
		t.Fatalf("the second Sync returned (%v) while the first's fsync was under way", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	for i, ch := range []chan error{first, second} {
		if err := <-ch; !errors.Is(err, failed) {
			t.Errorf("Sync %d: %v; want the fsync's failure", i+1, err)
		}
	}
	d.mu.Lock()
	dirty, inflight := d.dirty[MainChain], len(d.inflight)
	d.mu.Unlock()
	if !dirty || inflight != 0 {
		t.Errorf("after the failed fsync: dirty %v, %d syncs under way; want it to be synced again, none under way", dirty, inflight)
	}
}
