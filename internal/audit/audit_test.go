package audit_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/llm"
)

// record writes a small execution: a start with one document, a model
// call in a candidate's chain, a gate, a report file, a human decision
// and the summary. It returns the record's folder and the reports'.
func record(t *testing.T) (dir, files string) {
	t.Helper()
	ctx := context.Background()
	dir, files = t.TempDir(), t.TempDir()
	rec := audit.NewRecorder(audit.NewDir(dir), nil)
	main := &audit.Scope{Recorder: rec, Execution: "x-1", Chain: audit.MainChain}
	doc, err := rec.Text(ctx, "CV de la candidata")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rec.Append(ctx, audit.MainChain, audit.KindStart, audit.Start{Workflow: "test", Execution: "x-1",
		Input: []byte(`{}`), Documents: map[string]string{"cv.md": doc}}); err != nil {
		t.Fatal(err)
	}
	cand := &audit.Scope{Recorder: rec, Execution: "x-1", Chain: "candidate/c-1", Candidate: "c-1"}
	cctx := audit.WithScope(ctx, cand)
	req := llm.Request{Schema: "gem1", System: "sistema", User: "usuario"}
	if err := cand.Observe(cctx, llm.Attempt{Request: req, Response: llm.Response{Content: []byte(`{"score":7}`)}, Number: 1}); err != nil {
		t.Fatal(err)
	}
	seven, six := 7.0, 6.0
	if err := cand.Decide(cctx, audit.Decision{Name: "gate_gem1", Score: &seven, Threshold: &six, Outcome: "supera_umbral"}); err != nil {
		t.Fatal(err)
	}
	report := []byte("# Informe\n")
	if err := os.WriteFile(filepath.Join(files, "report.md"), report, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := cand.Report(cctx, "report.md", report); err != nil {
		t.Fatal(err)
	}
	if err := cand.Human(cctx, audit.HumanDecision{Confirmation: "cf_1", Status: "approved", Principal: "ana", DecidedAt: time.Now(), Preview: audit.Hash([]byte("{}"))}); err != nil {
		t.Fatal(err)
	}
	if err := cand.Decide(cctx, audit.Decision{Name: "decision", Outcome: "APROBADO_POR_CONSULTOR", Confirmation: "cf_1", Applies: "approved"}); err != nil {
		t.Fatal(err)
	}
	if err := main.End(ctx); err != nil {
		t.Fatal(err)
	}
	return dir, files
}

func verify(t *testing.T, dir, files string) []audit.Problem {
	t.Helper()
	ps, err := audit.Verify(context.Background(), audit.NewDir(dir), func(_ context.Context, p string) ([]byte, error) {
		return os.ReadFile(filepath.Join(files, filepath.FromSlash(p)))
	})
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

func chainFile(dir, chain string) string {
	return filepath.Join(dir, "chains", strings.ReplaceAll(chain, "/", "%2F")+".jsonl")
}

func editLines(t *testing.T, p string, edit func([][]byte) [][]byte) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
	lines = edit(lines)
	if err := os.WriteFile(p, append(bytes.Join(lines, []byte("\n")), '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestASoundRecordVerifies(t *testing.T) {
	dir, files := record(t)
	if ps := verify(t, dir, files); len(ps) != 0 {
		t.Fatalf("a sound record: %v", ps)
	}
}

// TestTamperingNamesTheFirstBadEntry: changing any byte of an entry,
// removing or reordering entries, changing a stored text or a report,
// each fails verification at the place it happened.
func TestTamperingNamesTheFirstBadEntry(t *testing.T) {
	const cand = "candidate/c-1"
	tests := []struct {
		name   string
		tamper func(t *testing.T, dir, files string)
		want   string
	}{
		{"one byte of an entry", func(t *testing.T, dir, _ string) {
			editLines(t, chainFile(dir, cand), func(ls [][]byte) [][]byte {
				ls[1] = bytes.Replace(ls[1], []byte(`"supera_umbral"`), []byte(`"supera_umbrax"`), 1)
				return ls
			})
		}, "candidate/c-1 entry 2: does not follow entry 1"},
		{"a line removed", func(t *testing.T, dir, _ string) {
			editLines(t, chainFile(dir, cand), func(ls [][]byte) [][]byte { return append(ls[:1:1], ls[2:]...) })
		}, "candidate/c-1 entry 1: is numbered 2"},
		{"two lines swapped", func(t *testing.T, dir, _ string) {
			editLines(t, chainFile(dir, cand), func(ls [][]byte) [][]byte { ls[1], ls[2] = ls[2], ls[1]; return ls })
		}, "candidate/c-1 entry 1: is numbered 2"},
		{"the last line removed", func(t *testing.T, dir, _ string) {
			editLines(t, chainFile(dir, cand), func(ls [][]byte) [][]byte { return ls[:len(ls)-1] })
		}, "the summary counts 5 entries; the chain holds 4"},
		{"the summary removed", func(t *testing.T, dir, _ string) {
			editLines(t, chainFile(dir, audit.MainChain), func(ls [][]byte) [][]byte { return ls[:len(ls)-1] })
		}, "the record has no summary"},
		{"a report edited", func(t *testing.T, _, files string) {
			os.WriteFile(filepath.Join(files, "report.md"), []byte("# Informe corregido\n"), 0o600)
		}, "candidate/c-1 entry 2: records report.md, which was changed after it was written"},
		{"a stored text edited", func(t *testing.T, dir, _ string) {
			p := filepath.Join(dir, "texts", audit.Hash([]byte("CV de la candidata")))
			os.WriteFile(p, []byte("CV cambiado"), 0o600)
		}, "main entry 0: names the document cv.md"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, files := record(t)
			tt.tamper(t, dir, files)
			ps := verify(t, dir, files)
			var got []string
			for _, p := range ps {
				got = append(got, p.String())
			}
			if len(ps) == 0 || !strings.Contains(got[0], tt.want) {
				t.Errorf("problems %q, want the first to say %q", got, tt.want)
			}
		})
	}
}

// TestADecisionAppliedFromAnExpiredReviewContradicts: a review recorded
// expired and a decision applied from it cannot both be true, though
// every entry links.
func TestADecisionAppliedFromAnExpiredReviewContradicts(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	rec := audit.NewRecorder(audit.NewDir(dir), nil)
	s := &audit.Scope{Recorder: rec, Execution: "x", Chain: audit.MainChain}
	rec.Append(ctx, audit.MainChain, audit.KindStart, audit.Start{Workflow: "test", Input: []byte(`{}`)})
	s.Human(ctx, audit.HumanDecision{Confirmation: "cf_9", Status: "expired"})
	s.Decide(ctx, audit.Decision{Name: "decision", Outcome: "APROBADO_POR_CONSULTOR", Confirmation: "cf_9", Applies: "approved"})
	s.Decide(ctx, audit.Decision{Name: "decision", Outcome: "APROBADO_POR_CONSULTOR", Confirmation: "cf_404", Applies: "approved"})
	s.End(ctx)
	ps := verify(t, dir, t.TempDir())
	if len(ps) != 2 || !strings.Contains(ps[0].String(), "applies confirmation cf_9 as approved; main entry 1 recorded it expired") ||
		!strings.Contains(ps[1].String(), "cf_404, of which the record holds no decision") {
		t.Errorf("problems %v", ps)
	}
}

// TestConcurrentWritersOfOneChain: two recorders of one record (two
// Lambdas of one execution) appending to the main chain at once keep one
// unbroken chain: a taken sequence number is read again, never lost.
func TestConcurrentWritersOfOneChain(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a, b := audit.NewRecorder(audit.NewDir(dir), nil), audit.NewRecorder(audit.NewDir(dir), nil)
	a.Append(ctx, audit.MainChain, audit.KindStart, audit.Start{Workflow: "test", Input: []byte(`{}`)})
	var wg sync.WaitGroup
	for _, r := range []*audit.Recorder{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if _, err := r.Append(ctx, audit.MainChain, audit.KindClock, audit.Clock{Use: "x", At: time.Now()}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	(&audit.Scope{Recorder: a, Chain: audit.MainChain}).End(ctx)
	lines, _ := audit.NewDir(dir).Lines(ctx, audit.MainChain)
	if len(lines) != 42 {
		t.Errorf("%d entries, want 42", len(lines))
	}
	if ps := verify(t, dir, t.TempDir()); len(ps) != 0 {
		t.Errorf("problems %v", ps)
	}
}

// TestReplayAnswersByRequestHash: a replay answers a request the run made
// with the recorded answer, in order, and names the agent and candidate
// of a request the run did not make.
func TestReplayAnswersByRequestHash(t *testing.T) {
	ctx := context.Background()
	dir, _ := record(t)
	r, err := audit.OpenReplay(ctx, audit.NewDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	sc := &audit.Scope{Recorder: audit.NewRecorder(audit.NewDir(out), nil), Execution: "x-1", Chain: "candidate/c-1", Candidate: "c-1", Replay: r}
	cctx := audit.WithScope(ctx, sc)
	resp, err := r.Complete(cctx, llm.Request{Schema: "gem1", System: "sistema", User: "usuario"})
	if err != nil || string(resp.Content) != `{"score":7}` {
		t.Fatalf("answer %s, %v", resp.Content, err)
	}
	_, err = r.Complete(cctx, llm.Request{Schema: "gem1", System: "sistema", User: "usuario cambiado"})
	var d *audit.DivergedError
	if !errors.As(err, &d) || d.Agent != "gem1" || d.Candidate != "c-1" || !strings.Contains(err.Error(), "gem1 for candidate c-1") {
		t.Errorf("a changed request: %v", err)
	}
	if r.Diverged() == nil {
		t.Error("the replay did not keep its divergence")
	}
	if veredicto.ErrorName(err) != "ReplayDivergedError" {
		t.Errorf("error name %q", veredicto.ErrorName(err))
	}
}

// TestTextsAreStoredOnce: a text recorded twice is one file.
func TestTextsAreStoredOnce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	rec := audit.NewRecorder(audit.NewDir(dir), nil)
	for range 3 {
		if _, err := rec.Text(ctx, "el mismo prompt"); err != nil {
			t.Fatal(err)
		}
	}
	ents, _ := os.ReadDir(filepath.Join(dir, "texts"))
	if len(ents) != 1 {
		t.Errorf("%d text files, want 1", len(ents))
	}
	if _, err := audit.NewDir(dir).Text(ctx, "../../etc/passwd"); err == nil {
		t.Error("a text name that is not a hash was read")
	}
}

// TestDirHeadIsLinesHead: the head Scope.End reads without keeping every
// line is the one Lines gives, for a chain as written and as damaged.
func TestDirHeadIsLinesHead(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	d := audit.NewDir(root)
	rec := audit.NewRecorder(d, nil)
	for i := range 3 {
		if _, err := rec.Append(ctx, "candidate/c-1", audit.KindClock, audit.Clock{Use: fmt.Sprint("use ", i)}); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(root, "chains", "candidate%2Fc-1.jsonl")
	written, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"written":         string(written),
		"no last newline": strings.TrimSuffix(string(written), "\n"),
		"carriage return": string(written) + "{\"x\":1}\r\n",
		"blank lines":     string(written) + "\n\n",
		"empty":           "",
	} {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			lines, err := d.Lines(ctx, "candidate/c-1")
			if err != nil {
				t.Fatal(err)
			}
			want, n := audit.Genesis("candidate/c-1"), len(lines)
			if n > 0 {
				want = audit.Hash(lines[n-1])
			}
			if got, gotN, err := d.Head(ctx, "candidate/c-1"); err != nil || got != want || gotN != n {
				t.Errorf("Head: %s %d %v, want %s %d", got, gotN, err, want, n)
			}
		})
	}
	if got, n, err := d.Head(ctx, "candidate/none"); err != nil || got != audit.Genesis("candidate/none") || n != 0 {
		t.Errorf("missing chain: %s %d %v", got, n, err)
	}
}

// TestDirHeadOfAChainItWrote: the Dir that appended to a chain reads only
// its last line for Head (it knows the length), and gives what a Dir
// reading the whole chain gives, for lines shorter and longer than its
// first read from the end; once another writer appends, it counts again.
func TestDirHeadOfAChainItWrote(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	mine, other := audit.NewDir(root), audit.NewDir(root)
	rec := audit.NewRecorder(mine, nil)
	same := func(step string) {
		t.Helper()
		got, gotN, err := mine.Head(ctx, "candidate/c-1")
		want, wantN, werr := audit.NewDir(root).Head(ctx, "candidate/c-1")
		if err != nil || werr != nil || got != want || gotN != wantN {
			t.Errorf("%s: Head %s %d %v; read whole: %s %d %v", step, got, gotN, err, want, wantN, werr)
		}
	}
	for i, size := range []int{10, 40 << 10, 300 << 10, 10} {
		if _, err := rec.Append(ctx, "candidate/c-1", audit.KindClock, audit.Clock{Use: strings.Repeat("x", size)}); err != nil {
			t.Fatal(err)
		}
		same(fmt.Sprintf("after entry %d (%d bytes)", i+1, size))
	}
	if err := other.AppendLines(ctx, "candidate/c-1", 4, [][]byte{[]byte(`{"other":"writer"}`)}); err != nil {
		t.Fatal(err)
	}
	if _, n, err := mine.Head(ctx, "candidate/c-1"); err != nil || n != 5 {
		t.Errorf("after another writer's entry: %d entries, %v; want 5", n, err)
	}
	same("after another writer's entry")
}

// TestFoldersSyncedOnReport: a record kept with SyncOnReport writes each
// step's entries at once (a process that dies keeps them: they are in the
// file), leaves their fsync to Sync, and Folders.Sync reaches its record.
// It keeps one record only.
func TestFoldersSyncedOnReport(t *testing.T) {
	ctx := context.Background()
	f := &audit.Folders{Root: t.TempDir(), Single: true, SyncOnReport: true}
	rec, err := f.Open(ctx, "", "x-1")
	if err != nil {
		t.Fatal(err)
	}
	for _, chain := range []string{audit.MainChain, "candidate/c-1"} {
		if _, err := rec.Append(ctx, chain, audit.KindClock, audit.Clock{Use: "start"}); err != nil {
			t.Fatal(err)
		}
	}
	if lines, err := audit.NewDir(f.Root).Lines(ctx, "candidate/c-1"); err != nil || len(lines) != 1 {
		t.Fatalf("an entry not synced yet is not in the file: %d lines, %v", len(lines), err)
	}
	if err := rec.Sync(ctx, "candidate/c-1"); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := (&audit.Folders{Root: t.TempDir(), SyncOnReport: true}).Open(ctx, "", "x-1"); err == nil {
		t.Error("SyncOnReport opened a record per execution; want it refused without Single")
	}
}

// TestHashStringIsHash: a text hashes as its bytes do, the empty one too.
func TestHashStringIsHash(t *testing.T) {
	for _, s := range []string{"", "a", "mensaje del sistema\n", strings.Repeat("ñ", 40<<10)} {
		if got, want := audit.HashString(s), audit.Hash([]byte(s)); got != want {
			t.Errorf("HashString(%d bytes) = %s, want %s", len(s), got, want)
		}
	}
}

// TestSyncNamesEveryChainItCouldNotSync: a summary's sync of every chain
// makes them durable several at once, and one that fails does not hide
// another: each is named, and each stays to be synced again.
func TestSyncNamesEveryChainItCouldNotSync(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	d := audit.NewDirSyncedOnReport(root)
	var chains []string
	for i := range 40 {
		c := fmt.Sprintf("candidate/c-%03d", i)
		chains = append(chains, c)
		if err := d.AppendLines(ctx, c, 0, [][]byte{[]byte(`{"n":1}`)}); err != nil {
			t.Fatal(err)
		}
	}
	gone := []string{"candidate/c-007", "candidate/c-031"}
	for _, c := range gone {
		if err := os.Remove(filepath.Join(root, "chains", url.PathEscape(c)+".jsonl")); err != nil {
			t.Fatal(err)
		}
	}
	err := d.Sync(ctx)
	for _, c := range gone {
		if err == nil || !strings.Contains(err.Error(), c) {
			t.Errorf("Sync: %v; want it to name %s", err, c)
		}
	}
	if err := d.Sync(ctx, gone[0]); err == nil {
		t.Errorf("%s is no longer to be synced after its sync failed", gone[0])
	}
}
