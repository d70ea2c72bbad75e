package audit

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/veredicto/veredicto"
)

// Dir is a record in a folder: chains/<chain>.jsonl (one JSON line per
// entry, synced before Append returns) and texts/<sha256>. Writers in
// several processes take a lock file per chain.
type Dir struct {
	root  string
	known sync.Map // hashes of the texts this Dir has seen stored
	// syncLater: an append is written, not synced; Sync syncs it
	// (NewDirSyncedOnReport).
	syncLater bool

	mu       sync.Mutex
	counts   map[string]chainSize  // what this Dir last saw of each chain file
	dirty    map[string]bool       // chains written since their last sync (syncLater)
	inflight map[string]*chainSync // the sync of each chain under way
}

// chainSync is a chain's fsync under way: a Sync that finds the chain
// clean waits for it, and fails with it.
type chainSync struct {
	done chan struct{}
	err  error // set before done closes
}

// chainSize is a chain file's size and its number of lines: while the
// file keeps that size, its lines need not be counted again.
type chainSize struct{ bytes, lines int64 }

var (
	_ Store     = (*Dir)(nil)
	_ HeadStore = (*Dir)(nil)
	_ Syncer    = (*Dir)(nil)
)

// NewDir is the record kept in the folder root.
func NewDir(root string) *Dir { return &Dir{root: root} }

// NewDirSyncedOnReport is the record kept in the folder root, its appends
// written at once and synced (fsync) when Sync is called: for a workflow
// whose steps' results stay in the process until a step reports them
// (see Folders.SyncOnReport).
func NewDirSyncedOnReport(root string) *Dir { return &Dir{root: root, syncLater: true} }

// Sync makes the chains written since their last sync durable (fsync),
// those named, or every one when none is named. Without syncLater every
// append is synced already and Sync does nothing.
func (d *Dir) Sync(ctx context.Context, chains ...string) error {
	d.mu.Lock()
	if len(chains) == 0 {
		for c := range d.dirty {
			chains = append(chains, c)
		}
		for c := range d.inflight {
			chains = append(chains, c)
		}
	}
	var todo []string
	var mine []*chainSync
	var others []*chainSync // another Sync's fsync of a chain now clean
	for _, c := range chains {
		switch {
		case d.dirty[c]:
			// Cleared first: an append after the fsync started marks it
			// again.
			delete(d.dirty, c)
			cs := &chainSync{done: make(chan struct{})}
			if d.inflight == nil {
				d.inflight = map[string]*chainSync{}
			}
			d.inflight[c] = cs
			todo, mine = append(todo, c), append(mine, cs)
		case d.inflight[c] != nil:
			others = append(others, d.inflight[c])
		}
	}
	d.mu.Unlock()
	// Several at once (syncWorkers): a summary syncs every candidate's
	// chain, and a journaling file system commits concurrent fsyncs
	// together, where one after another each waits for its own commit.
	errs := make([]error, len(todo), len(todo)+len(others))
	sem := make(chan struct{}, syncWorkers)
	var wg sync.WaitGroup
	for i, c := range todo {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			cs := mine[i]
			if err := syncChain(d.chainPath(c)); err != nil {
				cs.err = fmt.Errorf("audit: sync chain %s: %w", c, err)
				errs[i] = cs.err
			}
			d.mu.Lock()
			if cs.err != nil {
				d.dirty[c] = true
			}
			if d.inflight[c] == cs {
				delete(d.inflight, c)
			}
			d.mu.Unlock()
			close(cs.done)
		})
	}
	wg.Wait()
	// A chain another Sync was making durable is durable when that
	// fsync ends, not before.
	for _, cs := range others {
		select {
		case <-cs.done:
			errs = append(errs, cs.err)
		case <-ctx.Done():
			errs = append(errs, ctx.Err())
		}
	}
	return errors.Join(errs...)
}

// syncWorkers bounds the chains Sync makes durable at once.
const syncWorkers = 16

// syncChain is syncFile; tests hold a sync under way with it.
var syncChain = syncFile

// syncFile makes the file at p durable: fsync through any descriptor
// flushes what every writer of the file wrote.
func syncFile(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// Root is the record's folder.
func (d *Dir) Root() string { return d.root }

func (d *Dir) chainPath(chain string) string {
	return filepath.Join(d.root, "chains", url.PathEscape(chain)+".jsonl")
}

// maxLine bounds one entry (a model's raw answer is at most a few hundred
// KiB).
const maxLine = 4 << 20

func (d *Dir) Append(ctx context.Context, chain string, seq int, line []byte) error {
	return d.AppendLines(ctx, chain, seq, [][]byte{line})
}

// AppendLines adds lines as entries seq, seq+1… of chain with one write
// and one sync (the sync left to Sync with NewDirSyncedOnReport): a step's
// entries, recorded together.
func (d *Dir) AppendLines(_ context.Context, chain string, seq int, lines [][]byte) error {
	total := 0
	for _, line := range lines {
		total += len(line) + 1
	}
	buf := make([]byte, 0, total)
	for _, line := range lines {
		if bytes.ContainsAny(line, "\n\r") {
			return fmt.Errorf("audit: an entry of %s spans lines", chain)
		}
		buf = append(append(buf, line...), '\n')
	}
	p := d.chainPath(chain)
	// The chains' folder is made by the first append that finds none.
	f, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o600)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return err
		}
		f, err = os.OpenFile(p, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o600)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	n, size, err := d.count(chain, p, f)
	if err != nil {
		return err
	}
	if n != int64(seq) {
		return &veredicto.ConflictError{What: "audit chain " + chain, Problem: fmt.Sprintf("entry %d is taken (the chain has %d)", seq, n)}
	}
	if _, err := f.Write(buf); err != nil {
		d.forget(chain)
		return err
	}
	if !d.syncLater {
		if err := f.Sync(); err != nil {
			d.forget(chain)
			return err
		}
	}
	d.mu.Lock()
	d.counts[chain] = chainSize{bytes: size + int64(len(buf)), lines: n + int64(len(lines))}
	if d.syncLater {
		if d.dirty == nil {
			d.dirty = map[string]bool{}
		}
		d.dirty[chain] = true
	}
	d.mu.Unlock()
	return nil
}

// count is the number of lines of the chain file f (locked), and its
// size: remembered from this Dir's last write while the size has not
// changed, counted otherwise.
func (d *Dir) count(chain, p string, f *os.File) (lines, size int64, err error) {
	st, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	d.mu.Lock()
	if d.counts == nil {
		d.counts = map[string]chainSize{}
	}
	c, ok := d.counts[chain]
	d.mu.Unlock()
	if ok && c.bytes == st.Size() {
		return c.lines, c.bytes, nil
	}
	if st.Size() == 0 { // a new chain: nothing to count
		return 0, 0, nil
	}
	all, err := readLines(p)
	if err != nil {
		return 0, 0, err
	}
	return int64(len(all)), st.Size(), nil
}

func (d *Dir) forget(chain string) {
	d.mu.Lock()
	delete(d.counts, chain)
	d.mu.Unlock()
}

func (d *Dir) Lines(_ context.Context, chain string) ([][]byte, error) {
	lines, err := readLines(d.chainPath(chain))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return lines, err
}

// Head is the hash of chain's last line and the chain's length (Genesis
// and 0 for a missing chain), read as Lines reads the chain but keeping
// no line but the last: Scope.End asks it of every chain of the record.
func (d *Dir) Head(_ context.Context, chain string) (string, int, error) {
	f, err := os.Open(d.chainPath(chain))
	if errors.Is(err, fs.ErrNotExist) {
		return Genesis(chain), 0, nil
	}
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	// A chain this Dir appended to last and still the size it left: its
	// length is known, and only its last line is read.
	if st, err := f.Stat(); err == nil {
		d.mu.Lock()
		c, ok := d.counts[chain]
		d.mu.Unlock()
		if ok && c.lines > 0 && c.bytes == st.Size() {
			if h, ok := lastLineHash(f, st.Size()); ok {
				return h, int(c.lines), nil
			}
		}
	}
	var last []byte
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for sc.Scan() {
		last = append(last[:0], sc.Bytes()...)
		n++
	}
	if err := sc.Err(); err != nil {
		return "", 0, err
	}
	if n == 0 {
		return Genesis(chain), 0, nil
	}
	return Hash(last), n, nil
}

// lastLineHash is the Hash of the line a file of size bytes ends with
// (without its newline), read from the end; ok is false when the file does
// not end with a newline or the line is longer than an entry may be (the
// caller then reads the whole file).
func lastLineHash(f *os.File, size int64) (hash string, ok bool) {
	bp := tailBuffers.Get().(*[]byte)
	defer tailBuffers.Put(bp)
	for chunk := int64(len(*bp)); ; chunk *= 4 {
		n := min(chunk, size)
		buf := (*bp)[:0]
		if n > int64(cap(buf)) {
			buf = make([]byte, n) // a line longer than the pooled buffer: rare
		}
		buf = buf[:n]
		if _, err := f.ReadAt(buf, size-n); err != nil || n == 0 || buf[n-1] != '\n' {
			return "", false
		}
		body := buf[:n-1]
		if i := bytes.LastIndexByte(body, '\n'); i >= 0 {
			return Hash(body[i+1:]), true
		}
		if n == size {
			return Hash(body), true
		}
		if n > maxLine {
			return "", false
		}
	}
}

// tailBuffers hold the reads lastLineHash makes from a chain's end.
var tailBuffers = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

func readLines(p string) ([][]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for sc.Scan() {
		out = append(out, append([]byte{}, sc.Bytes()...))
	}
	return out, sc.Err()
}

func (d *Dir) Chains(context.Context) ([]string, error) {
	return escapedNames(filepath.Join(d.root, "chains"), func(e fs.DirEntry) (string, bool) {
		name, ok := strings.CutSuffix(e.Name(), ".jsonl")
		return name, ok && e.Type().IsRegular()
	})
}

// escapedNames lists the path-escaped names of dir's entries that keep
// accepts (and reduces to their name), unescaped and sorted; none for a
// missing dir.
func escapedNames(dir string, keep func(fs.DirEntry) (string, bool)) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		name, ok := keep(e)
		if !ok {
			continue
		}
		if n, err := url.PathUnescape(name); err == nil {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}

var hashPattern = regexp.MustCompile(`^[0-9a-f]{64}$`)

func (d *Dir) textPath(hash string) (string, error) {
	if !hashPattern.MatchString(hash) {
		return "", fmt.Errorf("audit: %q is not a SHA-256", hash)
	}
	return filepath.Join(d.root, "texts", hash), nil
}

// stored reports whether this Dir has seen the text of hash stored: the
// Recorder then hands it no copy of a text it stores again (an agent's
// system prompt, every call).
func (d *Dir) stored(hash string) bool {
	_, ok := d.known.Load(hash)
	return ok
}

func (d *Dir) PutText(_ context.Context, hash string, text []byte) error {
	if d.stored(hash) {
		return nil // stored once: the same hash is the same text
	}
	p, err := d.textPath(hash)
	if err != nil {
		return err
	}
	if _, err := os.Stat(p); err == nil {
		d.known.Store(hash, true)
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".text-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(text); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return err
	}
	d.known.Store(hash, true)
	return nil
}

func (d *Dir) Text(_ context.Context, hash string) ([]byte, error) {
	p, err := d.textPath(hash)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &veredicto.NotFoundError{What: "audit text " + hash}
	}
	return b, err
}
