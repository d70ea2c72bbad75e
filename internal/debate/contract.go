package debate

import (
	"fmt"
	"strings"
)

// Schema names of the LLM calls: the four answers, and the retrieval
// tool's request (an agent asks what to look up before it answers).
const (
	SchemaPosition  = "debate_position"
	SchemaRebuttal  = "debate_rebuttal"
	SchemaSynthesis = "debate_synthesis"
	SchemaVote      = "council_vote"
	SchemaRAGQuery  = "debate_rag_query"
)

// Risk categories and timings of a position: fixed lists, encoded as enums
// in the strict schemas.
var (
	RiskCategories = []string{"financial", "legal", "reputational", "execution", "people", "timing", "other"}
	Timings        = []string{"immediate", "30d", "90d", "180d", "later"}
)

// Keeps values of a rebuttal (the seed's Sim/Não/Parcialmente).
const (
	KeepYes     = "Sim"
	KeepNo      = "Nao"
	KeepPartial = "Parcialmente"
)

// Position is one agent's structured answer in rounds 1 and 3 (schema
// debate_position) and the stance inside a rebuttal. Premises are the
// evidence ids it rests on, each written [RAG:<chunk_id>].
type Position struct {
	Recommendation string   `json:"recommendation" desc:"una de las opciones de la pregunta, literal"`
	Position       string   `json:"position" desc:"posición clara en 2 o 3 frases"`
	Reasoning      string   `json:"reasoning" desc:"razonamiento; cita la evidencia como [RAG:<chunk_id>]"`
	Premises       []string `json:"premises" desc:"evidencia citada, cada una como [RAG:<chunk_id>] de los fragmentos recibidos"`
	Risks          []Risk   `json:"risks"`
	Timing         string   `json:"timing" enum:"immediate,30d,90d,180d,later"`
	Confidence     int      `json:"confidence" desc:"confianza 0-100"`
	Limitations    []string `json:"limitations" desc:"lo que no sabe"`
}

// Risk is one risk a position names.
type Risk struct {
	Category    string `json:"category" enum:"financial,legal,reputational,execution,people,timing,other"`
	Description string `json:"description"`
}

// Rebuttal is an agent's round-2 answer (schema debate_rebuttal): what it
// agrees with, where it diverges, the others' blind spots, whether it keeps
// its position, and its stance after seeing the others.
type Rebuttal struct {
	Agreements    []string `json:"agreements" desc:"concordancias con otros participantes"`
	Divergences   []string `json:"divergences" desc:"divergencias, con la evidencia que las sostiene"`
	BlindSpots    []string `json:"blind_spots" desc:"puntos ciegos en las posiciones de los otros"`
	KeepsPosition string   `json:"keeps_position" enum:"Sim,Nao,Parcialmente"`
	Stance        Position `json:"stance" desc:"tu posición tras ver a los demás"`
}

// Synthesis is the synthesizer's text (schema debate_synthesis). The
// decision and its confidence are computed by the code (Decide,
// SynthesisConfidence) and given to the synthesizer; it writes, and
// classifies two flags the escalation table reads.
type Synthesis struct {
	Summary            string   `json:"summary" desc:"síntesis en español, citando [RAG:<chunk_id>]"`
	Consensus          []string `json:"consensus" desc:"consensos alcanzados"`
	Divergences        []string `json:"divergences" desc:"divergencias no resueltas"`
	Action             string   `json:"action" desc:"la decisión como acción concreta"`
	CriticalDivergence bool     `json:"critical_divergence" desc:"true si una divergencia no resuelta compromete la decisión"`
	OutOfScope         bool     `json:"out_of_scope" desc:"true si la pregunta está fuera del alcance del comité o de la base de conocimiento"`
}

// Vote is one council member's answer (schema council_vote).
type Vote struct {
	Vote       string   `json:"vote" desc:"una de las opciones de la pregunta, literal"`
	Confidence int      `json:"confidence" desc:"confianza 0-100"`
	Rationale  string   `json:"rationale" desc:"fundamento, citando [RAG:<chunk_id>]"`
	Premises   []string `json:"premises" desc:"evidencia citada como [RAG:<chunk_id>]"`
}

// RAGRequest is an agent's use of the retrieval tool a round offers
// (schema debate_rag_query): one query to the internal knowledge base, or
// none.
type RAGRequest struct {
	Query string `json:"query" desc:"consulta a la base de conocimiento interna (palabras clave), o vacío si no necesitas evidencia nueva"`
}

// MinClaimWords is how many content words (Tokens: no stopwords, no
// one-letter words) a text needs to state something.
const MinClaimWords = 3

// Vacuous reports whether text says nothing: no claim (fewer than
// MinClaimWords content words) and no citation ([RAG:<chunk_id>]). "N/A",
// "—", "Ninguna." and "Sin comentarios." are vacuous; "El CFO y el CHRO
// difieren en el plazo" and "[RAG:band_001]" are not.
func Vacuous(text string) bool {
	return len(CitedIDs(text)) == 0 && len(Tokens(text)) < MinClaimWords
}

// SynthesisProblem names what is empty in a synthesis: a summary or a
// divergence that says nothing (Vacuous). "" when nothing is.
func SynthesisProblem(s Synthesis) string {
	if Vacuous(s.Summary) {
		return "summary: says nothing (no claim and no [RAG:<chunk_id>] citation): write what the committee decided and why"
	}
	return listProblem("divergences", s.Divergences)
}

// RebuttalProblem names a divergence of a rebuttal that says nothing.
func RebuttalProblem(r Rebuttal) string { return listProblem("divergences", r.Divergences) }

func listProblem(field string, items []string) string {
	var bad []string
	for i, d := range items {
		if Vacuous(d) {
			bad = append(bad, fmt.Sprintf("%s[%d]", field, i))
		}
	}
	if len(bad) == 0 {
		return ""
	}
	return strings.Join(bad, ", ") + ": says nothing (no claim and no [RAG:<chunk_id>] citation): state the point of disagreement and its evidence, or leave it out"
}

// dropVacuous returns items without the vacuous ones, and how many went.
func dropVacuous(items []string) ([]string, int) {
	out := make([]string, 0, len(items))
	for _, it := range items {
		if !Vacuous(it) {
			out = append(out, it)
		}
	}
	return out, len(items) - len(out)
}
