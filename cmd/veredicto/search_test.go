package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/labels/labelstest"
	"github.com/veredicto/veredicto/internal/llm/llmtest"
)

func TestSearchRunExample(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, "", "search", "run", "../../examples/search-demo", "--out", out, "--llm", "offline", "--data", t.TempDir())
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, id := range []string{"c-001", "c-002", "c-003", "c-004", "c-005", "c-006"} {
		if !strings.Contains(stdout, id) {
			t.Errorf("stdout does not list %s:\n%s", id, stdout)
		}
		for _, f := range []string{"report.json", "report.md"} {
			if _, err := os.Stat(filepath.Join(out, id, f)); err != nil {
				t.Error(err)
			}
		}
	}
	for _, f := range []string{"summary.json", "summary.md"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(stderr, "offline lexical baseline") || !strings.Contains(stderr, "c-003") {
		t.Errorf("stderr lacks the offline notice or per-candidate progress:\n%s", stderr)
	}
}

func TestSearchRunBlocksOnMissingRequiredDocument(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "jd.md", "# CFO\n## Requisitos\n- SAP\n")
	writeFile(t, dir, "candidates/c-001/cv.md", "### CFO — X (2015–2020)\n")
	srv := llmtest.NewServer(t, func(llmtest.Call) llmtest.Reply { return llmtest.Reply{Status: 500} })
	env := map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": srv.BaseURL(), "OPENAI_MODEL": "m"}
	var stdout, stderr bytes.Buffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr}
	cfg := searchRunConfig{dir: dir, out: t.TempDir()}
	code := m.searchRun(context.Background(), cfg, func(k string) string { return env[k] })
	if code != exitUsage || !strings.Contains(stderr.String(), "kickoff.md") {
		t.Errorf("exit %d, stderr %q; want exit 2 naming kickoff.md", code, stderr.String())
	}
	if n := len(srv.Calls()); n != 0 {
		t.Errorf("%d LLM calls on a blocked search, want none", n)
	}
}

func TestSearchRunBadInvocations(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"search", "run", "../../examples/search-demo", "--llm", "magic"}, "--llm must be offline or openai"},
		{[]string{"search", "run", "../../examples/search-demo", "--concurrency", "-1"}, "--concurrency must be positive"},
		{[]string{"search", "run", "nope-folder"}, "nope-folder is not a folder"},
		{[]string{"search", "run"}, "want exactly one search folder"},
		{[]string{"search"}, "Usage: veredicto search run"},
	}
	for _, tt := range tests {
		code, _, stderr := runCLI(t, "", tt.args...)
		if code != exitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 mentioning %q", tt.args, code, stderr, tt.want)
		}
	}
}

func TestSearchRunFriendlyErrors(t *testing.T) {
	noCandidates := t.TempDir()
	writeFile(t, noCandidates, "jd.md", "# CFO\n")
	writeFile(t, noCandidates, "kickoff.md", "Kickoff\n")
	outFile := filepath.Join(t.TempDir(), "report.txt")
	if err := os.WriteFile(outFile, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "private.md")
	if err := os.WriteFile(outside, []byte("PRIVADO"), 0o644); err != nil {
		t.Fatal(err)
	}
	linked := t.TempDir()
	writeFile(t, linked, "jd.md", "# CFO\n")
	writeFile(t, linked, "kickoff.md", "Kickoff\n")
	writeFile(t, linked, "candidates/c-1/cv.md", "CV\n")
	if err := os.Symlink(outside, filepath.Join(linked, "candidates", "c-1", "interview.md")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no candidates", []string{"search", "run", noCandidates, "--llm", "offline", "--out", t.TempDir()}, "has no candidates: add a folder candidates/<id>/"},
		{"out is a file", []string{"search", "run", "../../examples/search-demo", "--llm", "offline", "--out", outFile}, "--out " + outFile + " is a file"},
		{"link outside the folder", []string{"search", "run", linked, "--llm", "offline", "--out", t.TempDir()}, "candidates/c-1/interview.md: is a symbolic link; upload the file itself"},
		{"document over the limit", []string{"search", "run", "../../examples/search-demo", "--llm", "offline", "--max-document-kib", "1", "--out", t.TempDir()}, "1 KiB per-document limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, "", tt.args...)
			if code != exitUsage || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 with %q", code, stderr, tt.want)
			}
			for _, raw := range []string{"*veredicto.", "errorType", "{\"", "PRIVADO"} {
				if strings.Contains(stderr, raw) {
					t.Errorf("stderr shows %q: %s", raw, stderr)
				}
			}
		})
	}
}

func TestSearchRerunSaysWhatWasReused(t *testing.T) {
	out := t.TempDir()
	args := []string{"search", "run", "../../examples/search-demo", "--out", out, "--llm", "offline", "--data", t.TempDir()}
	code, stdout, _ := runCLI(t, "", args...)
	if code != exitOK || strings.Contains(stdout, "Reutilizadas de la caché") {
		t.Fatalf("first run: exit %d, stdout %q; want success with nothing reused", code, stdout)
	}
	code, stdout, stderr := runCLI(t, "", args...)
	if code != exitOK {
		t.Fatalf("re-run: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"Reutilizadas de la caché", ".veredicto"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("re-run stdout lacks %q:\n%s", want, stdout)
		}
	}
	for _, want := range []string{"búsqueda  GEM5 mandato reutilizado de la caché", "c-002     → Descartado en GEM1 (trayectoria y logros): no alcanzó el umbral de GEM1 — reutilizado de la caché: GEM1\n"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("re-run stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// TestSearchRerunNamesStaleReports: a candidate removed from the search
// keeps its old report in --out; the re-run says so instead of leaving it
// beside the new ones unmentioned.
func TestSearchRerunNamesStaleReports(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../../examples/search-demo")); err != nil {
		t.Fatal(err)
	}
	args := []string{"search", "run", dir, "--out", out, "--llm", "offline", "--data", t.TempDir()}
	if code, _, stderr := runCLI(t, "", args...); code != exitOK || strings.Contains(stderr, "earlier run") {
		t.Fatalf("first run: exit %d\n%s", code, stderr)
	}
	if err := os.RemoveAll(filepath.Join(dir, "candidates", "c-006")); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "", args...)
	if code != exitOK || !strings.Contains(stderr, filepath.Join(out, "c-006")+" holds reports of an earlier run") || strings.Contains(stderr, filepath.Join(out, "c-001")+",") {
		t.Errorf("re-run without c-006: exit %d\n%s", code, stderr)
	}
}

// TestSearchLinesAreSpanish: what search run and confirm list print about
// the consultant's work (results, progress, the pending review and its
// preview) is Spanish through the label table; only the operator's
// notice (LLM:) and warnings stay English.
func TestSearchLinesAreSpanish(t *testing.T) {
	out, data := t.TempDir(), t.TempDir()
	code, stdout, stderr := runCLI(t, "", "search", "run", "../../examples/search-demo", "--out", out, "--llm", "offline", "--data", data)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var progress []string
	for _, l := range strings.Split(stderr, "\n") {
		if !strings.HasPrefix(l, "LLM: ") && !strings.HasPrefix(l, "warning: ") {
			progress = append(progress, l)
		}
	}
	labelstest.Check(t, "search run stdout", stdout, "demo-cfo-andina")
	labelstest.Check(t, "search run progress", strings.Join(progress, "\n"), "demo-cfo-andina")
	code, list, errs := runCLI(t, "", "confirm", "list", "--data", data)
	if code != exitOK || !strings.Contains(list, "Paquete de escalamiento") {
		t.Fatalf("confirm list: exit %d\n%s%s", code, list, errs)
	}
	labelstest.Check(t, "confirm list", list, "demo-cfo-andina")
}

// TestSearchProgressPace: after each candidate's first decision the
// progress says how many of how many are evaluated, the time so far and,
// from that pace, about how long the rest takes; a review's later
// decision counts no candidate twice.
func TestSearchProgressPace(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, "d")
	now := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	p.now = func() time.Time { return now }
	p.event(asl.Event{Type: "TaskSucceeded", State: "Validate", Output: map[string]any{"search_id": "s", "candidates": []any{"c-1", "c-2", "c-3", "c-4"}}})
	report := func(id, decision string) {
		p.event(asl.Event{Type: "TaskSucceeded", State: "Report", Output: map[string]any{"candidate_id": id, "decision": decision, "reason": "gate_gem1"}})
	}
	now = now.Add(10 * time.Second)
	report("c-2", "DESCARTADO_GEM1")
	now = now.Add(70 * time.Second)
	report("c-1", "ESCALADO_CONSULTOR_SENIOR")
	p.event(asl.Event{Type: "TaskSucceeded", State: "ReportReviewed", Output: map[string]any{"candidate_id": "c-1", "decision": "APROBADO_POR_CONSULTOR", "reason": "qa_aprobado"}})
	report("c-3", "APROBADO")
	report("c-4", "APROBADO")
	got := buf.String()
	for _, want := range []string{
		"búsqueda s: 4 candidatos\n",
		"          1 de 4 evaluados · 10 s · faltan unos 30 s\n",
		"          2 de 4 evaluados · 1 min 20 s · faltan unos 1 min 20 s\n",
		"          4 de 4 evaluados · 1 min 20 s · falta el resumen\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("progress lacks %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, " evaluados"); n != 4 {
		t.Errorf("%d pace lines, want one per candidate:\n%s", n, got)
	}
}

// TestFailureMessage: a failed run says its cause's sentence, or, when
// there is none (a timeout), its error's name rather than nothing.
func TestFailureMessage(t *testing.T) {
	for _, tt := range []struct{ errName, cause, want string }{
		{"TransientError", `{"errorMessage":"the model did not answer","errorType":"TransientError"}`, "the model did not answer"},
		{"States.Runtime", "plain words", "plain words"},
		{"States.Timeout", "", "States.Timeout"},
	} {
		if got := failureMessage(tt.errName, tt.cause); got != tt.want {
			t.Errorf("failureMessage(%q, %q) = %q, want %q", tt.errName, tt.cause, got, tt.want)
		}
	}
}
