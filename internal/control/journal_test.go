package control

import (
	"context"
	"encoding/binary"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/poll"
	"github.com/veredicto/veredicto/internal/quarantine"
)

const passChain = `{"StartAt":"P1","States":{
  "P1":{"Type":"Pass","Next":"P2"},"P2":{"Type":"Pass","Next":"P3"},"P3":{"Type":"Pass","Next":"P4"},
  "P4":{"Type":"Pass","Next":"P5"},"P5":{"Type":"Pass","End":true}}}`

// saveJournal copies the journal's segments, as a crash would leave them.
func saveJournal(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	names, _, err := segments(filepath.Join(dir, "journal"))
	if err != nil || len(names) == 0 {
		t.Fatalf("journal segments %v: %v", names, err)
	}
	out := map[string][]byte{}
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		out[n] = b
	}
	return out
}

func restoreJournal(t *testing.T, saved map[string][]byte) {
	t.Helper()
	for n, b := range saved {
		if err := os.WriteFile(n, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func walFiles(t *testing.T, dir string) []string {
	t.Helper()
	names, _, err := segments(filepath.Join(dir, "journal"))
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// TestJournalRebuildsLostWrites: the files of executions are written
// without a sync of their own; when a crash loses them (a power cut), the
// next Open writes them again from the journal: a closed execution keeps
// its output and history, a waiting one still waits on its token and
// resumes without running its completed Task again. Close leaves no
// journal behind.
func TestJournalRebuildsLostWrites(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	f := newFixture()
	m := f.open(t, dir)
	done := f.start(t, m, "Chain", passChain, "c1")
	waitClosed(t, m, done.ARN)
	want := historyOf(t, m, done.ARN)
	waiting := f.start(t, m, "Resumable", resumable, "r1")
	tok := f.token(t) // its token line is durable: in the journal
	saved := saveJournal(t, dir)
	m.Close()
	if names := walFiles(t, dir); len(names) != 0 {
		t.Fatalf("Close left the journal %v", names)
	}

	// the crash: the journal as it was, the files' unsynced writes lost
	restoreJournal(t, saved)
	c1, r1 := filepath.Join(dir, "executions", "Chain", "c1"), filepath.Join(dir, "executions", "Resumable", "r1")
	if err := os.Remove(filepath.Join(c1, "meta.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(c1, "history.jsonl"), 10); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(r1); err != nil {
		t.Fatal(err)
	}

	if found, err := Damaged(dir); err != nil || len(found) != 0 {
		t.Errorf("doctor before the restart: %+v %v, want nothing: the journal writes it again", found, err)
	}

	m = f.open(t, dir)
	got, err := m.DescribeExecution(ctx, done.ARN)
	if err != nil || got.Status != asl.StatusSucceeded || string(got.Output) != `{"tenant":"acme"}` {
		t.Fatalf("the closed execution after the rebuild: %+v %v", got, err)
	}
	if h := historyOf(t, m, done.ARN); len(h) != len(want) || h[len(h)-1].Type != "ExecutionSucceeded" {
		t.Errorf("history of %d events after the rebuild, want the %d written", len(h), len(want))
	}
	if err := m.SendTaskSuccess(ctx, tok, `{"ok":true}`); err != nil {
		t.Fatalf("the token after the rebuild: %v", err)
	}
	if got := waitClosed(t, m, waiting.ARN); got.Status != asl.StatusSucceeded {
		t.Fatalf("the resumed execution: %s %s", got.Status, got.Cause)
	}
	if n := f.counted.Load(); n != 1 {
		t.Errorf("the completed Task ran %d times, want once", n)
	}
	for i, ev := range historyOf(t, m, waiting.ARN) {
		if ev.ID != i+1 {
			t.Errorf("event %d has id %d", i+1, ev.ID)
		}
	}
	m.Close()
	if names := walFiles(t, dir); len(names) != 0 {
		t.Errorf("Close left the journal %v", names)
	}
}

// frame is one record as the committer writes it.
func frame(j *journal, r *record) []byte { return j.appendRecord(nil, r) }

// openTestJournal opens a journal in DATA/sfn of a fresh data folder,
// its quarantine beside it, logging nowhere.
func openTestJournal(t *testing.T) (j *journal, data, root string, log *slog.Logger) {
	t.Helper()
	data = t.TempDir()
	root = filepath.Join(data, "sfn")
	log = slog.New(slog.DiscardHandler)
	j, err := openJournal(root, quarantine.Beside(root, log), log)
	if err != nil {
		t.Fatal(err)
	}
	return j, data, root, log
}

// TestJournalTail: a record cut short by a crash (never acknowledged) is
// dropped quietly; a whole record whose checksum does not match ends its
// segment, and what follows it goes to the quarantine.
func TestJournalTail(t *testing.T) {
	for _, c := range []struct {
		name        string
		tail        func(j *journal) []byte
		quarantined bool
	}{
		{"cut short", func(j *journal) []byte {
			b := frame(j, &record{kind: kindReplace, path: filepath.Join(j.root, "b.json"), data: []byte(`{"b":1}`)})
			return b[:len(b)-3]
		}, false},
		{"zeros", func(*journal) []byte { return make([]byte, 4096) }, false},
		{"checksum", func(j *journal) []byte {
			b := frame(j, &record{kind: kindReplace, path: filepath.Join(j.root, "b.json"), data: []byte(`{"b":1}`)})
			binary.LittleEndian.PutUint32(b, ^binary.LittleEndian.Uint32(b))
			return append(b, frame(j, &record{kind: kindReplace, path: filepath.Join(j.root, "c.json"), data: []byte(`{}`)})...)
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			j, data, root, log := openTestJournal(t)
			if err := j.write(&record{kind: kindReplace, path: filepath.Join(root, "a.json"), data: []byte(`{"a":1}`)}); err != nil {
				t.Fatal(err)
			}
			w := &record{kind: kindWrite, path: filepath.Join(root, "x", "h.jsonl"), off: 0, data: []byte("one\n")}
			if err := j.write(w); err != nil {
				t.Fatal(err)
			}
			seg := j.f.Name()
			saved, err := os.ReadFile(seg)
			if err != nil {
				t.Fatal(err)
			}
			j.close()
			os.Remove(filepath.Join(root, "a.json"))
			os.WriteFile(seg, append(saved, c.tail(j)...), 0o644)

			j, err = openJournal(root, quarantine.Beside(root, log), log)
			if err != nil {
				t.Fatalf("replay: %v", err)
			}
			defer j.close()
			if b, err := os.ReadFile(filepath.Join(root, "a.json")); err != nil || string(b) != `{"a":1}` {
				t.Errorf("a.json after the replay: %q %v", b, err)
			}
			if b, err := os.ReadFile(filepath.Join(root, "x", "h.jsonl")); err != nil || string(b) != "one\n" {
				t.Errorf("h.jsonl after the replay: %q %v", b, err)
			}
			for _, name := range []string{"b.json", "c.json"} {
				if _, err := os.Stat(filepath.Join(root, name)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s was written from past the bad record: %v", name, err)
				}
			}
			items, err := quarantine.List(data)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(items) > 0; got != c.quarantined {
				t.Fatalf("quarantined %+v, want some: %v", items, c.quarantined)
			}
			if c.quarantined && !strings.Contains(items[0].Reason, "checksum") {
				t.Errorf("quarantine reason %q", items[0].Reason)
			}
		})
	}
}

// TestJournalOlderSegmentCutShort: a record cut short in a segment that a
// later one follows is not a crash's tail (each segment is synced whole
// before the next begins): it is kept in the quarantine and named, and
// the later segment is still replayed.
func TestJournalOlderSegmentCutShort(t *testing.T) {
	j, data, root, log := openTestJournal(t)
	j.close()
	rec := func(name, data string) []byte {
		return frame(j, &record{kind: kindReplace, path: filepath.Join(root, name), data: []byte(data)})
	}
	cut := rec("b.json", `{"b":1}`)
	// A bit flipped in b's length would read the same: past the end.
	older := append(rec("a.json", `{"a":1}`), cut[:len(cut)-3]...)
	if err := os.WriteFile(segmentName(j.dir, 7), older, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(segmentName(j.dir, 8), rec("c.json", `{"c":1}`), 0o644); err != nil {
		t.Fatal(err)
	}

	j, err := openJournal(root, quarantine.Beside(root, log), log)
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	defer j.close()
	for name, want := range map[string]string{"a.json": `{"a":1}`, "c.json": `{"c":1}`} {
		if b, err := os.ReadFile(filepath.Join(root, name)); err != nil || string(b) != want {
			t.Errorf("%s after the replay: %q %v", name, b, err)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "b.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("b.json was written from a record cut short: %v", err)
	}
	items, err := quarantine.List(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || !strings.Contains(items[0].Reason, "cut short in a segment a later one follows") {
		t.Fatalf("quarantined %+v, want the older segment's cut record named", items)
	}
}

// TestJournalFailedBatchStartsANewSegment: when a batch cannot be written
// and the segment cannot be cut back (here: it cannot be written at all
// any more), its writers are told it failed and the next batch goes to a
// new segment, so the journal keeps acknowledging writes.
func TestJournalFailedBatchStartsANewSegment(t *testing.T) {
	root := filepath.Join(t.TempDir(), "sfn")
	log := slog.New(slog.DiscardHandler)
	j, err := openJournal(root, nil, log)
	if err != nil {
		t.Fatal(err)
	}
	defer j.close()
	put := func(name string) error {
		return j.write(&record{kind: kindReplace, path: filepath.Join(root, name), data: []byte(`{}`)})
	}
	if err := put("a.json"); err != nil {
		t.Fatal(err)
	}
	broken := j.f.Name()
	j.f.Close() // the committer waits for a batch: the segment fails under it
	if err := put("b.json"); err == nil {
		t.Fatal("a write to a segment that cannot take it was acknowledged")
	}
	if err := put("c.json"); err != nil {
		t.Fatalf("the write after a failed batch: %v", err)
	}
	if j.f.Name() == broken {
		t.Errorf("the journal still writes to %s, whose failed batch it could not cut off", broken)
	}
	if _, err := os.Stat(filepath.Join(root, "c.json")); err != nil {
		t.Error(err)
	}
}

// TestStartSentAgainWaitsForTheFirst: a StartExecution sent again with
// the same name and input while the first is still on its way to the
// disk answers only once the first is durable, and fails with it: no
// start is acknowledged before it would survive a crash.
func TestStartSentAgainWaitsForTheFirst(t *testing.T) {
	for _, fail := range []bool{false, true} {
		t.Run(map[bool]string{false: "durable", true: "failed"}[fail], func(t *testing.T) {
			ctx := context.Background()
			f := newFixture()
			var d fullDisk
			f.disk = d.disk()
			m := f.open(t, t.TempDir())
			defer m.Close()
			if _, err := m.CreateStateMachine(ctx, "Chain", passChain, "", ""); err != nil {
				t.Fatal(err)
			}
			held, release := make(chan struct{}), make(chan struct{})
			var once sync.Once
			d.set(func(path string, l *line) bool {
				first := false
				if l == nil && strings.HasSuffix(path, filepath.Join("s1", "meta.json")) {
					once.Do(func() { first = true })
				}
				if first {
					close(held)
					<-release // the first start's metadata on its way
					return fail
				}
				return false
			})
			first := make(chan error, 1)
			go func() {
				_, err := m.StartExecution(ctx, StateMachineARN("Chain"), "s1", `{"tenant":"acme"}`)
				first <- err
			}()
			<-held
			again := make(chan error, 1)
			go func() {
				_, err := m.StartExecution(ctx, StateMachineARN("Chain"), "s1", `{"tenant":"acme"}`)
				again <- err
			}()
			select {
			case err := <-again:
				t.Fatalf("the start sent again answered (%v) before the first was durable", err)
			case <-time.After(100 * time.Millisecond):
			}
			close(release)
			err1, err2 := <-first, <-again
			if fail != (err1 != nil) || fail != (err2 != nil) {
				t.Fatalf("first %v, again %v; want both to fail: %v", err1, err2, fail)
			}
			_, err := m.DescribeExecution(ctx, ExecutionARN("Chain", "s1"))
			var ce *Error
			if fail != (errors.As(err, &ce) && ce.Code == CodeExecutionDoesNotExist) {
				t.Errorf("DescribeExecution after the start: %v", err)
			}
		})
	}
}

// TestCloseReportsWhatItJournaled: an execution stopped by Close between
// events it journaled without waiting (a loop of Pass states) still has
// each of them passed to OnHistory, once, before Close returns.
func TestCloseReportsWhatItJournaled(t *testing.T) {
	dir := t.TempDir()
	f := newFixture()
	m := f.open(t, dir)
	loop := `{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"B"},"B":{"Type":"Pass","Next":"A"}}}`
	x := f.start(t, m, "Loop", loop, "l1")
	waitUntil(t, m, x.ARN, "a hundred events", func(Execution) bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.events) > 100
	})
	m.Close()
	n := 0
	if err := readLines(filepath.Join(dir, "executions", "Loop", "l1", "history.jsonl"), nil, func(l line) error {
		if l.Event != nil {
			n++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.events) != n {
		t.Errorf("OnHistory saw %d events, the history holds %d", len(f.events), n)
	}
}

// TestJournalAppliesKeptWritesOnceFilesTakeThem: a journaled write its
// file refused keeps every segment (a restart replays them), but not for
// ever: once the file takes writes again, the next checkpoint writes the
// kept records as a restart would, and the journal is trimmed again.
func TestJournalAppliesKeptWritesOnceFilesTakeThem(t *testing.T) {
	root := filepath.Join(t.TempDir(), "sfn")
	log := slog.New(slog.DiscardHandler)
	j, err := openJournalEvery(root, nil, log, time.Nanosecond) // a checkpoint after every batch
	if err != nil {
		t.Fatal(err)
	}
	defer j.close()
	// a file where the history's folder goes: its write is refused
	if err := os.WriteFile(filepath.Join(root, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	put := func(name string) error {
		return j.write(&record{kind: kindReplace, path: filepath.Join(root, name), data: []byte(`{}`)})
	}
	if err := j.write(&record{kind: kindWrite, path: filepath.Join(root, "x", "h.jsonl"), data: []byte("one\n")}); err == nil {
		t.Fatal("a write its file refused was acknowledged")
	}
	first := walFiles(t, root)
	if err := put("a.json"); err != nil {
		t.Fatal(err)
	}
	if err := put("b.json"); err != nil { // the checkpoint after a.json's batch has run
		t.Fatal(err)
	}
	if got := walFiles(t, root); len(got) != 1 || got[0] != first[0] {
		t.Fatalf("segments %v, want %v kept while the file refuses its write", got, first)
	}
	os.Remove(filepath.Join(root, "x"))
	if err := put("c.json"); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 5*time.Second, func() bool {
		b, err := os.ReadFile(filepath.Join(root, "x", "h.jsonl"))
		segs := walFiles(t, root)
		return err == nil && string(b) == "one\n" && len(segs) == 1 && segs[0] > first[0]
	}, "the kept write applied and the old segment trimmed")
}
