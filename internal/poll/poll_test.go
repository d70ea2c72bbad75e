package poll

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

func TestWithinReturnsOnceTheConditionHolds(t *testing.T) {
	var calls atomic.Int32
	if !Within(10*time.Second, func() bool { return calls.Add(1) == 5 }) {
		t.Fatal("Within reported a timeout; the condition held at its fifth check")
	}
	if n := calls.Load(); n != 5 {
		t.Errorf("cond called %d times, want 5 (no check after it held)", n)
	}
}

func TestWithinGivesUpAtItsTimeout(t *testing.T) {
	start := time.Now()
	var calls atomic.Int32
	if Within(30*time.Millisecond, func() bool { calls.Add(1); return false }) {
		t.Fatal("Within reported success for a condition that never held")
	}
	if d := time.Since(start); d < 30*time.Millisecond {
		t.Errorf("gave up after %s, before its 30ms", d)
	}
	if calls.Load() < 2 {
		t.Errorf("cond called %d times, want it checked again before giving up", calls.Load())
	}
}

// fatalT records a Fatalf instead of ending the test.
type fatalT struct {
	testing.TB
	msg string
}

func (f *fatalT) Helper()                           {}
func (f *fatalT) Fatalf(format string, args ...any) { f.msg = fmt.Sprintf(format, args...) }

func TestUntilFailsNamingWhatItWaitedFor(t *testing.T) {
	ft := &fatalT{TB: t}
	Until(ft, 5*time.Millisecond, func() bool { return false }, "the door to open")
	if want := "timed out after 5ms waiting for the door to open"; ft.msg != want {
		t.Errorf("failure %q, want %q", ft.msg, want)
	}
	ft = &fatalT{TB: t}
	Until(ft, time.Second, func() bool { return true }, "nothing")
	if ft.msg != "" {
		t.Errorf("Until failed for a condition that held: %q", ft.msg)
	}
}
