package asltest

import (
	"testing"
	"time"
)

func TestClockFiresTimersInOrderAtTheirTimes(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := NewClock(start)
	late, _ := c.NewTimer(3 * time.Second)
	early, _ := c.NewTimer(time.Second)
	stopped, stop := c.NewTimer(2 * time.Second)
	now, _ := c.NewTimer(0)
	if got := <-now; !got.Equal(start) {
		t.Errorf("a zero timer fired with %v, want %v at once", got, start)
	}
	if p := c.Pending(); len(p) != 3 || !p[0].Equal(start.Add(time.Second)) || !p[2].Equal(start.Add(3*time.Second)) {
		t.Errorf("pending %v, want 1 s, 2 s and 3 s after the start", p)
	}
	if !stop() || stop() {
		t.Error("Stop: want true for an armed timer, then false")
	}
	c.Advance(2 * time.Second)
	select {
	case got := <-early:
		if !got.Equal(start.Add(time.Second)) {
			t.Errorf("fired with %v, want the time it was due", got)
		}
	default:
		t.Error("the 1 s timer did not fire after 2 s")
	}
	select {
	case <-late:
		t.Error("the 3 s timer fired after 2 s")
	case <-stopped:
		t.Error("a stopped timer fired")
	default:
	}
	if !c.Now().Equal(start.Add(2 * time.Second)) {
		t.Errorf("now %v, want 2 s after the start", c.Now())
	}
	c.Advance(time.Second)
	if got := <-late; !got.Equal(start.Add(3 * time.Second)) {
		t.Errorf("fired with %v", got)
	}
	if p := c.Pending(); len(p) != 0 {
		t.Errorf("pending %v after every timer fired", p)
	}
}
