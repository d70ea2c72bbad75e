// Package asltest helps tests of the engine (internal/asl) and of what
// runs on it: a Clock that only the test moves, so that Wait states,
// heartbeat and task timeouts and Retry delays take no real time.
package asltest

import (
	"slices"
	"sync"
	"time"
)

// Clock is an asl.Clock whose time moves only when the test calls
// Advance. It is safe for concurrent use.
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*timer // armed, in the order they were started
}

type timer struct {
	at    time.Time
	fired chan time.Time
}

// NewClock returns a clock that reads start until it is moved.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// NewTimer starts a timer that fires once the clock has been moved d on
// (at once when d ≤ 0).
func (c *Clock) NewTimer(d time.Duration) (<-chan time.Time, func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &timer{at: c.now.Add(d), fired: make(chan time.Time, 1)}
	if d <= 0 {
		t.fired <- c.now
		return t.fired, func() bool { return false }
	}
	c.timers = append(c.timers, t)
	return t.fired, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		i := slices.Index(c.timers, t)
		if i < 0 {
			return false
		}
		c.timers = slices.Delete(c.timers, i, i+1)
		return true
	}
}

// Advance moves the clock d on and fires, earliest first, every timer due
// by then, each with the time it was due.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	end := c.now.Add(d)
	for {
		i := c.next()
		if i < 0 || c.timers[i].at.After(end) {
			break
		}
		t := c.timers[i]
		c.timers = slices.Delete(c.timers, i, i+1)
		if t.at.After(c.now) {
			c.now = t.at
		}
		t.fired <- t.at
	}
	c.now = end
}

// next is the index of the earliest armed timer, or -1.
func (c *Clock) next() int {
	i := -1
	for j, t := range c.timers {
		if i < 0 || t.at.Before(c.timers[i].at) {
			i = j
		}
	}
	return i
}

// Pending returns the times at which the armed timers will fire, earliest
// first: a test waits for the engine to arm the timer it means to fire
// (with poll.Until) before it calls Advance.
func (c *Clock) Pending() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	at := make([]time.Time, len(c.timers))
	for i, t := range c.timers {
		at[i] = t.at
	}
	slices.SortFunc(at, time.Time.Compare)
	return at
}
