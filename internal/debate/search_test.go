package debate

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/veredicto/veredicto"
)

func TestFromSearch(t *testing.T) {
	out := t.TempDir()
	cand := filepath.Join(out, "c-005")
	writeFile(t, filepath.Join(cand, "report.json"), `{"search_id":"s1","candidate_id":"c-005","decision":"ESCALADO_CONSULTOR_SENIOR","escalation":{"motivo":"contradicciones entre CV y entrevista"}}`)
	writeFile(t, filepath.Join(cand, "report.md"), "# Informe\n\nContradicciones en el tamaño del equipo.")
	writeFile(t, filepath.Join(out, "summary.md"), "# Resumen de la búsqueda")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "jd.md"), "Cargo: CFO.")
	writeFile(t, filepath.Join(dir, "candidates/c-005/cv.md"), "CV de c-005.")
	writeFile(t, filepath.Join(dir, "candidates/c-001/cv.md"), "CV de otra persona.")

	q, docs, err := FromSearch(cand, dir)
	if err != nil {
		t.Fatal(err)
	}
	var sources []string
	for _, c := range Chunks(docs) {
		sources = append(sources, c.Source)
	}
	if got := strings.Join(sources, ","); got != "informe/c-005/report.md,informe/summary.md,candidates/c-005/cv.md,jd.md" {
		t.Errorf("knowledge sources %s: want the report, the summary, the shared documents and only c-005's own", got)
	}
	if !strings.Contains(q.Question, "c-005") || !strings.Contains(q.Question, "contradicciones entre CV y entrevista") || len(q.Participants) != 4 {
		t.Errorf("question %q with %d participants", q.Question, len(q.Participants))
	}
	if q.Config.Debate.Rounds.Max != 3 {
		t.Error("the default question has no defaults")
	}

	writeFile(t, filepath.Join(cand, "report.json"), `{"search_id":"s1","candidate_id":"c-005","decision":"APROBADO"}`)
	_, _, err = FromSearch(cand, "")
	var ie *veredicto.InvalidInputError
	if !errors.As(err, &ie) || ie.Field != "decision" {
		t.Errorf("a candidate not escalated: err = %v, want InvalidInputError on decision", err)
	}
	if _, _, err := FromSearch(filepath.Join(out, "c-404"), ""); !errors.As(err, &ie) {
		t.Errorf("a missing report: err = %v", err)
	}
}

// TestAQuestionMadeInCodeReadsBack: the question FromSearch makes is what
// a debate's record keeps as QUESTION.yaml; read back it is the same.
func TestAQuestionMadeInCodeReadsBack(t *testing.T) {
	out := t.TempDir()
	cand := filepath.Join(out, "c-005")
	writeFile(t, filepath.Join(cand, "report.json"), `{"search_id":"s1","candidate_id":"c-005","decision":"ESCALADO_CONSULTOR_SENIOR","escalation":{"motivo":"contradicciones: equipo de 40 vs 12"}}`)
	writeFile(t, filepath.Join(cand, "report.md"), "# Informe")
	q, _, err := FromSearch(cand, "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := MarshalQuestion(q)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseQuestion("QUESTION.yaml", b)
	if err != nil {
		t.Fatalf("the question written does not read back: %v\n%s", err, b)
	}
	if !reflect.DeepEqual(back, q) {
		t.Errorf("read back %+v\nwant %+v", back, q)
	}
}
