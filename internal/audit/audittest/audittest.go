// Package audittest holds the checks every store of audit records must
// pass (audit.Dir on this machine, s3audit in the reports bucket): the
// same tests run against each, so a record behaves the same wherever it
// is kept; and, for the tests of what records, a chain's entries and its
// decisions read back (read.go).
package audittest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/llm"
)

// Store runs the checks on stores newStore makes, each new and empty. A
// store that is also an audit.Eraser is purged too.
func Store(t *testing.T, newStore func(t *testing.T) audit.Store) {
	t.Run("appends in order and refuses a taken entry", func(t *testing.T) {
		ctx := t.Context()
		st := newStore(t)
		if lines, err := st.Lines(ctx, "main"); err != nil || len(lines) != 0 {
			t.Fatalf("an unknown chain: %d lines, %v; want none", len(lines), err)
		}
		for i := range 3 {
			if err := st.Append(ctx, "main", i, fmt.Appendf(nil, `{"n":%d}`, i)); err != nil {
				t.Fatalf("append %d: %v", i, err)
			}
		}
		err := st.Append(ctx, "main", 1, []byte(`{"n":"again"}`))
		if !errors.As(err, new(*veredicto.ConflictError)) {
			t.Errorf("entry 1 again: %v, want a *veredicto.ConflictError", err)
		}
		lines, err := st.Lines(ctx, "main")
		if err != nil || len(lines) != 3 || string(lines[0]) != `{"n":0}` || string(lines[1]) != `{"n":1}` || string(lines[2]) != `{"n":2}` {
			t.Errorf("lines %q, %v; want the three entries in order, entry 1 as first written", lines, err)
		}
	})

	t.Run("lists chains sorted, names with slashes kept", func(t *testing.T) {
		ctx := t.Context()
		st := newStore(t)
		for _, c := range []string{"main", "candidate/c-10", "candidate/c-1"} {
			if err := st.Append(ctx, c, 0, []byte(`{}`)); err != nil {
				t.Fatalf("append to %s: %v", c, err)
			}
		}
		got, err := st.Chains(ctx)
		if want := []string{"candidate/c-1", "candidate/c-10", "main"}; err != nil || !slices.Equal(got, want) {
			t.Errorf("chains %q, %v; want %q", got, err, want)
		}
	})

	t.Run("stores a text once, by its hash", func(t *testing.T) {
		ctx := t.Context()
		st := newStore(t)
		h := audit.Hash([]byte("el mismo texto"))
		for range 2 {
			if err := st.PutText(ctx, h, []byte("el mismo texto")); err != nil {
				t.Fatalf("put text: %v", err)
			}
		}
		if b, err := st.Text(ctx, h); err != nil || string(b) != "el mismo texto" {
			t.Errorf("text %q, %v", b, err)
		}
		missing := audit.Hash([]byte("nunca guardado"))
		if _, err := st.Text(ctx, missing); !errors.As(err, new(*veredicto.NotFoundError)) {
			t.Errorf("a missing text: %v, want a *veredicto.NotFoundError", err)
		}
		for _, bad := range []string{"../../etc/passwd", strings.ToUpper(h), h[:63]} {
			if _, err := st.Text(ctx, bad); err == nil {
				t.Errorf("Text(%q) read something: a name that is not a SHA-256 must be refused", bad)
			}
			if err := st.PutText(ctx, bad, []byte("x")); err == nil {
				t.Errorf("PutText(%q) wrote: a name that is not a SHA-256 must be refused", bad)
			}
		}
	})

	t.Run("two recorders of one chain keep it unbroken", func(t *testing.T) {
		ctx := t.Context()
		st := newStore(t)
		a, b := audit.NewRecorder(st, nil), audit.NewRecorder(st, nil)
		if _, err := a.Append(ctx, audit.MainChain, audit.KindStart, audit.Start{Workflow: "test", Input: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for _, r := range []*audit.Recorder{a, b} {
			wg.Go(func() {
				for i := range 8 {
					if _, err := r.Append(ctx, audit.MainChain, audit.KindClock, audit.Clock{Use: fmt.Sprint("paso ", i), At: time.Unix(0, 0)}); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		if err := (&audit.Scope{Recorder: a, Execution: "x-1", Chain: audit.MainChain}).End(ctx); err != nil {
			t.Fatal(err)
		}
		if lines, _ := st.Lines(ctx, audit.MainChain); len(lines) != 18 {
			t.Errorf("%d entries, want 18 (start, 16 readings, summary)", len(lines))
		}
		if ps, err := audit.Verify(ctx, st, nil); err != nil || len(ps) != 0 {
			t.Errorf("verify: %v %v", ps, err)
		}
	})

	if _, ok := newStore(t).(audit.Eraser); !ok {
		return
	}
	t.Run("a purge leaves a tombstone that verifies", func(t *testing.T) {
		ctx := t.Context()
		st := newStore(t)
		files, doc := Execution(t, st)
		if ps, err := audit.Verify(ctx, st, files.Read); err != nil || len(ps) != 0 {
			t.Fatalf("the record before the purge: %v %v", ps, err)
		}
		heads := map[string]string{}
		for _, c := range []string{audit.MainChain, "candidate/c-1"} {
			lines, _ := st.Lines(ctx, c)
			heads[c] = audit.Hash(lines[len(lines)-1])
		}
		by := audit.Tombstone{Execution: "x-1", PurgedAt: time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC), PurgedBy: "dpo@acme", Reason: "solicitud de supresión 42"}
		tomb, err := audit.Purge(ctx, st, st.(audit.Eraser), by)
		if err != nil {
			t.Fatalf("purge: %v", err)
		}
		if tomb.Heads[audit.MainChain] != heads[audit.MainChain] || tomb.Heads["candidate/c-1"] != heads["candidate/c-1"] ||
			tomb.Entries["candidate/c-1"] != 4 || !slices.Contains(tomb.Texts, doc) || len(tomb.Reports) != 1 || tomb.Reports[0] != audit.Hash(files["report.md"]) ||
			tomb.Search != "s-1" || tomb.Tenant != "acme" || tomb.Workflow != "test" {
			t.Errorf("tombstone %+v; want the heads %v, 4 entries of candidate/c-1, the document's and the report's hashes, search s-1 of acme", tomb, heads)
		}
		if chains, _ := st.Chains(ctx); !slices.Equal(chains, []string{audit.TombstoneChain}) {
			t.Errorf("chains after the purge %q, want only %q", chains, audit.TombstoneChain)
		}
		if _, err := st.Text(ctx, doc); err == nil {
			t.Error("the document's text is still held after the purge")
		}
		lines, _ := st.Lines(ctx, audit.TombstoneChain)
		for _, personal := range []string{"CV de la candidata", "sistema", "usuario", "report.md"} {
			if strings.Contains(string(lines[0]), personal) {
				t.Errorf("the tombstone holds %q: it keeps hashes only", personal)
			}
		}
		if ps, err := audit.Verify(ctx, st, files.Read); err != nil || len(ps) != 0 {
			t.Errorf("the purged record: %v %v; want it sound", ps, err)
		}
		again, err := audit.Purge(ctx, st, st.(audit.Eraser), audit.Tombstone{PurgedAt: time.Now(), PurgedBy: "otro", Reason: "otra vez"})
		if err != nil || again.PurgedBy != "dpo@acme" || !again.PurgedAt.Equal(by.PurgedAt) {
			t.Errorf("purged again: %+v %v; want the first tombstone, unchanged", again, err)
		}
	})

	t.Run("a purge cut short is finished by the next", func(t *testing.T) {
		ctx := t.Context()
		st := newStore(t)
		files, _ := Execution(t, st)
		by := audit.Tombstone{Execution: "x-1", PurgedAt: time.Now(), PurgedBy: "dpo@acme", Reason: "supresión"}
		if _, err := audit.Purge(ctx, st, failingEraser{}, by); err == nil || !strings.Contains(err.Error(), "purge again") {
			t.Fatalf("a purge whose erasure fails: %v; want an error saying to purge again", err)
		}
		ps, err := audit.Verify(ctx, st, files.Read)
		if err != nil || len(ps) == 0 || !strings.Contains(ps[0].String(), "the purge did not finish") {
			t.Errorf("verify after a purge cut short: %v %v; want it to say the purge did not finish", ps, err)
		}
		if _, err := audit.Purge(ctx, st, st.(audit.Eraser), audit.Tombstone{PurgedAt: time.Now(), PurgedBy: "dpo@acme", Reason: "supresión"}); err != nil {
			t.Fatal(err)
		}
		if ps, err := audit.Verify(ctx, st, files.Read); err != nil || len(ps) != 0 {
			t.Errorf("after the second purge: %v %v", ps, err)
		}
	})
}

type failingEraser struct{}

func (failingEraser) Erase(context.Context, string) error { return errors.New("the disk went away") }

// Files are the report files of a recorded execution, by path.
type Files map[string][]byte

// Read reads a file the record names (an audit.Files).
func (f Files) Read(_ context.Context, path string) ([]byte, error) {
	b, ok := f[path]
	if !ok {
		return nil, &veredicto.NotFoundError{What: "file " + path}
	}
	return b, nil
}

// Execution records a small execution of tenant acme's search s-1 into
// st: a start with one document, a model call, a gate, a report and the
// summary. It returns the report files and the document's hash.
func Execution(t *testing.T, st audit.Store) (Files, string) {
	t.Helper()
	ctx := t.Context()
	rec := audit.NewRecorder(st, nil)
	doc, err := rec.Text(ctx, "CV de la candidata")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rec.Append(ctx, audit.MainChain, audit.KindStart, audit.Start{Workflow: "test", Execution: "x-1", Tenant: "acme",
		Input: []byte(`{"search_id":"s-1"}`), Documents: map[string]string{"cv.md": doc}}); err != nil {
		t.Fatal(err)
	}
	cand := &audit.Scope{Recorder: rec, Execution: "x-1", Chain: "candidate/c-1", Candidate: "c-1"}
	cctx := audit.WithScope(ctx, cand)
	if err := cand.Observe(cctx, llm.Attempt{Request: llm.Request{Schema: "gem1", System: "sistema", User: "usuario"},
		Response: llm.Response{Content: []byte(`{"score":7}`)}, Number: 1}); err != nil {
		t.Fatal(err)
	}
	seven, six := 7.0, 6.0
	if err := cand.Decide(cctx, audit.Decision{Name: "gate_gem1", Score: &seven, Threshold: &six, Outcome: "supera_umbral"}); err != nil {
		t.Fatal(err)
	}
	files := Files{"report.md": []byte("# Informe\n")}
	if err := cand.Report(cctx, "report.md", files["report.md"]); err != nil {
		t.Fatal(err)
	}
	if _, err := rec.Append(ctx, "candidate/c-1", audit.KindDecision, audit.Decision{Name: "decision", Outcome: "APROBADO"}); err != nil {
		t.Fatal(err)
	}
	if err := (&audit.Scope{Recorder: rec, Execution: "x-1", Chain: audit.MainChain}).End(ctx); err != nil {
		t.Fatal(err)
	}
	return files, doc
}
