// Package file is the event log on this machine (an adapter of
// eventlog.Log): one fsynced JSON-lines file per stream under a folder,
// which several processes may append to, with live readers told of this
// process's appends (Watch).
package file

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/eventlog"
	"github.com/veredicto/veredicto/internal/fsync"
	"github.com/veredicto/veredicto/internal/quarantine"
)

// Log keeps one JSON-lines file per stream under dir/<tenant>/<stream>
// (both base64url-encoded). Append holds an exclusive flock while it reads
// the last id and writes, and fsyncs before returning, so several
// processes (serve, a "veredicto confirm" in another shell) can append to
// one stream. Live readers are served from a bounded in-memory tail that
// is refreshed whenever the file's size changes. Safe for concurrent use.
//
// A line that no longer decodes and hides events (the next readable line
// skips their ids) is read as eventlog.Damaged for each id it hides, so
// readers go on past it; its bytes are copied to Quarantine and the line
// is blanked in place (same length: offsets and sizes do not change).
type Log struct {
	dir string
	now func() time.Time
	// Quarantine receives damaged lines: DATA/quarantine/events for a log
	// under DATA/events, unless set otherwise before first use.
	Quarantine *quarantine.Box

	mu      sync.Mutex
	tails   map[string]*tail               // by path; at most maxTails
	watches map[string]map[*watch]struct{} // by path
	// appending serializes the appends of this process to one stream
	// (striped by path, so bounded): the flock does across processes, but
	// the race detector and the memory model do not see its ordering of
	// the shared tail.
	appending [64]sync.Mutex
}

type tail struct {
	size   int64            // file size the tail reflects
	count  int64            // events in the file
	events []eventlog.Event // the last tailCap to 2×tailCap events

	endsWithNewline bool
}

type watch struct{ ch chan struct{} }

const (
	tailCap  = 512
	maxTails = 1024
)

var _ eventlog.Log = (*Log)(nil)

// New returns a log under dir (created on first append).
func New(dir string) *Log {
	return &Log{dir: dir, now: time.Now, Quarantine: quarantine.Beside(dir, nil), tails: map[string]*tail{}, watches: map[string]map[*watch]struct{}{}}
}

func (f *Log) path(tenant, stream string) string {
	return filepath.Join(f.dir, fileName(tenant), fileName(stream)+".jsonl")
}

// fileName encodes a tenant or stream as one path segment: base64url, or a
// SHA-256 when that would be too long for a file name (an execution ARN
// can reach 250 characters; file names stop at 255 bytes).
func fileName(s string) string {
	if enc := base64.RawURLEncoding.EncodeToString([]byte(s)); len(enc) <= 200 {
		return enc
	}
	sum := sha256.Sum256([]byte(s))
	return "sha256-" + hex.EncodeToString(sum[:])
}

// Append adds ev to the stream and returns it with its id. An event with a
// Key already among the last eventlog.DedupeWindow events is returned as stored,
// not appended again.
func (f *Log) Append(ctx context.Context, tenant, stream string, ev eventlog.Event) (eventlog.Event, error) {
	out, err := f.append(tenant, stream, []eventlog.Event{ev}, true)
	if err != nil {
		return eventlog.Event{}, err
	}
	return out[0], nil
}

// AppendAll adds evs to one stream, in order, as Append would add each
// (an event whose Key is among the last eventlog.DedupeWindow, those just
// added included, is returned as stored), under one lock and with one
// write, but without syncing: Sync makes them durable. It is for a
// writer that batches (stream.Spool).
func (f *Log) AppendAll(_ context.Context, tenant, stream string, evs []eventlog.Event) ([]eventlog.Event, error) {
	return f.append(tenant, stream, evs, false)
}

// Sync makes every append so far durable, whatever its stream, with one
// call for the file system (fsync.FileSystem).
func (f *Log) Sync() error {
	if err := os.MkdirAll(f.dir, 0o700); err != nil {
		return err
	}
	return fsync.FileSystem(f.dir)
}

func (f *Log) append(tenant, stream string, evs []eventlog.Event, sync bool) ([]eventlog.Event, error) {
	for _, ev := range evs {
		if err := eventlog.Validate(tenant, stream, ev); err != nil {
			return nil, err
		}
	}
	p := f.path(tenant, stream)
	h := fnv.New32a()
	h.Write([]byte(p))
	lock := &f.appending[h.Sum32()%uint32(len(f.appending))]
	lock.Lock()
	defer lock.Unlock()
	var damaged []span
	defer func() { f.moveAside(p, damaged) }() // once the flock below is released
	fh, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return nil, fmt.Errorf("append %s/%s: %w", tenant, stream, err)
		}
		fh, err = os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	}
	if err != nil {
		return nil, fmt.Errorf("append %s/%s: %w", tenant, stream, err)
	}
	defer fh.Close()
	if err := syscall.Flock(int(fh.Fd()), syscall.LOCK_EX); err != nil {
		return nil, fmt.Errorf("lock %s/%s: %w", tenant, stream, err)
	}
	defer syscall.Flock(int(fh.Fd()), syscall.LOCK_UN)

	t, damaged, err := f.tailOf(p, fh)
	if err != nil {
		return nil, fmt.Errorf("append %s/%s: %w", tenant, stream, err)
	}
	out := make([]eventlog.Event, len(evs))
	added := make([]eventlog.Event, 0, len(evs))
	size := 0
	for _, ev := range evs {
		size += len(ev.Data) + 160 // the fields around the data, usually
	}
	buf := bytes.NewBuffer(make([]byte, 0, size))
	enc := json.NewEncoder(buf) // each event as json.Marshal encodes it, and a newline
	if t.size > 0 && !t.endsWithNewline {
		// A crash tore the last line: end it, so it stays one bad line
		// that readers skip instead of corrupting this one.
		buf.WriteByte('\n')
	}
	for i, ev := range evs {
		if stored, ok := dedupe(t.events, added, ev.Key); ok {
			out[i] = stored
			continue
		}
		if t.count+int64(len(added)) >= eventlog.MaxEvents {
			return nil, &veredicto.ConflictError{What: "stream " + stream, Problem: fmt.Sprintf("holds %d events, the limit", eventlog.MaxEvents)}
		}
		ev.ID = t.count + int64(len(added)) + 1
		if ev.Time.IsZero() {
			ev.Time = f.now().UTC()
		}
		if err := enc.Encode(ev); err != nil {
			return nil, fmt.Errorf("encode event: %w", err)
		}
		added = append(added, ev)
		out[i] = ev
	}
	if len(added) == 0 {
		return out, nil
	}
	if _, err := fh.Write(buf.Bytes()); err != nil {
		return nil, fmt.Errorf("append %s/%s: %w", tenant, stream, err)
	}
	if sync {
		if err := fh.Sync(); err != nil {
			return nil, fmt.Errorf("sync %s/%s: %w", tenant, stream, err)
		}
	}
	f.mu.Lock()
	t.size += int64(buf.Len())
	t.count += int64(len(added))
	t.endsWithNewline = true
	t.events = append(t.events, added...)
	if len(t.events) > 2*tailCap { // trimmed now and then, not on every append
		t.events = append([]eventlog.Event(nil), t.events[len(t.events)-tailCap:]...)
	}
	f.store(p, t)
	for w := range f.watches[p] {
		select {
		case w.ch <- struct{}{}:
		default: // already signalled: the reader will catch up from the log
		}
	}
	f.mu.Unlock()
	return out, nil
}

// dedupe finds the event stored with key among the last
// eventlog.DedupeWindow of the tail and those just added after it.
func dedupe(tail, added []eventlog.Event, key string) (eventlog.Event, bool) {
	if key == "" {
		return eventlog.Event{}, false
	}
	for i := len(added) - 1; i >= 0 && len(added)-i <= eventlog.DedupeWindow; i-- {
		if added[i].Key == key {
			return added[i], true
		}
	}
	from := max(0, len(tail)-(eventlog.DedupeWindow-len(added)))
	for _, old := range tail[from:] {
		if old.Key == key {
			return old, true
		}
	}
	return eventlog.Event{}, false
}

// store caches t, evicting an arbitrary entry beyond maxTails. Caller holds mu.
func (f *Log) store(p string, t *tail) {
	if _, ok := f.tails[p]; !ok && len(f.tails) >= maxTails {
		for k := range f.tails {
			delete(f.tails, k)
			break
		}
	}
	f.tails[p] = t
}

// tailOf returns the cached tail of p if it still matches the file's size,
// else rebuilds it by reading the file, and then also the damaged lines it
// met. The tail is shared, not copied: the caller holds a flock on p
// (exclusive to append, shared to read), so only an Append, which holds it
// exclusively, changes a tail, and it does so under mu, which fromTail
// reads under.
func (f *Log) tailOf(p string, fh *os.File) (*tail, []span, error) {
	info, err := fh.Stat()
	if err != nil {
		return nil, nil, err
	}
	f.mu.Lock()
	t, ok := f.tails[p]
	f.mu.Unlock()
	if ok && t.size == info.Size() {
		return t, nil, nil
	}
	nt := &tail{}
	if info.Size() == 0 { // a new stream: nothing to scan (nor a 64 KiB buffer to scan it with)
		f.mu.Lock()
		f.store(p, nt)
		f.mu.Unlock()
		return nt, nil, nil
	}
	damaged, err := scan(fh, func(ev eventlog.Event) bool {
		nt.count = ev.ID
		nt.events = append(nt.events, ev)
		if len(nt.events) > 2*tailCap {
			nt.events = append([]eventlog.Event(nil), nt.events[len(nt.events)-tailCap:]...)
		}
		return true
	})
	if err != nil {
		return nil, nil, err
	}
	if len(nt.events) > tailCap {
		nt.events = nt.events[len(nt.events)-tailCap:]
	}
	nt.size = info.Size()
	if nt.size > 0 {
		var last [1]byte
		if _, err := fh.ReadAt(last[:], nt.size-1); err != nil {
			return nil, nil, err
		}
		nt.endsWithNewline = last[0] == '\n'
	}
	f.mu.Lock()
	f.store(p, nt)
	f.mu.Unlock()
	return nt, damaged, nil
}

// span is a damaged line of a stream's file: its offset and length
// (newline included), and the ids of the events it hides.
type span struct {
	off, n      int64
	first, last int64
}

// scan calls fn with every event of r in order, until fn returns false:
// the well-formed ones, and eventlog.Damaged for each id that lines which
// do not decode hide (the next well-formed line skips them). It returns
// those lines. Lines that hide nothing are passed over: a write a crash
// tore (the next append took its id), a line repeating an id.
func scan(r io.ReaderAt, fn func(eventlog.Event) bool) ([]span, error) {
	sc := bufio.NewScanner(io.NewSectionReader(r, 0, 1<<62))
	sc.Buffer(make([]byte, 0, 64<<10), 2*eventlog.MaxEventBytes)
	var off, start, n int64 // the current line's offset and length
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		adv, tok, err := bufio.ScanLines(data, atEOF)
		if tok != nil {
			start, n = off, int64(adv)
		}
		off += int64(adv)
		return adv, tok, err
	})
	var damaged, bad []span // all so far; those since the last good line
	var want int64 = 1
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var ev eventlog.Event
		if json.Unmarshal(line, &ev) != nil || ev.ID <= 0 || ev.ID > eventlog.MaxEvents || ev.Type == "" {
			bad = append(bad, span{off: start, n: n})
			continue
		}
		if ev.ID < want {
			continue // an id already read
		}
		if ev.ID > want { // lines that do not decode, or are gone, hid these
			for i := range bad {
				bad[i].first, bad[i].last = want, ev.ID-1
			}
			damaged = append(damaged, bad...)
			for ; want < ev.ID; want++ {
				if !fn(eventlog.Damaged(want)) {
					return damaged, nil
				}
			}
		}
		bad = bad[:0]
		want++
		if !fn(ev) {
			return damaged, nil
		}
	}
	return damaged, sc.Err()
}

// moveAside copies each damaged line of p to the quarantine and blanks
// it, under the file's exclusive lock, so it is quarantined once however
// many readers met it. A line already blanked, or that now decodes, is
// left; a line the quarantine cannot take stays as it is.
func (f *Log) moveAside(p string, damaged []span) {
	if len(damaged) == 0 {
		return
	}
	fh, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return
	}
	defer fh.Close()
	if err := syscall.Flock(int(fh.Fd()), syscall.LOCK_EX); err != nil {
		return
	}
	defer syscall.Flock(int(fh.Fd()), syscall.LOCK_UN)
	blanked := false
	for _, d := range damaged {
		b := make([]byte, d.n)
		if _, err := fh.ReadAt(b, d.off); err != nil {
			continue
		}
		line := bytes.TrimSpace(b)
		var ev eventlog.Event
		if len(line) == 0 || json.Unmarshal(line, &ev) == nil && ev.ID > 0 && ev.Type != "" {
			continue
		}
		reason := fmt.Sprintf("the line at byte %d does not decode as an event; it hid events %d to %d", d.off, d.first, d.last)
		if _, err := f.Quarantine.Keep(p, b, reason); err != nil {
			continue
		}
		blank := bytes.Repeat([]byte{' '}, len(b))
		if b[len(b)-1] == '\n' {
			blank[len(blank)-1] = '\n'
		}
		if _, err := fh.WriteAt(blank, d.off); err == nil {
			blanked = true
		}
	}
	if blanked {
		_ = fh.Sync()
	}
}

// Read returns up to limit events with ids above after, in order. A live
// reader is served from the cached tail (one fstat, no lock, no copy of
// the tail); the file is read only when another process appended or the
// reader is far behind.
func (f *Log) Read(ctx context.Context, tenant, stream string, after int64, limit int) ([]eventlog.Event, error) {
	limit = eventlog.ClampLimit(limit)
	p := f.path(tenant, stream)
	var damaged []span
	defer func() { f.moveAside(p, damaged) }() // once the flock below is released
	fh, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s/%s: %w", tenant, stream, err)
	}
	defer fh.Close()
	info, err := fh.Stat()
	if err != nil {
		return nil, fmt.Errorf("read %s/%s: %w", tenant, stream, err)
	}
	if out, ok := f.fromTail(p, info.Size(), after, limit); ok {
		return out, nil
	}
	// A shared lock: never read a line another process is half-way writing.
	if err := syscall.Flock(int(fh.Fd()), syscall.LOCK_SH); err != nil {
		return nil, fmt.Errorf("lock %s/%s: %w", tenant, stream, err)
	}
	defer syscall.Flock(int(fh.Fd()), syscall.LOCK_UN)
	t, damaged, err := f.tailOf(p, fh)
	if err != nil {
		return nil, fmt.Errorf("read %s/%s: %w", tenant, stream, err)
	}
	if out, ok := f.fromTail(p, t.size, after, limit); ok {
		return out, nil
	}
	var out []eventlog.Event
	damaged, err = scan(fh, func(ev eventlog.Event) bool {
		if ev.ID > after {
			out = append(out, ev)
		}
		return len(out) < limit
	})
	if err != nil {
		return nil, fmt.Errorf("read %s/%s: %w", tenant, stream, err)
	}
	return out, nil
}

// fromTail answers a read from the cached tail of p when it reflects a
// file of size bytes and holds every event after after.
func (f *Log) fromTail(p string, size, after int64, limit int) ([]eventlog.Event, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.tails[p]
	if !ok || t.size != size {
		return nil, false
	}
	if after >= t.count {
		return nil, true
	}
	if len(t.events) == 0 || after < t.events[0].ID-1 {
		return nil, false
	}
	start := int(after - (t.events[0].ID - 1))
	end := min(len(t.events), start+limit)
	return append([]eventlog.Event(nil), t.events[start:end]...), true
}

// Watch returns a channel that receives a signal after events are appended
// to the stream by this process (appends by other processes are seen by
// polling Read). The channel holds one pending signal, so a slow reader
// never blocks Append. Call cancel when done.
func (f *Log) Watch(tenant, stream string) (<-chan struct{}, func()) {
	p := f.path(tenant, stream)
	w := &watch{ch: make(chan struct{}, 1)}
	f.mu.Lock()
	if f.watches[p] == nil {
		f.watches[p] = map[*watch]struct{}{}
	}
	f.watches[p][w] = struct{}{}
	f.mu.Unlock()
	return w.ch, func() {
		f.mu.Lock()
		delete(f.watches[p], w)
		if len(f.watches[p]) == 0 {
			delete(f.watches, p)
		}
		f.mu.Unlock()
	}
}

// Dir is the folder the log keeps its streams in.
func (f *Log) Dir() string { return f.dir }

// Local is the log "veredicto serve" and "veredicto confirm" share under a
// data folder: DATA/events, its damaged lines going to
// DATA/quarantine/events.
func Local(dataDir string) *Log { return New(filepath.Join(dataDir, "events")) }

// Damaged lists, reading only ("veredicto doctor"), the lines of the
// log's streams that do not decode and hide events; those already moved
// aside are quarantine.List's.
func (f *Log) Damaged() ([]quarantine.Item, error) {
	out := []quarantine.Item{}
	err := filepath.WalkDir(f.dir, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == f.dir {
			return filepath.SkipAll
		}
		if err != nil {
			return err
		}
		if d.IsDir() || filepath.Ext(p) != ".jsonl" {
			return nil
		}
		fh, err := os.Open(p)
		if err != nil {
			return err
		}
		defer fh.Close()
		damaged, err := scan(fh, func(eventlog.Event) bool { return true })
		if err != nil {
			return fmt.Errorf("read %s: %w", p, err)
		}
		for _, s := range damaged {
			out = append(out, f.Quarantine.Found(p, fmt.Sprintf("the line at byte %d does not decode as an event; it hides events %d to %d", s.off, s.first, s.last)))
		}
		return nil
	})
	return out, err
}
