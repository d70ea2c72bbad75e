package asl

import (
	"context"
	"sync"
	"time"
)

// Clock is the time an Engine reads and waits on: Wait states, Retry
// delays, a waiting Task's HeartbeatSeconds, a Task's and an execution's
// TimeoutSeconds, and the timestamps of history events. The default is the
// real clock; a test gives its own (WithClock) and moves it, so that a
// heartbeat timeout or an hour's Wait takes no real time.
//
// Its methods use only the time package's types, so a clock need not
// import this package (internal/asl/asltest has one that tests move).
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// NewTimer starts a timer that sends the time on fired once d has
	// passed. stop stops it and reports whether it had yet to fire, as
	// time.Timer's Stop does.
	NewTimer(d time.Duration) (fired <-chan time.Time, stop func() bool)
}

// WithClock makes the engine read and wait on c instead of the real clock.
func WithClock(c Clock) Option {
	return func(e *Engine) {
		e.clock = c
		e.now = c.Now
	}
}

// timer starts a timer of d on the engine's clock.
func (e *Engine) timer(d time.Duration) (<-chan time.Time, func() bool) {
	if e.clock == nil {
		t := time.NewTimer(d)
		return t.C, t.Stop
	}
	return e.clock.NewTimer(d)
}

// sleep waits d on the engine's clock, or until ctx ends.
func (e *Engine) sleep(ctx context.Context, d time.Duration) error {
	fired, stop := e.timer(d)
	defer stop()
	select {
	case <-fired:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// withDeadline is context.WithDeadline on the engine's clock. The real
// clock's deadlines are the context package's own; another clock's end
// with context.DeadlineExceeded when its timer fires.
func (e *Engine) withDeadline(parent context.Context, deadline time.Time) (context.Context, context.CancelFunc) {
	if e.clock == nil {
		return context.WithDeadline(parent, deadline)
	}
	if cur, ok := parent.Deadline(); ok && !cur.After(deadline) {
		return context.WithCancel(parent) // the parent ends first, as context.WithDeadline decides
	}
	c := &clockContext{Context: parent, deadline: deadline, done: make(chan struct{})}
	if err := parent.Err(); err != nil {
		c.end(err)
		return c, func() {}
	}
	d := deadline.Sub(e.clock.Now())
	if d <= 0 {
		c.end(context.DeadlineExceeded)
		return c, func() {}
	}
	fired, stopTimer := e.clock.NewTimer(d)
	stopParent := context.AfterFunc(parent, func() { c.end(parent.Err()) })
	go func() {
		select {
		case <-fired:
			c.end(context.DeadlineExceeded)
		case <-c.done:
		}
	}()
	return c, func() {
		c.end(context.Canceled)
		stopParent()
		stopTimer()
	}
}

// clockContext is a context whose deadline is kept by a Clock other than
// the real one. Its Value is its parent's; contexts derived from it end
// with its error (the context package watches Done for them).
type clockContext struct {
	context.Context
	deadline time.Time
	done     chan struct{}

	mu  sync.Mutex
	err error
}

func (c *clockContext) Deadline() (time.Time, bool) { return c.deadline, true }
func (c *clockContext) Done() <-chan struct{}       { return c.done }

func (c *clockContext) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// end ends the context with err, once.
func (c *clockContext) end(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = err
		close(c.done)
	}
}
