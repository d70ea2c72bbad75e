// Package poll waits, in tests, for something another goroutine, server
// or process does: it checks a condition again and again, a little longer
// apart each time, until it holds or a time limit runs out. A test waits
// on the thing it expects, never for a fixed time.
package poll

import (
	"testing"
	"time"
)

// The pause between checks: first, and at most.
const (
	firstPause = time.Millisecond
	maxPause   = 50 * time.Millisecond
)

// Until checks cond until it reports true, and fails t if it has not
// within timeout, saying that it was waiting for what ("the execution
// has finished"). cond runs on the caller's goroutine, so it may call
// t.Fatal itself.
func Until(t testing.TB, timeout time.Duration, cond func() bool, what string) {
	t.Helper()
	if !Within(timeout, cond) {
		t.Fatalf("timed out after %s waiting for %s", timeout, what)
	}
}

// Within checks cond until it reports true and reports whether it did
// within timeout: for a caller that words its own failure (with the last
// state cond saw).
func Within(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	pause := firstPause
	for {
		if cond() {
			return true
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		time.Sleep(min(pause, left))
		pause = min(2*pause, maxPause)
	}
}
