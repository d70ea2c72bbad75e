package file

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/veredicto/veredicto/internal/eventlog"
	"github.com/veredicto/veredicto/internal/eventlog/eventlogtest"
	"github.com/veredicto/veredicto/internal/quarantine"
)

func TestFileAppendRead(t *testing.T) {
	ctx := t.Context()
	l := New(t.TempDir())
	for i := range 5 {
		ev, err := l.Append(ctx, "acme", "arn:exec:1", eventlogtest.Event(t, eventlog.TypeExecutionStep, "", map[string]int{"n": i}))
		if err != nil {
			t.Fatal(err)
		}
		if ev.ID != int64(i+1) {
			t.Fatalf("append %d got id %d, want %d", i, ev.ID, i+1)
		}
	}
	tests := []struct {
		name  string
		after int64
		limit int
		want  []int64
	}{
		{"from start", 0, 0, []int64{1, 2, 3, 4, 5}},
		{"after 3", 3, 10, []int64{4, 5}},
		{"limit", 1, 2, []int64{2, 3}},
		{"at end", 5, 10, []int64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := l.Read(ctx, "acme", "arn:exec:1", tt.after, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(eventlogtest.IDs(got)) != fmt.Sprint(tt.want) {
				t.Errorf("ids = %v, want %v", eventlogtest.IDs(got), tt.want)
			}
		})
	}
	// Tenants do not share streams.
	got, err := l.Read(ctx, "other", "arn:exec:1", 0, 10)
	if err != nil || len(got) != 0 {
		t.Errorf("another tenant reads %d events (%v), want none", len(got), err)
	}
	var data map[string]any
	first, _ := l.Read(ctx, "acme", "arn:exec:1", 0, 1)
	if err := json.Unmarshal(first[0].Data, &data); err != nil || data["type"] != eventlog.TypeExecutionStep || data["n"] != 0.0 {
		t.Errorf("data = %s, want the payload with its type", first[0].Data)
	}
}

func TestFileDedupeAndReopen(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	l := New(dir)
	a, err := l.Append(ctx, "acme", "s", eventlogtest.Event(t, eventlog.TypePendingConfirmation, "pending:c1", map[string]string{"id": "c1"}))
	if err != nil {
		t.Fatal(err)
	}
	// A second process (a fresh Log) sees the same stream and dedupes too.
	l2 := New(dir)
	b, err := l2.Append(ctx, "acme", "s", eventlogtest.Event(t, eventlog.TypePendingConfirmation, "pending:c1", map[string]string{"id": "c1"}))
	if err != nil {
		t.Fatal(err)
	}
	if b.ID != a.ID {
		t.Errorf("repeated key appended as %d, want the stored %d", b.ID, a.ID)
	}
	c, err := l2.Append(ctx, "acme", "s", eventlogtest.Event(t, eventlog.TypeFinish, "", map[string]string{"status": "SUCCEEDED"}))
	if err != nil || c.ID != 2 {
		t.Fatalf("append after dedupe: id %d, %v; want 2", c.ID, err)
	}
	// The first Log's cached tail is stale; it must notice the other append.
	got, err := l.Read(ctx, "acme", "s", 0, 10)
	if err != nil || fmt.Sprint(eventlogtest.IDs(got)) != "[1 2]" {
		t.Errorf("read through a stale cache = %v (%v), want [1 2]", eventlogtest.IDs(got), err)
	}
}

func TestFileTornLine(t *testing.T) {
	ctx := t.Context()
	l := New(t.TempDir())
	if _, err := l.Append(ctx, "acme", "s", eventlogtest.Event(t, "x", "", map[string]int{})); err != nil {
		t.Fatal(err)
	}
	// A crash mid-write leaves half a line.
	fh, err := os.OpenFile(l.path("acme", "s"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	fh.WriteString(`{"id":2,"type":"x","da`)
	fh.Close()
	l = New(l.dir)
	ev, err := l.Append(ctx, "acme", "s", eventlogtest.Event(t, "y", "", map[string]int{}))
	if err != nil {
		t.Fatal(err)
	}
	if ev.ID != 2 {
		t.Errorf("id after a torn line = %d, want 2", ev.ID)
	}
	got, err := l.Read(ctx, "acme", "s", 0, 10)
	if err != nil || fmt.Sprint(eventlogtest.IDs(got)) != "[1 2]" || got[1].Type != "y" {
		t.Errorf("read = %v (%v), want [1 2] ending with y", eventlogtest.IDs(got), err)
	}
}

func TestFileConcurrentAppendsAreDense(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	logs := []*Log{New(dir), New(dir)} // two "processes"
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for range 25 {
				if _, err := logs[w%2].Append(ctx, "acme", "s", eventlogtest.Event(t, "x", "", map[string]int{"w": w})); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	var all []eventlog.Event
	var after int64
	for {
		got, err := New(dir).Read(ctx, "acme", "s", after, 7)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 {
			break
		}
		all = append(all, got...)
		after = got[len(got)-1].ID
	}
	if len(all) != 200 {
		t.Fatalf("read %d events, want 200", len(all))
	}
	for i, ev := range all {
		if ev.ID != int64(i+1) {
			t.Fatalf("event %d has id %d: ids must be dense", i, ev.ID)
		}
	}
}

func TestFileWatchSignals(t *testing.T) {
	ctx := t.Context()
	l := New(t.TempDir())
	ch, cancel := l.Watch("acme", "s")
	defer cancel()
	for range 3 { // never blocks, whatever the reader does
		if _, err := l.Append(ctx, "acme", "s", eventlogtest.Event(t, "x", "", map[string]int{})); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-ch:
	default:
		t.Fatal("no signal after appends")
	}
	select {
	case <-ch:
		t.Fatal("signals pile up: want at most one pending")
	default:
	}
}

func TestValidate(t *testing.T) {
	ctx := t.Context()
	l := New(t.TempDir())
	big := make([]byte, eventlog.MaxEventBytes+1)
	for i := range big {
		big[i] = ' '
	}
	tests := []struct {
		name   string
		tenant string
		stream string
		ev     eventlog.Event
	}{
		{"no tenant", "", "s", eventlog.Event{Type: "x", Data: []byte(`{}`)}},
		{"long tenant", strings.Repeat("t", 129), "s", eventlog.Event{Type: "x", Data: []byte(`{}`)}},
		{"long stream", "t", strings.Repeat("s", 1025), eventlog.Event{Type: "x", Data: []byte(`{}`)}},
		{"no stream", "t", "", eventlog.Event{Type: "x", Data: []byte(`{}`)}},
		{"no type", "t", "s", eventlog.Event{Data: []byte(`{}`)}},
		{"not json", "t", "s", eventlog.Event{Type: "x", Data: []byte(`{`)}},
		{"too big", "t", "s", eventlog.Event{Type: "x", Data: big}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := l.Append(ctx, tt.tenant, tt.stream, tt.ev); err == nil {
				t.Error("Append accepted it")
			}
		})
	}
}

func TestFileReadFarBehindTheTail(t *testing.T) {
	ctx := t.Context()
	l := New(t.TempDir())
	const n = 2*tailCap + 10 // past a trim of the cached tail
	for range n {
		if _, err := l.Append(ctx, "acme", "s", eventlogtest.Event(t, "x", "", map[string]int{})); err != nil {
			t.Fatal(err)
		}
	}
	got, err := l.Read(ctx, "acme", "s", 3, 4)
	if err != nil || fmt.Sprint(eventlogtest.IDs(got)) != "[4 5 6 7]" {
		t.Errorf("read behind the cached tail = %v (%v), want [4 5 6 7]", eventlogtest.IDs(got), err)
	}
	got, err = l.Read(ctx, "acme", "s", n-2, 10)
	if err != nil || fmt.Sprint(eventlogtest.IDs(got)) != fmt.Sprint([]int64{n - 1, n}) {
		t.Errorf("read at the end = %v (%v)", eventlogtest.IDs(got), err)
	}
}

// BenchmarkFileAppend is one fsynced append: the floor of a stream's
// write rate on this disk.
func BenchmarkFileAppend(b *testing.B) {
	l := New(b.TempDir())
	ev, _ := eventlog.New(eventlog.TypeExecutionStep, "", map[string]any{"step": map[string]string{"agent": "Gem1Function", "action": "started"}})
	for b.Loop() {
		if _, err := l.Append(b.Context(), "acme", "s", ev); err != nil {
			b.Fatal(err)
		}
	}
}

func TestFileLongStreamNames(t *testing.T) {
	ctx := t.Context()
	l := New(t.TempDir())
	long := "arn:aws:states:us-east-1:123456789012:execution:" + strings.Repeat("m", 80) + ":" + strings.Repeat("e", 80)
	other := long[:len(long)-1] + "f"
	for _, s := range []string{long, other} {
		if _, err := l.Append(ctx, "acme", s, eventlogtest.Event(t, "x", "", map[string]string{"s": s[len(s)-1:]})); err != nil {
			t.Fatalf("append to a %d-byte stream name: %v", len(s), err)
		}
	}
	got, err := l.Read(ctx, "acme", long, 0, 10)
	if err != nil || len(got) != 1 || !strings.Contains(string(got[0].Data), `"s":"e"`) {
		t.Errorf("read %+v, %v; want the one event of its own stream", got, err)
	}
}

// appendSteps appends n execution steps to stream s of tenant acme.
func appendSteps(t *testing.T, l *Log, n int) {
	t.Helper()
	for i := range n {
		if _, err := l.Append(t.Context(), "acme", "s", eventlogtest.Event(t, eventlog.TypeExecutionStep, "", map[string]int{"n": i})); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFileDamagedLine: a line that no longer decodes is read as the error
// message for the event it hid, the events after it follow, its bytes go
// to the quarantine once (the line blanked in place), and appends go on.
func TestFileDamagedLine(t *testing.T) {
	ctx := t.Context()
	data := t.TempDir()
	l := Local(data)
	appendSteps(t, l, 5)
	p := l.path("acme", "s")
	eventlogtest.CorruptLine(t, p, 3, `{"id":3,"type":"execution-step","data":{"cv":"Ana Pérez`)

	for _, reader := range []*Log{Local(data), Local(data)} { // fresh processes: the file is read
		got, err := reader.Read(ctx, "acme", "s", 0, 10)
		if err != nil || fmt.Sprint(eventlogtest.IDs(got)) != "[1 2 3 4 5]" {
			t.Fatalf("Read = %v, %v; want every id, the damaged one included", eventlogtest.IDs(got), err)
		}
		var d map[string]any
		if got[2].Type != eventlog.TypeError || json.Unmarshal(got[2].Data, &d) != nil || d["type"] != "error" || d["id"] != 3.0 {
			t.Errorf("event 3 = %+v %s, want the error message for id 3", got[2], got[2].Data)
		}
		if got[3].Type != eventlog.TypeExecutionStep {
			t.Errorf("event 4 = %+v", got[3])
		}
	}
	items, err := quarantine.List(data)
	if err != nil || len(items) != 1 || items[0].Store != "events" || !strings.Contains(items[0].Reason, "hid events 3 to 3") {
		t.Fatalf("quarantine = %+v, %v; want the line once", items, err)
	}
	if b, _ := os.ReadFile(items[0].Quarantined); !strings.Contains(string(b), "Ana Pérez") {
		t.Errorf("quarantined %q, want the line's bytes", b)
	}
	if b, _ := os.ReadFile(p); strings.Contains(string(b), "Ana Pérez") {
		t.Error("the damaged line is still in the log")
	}
	ev, err := Local(data).Append(ctx, "acme", "s", eventlogtest.Event(t, eventlog.TypeFinish, "", map[string]int{}))
	if err != nil || ev.ID != 6 {
		t.Fatalf("append after the damage: id %d, %v; want 6", ev.ID, err)
	}
	if got, _ := l.Read(ctx, "acme", "s", 2, 10); fmt.Sprint(eventlogtest.IDs(got)) != "[3 4 5 6]" || got[0].Type != eventlog.TypeError {
		t.Errorf("read after the append = %v", eventlogtest.IDs(got))
	}
}

// TestFileDamagedBlock: a zeroed block that swallowed several lines
// (newlines included) hides each of their ids, all named.
func TestFileDamagedBlock(t *testing.T) {
	ctx := t.Context()
	l := New(t.TempDir())
	appendSteps(t, l, 5)
	b, _ := os.ReadFile(l.path("acme", "s"))
	lines := strings.SplitAfter(string(b), "\n")
	start := len(lines[0])
	n := len(lines[1]) + len(lines[2]) - 1 // lines 2 and 3, keeping line 3's newline
	for i := start; i < start+n; i++ {
		b[i] = 0
	}
	os.WriteFile(l.path("acme", "s"), b, 0o600)
	got, err := New(l.dir).Read(ctx, "acme", "s", 0, 10)
	if err != nil || fmt.Sprint(eventlogtest.IDs(got)) != "[1 2 3 4 5]" || got[1].Type != eventlog.TypeError || got[2].Type != eventlog.TypeError || got[3].Type == eventlog.TypeError {
		t.Errorf("Read = %v, %v", eventlogtest.IDs(got), err)
	}
}

// TestFileDamagedReadsOnly: the doctor's scan names a damaged line and
// changes nothing.
func TestFileDamagedReadsOnly(t *testing.T) {
	l := Local(t.TempDir())
	appendSteps(t, l, 3)
	eventlogtest.CorruptLine(t, l.path("acme", "s"), 2, "{")
	before, _ := os.ReadFile(l.path("acme", "s"))
	found, err := l.Damaged()
	if err != nil || len(found) != 1 || found[0].Store != "events" || !strings.Contains(found[0].Reason, "hides events 2 to 2") {
		t.Fatalf("Damaged = %+v, %v", found, err)
	}
	if after, _ := os.ReadFile(l.path("acme", "s")); string(after) != string(before) {
		t.Error("the scan changed the log")
	}
	if empty, err := New(filepath.Join(t.TempDir(), "none")).Damaged(); err != nil || empty == nil || len(empty) != 0 {
		t.Errorf("a log never written: %#v, %v", empty, err)
	}
}

// TestFileAppendAll: a batch takes the next ids in order, is deduplicated
// against the stream and against itself, wakes watchers, and reads back
// (from the cache and, after Sync, from a fresh Log) as Appends would.
func TestFileAppendAll(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	l := New(dir)
	if _, err := l.Append(ctx, "acme", "s", eventlogtest.Event(t, eventlog.TypePendingConfirmation, "k1", map[string]string{"id": "c1"})); err != nil {
		t.Fatal(err)
	}
	wake, cancel := l.Watch("acme", "s")
	defer cancel()
	got, err := l.AppendAll(ctx, "acme", "s", []eventlog.Event{
		eventlogtest.Event(t, eventlog.TypePendingConfirmation, "k1", map[string]string{"id": "again"}), // stored
		eventlogtest.Event(t, eventlog.TypeExecutionStep, "k2", map[string]string{"id": "c2"}),
		eventlogtest.Event(t, eventlog.TypeExecutionStep, "k2", map[string]string{"id": "twice"}), // just added
		eventlogtest.Event(t, eventlog.TypeFinish, "", map[string]string{"status": "SUCCEEDED"}),
	})
	if err != nil {
		t.Fatal(err)
	}
	if ids := fmt.Sprint(eventlogtest.IDs(got)); ids != "[1 2 2 3]" {
		t.Errorf("AppendAll ids %s, want [1 2 2 3]", ids)
	}
	select {
	case <-wake:
	default:
		t.Error("AppendAll woke no watcher")
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	for _, r := range []*Log{l, New(dir)} {
		evs, err := r.Read(ctx, "acme", "s", 0, 10)
		if err != nil || fmt.Sprint(eventlogtest.IDs(evs)) != "[1 2 3]" || evs[1].Key != "k2" {
			t.Errorf("read back %v (%v), want [1 2 3]", eventlogtest.IDs(evs), err)
		}
	}
}
