package control

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/veredicto/veredicto/internal/fsync"
	"github.com/veredicto/veredicto/internal/quarantine"
)

// The journal is the executions' write-ahead log: every write of an
// execution's files (meta.json, history.jsonl, a map run's maprun.json)
// is a record appended to DIR/journal/<seq>.wal by one committer
// goroutine, which gathers the records that arrive while it syncs the
// previous batch and makes each batch durable with one write and one
// fdatasync (group commit). Only then are the batch's records written to
// the files they name, without a sync of their own, and their writers
// told: a write is acknowledged once it is on disk in the journal, and a
// reader that sees a file sees only journaled writes. A history line
// goes at the offset its recorder gave it; a metadata file is written
// over in place (readers go through read, which never sees half of it).
//
// Why: a start used to write its metadata by atomic rename with two
// fsyncs, each history event was fsynced alone and the end renamed new
// metadata in: sixteen fsyncs and four file creations per execution of a
// five-state Pass chain. One fdatasync now serves every write of a batch
// (tens of executions' at 1 000/s), and an execution's two files are
// created once: on a file system without a journal, as here, creating
// an inode near many freed ones costs more than the write.
//
// After a crash, Open writes every record of the journal again (each
// names its file and, for a history line, its offset, so writing it twice
// changes nothing), syncs the file system and deletes the journal: the
// files are then as the last synced batch left them. A record cut short
// by the crash, which no writer was told of, is dropped; a record that
// does not check out (its CRC) ends its segment, and what follows it is
// kept in the quarantine.
//
// The journal is kept bounded by checkpoints: when a segment passes
// segmentBytes or checkpointEvery, the committer starts the next segment
// and a checkpointer syncs the file system (syncfs on Linux: one call
// for every file the segment's records wrote) and deletes the old
// segment. Close drains the queue and checkpoints, leaving no journal.
// A journaled record its file refused (no inode left, no descriptor)
// holds the checkpoints back, its writer told it failed as after a
// timeout; once a checkpoint interval has passed, the committer writes
// every kept record again, as a restart would, and checkpoints resume
// when the files take them: the journal stays bounded once the fault
// clears, without a restart.
//
// Record framing, little-endian: crc32c (4 bytes, of what follows it),
// length (4) of the body, body: kind (1), path length (2), the path
// relative to the manager's folder, for a write its offset (8), then the
// bytes.

const (
	// segmentBytes and checkpointEvery bound a segment: what a restart
	// after a crash replays.
	segmentBytes    = 16 << 20 // some 4 000 executions of a Pass chain: a replay of a second or two
	checkpointEvery = time.Minute
	// maxRecordBytes bounds one record read back: a meta.json holds a
	// definition (1 MiB) and an input (256 KiB), both JSON-escaped.
	maxRecordBytes = 16 << 20
)

type recordKind byte

const (
	kindWrite   recordKind = 1 // bytes at an offset of a file (a history line)
	kindReplace recordKind = 2 // a whole file's new content (meta.json, maprun.json)
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// record is one write: queued, then journaled and applied (or failed).
type record struct {
	kind    recordKind
	path    string // absolute
	off     int64  // kindWrite: where data goes
	data    []byte
	owner   *journalOwner // the history the record extends (nil: none)
	refused error         // refused before the journal (Config.disk: tests)

	done chan struct{} // its batch's: closed once err is set
	err  error
}

// wait blocks until the record is durable and applied, or failed.
func (r *record) wait() error {
	<-r.done
	return r.err
}

// journalOwner is the state of one history's records: once one fails,
// every later one fails with it, so the history stays a whole prefix of
// what was written. Only the committer writes it; a writer reads or
// resets it after its own last record's batch (the batch's done channel
// orders them).
type journalOwner struct {
	failed error
	// sticky: the failure happened after the record was journaled (the
	// file could not take it): a restart replays it; until then nothing
	// more may be written after it.
	sticky bool
}

func (o *journalOwner) fail(err error, sticky bool) {
	if o != nil && o.failed == nil {
		o.failed, o.sticky = err, sticky
	}
}

// errJournalClosed refuses writes once the manager closed.
var errJournalClosed = errors.New("the server is shutting down")

type journal struct {
	dir   string // DIR/journal
	root  string // the manager's folder: records name files relative to it
	log   *slog.Logger
	every time.Duration // checkpointEvery, but in tests

	locks fileLocks // see replaceFile

	mu      sync.Mutex
	cond    *sync.Cond
	queue   []*record
	next    chan struct{} // done channel of the batch being gathered
	closing bool
	exited  chan struct{}

	// the committer's
	f        *os.File // current segment
	seq      uint64
	size     int64
	opened   time.Time
	buf      []byte
	spare    []*record
	ckpt     chan struct{} // closed when the running checkpoint ends (nil: none ran)
	noCkpt   bool          // a journaled record could not be applied: keep every segment until a replay applies them
	replayed time.Time     // when the committer last replayed the kept segments (noCkpt)
	lastSync time.Duration // how long the last fdatasync took (for the log)
}

// openJournal replays what a crash left in dir/journal, then starts the
// committer on a new segment.
func openJournal(root string, box *quarantine.Box, log *slog.Logger) (*journal, error) {
	return openJournalEvery(root, box, log, checkpointEvery)
}

// openJournalEvery is openJournal checkpointing every interval (tests).
func openJournalEvery(root string, box *quarantine.Box, log *slog.Logger, every time.Duration) (*journal, error) {
	j := &journal{dir: filepath.Join(root, "journal"), root: root, log: log, every: every, next: make(chan struct{}), exited: make(chan struct{})}
	j.cond = sync.NewCond(&j.mu)
	if err := os.MkdirAll(j.dir, 0o755); err != nil {
		return nil, fmt.Errorf("control: journal: %w", err)
	}
	// The journal's folder is itself durable before its first record is
	// acknowledged (a new folder's entry is not, until its parent syncs).
	if err := syncDir(root); err != nil {
		return nil, fmt.Errorf("control: journal: %w", err)
	}
	last, err := j.recover(box)
	if err != nil {
		return nil, fmt.Errorf("control: replay the journal: %w", err)
	}
	j.seq = last
	if err := j.startSegment(); err != nil {
		return nil, fmt.Errorf("control: journal: %w", err)
	}
	go j.run()
	return j, nil
}

// segments lists the journal's segments, oldest first, with their
// sequence numbers.
func segments(dir string) ([]string, []uint64, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var names []string
	var seqs []uint64
	for _, e := range entries {
		base, ok := strings.CutSuffix(e.Name(), ".wal")
		if !ok || e.IsDir() {
			continue
		}
		seq, err := strconv.ParseUint(base, 16, 64)
		if err != nil {
			continue
		}
		names, seqs = append(names, filepath.Join(dir, e.Name())), append(seqs, seq)
	}
	return names, seqs, nil // ReadDir sorts by name: fixed-width hex sorts by number
}

func segmentName(dir string, seq uint64) string {
	return filepath.Join(dir, fmt.Sprintf("%016x.wal", seq))
}

// recover writes every record of the segments a crash left, syncs the
// file system and deletes them; it returns the last sequence number used.
func (j *journal) recover(box *quarantine.Box) (uint64, error) {
	names, seqs, err := segments(j.dir)
	if err != nil || len(names) == 0 {
		return 0, err
	}
	n, err := j.replay(names, box)
	if err != nil {
		return 0, err
	}
	if err := fsync.FileSystem(j.root); err != nil {
		return 0, err
	}
	for _, name := range names {
		if err := os.Remove(name); err != nil {
			return 0, err
		}
	}
	if err := syncDir(j.dir); err != nil {
		return 0, err
	}
	j.log.Info("replayed the executions' journal after an unclean stop", "records", n, "segments", len(names))
	return seqs[len(seqs)-1], nil
}

// replay writes every record of the segments names, in order, to the
// files they name; it returns how many there were.
func (j *journal) replay(names []string, box *quarantine.Box) (int, error) {
	a := j.newApplier()
	n := 0
	// A file written whole (metadata) only needs its last content: most
	// executions in the journal were written twice, started and ended.
	last := map[string][]byte{}
	for i, name := range names {
		err := readSegment(name, box, i == len(names)-1, func(r *record) error {
			r.path = filepath.Join(j.root, r.path)
			n++
			if r.kind == kindReplace {
				last[r.path] = r.data
				return nil
			}
			return a.apply(r)
		})
		if err != nil {
			a.close()
			return n, err
		}
	}
	for path, data := range last {
		if err := a.apply(&record{kind: kindReplace, path: path, data: data}); err != nil {
			a.close()
			return n, err
		}
	}
	return n, a.close()
}

// readSegment calls fn with each whole record of a segment, in order. A
// record cut short ends the segment: in the newest one (last) that is
// what a crash leaves, the write of a batch no writer was told of, and it
// is dropped; in an older one, which was synced whole before the next
// began, it is damage (or a batch whose write failed, never
// acknowledged) and is kept in the quarantine with what follows it, as
// is a record that does not check out (unless what follows is only
// zeros).
func readSegment(name string, box *quarantine.Box, last bool, fn func(*record) error) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	var at int64
	var head [8]byte
	for {
		bad, torn := "", false
		var body []byte
		if _, err := io.ReadFull(br, head[:]); err == io.EOF {
			return nil // nothing after the last record: the end
		} else if err != nil {
			torn = true
		} else if n := binary.LittleEndian.Uint32(head[4:]); n > maxRecordBytes {
			bad = fmt.Sprintf("a record claims %d bytes", n)
		} else {
			body = make([]byte, n)
			if _, err := io.ReadFull(br, body); err != nil {
				torn = true
			} else if crc := crc32.Update(crc32.Checksum(head[4:], castagnoli), castagnoli, body); crc != binary.LittleEndian.Uint32(head[:4]) {
				bad = "a record's checksum does not match"
			}
		}
		if torn && last {
			return nil // the crash cut the last write short: no writer was told of it
		}
		if torn {
			bad = "a record is cut short in a segment a later one follows (synced whole before it: damage, or a batch whose write failed and was never acknowledged)"
		}
		if bad == "" {
			r, err := decodeRecord(body)
			if err != nil {
				bad = err.Error()
			} else if err := fn(r); err != nil {
				return err
			}
		}
		if bad != "" {
			return keepTail(box, f, name, at, bad)
		}
		at += int64(len(head) + len(body))
	}
}

// keepTail keeps what follows byte at of a segment in the quarantine,
// unless it is only zeros (a tail the crash left unwritten).
func keepTail(box *quarantine.Box, f *os.File, name string, at int64, why string) error {
	rest, err := io.ReadAll(io.NewSectionReader(f, at, 1<<62))
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	if box == nil || len(strings.Trim(string(rest), "\x00")) == 0 {
		return nil
	}
	if _, err := box.Keep(name, rest, fmt.Sprintf("the journal's record at byte %d was not replayed: %s (a write cut short by a crash is never acknowledged); it and the %d bytes after it are kept here", at, why, len(rest))); err != nil {
		return err
	}
	return nil
}

func decodeRecord(body []byte) (*record, error) {
	if len(body) < 3 {
		return nil, errors.New("a record is too short")
	}
	r := &record{kind: recordKind(body[0])}
	n := int(binary.LittleEndian.Uint16(body[1:3]))
	body = body[3:]
	if len(body) < n {
		return nil, errors.New("a record's path is cut short")
	}
	r.path, body = string(body[:n]), body[n:]
	if !filepath.IsLocal(r.path) {
		return nil, fmt.Errorf("a record names a path outside the folder: %q", r.path)
	}
	switch r.kind {
	case kindWrite:
		if len(body) < 8 {
			return nil, errors.New("a write's offset is cut short")
		}
		r.off, body = int64(binary.LittleEndian.Uint64(body[:8])), body[8:]
	case kindReplace:
	default:
		return nil, fmt.Errorf("a record of unknown kind %d", r.kind)
	}
	r.data = body
	return r, nil
}

// appendRecord frames r onto buf.
func (j *journal) appendRecord(buf []byte, r *record) []byte {
	rel, err := filepath.Rel(j.root, r.path)
	if err != nil {
		rel = r.path // never: every path is under the folder
	}
	start := len(buf)
	buf = append(buf, 0, 0, 0, 0, 0, 0, 0, 0, byte(r.kind))
	buf = binary.LittleEndian.AppendUint16(buf, uint16(len(rel)))
	buf = append(buf, rel...)
	if r.kind == kindWrite {
		buf = binary.LittleEndian.AppendUint64(buf, uint64(r.off))
	}
	buf = append(buf, r.data...)
	binary.LittleEndian.PutUint32(buf[start+4:], uint32(len(buf)-start-8))
	binary.LittleEndian.PutUint32(buf[start:], crc32.Checksum(buf[start+4:], castagnoli))
	return buf
}

// add queues records; their done channels close with their batch.
func (j *journal) add(recs ...*record) {
	j.mu.Lock()
	for _, r := range recs {
		r.done = j.next
		if j.closing {
			r.err = errJournalClosed
			r.done = closedChan
			continue
		}
		j.queue = append(j.queue, r)
	}
	j.cond.Signal()
	j.mu.Unlock()
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// write journals one record and waits for it.
func (j *journal) write(r *record) error {
	j.add(r)
	return r.wait()
}

// run is the committer.
func (j *journal) run() {
	defer close(j.exited)
	for {
		j.mu.Lock()
		for len(j.queue) == 0 && !j.closing {
			j.cond.Wait()
		}
		batch, done, closing := j.queue, j.next, j.closing
		j.queue, j.next = j.spare[:0], make(chan struct{})
		j.mu.Unlock()
		if len(batch) > 0 {
			j.commit(batch)
			close(done)
			clear(batch)
			j.spare = batch
		}
		if closing && len(batch) == 0 {
			j.finalCheckpoint()
			return
		}
		if j.size >= segmentBytes || j.size > 0 && time.Since(j.opened) >= j.every {
			j.checkpoint()
		}
	}
}

// commit journals a batch with one write and one fdatasync, then applies
// it to the files.
func (j *journal) commit(batch []*record) {
	buf := j.buf[:0]
	journaled := batch[:0:0]
	for _, r := range batch {
		switch {
		case r.owner != nil && r.owner.failed != nil:
			r.err = r.owner.failed
		case r.refused != nil:
			r.err = r.refused
			r.owner.fail(r.err, false)
		default:
			buf = j.appendRecord(buf, r)
			journaled = append(journaled, r)
		}
	}
	j.buf = buf[:0]
	if len(buf) > 2*segmentBytes {
		j.buf = nil // one huge batch: do not keep its buffer
	}
	if len(journaled) == 0 {
		return
	}
	t0 := time.Now()
	_, err := j.f.WriteAt(buf, j.size)
	if err == nil {
		err = fsync.Data(j.f)
	}
	j.lastSync = time.Since(t0)
	if err != nil {
		err = fmt.Errorf("journal %s: %w", j.f.Name(), err)
		if terr := j.f.Truncate(j.size); terr != nil {
			// what was written may be replayed after a restart: its
			// writers were told it failed, as after a timeout. The next
			// batch goes to a new segment, never over these bytes (a
			// shorter batch would leave whole records of this one after
			// it).
			j.log.Error("could not cut a failed batch off the journal; the next batch starts a new segment", "segment", j.f.Name(), "error", terr)
			old := j.f
			if serr := j.startSegment(); serr != nil {
				j.log.Error("could not start a new journal segment after a failed batch", "error", serr)
			} else {
				old.Close()
			}
		}
		for _, r := range journaled {
			r.err = err
			r.owner.fail(err, false)
		}
		return
	}
	j.size += int64(len(buf))
	a := j.newApplier()
	for _, r := range journaled {
		if r.owner != nil && r.owner.sticky {
			r.err = r.owner.failed // its file could not take an earlier record
			j.noCkpt = true        // journaled, not applied: kept for a replay
			continue
		}
		if err := a.apply(r); err != nil {
			r.err = err
			r.owner.fail(err, true)
			j.noCkpt = true
			j.log.Error("a journaled write could not be applied; the journal is kept for the next start, which applies it", "path", r.path, "error", err)
		}
	}
	if err := a.close(); err != nil {
		j.noCkpt = true
		j.log.Error("a file written from the journal could not be closed; the journal is kept for the next start", "error", err)
	}
}

// startSegment opens the next segment, its name durable in the folder;
// on failure the journal goes on with the current one (seq unchanged).
func (j *journal) startSegment() error {
	seq := j.seq + 1
	f, err := os.OpenFile(segmentName(j.dir, seq), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if err := syncDir(j.dir); err != nil {
		f.Close()
		return err
	}
	j.f, j.seq, j.size, j.opened = f, seq, 0, time.Now()
	return nil
}

// checkpoint starts the next segment and, apart, makes the files the
// previous ones wrote durable and deletes those segments. One runs at a
// time; while it does, the current segment grows on.
func (j *journal) checkpoint() {
	if j.noCkpt && !j.applyKept() {
		return
	}
	if j.ckpt != nil {
		select {
		case <-j.ckpt:
		default:
			return
		}
	}
	old, upTo := j.f, j.seq
	if err := j.startSegment(); err != nil {
		j.log.Error("could not start a new journal segment; the current one grows on", "error", err)
		return
	}
	done := make(chan struct{})
	j.ckpt = done
	go func() {
		defer close(done)
		old.Close()
		if err := j.trim(upTo); err != nil {
			j.log.Error("journal checkpoint failed; its segments stay and are replayed at the next start", "error", err)
		}
	}()
}

// applyKept, once a checkpoint interval after the last try, writes every
// record of the kept segments again, in order, as the next start would
// (the current segment included: the committer is not writing it now),
// so that a write the files once refused does not keep every segment
// until a restart. True when all of them went to their files: the
// checkpoints resume.
func (j *journal) applyKept() bool {
	if time.Since(j.replayed) < j.every {
		return false
	}
	j.replayed = time.Now()
	names, _, err := segments(j.dir)
	if err == nil {
		_, err = j.replay(names, nil) // damage is named at the next start's replay
	}
	if err != nil {
		j.log.Error("the journaled writes the files refused still cannot be applied; the journal is kept for the next start", "error", err)
		return false
	}
	j.noCkpt = false
	j.log.Info("the journaled writes the files had refused are applied; the journal is checkpointed again", "segments", len(names))
	return true
}

// trim syncs the file system, then deletes the segments up to seq.
func (j *journal) trim(upTo uint64) error {
	if err := fsync.FileSystem(j.root); err != nil {
		return err
	}
	names, seqs, err := segments(j.dir)
	if err != nil {
		return err
	}
	for i, name := range names {
		if seqs[i] <= upTo {
			if err := os.Remove(name); err != nil {
				return err
			}
		}
	}
	return syncDir(j.dir)
}

// finalCheckpoint, at Close, leaves no journal behind (unless a record
// could not be applied: then the next start replays it).
func (j *journal) finalCheckpoint() {
	if j.ckpt != nil {
		<-j.ckpt
	}
	j.f.Close()
	if j.noCkpt {
		return
	}
	if err := j.trim(j.seq); err != nil {
		j.log.Error("journal checkpoint at close failed; its segments are replayed at the next start", "error", err)
	}
}

// close drains the queue, checkpoints and stops the committer.
func (j *journal) close() {
	j.mu.Lock()
	j.closing = true
	j.cond.Signal()
	j.mu.Unlock()
	<-j.exited
}

// applier writes records to their files, keeping each history open for
// the rest of its batch (at most maxOpen at a time).
type applier struct {
	j    *journal
	open map[string]*os.File
}

const maxOpen = 64

func (j *journal) newApplier() *applier { return &applier{j: j, open: map[string]*os.File{}} }

func (a *applier) apply(r *record) error {
	switch r.kind {
	case kindWrite:
		f, ok := a.open[r.path]
		if !ok {
			if len(a.open) >= maxOpen {
				if err := a.close(); err != nil {
					return err
				}
			}
			var err error
			if f, err = openCreate(r.path); err != nil {
				return err
			}
			a.open[r.path] = f
		}
		if _, err := f.WriteAt(r.data, r.off); err != nil {
			return fmt.Errorf("write %s: %w", r.path, err)
		}
		return nil
	case kindReplace:
		if f, ok := a.open[r.path]; ok {
			delete(a.open, r.path)
			f.Close()
		}
		return a.j.replaceFile(r.path, r.data)
	}
	return fmt.Errorf("a record of unknown kind %d", r.kind)
}

func (a *applier) close() error {
	var errs []error
	for _, f := range a.open {
		errs = append(errs, f.Close())
	}
	clear(a.open)
	return errors.Join(errs...)
}

// openCreate opens a file for writing, creating it and, when missing,
// its folder (an execution's, at its start) or folders.
func openCreate(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if errors.Is(err, fs.ErrNotExist) {
		dir := filepath.Dir(path)
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, err
			}
		}
		f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	}
	return f, err
}

// replaceFile writes data over the file at path, in place: a rename from
// a temporary file would allocate an inode and free one per write, which
// costs ext4 more than the write. Not synced: the journal holds the write
// until a checkpoint syncs it, and writes it again after a crash. Readers
// go through read, which keeps them from seeing half of it.
func (j *journal) replaceFile(path string, data []byte) error {
	unlock := j.locks.lock(path)
	defer unlock()
	f, err := openCreate(path)
	if err != nil {
		return err
	}
	_, err = f.WriteAt(data, 0)
	if err == nil {
		err = f.Truncate(int64(len(data)))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// read decodes the JSON file at path, which the journal may be writing
// over (a meta.json): never half-written.
func (j *journal) read(path string, v any) error {
	unlock := j.locks.rlock(path)
	defer unlock()
	return readJSON(path, v)
}

// fileLocks keep the readers of a file the journal writes over in place
// from seeing half of it: striped by path, so a lock costs no map.
type fileLocks [64]sync.RWMutex

func (l *fileLocks) of(path string) *sync.RWMutex {
	h := crc32.ChecksumIEEE([]byte(path))
	return &l[h%uint32(len(l))]
}

func (l *fileLocks) lock(path string) func() {
	mu := l.of(path)
	mu.Lock()
	return mu.Unlock
}

func (l *fileLocks) rlock(path string) func() {
	mu := l.of(path)
	mu.RLock()
	return mu.RUnlock
}

// journaledPaths lists, reading only, the files the journal under a
// manager's folder would write again at the next start ("veredicto
// doctor": what is missing or damaged there now is not damage yet).
func journaledPaths(root string) (map[string]bool, error) {
	names, _, err := segments(filepath.Join(root, "journal"))
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, name := range names {
		if err := readSegment(name, nil, false, func(r *record) error {
			out[filepath.Join(root, r.path)] = true
			return nil
		}); err != nil {
			return nil, err
		}
	}
	return out, nil
}
