package labelstest_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/companion"
	"github.com/veredicto/veredicto/internal/debate"
	"github.com/veredicto/veredicto/internal/labels/labelstest"
)

// TestLeaksNamesWhatReachedTheSurface: the scanner catches what the
// issue found: codes instead of labels, English headings, seed 003's
// Portuguese; it lets Spanish through.
func TestLeaksNamesWhatReachedTheSurface(t *testing.T) {
	for _, bad := range []string{
		"Motivo: qa_aprobado", "Tipo: executive-search", "Tecnologías (madurez: mixed)", "## 1. Culture Radar",
		"CIRCUIT BREAKER ATIVADO", "Mantiene: Sim", "TIMEOUT: CEO em rodada 1", "Estado: RUNNING", "Decisión: ESCALADO_CONSULTOR_SENIOR",
		"Sensibilidad: high", "Divergências", "## Circuit breaker", "el council decide", "Ítem 1 · Validate",
	} {
		if len(labelstest.Leaks(bad)) == 0 {
			t.Errorf("%q passes as Spanish", bad)
		}
	}
	for _, good := range []string{
		"Motivo: Aprobado por la auditoría QA", "Tipo: Búsqueda", "Recomendación de GEM3: **sí**", "Informe de c-005 · confirmación `cf_2ebbb53c5994d03a66cc15d6af3c5a83`",
		"El debate terminó con una decisión.", "Cumple: transferible, parcial", "Decide con: veredicto confirm approve|reject cf_x --data .veredicto-local",
	} {
		if leaks := labelstest.Leaks(good); len(leaks) > 0 {
			t.Errorf("%q leaks %v", good, leaks)
		}
	}
}

// TestSearchReportsAreSpanish reads the example search's reports and
// summary as the offline analyst renders them (testdata/golden, which
// TestExampleGolden keeps equal to what RenderReport and RenderSummary
// write).
func TestSearchReportsAreSpanish(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "search", "offline", "testdata", "golden", "*.md"))
	more, _ := filepath.Glob(filepath.Join("..", "..", "search", "offline", "testdata", "golden", "*", "report.md"))
	files = append(files, more...)
	if len(files) != 7 {
		t.Fatalf("found %d rendered reports, want 6 reports and the summary", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		labelstest.Check(t, f, string(b))
	}
}

// TestCompanionReportIsSpanish renders the career companion's report of
// the example application (offline, full mode: every phase that writes).
func TestCompanionReportIsSpanish(t *testing.T) {
	jd, err := os.ReadFile("../../../examples/companion/jd.md")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("../../../examples/companion/profile.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := companion.ParseProfile("profile.yaml", raw)
	if err != nil {
		t.Fatal(err)
	}
	a := companion.Offline{Now: func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }}
	for _, mode := range []string{companion.ModeFull, companion.ModeScreening} {
		c, err := companion.NewContext("profile.yaml", string(jd), p, mode, "Andes Fintech", "", a.Info())
		if err != nil {
			t.Fatal(err)
		}
		r := &companion.Runner{Analyst: a, Engine: companion.NewEngine(companion.DefaultConfig()),
			Save: func(context.Context, *companion.Context) error { return nil }, Emit: func(companion.Event) {}}
		if err := r.Run(context.Background(), c); err != nil {
			t.Fatal(err)
		}
		rep := companion.Report(c)
		if !strings.Contains(rep, "## 1. Radar cultural") {
			t.Fatalf("the %s report has no culture radar:\n%s", mode, rep)
		}
		labelstest.Check(t, "companion report ("+mode+")", rep, c.ApplicationID)
	}
}

// TestDebateReportIsSpanish runs the example debate offline and reads its
// debate.md: seed 003's Portuguese labels and codes stay in
// debate_log.yaml (data), never in what a consultant reads.
func TestDebateReportIsSpanish(t *testing.T) {
	raw, err := os.ReadFile("../../../examples/debate/QUESTION.yaml")
	if err != nil {
		t.Fatal(err)
	}
	q, err := debate.ParseQuestion("QUESTION.yaml", raw)
	if err != nil {
		t.Fatal(err)
	}
	chunks, err := debate.LoadKnowledge("../../../examples/debate/knowledge")
	if err != nil {
		t.Fatal(err)
	}
	ix := debate.NewIndex(chunks)
	e := &debate.Engine{Agents: debate.Offline{}, Retriever: debate.IndexRetriever{Index: ix}, Chunks: ix.Len(), OptionalCouncil: true,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Now:    func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }, NewID: func() string { return "d-1" }}
	r, err := e.Run(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	md := r.Markdown()
	if len(r.Rounds) == 0 || !strings.Contains(md, "Ronda") {
		t.Fatalf("the debate ran no round, or its report names none:\n%s", md)
	}
	labelstest.Check(t, "debate.md", md)
}
