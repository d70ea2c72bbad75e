package stream

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/veredicto/veredicto/internal/eventlog"
)

// BatchLog is an event log that appends many events to a stream at once,
// without syncing, and then makes every append durable with one call
// (eventlog/file.Log).
type BatchLog interface {
	AppendAll(ctx context.Context, tenant, stream string, evs []eventlog.Event) ([]eventlog.Event, error)
	Sync() error
}

// Spool records history events on the event stream apart from the
// executions that emit them. Recording each event where it happens costs
// an execution a lock, a write and an fsync per event (a five-state Pass
// chain: thirteen); the Spool's hook only queues the event, and one
// writer appends what queued meanwhile, each stream's messages with one
// write, and makes them durable with one Sync (group commit) at most
// every syncEvery.
//
// The stream lags its history by a round (a few milliseconds under
// load). Events still queued when the process dies never reach the
// stream, as an event the history had persisted could already miss it
// when the process died before Record, and a power cut can take what was
// written since the last sync; the history keeps them all.
type Spool struct {
	Recorder *Recorder
	Log      BatchLog
	Logger   *slog.Logger

	once    sync.Once
	mu      sync.Mutex
	cond    *sync.Cond
	queue   []spooled
	closing bool
	wake    chan struct{} // the writer's: something queued
	exited  chan struct{}
}

type spooled struct {
	tenant, arn string
	ev          Event
}

// maxSpooled bounds the queue: past it the hook waits for the writer.
const maxSpooled = 1 << 16

func (s *Spool) init() {
	s.once.Do(func() {
		s.cond = sync.NewCond(&s.mu)
		s.wake = make(chan struct{}, 1)
		s.exited = make(chan struct{})
		if s.Logger == nil {
			s.Logger = slog.Default()
		}
		go s.run()
	})
}

// Hook is the control plane's history hook (control.Config.OnHistory):
// it queues the event for the writer.
func (s *Spool) Hook() func(tenant, executionARN string, ev Event) {
	s.init()
	return func(tenant, executionARN string, ev Event) {
		s.mu.Lock()
		for len(s.queue) >= maxSpooled && !s.closing {
			s.cond.Wait()
		}
		s.queue = append(s.queue, spooled{tenant: tenant, arn: executionARN, ev: ev})
		s.mu.Unlock()
		select {
		case s.wake <- struct{}{}:
		default: // the writer is already told
		}
	}
}

// Close writes what is queued, syncs it and stops the writer.
func (s *Spool) Close() {
	s.init()
	s.mu.Lock()
	s.closing = true
	s.cond.Broadcast()
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	<-s.exited
}

// syncEvery spaces the syncs: a syncfs costs milliseconds of its own,
// whatever it writes, and rounds come every few milliseconds under load.
const syncEvery = 100 * time.Millisecond

func (s *Spool) run() {
	defer close(s.exited)
	var spare []spooled
	dirty, synced := false, time.Now()
	for {
		s.mu.Lock()
		var round []spooled
		if len(s.queue) > 0 { // the queue's array is the writer's until the next swap
			round, s.queue = s.queue, spare[:0]
			s.cond.Broadcast() // room for hooks that waited
		}
		closing := s.closing
		s.mu.Unlock()
		if len(round) > 0 {
			dirty = s.write(round) || dirty
			clear(round)
			spare = round
		}
		if dirty && (closing || time.Since(synced) >= syncEvery) {
			if err := s.Log.Sync(); err != nil {
				s.Logger.Error("cannot sync the event stream", "error", fmt.Sprint(err))
			}
			dirty, synced = false, time.Now()
		}
		if closing && len(round) == 0 {
			return
		}
		if len(round) > 0 {
			continue // more may have queued meanwhile
		}
		var due <-chan time.Time
		var t *time.Timer
		if dirty {
			t = time.NewTimer(syncEvery - time.Since(synced))
			due = t.C
		}
		select {
		case <-s.wake:
		case <-due:
		}
		if t != nil {
			t.Stop()
		}
	}
}

// write appends a round's messages, each stream's in one write and in
// the order they were queued, and says whether it wrote any. A failure is
// logged with ids only, never fatal to an execution.
func (s *Spool) write(round []spooled) bool {
	type key struct{ tenant, arn string }
	var order []key
	msgs := map[key][]eventlog.Event{}
	rec := *s.Recorder
	if agentsFor := rec.AgentsFor; agentsFor != nil {
		agents := map[string]map[string]string{} // once per execution and round
		rec.AgentsFor = func(arn string) map[string]string {
			a, ok := agents[arn]
			if !ok {
				a = agentsFor(arn)
				agents[arn] = a
			}
			return a
		}
	}
	for _, q := range round {
		k := key{q.tenant, q.arn}
		m, err := rec.messages(q.arn, q.ev)
		if err != nil {
			s.Logger.Error("cannot record a history event on the event stream", "tenant", q.tenant, "execution", q.arn, "history_id", q.ev.ID, "error", err)
			continue
		}
		if len(m) == 0 {
			continue
		}
		if _, ok := msgs[k]; !ok {
			order = append(order, k)
		}
		msgs[k] = append(msgs[k], m...)
	}
	for _, k := range order {
		if _, err := s.Log.AppendAll(context.Background(), k.tenant, k.arn, msgs[k]); err != nil {
			s.Logger.Error("cannot record history events on the event stream", "tenant", k.tenant, "execution", k.arn, "events", len(msgs[k]), "error", err)
		}
	}
	return len(order) > 0
}
