package debate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/search"
)

// SearchCommittee is the default committee of a debate on an escalated
// candidate of an executive search.
var SearchCommittee = []Participant{
	{ID: "cfo", Brief: "Director financiero: costo total de la contratación, banda salarial y retorno esperado."},
	{ID: "chro", Brief: "Dirección de personas: cultura, retención del equipo, riesgo de liderazgo y referencias."},
	{ID: "ceo", Brief: "Dirección general: urgencia del cargo, plazo de la transición y reputación de la empresa."},
	{ID: "consultor-senior", Brief: "Consultor senior de la búsqueda: evidencia del informe, contradicciones detectadas y lo que falta verificar."},
}

// SearchOptions are the recommendations of a debate on an escalated candidate.
var SearchOptions = []string{"avanzar con la oferta", "pedir más evidencia antes de decidir", "descartar la candidatura"}

// FromSearch prepares a debate on an escalated candidate of an executive
// search: candDir is OUT/<candidate> (its report.json must say
// ESCALADO_CONSULTOR_SENIOR), searchDir the search folder or "" . The
// knowledge base is the candidate's report.md, the search's summary.md, and
// with searchDir the search's shared documents and this candidate's own
// documents (never another candidate's), not chunked (see Chunks). The
// question names the candidate and the escalation's reason.
func FromSearch(candDir, searchDir string) (Question, []Document, error) {
	reportPath := filepath.Join(candDir, "report.json")
	data, err := os.ReadFile(reportPath)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Question{}, nil, &veredicto.InvalidInputError{File: reportPath, Problem: "does not exist: give OUT/<candidate> of a finished search run"}
		}
		return Question{}, nil, fmt.Errorf("read %s: %w", reportPath, err)
	}
	var rep struct {
		SearchID    string `json:"search_id"`
		CandidateID string `json:"candidate_id"`
		Decision    string `json:"decision"`
		Escalation  *struct {
			Reason string `json:"motivo"`
		} `json:"escalation"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		return Question{}, nil, &veredicto.InvalidInputError{File: reportPath, Problem: "is not a search report (invalid JSON)"}
	}
	if !validID(rep.CandidateID) {
		return Question{}, nil, &veredicto.InvalidInputError{File: reportPath, Field: "candidate_id", Problem: "is missing or invalid"}
	}
	if rep.Decision != search.DecisionEscalated {
		return Question{}, nil, &veredicto.InvalidInputError{File: reportPath, Field: "decision",
			Problem: fmt.Sprintf("is %s: a search debate is for a candidate escalated to the senior consultant (%s)", rep.Decision, search.DecisionEscalated)}
	}
	var docs []Document
	md, err := os.ReadFile(filepath.Join(candDir, "report.md"))
	if err != nil {
		return Question{}, nil, &veredicto.InvalidInputError{File: filepath.Join(candDir, "report.md"), Problem: "cannot be read: the candidate's report is the debate's first evidence"}
	}
	docs = append(docs, Document{Source: "informe/" + rep.CandidateID + "/report.md", Text: string(md)})
	if sum, err := os.ReadFile(filepath.Join(filepath.Dir(filepath.Clean(candDir)), "summary.md")); err == nil && len(sum) <= MaxKnowledgeFile {
		docs = append(docs, Document{Source: "informe/summary.md", Text: string(sum)})
	}
	if searchDir != "" {
		own, err := loadDocuments(searchDir, func(p string) bool {
			parts := strings.Split(p, "/")
			return parts[0] != "candidates" || len(parts) == 1 || parts[1] == rep.CandidateID
		})
		if err != nil {
			return Question{}, nil, err
		}
		docs = append(docs, own...)
	}
	reason := "contradicciones o bloqueos de la evaluación"
	if rep.Escalation != nil && strings.TrimSpace(rep.Escalation.Reason) != "" {
		reason = oneLine(rep.Escalation.Reason)
	}
	q := Question{
		Question:     fmt.Sprintf("¿Avanzamos con la oferta a %s (búsqueda %s), escalado al consultor senior por: %s?", rep.CandidateID, rep.SearchID, reason),
		Options:      append([]string(nil), SearchOptions...),
		Participants: append([]Participant(nil), SearchCommittee...),
		Mode:         ModeAuto,
		Config:       Config{}.withDefaults(),
	}
	if len([]rune(q.Question)) > MaxQuestionLen {
		q.Question = string([]rune(q.Question)[:MaxQuestionLen-1]) + "?"
	}
	return q, docs, nil
}
