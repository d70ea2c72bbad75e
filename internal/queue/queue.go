// Package queue is the local stand-in for the inputs queue (Amazon SQS) that
// `veredicto serve` runs under its data directory: durable messages with
// receive counts, a visibility timeout and a dead-letter queue after
// MaxReceiveCount receives, consumed by the same handler Lambda's SQS event
// source calls (Consumer). Every message is one file, written to a
// temporary name, synced and renamed, so the queue survives a crash or a
// restart and a second process (`veredicto queue …`) can send and redrive
// while the server consumes.
package queue

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/veredicto/veredicto"
)

// Defaults of Config, the values of template.yaml's InputsQueue scaled to
// one machine.
const (
	DefaultMaxReceiveCount = 5
	DefaultVisibility      = 30 * time.Second
	DefaultMaxMessages     = 100_000
	// MaxBatch is SQS's largest ReceiveMessage batch.
	MaxBatch = 10
	// MaxBodyBytes is SQS's message size limit (256 KiB).
	MaxBodyBytes = 256 << 10
)

// Config sets a queue's behaviour; zero fields take the defaults.
type Config struct {
	// MaxReceiveCount: a message received this many times without being
	// deleted moves to the dead-letter queue on its next receive.
	MaxReceiveCount int
	// Visibility is how long a received message stays hidden before it is
	// received again (unless deleted).
	Visibility time.Duration
	// MaxMessages bounds the messages kept, dead letters included.
	MaxMessages int
}

// Message is one queued message as stored.
type Message struct {
	ID           string    `json:"id"`
	Body         string    `json:"body"`
	SentAt       time.Time `json:"sent_at"`
	ReceiveCount int       `json:"receive_count"`
	VisibleAt    time.Time `json:"visible_at"`
	// DeadAt is when the message moved to the dead-letter queue.
	DeadAt time.Time `json:"dead_at,omitzero"`
}

// Received is a message handed to a consumer, with the handle that
// deletes it.
type Received struct {
	Message
	ReceiptHandle string
}

// Dir is a queue and its dead-letter queue under one directory:
// messages/, dead/ and tmp/. Safe for concurrent use.
type Dir struct {
	root string
	cfg  Config
	now  func() time.Time

	mu  sync.Mutex // serialises this process's read-modify-writes
	seq atomic.Uint64
	// cache holds the messages/ this process has read or written, so a
	// receive reads only files it has not seen (sent or redriven by
	// another process). Only the consuming process rewrites or removes
	// files in messages/, so what it cached stays true.
	cache map[string]Message
}

// Open opens (creating it if needed) the queue under root.
func Open(root string, cfg Config) (*Dir, error) {
	if cfg.MaxReceiveCount <= 0 {
		cfg.MaxReceiveCount = DefaultMaxReceiveCount
	}
	if cfg.Visibility <= 0 {
		cfg.Visibility = DefaultVisibility
	}
	if cfg.MaxMessages <= 0 {
		cfg.MaxMessages = DefaultMaxMessages
	}
	for _, sub := range []string{"messages", "dead", "tmp"} {
		if err := os.MkdirAll(filepath.Join(root, sub), 0o700); err != nil {
			return nil, fmt.Errorf("open queue %s: %w", root, err)
		}
	}
	return &Dir{root: root, cfg: cfg, now: time.Now, cache: map[string]Message{}}, nil
}

// SetClock replaces the queue's clock (tests).
func (d *Dir) SetClock(now func() time.Time) { d.now = now }

// Config returns the queue's effective configuration.
func (d *Dir) Config() Config { return d.cfg }

func (d *Dir) path(box, id string) string { return filepath.Join(d.root, box, id+".json") }

// newID is time-ordered, so receives are roughly first in, first out.
func (d *Dir) newID() string {
	var b [4]byte
	rand.Read(b[:])
	return fmt.Sprintf("%019d-%06d-%s", d.now().UnixNano(), d.seq.Add(1)%1_000_000, hex.EncodeToString(b[:]))
}

// write stores m in box durably: temporary file, sync, rename.
func (d *Dir) write(box string, m Message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode message %s: %w", m.ID, err)
	}
	f, err := os.CreateTemp(filepath.Join(d.root, "tmp"), m.ID+"-*")
	if err != nil {
		return fmt.Errorf("write message %s: %w", m.ID, err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), d.path(box, m.ID))
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write message %s: %w", m.ID, err)
	}
	return nil
}

func (d *Dir) read(box, id string) (Message, error) {
	var m Message
	b, err := os.ReadFile(d.path(box, id))
	if errors.Is(err, os.ErrNotExist) {
		return m, &veredicto.NotFoundError{What: "message " + id}
	}
	if err != nil {
		return m, fmt.Errorf("read message %s: %w", id, err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("read message %s: %w", id, err)
	}
	return m, nil
}

// ids lists the message ids of box in order, at most limit of them.
func (d *Dir) ids(box string, limit int) ([]string, error) {
	f, err := os.Open(filepath.Join(d.root, box))
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", box, err)
	}
	defer f.Close()
	names, err := f.Readdirnames(limit)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("list %s: %w", box, err)
	}
	ids := make([]string, 0, len(names))
	for _, n := range names {
		if id, ok := strings.CutSuffix(n, ".json"); ok {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// Send queues body and returns the message id.
func (d *Dir) Send(ctx context.Context, body string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if len(body) > MaxBodyBytes {
		return "", &veredicto.InvalidInputError{Field: "body", Problem: fmt.Sprintf("message of %d bytes exceeds %d", len(body), MaxBodyBytes)}
	}
	n, err := d.count()
	if err != nil {
		return "", err
	}
	if n >= d.cfg.MaxMessages {
		return "", &veredicto.TransientError{Op: "send message", Err: fmt.Errorf("queue %s holds %d messages, its limit", d.root, n)}
	}
	now := d.now().UTC()
	m := Message{ID: d.newID(), Body: body, SentAt: now, VisibleAt: now}
	if err := d.write("messages", m); err != nil {
		return "", err
	}
	return m.ID, nil
}

func (d *Dir) count() (int, error) {
	n := 0
	for _, box := range []string{"messages", "dead"} {
		ids, err := d.ids(box, d.cfg.MaxMessages+1)
		if err != nil {
			return 0, err
		}
		n += len(ids)
	}
	return n, nil
}

// Receive returns up to max visible messages (at most MaxBatch), each
// hidden for the visibility timeout. A message already received
// MaxReceiveCount times moves to the dead-letter queue instead.
func (d *Dir) Receive(ctx context.Context, max int) ([]Received, error) {
	if max <= 0 || max > MaxBatch {
		max = MaxBatch
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	ids, err := d.ids("messages", d.cfg.MaxMessages)
	if err != nil {
		return nil, err
	}
	now := d.now().UTC()
	var out []Received
	for _, id := range ids {
		if len(out) == max {
			break
		}
		if err := ctx.Err(); err != nil {
			return out, err
		}
		m, ok := d.cache[id]
		if !ok {
			var err error
			m, err = d.read("messages", id)
			if errors.As(err, new(*veredicto.NotFoundError)) {
				continue // deleted meanwhile
			}
			if err != nil {
				return out, err
			}
			d.cache[id] = m
		}
		if now.Before(m.VisibleAt) {
			continue
		}
		if m.ReceiveCount >= d.cfg.MaxReceiveCount {
			if err := d.moveDead(m, now); err != nil {
				return out, err
			}
			continue
		}
		m.ReceiveCount++
		m.VisibleAt = now.Add(d.cfg.Visibility)
		if err := d.write("messages", m); err != nil {
			delete(d.cache, id)
			return out, err
		}
		d.cache[id] = m
		out = append(out, Received{Message: m, ReceiptHandle: m.ID + "." + strconv.Itoa(m.ReceiveCount)})
	}
	return out, nil
}

// moveDead marks m dead in place, then renames it into dead/: one atomic
// step, so a concurrent redrive (another process) never meets a message in
// both places, and a crash leaves it in one of them.
func (d *Dir) moveDead(m Message, now time.Time) error {
	m.DeadAt = now
	delete(d.cache, m.ID)
	if err := d.write("messages", m); err != nil {
		return err
	}
	if err := os.Rename(d.path("messages", m.ID), d.path("dead", m.ID)); err != nil {
		return fmt.Errorf("move message %s to the dead-letter queue: %w", m.ID, err)
	}
	return nil
}

// Delete removes the message a receipt handle names. A stale handle (the
// message was received again since) deletes nothing, as the newer
// receiver owns the message now.
func (d *Dir) Delete(ctx context.Context, receiptHandle string) error {
	id, count, ok := strings.Cut(receiptHandle, ".")
	if !ok {
		return &veredicto.InvalidInputError{Field: "receipt handle", Problem: fmt.Sprintf("%q is not one this queue handed out", receiptHandle)}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	m, ok := d.cache[id]
	if !ok {
		var err error
		m, err = d.read("messages", id)
		if errors.As(err, new(*veredicto.NotFoundError)) {
			return nil // already deleted
		}
		if err != nil {
			return err
		}
	}
	if strconv.Itoa(m.ReceiveCount) != count {
		return nil
	}
	delete(d.cache, id)
	if err := os.Remove(d.path("messages", id)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("delete message %s: %w", id, err)
	}
	return nil
}

// Dead lists the dead-letter queue, oldest first, at most limit messages.
func (d *Dir) Dead(ctx context.Context, limit int) ([]Message, error) {
	if limit <= 0 || limit > d.cfg.MaxMessages {
		limit = d.cfg.MaxMessages
	}
	ids, err := d.ids("dead", limit)
	if err != nil {
		return nil, err
	}
	out := make([]Message, 0, len(ids))
	for _, id := range ids {
		m, err := d.read("dead", id)
		if errors.As(err, new(*veredicto.NotFoundError)) {
			continue
		}
		if err != nil {
			return out, err
		}
		out = append(out, m)
	}
	return out, nil
}

// Redrive moves dead letters back to the queue with their receive count
// reset, as SQS's redrive does: the ids given, or every one when none is.
// It returns how many moved; an id not in the dead-letter queue is a
// NotFoundError.
func (d *Dir) Redrive(ctx context.Context, ids ...string) (int, error) {
	if len(ids) == 0 {
		all, err := d.ids("dead", d.cfg.MaxMessages)
		if err != nil {
			return 0, err
		}
		ids = all
	}
	moved := 0
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return moved, err
		}
		m, err := d.read("dead", id)
		if err != nil {
			return moved, err
		}
		m.ReceiveCount, m.DeadAt, m.VisibleAt = 0, time.Time{}, d.now().UTC()
		d.mu.Lock()
		delete(d.cache, id)
		d.mu.Unlock()
		// Reset in place, then one rename back: never in both queues.
		if err := d.write("dead", m); err != nil {
			return moved, err
		}
		if err := os.Rename(d.path("dead", id), d.path("messages", id)); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return moved, &veredicto.NotFoundError{What: "dead letter " + id}
			}
			return moved, fmt.Errorf("redrive message %s: %w", id, err)
		}
		moved++
	}
	return moved, nil
}

// Depth counts the queue's messages (visible and in flight) and its dead
// letters.
func (d *Dir) Depth(ctx context.Context) (queued, dead int, err error) {
	q, err := d.ids("messages", d.cfg.MaxMessages)
	if err != nil {
		return 0, 0, err
	}
	dl, err := d.ids("dead", d.cfg.MaxMessages)
	if err != nil {
		return 0, 0, err
	}
	return len(q), len(dl), nil
}
