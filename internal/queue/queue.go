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
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/quarantine"
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
	// Quarantine receives the files of the queue's folders that are not
	// messages it can read (nil: DATA/quarantine/<name> for a queue
	// folder DATA/<name>; a queue deeper in its data folder sets it).
	Quarantine *quarantine.Box
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
	// Damage, on a dead letter, says it stands for a file of the queue's
	// folders that was no message the queue could read (a foreign file,
	// bytes that do not decode): why, and where its bytes are now. It has
	// no body and is never redriven.
	Damage *Damage `json:"damage,omitempty"`
	// LastError is why the last receive did not process the message (as
	// the handler said, never document text): a dead letter carries the
	// reason it died.
	LastError string `json:"last_error,omitempty"`
}

// Damage is why a file of the queue became a dead letter of its own.
type Damage struct {
	// File is its name in the queue's folder ("messages/x.json").
	File   string `json:"file"`
	Reason string `json:"reason"`
	// Quarantined is where its bytes are ("" if they could not be moved).
	Quarantined string `json:"quarantined,omitempty"`
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
	if cfg.Quarantine == nil {
		cfg.Quarantine = quarantine.Beside(root, nil)
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

// damagedFile is a file of a box that is no message the queue can read.
type damagedFile struct{ reason string }

func (e *damagedFile) Error() string { return e.reason }

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
		return Message{}, &damagedFile{"not a queue message: " + quarantine.Reason(err)}
	}
	if m.ID != id {
		return Message{}, &damagedFile{"it holds another message than its name says"}
	}
	return m, nil
}

// foreignFile is the reason a file whose name is no message id is buried.
const foreignFile = "a file the queue did not write (its name is no message id)"

// idPattern is the shape of the ids newID makes.
var idPattern = regexp.MustCompile(`^[0-9]{19}-[0-9]{6}-[0-9a-f]{8}$`)

// ids lists the message ids of box in order, at most limit of them, and
// the names of the box's entries that are no message files (foreign).
func (d *Dir) ids(box string, limit int) (ids, foreign []string, err error) {
	f, err := os.Open(filepath.Join(d.root, box))
	if err != nil {
		return nil, nil, fmt.Errorf("list %s: %w", box, err)
	}
	defer f.Close()
	names, err := f.Readdirnames(limit)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, nil, fmt.Errorf("list %s: %w", box, err)
	}
	ids = make([]string, 0, len(names))
	for _, n := range names {
		if id, ok := strings.CutSuffix(n, ".json"); ok && idPattern.MatchString(id) {
			ids = append(ids, id)
		} else {
			foreign = append(foreign, n)
		}
	}
	sort.Strings(ids)
	sort.Strings(foreign)
	return ids, foreign, nil
}

// bury turns the file name of box, no message the queue can read, into a
// dead letter of its own naming the reason: its bytes go to the
// quarantine and the dead letter (with the file's id when its name is
// one) into dead/. If the file cannot be moved it stays, and so does the
// error: nothing is lost.
func (d *Dir) bury(box, name, reason string) (Message, error) {
	now := d.now().UTC()
	id, ok := strings.CutSuffix(name, ".json")
	if !ok || !idPattern.MatchString(id) {
		id = d.newID()
	}
	delete(d.cache, id)
	m := Message{ID: id, SentAt: now, VisibleAt: now, DeadAt: now, Damage: &Damage{File: box + "/" + name, Reason: reason}}
	_, err := d.cfg.Quarantine.Replace(filepath.Join(d.root, box, name), reason, func(it quarantine.Item) error {
		m.Damage.Quarantined = it.Quarantined
		return d.write("dead", m)
	})
	if err != nil {
		return Message{}, fmt.Errorf("move %s/%s to the dead-letter queue: %w", box, name, err)
	}
	return m, nil
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
		ids, _, err := d.ids(box, d.cfg.MaxMessages+1)
		if err != nil {
			return 0, err
		}
		n += len(ids)
	}
	return n, nil
}

// Receive returns up to max visible messages (at most MaxBatch), each
// hidden for the visibility timeout. A message already received
// MaxReceiveCount times moves to the dead-letter queue instead, and so
// does, as a dead letter naming the reason (Message.Damage), a file that
// is no message the queue can read.
func (d *Dir) Receive(ctx context.Context, max int) ([]Received, error) {
	if max <= 0 || max > MaxBatch {
		max = MaxBatch
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	ids, foreign, err := d.ids("messages", d.cfg.MaxMessages)
	if err != nil {
		return nil, err
	}
	// A file that cannot be buried (a full disk) stays where it is and
	// the quarantine logged why; the messages go on being received.
	for _, name := range foreign {
		_, _ = d.bury("messages", name, foreignFile)
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
			var df *damagedFile
			if errors.As(err, &df) {
				_, _ = d.bury("messages", id+".json", df.reason)
				continue
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

// received reads, with d.mu held, the message a receipt handle names;
// current is false when the handle is stale (the message was received
// again since) or the message is gone: deleted, dead, or a damaged file,
// which is buried on the way.
func (d *Dir) received(receiptHandle string) (m Message, current bool, err error) {
	id, count, ok := strings.Cut(receiptHandle, ".")
	if !ok {
		return Message{}, false, &veredicto.InvalidInputError{Field: "receipt handle", Problem: fmt.Sprintf("%q is not one this queue handed out", receiptHandle)}
	}
	m, ok = d.cache[id]
	if !ok {
		m, err = d.read("messages", id)
		var df *damagedFile
		switch {
		case errors.As(err, new(*veredicto.NotFoundError)):
			return m, false, nil // already deleted
		case errors.As(err, &df): // nothing to act on: it is a dead letter now
			_, err = d.bury("messages", id+".json", df.reason)
			return m, false, err
		case err != nil:
			return m, false, err
		}
	}
	return m, strconv.Itoa(m.ReceiveCount) == count, nil
}

// Delete removes the message a receipt handle names. A stale handle (the
// message was received again since) deletes nothing, as the newer
// receiver owns the message now.
func (d *Dir) Delete(ctx context.Context, receiptHandle string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	m, current, err := d.received(receiptHandle)
	if err != nil || !current {
		return err
	}
	delete(d.cache, m.ID)
	if err := os.Remove(d.path("messages", m.ID)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("delete message %s: %w", m.ID, err)
	}
	return nil
}

// Note records why the receive a handle names did not process its
// message (Message.LastError). A stale handle notes nothing.
func (d *Dir) Note(ctx context.Context, receiptHandle, reason string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	m, current, err := d.received(receiptHandle)
	if err != nil || !current {
		return err
	}
	if len(reason) > MaxNote {
		reason = reason[:MaxNote] + "…"
	}
	m.LastError = reason
	if err := d.write("messages", m); err != nil {
		delete(d.cache, m.ID)
		return err
	}
	d.cache[m.ID] = m
	return nil
}

// MaxNote bounds a message's LastError, in bytes.
const MaxNote = 1000

// Dead lists the dead-letter queue, oldest first, at most limit messages.
// A file of dead/ that is no dead letter the queue can read is listed as
// the dead letter that replaces it (Message.Damage).
func (d *Dir) Dead(ctx context.Context, limit int) ([]Message, error) {
	if limit <= 0 || limit > d.cfg.MaxMessages {
		limit = d.cfg.MaxMessages
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	ids, foreign, err := d.ids("dead", limit)
	if err != nil {
		return nil, err
	}
	out := make([]Message, 0, len(ids)+len(foreign))
	for _, name := range foreign {
		m, err := d.bury("dead", name, foreignFile)
		if err != nil {
			return out, err
		}
		out = append(out, m)
	}
	for _, id := range ids {
		m, err := d.read("dead", id)
		if errors.As(err, new(*veredicto.NotFoundError)) {
			continue
		}
		var df *damagedFile
		if errors.As(err, &df) {
			m, err = d.bury("dead", id+".json", df.reason)
		}
		if err != nil {
			return out, err
		}
		out = append(out, m)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Redrive moves dead letters back to the queue with their receive count
// reset, as SQS's redrive does: the ids given, or every one when none is.
// It returns how many moved; an id not in the dead-letter queue is a
// NotFoundError. A dead letter that stands for a damaged file
// (Message.Damage) has nothing to deliver: redriving it by id is an
// InvalidInputError, and redriving all leaves it.
func (d *Dir) Redrive(ctx context.Context, ids ...string) (int, error) {
	all := len(ids) == 0
	if all {
		var err error
		if ids, _, err = d.ids("dead", d.cfg.MaxMessages); err != nil {
			return 0, err
		}
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
		if m.Damage != nil {
			if all {
				continue
			}
			return moved, &veredicto.InvalidInputError{Field: "dead letter " + id,
				Problem: "stands for a damaged file of the queue (" + m.Damage.Reason + "), moved to quarantine: it has no message to redrive"}
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
	q, qf, err := d.ids("messages", d.cfg.MaxMessages)
	if err != nil {
		return 0, 0, err
	}
	dl, df, err := d.ids("dead", d.cfg.MaxMessages)
	if err != nil {
		return 0, 0, err
	}
	return len(q) + len(qf), len(dl) + len(df), nil
}

// Damaged lists the files of the queue under root that are no message it
// can read, where they are, reading only ("veredicto doctor"); box is the
// quarantine the queue's files go to.
func Damaged(root string, box *quarantine.Box) ([]quarantine.Item, error) {
	d := &Dir{root: root, cfg: Config{MaxMessages: DefaultMaxMessages}}
	out := []quarantine.Item{}
	for _, b := range []string{"messages", "dead"} {
		ids, foreign, err := d.ids(b, -1)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return out, err
		}
		for _, name := range foreign {
			out = append(out, box.Found(filepath.Join(root, b, name), foreignFile))
		}
		for _, id := range ids {
			var df *damagedFile
			if _, err := d.read(b, id); errors.As(err, &df) {
				out = append(out, box.Found(d.path(b, id), df.reason))
			}
		}
	}
	return out, nil
}
