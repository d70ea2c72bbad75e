package search

import (
	"context"

	"github.com/veredicto/veredicto"
)

// Doc is one source document. Missing documents are passed with Missing set
// so agents declare the gap ("No informado en fuentes") instead of guessing.
type Doc struct {
	ID      string // source id: the path relative to the search folder
	Text    string
	Missing bool
}

// SearchDocs are the search-level sources.
type SearchDocs struct {
	SearchID string
	Client   string
	Role     string
	JD       Doc // jd.md (required)
	Kickoff  Doc // kickoff.md (required)
	Company  Doc // company.md
	Culture  Doc // culture.md
}

// CandidateDocs are one candidate's sources.
type CandidateDocs struct {
	CandidateID string
	CV          Doc // candidates/<id>/cv.md
	Interview   Doc // interview.md
	Tests       Doc // tests.md
	Case        Doc // case.md
	References  Doc // references.md
}

// All lists the candidate's documents in a fixed order.
func (c CandidateDocs) All() []Doc {
	return []Doc{c.CV, c.Interview, c.Tests, c.Case, c.References}
}

// MandateSummary is GEM5's mandate condensed for the candidate agents: it is
// computed once per search and sent identically to every candidate call, so
// the prompt prefix can be cached by providers.
type MandateSummary struct {
	RealProblem      string   `json:"problema_real"`
	KeyChallenge     string   `json:"desafio_critico"`
	Requirements     []string `json:"requisitos_clave"`
	Successes        []string `json:"exitos_esperados"`
	NoFits           []string `json:"no_fits"`
	DecisionCriteria []string `json:"criterios_decision"`
	// Sources are the ids GEM5 cited: an agent that receives the mandate
	// may cite them.
	Sources []string `json:"sources"`
}

// Gem5Input: the search documents.
type Gem5Input struct {
	Search SearchDocs
}

// Gem1Input: CV, interview notes and the mandate.
type Gem1Input struct {
	Search    SearchDocs
	Mandate   MandateSummary
	Candidate CandidateDocs
}

// Gem2Input adds GEM1's output; GEM2 reads tests and case notes.
type Gem2Input struct {
	Gem1Input
	Gem1 Answer[Gem1Content]
}

// Gem3Input adds GEM2's output; GEM3 reads references and client culture.
// Reask is set when a previous answer's recommendation disagreed with its
// own score gate; it explains the disagreement.
type Gem3Input struct {
	Gem2Input
	Gem2  Answer[Gem2Content]
	Reask string
	// Gate is GEM3's advance threshold: the recommendation must be SI
	// exactly when score_dimension reaches it.
	Gate int
}

// Gem4Input: GEM1–GEM3 outputs (possibly corrected) and the sources index.
type Gem4Input struct {
	Gem3Input
	Gem3         Answer[Gem3Content]
	SourcesIndex []string
	Attempt      int // 0 for the first audit, 1 and 2 for re-audits
	// Gate is the QA approval threshold (seed: 7).
	Gate int
}

// CorrectionInput: what was audited and the audit that blocked it.
type CorrectionInput struct {
	Gem4Input
	Audit Answer[Gem4Content]
}

// Analyst produces the agents' answers. Two implementations: the LLM one
// (prompts + structured outputs) and the offline lexical baseline.
type Analyst interface {
	Gem5(ctx context.Context, in Gem5Input) (Answer[Gem5Content], veredicto.Usage, error)
	Gem1(ctx context.Context, in Gem1Input) (Answer[Gem1Content], veredicto.Usage, error)
	Gem2(ctx context.Context, in Gem2Input) (Answer[Gem2Content], veredicto.Usage, error)
	Gem3(ctx context.Context, in Gem3Input) (Answer[Gem3Content], veredicto.Usage, error)
	Gem4(ctx context.Context, in Gem4Input) (Answer[Gem4Content], veredicto.Usage, error)
	Correct(ctx context.Context, in CorrectionInput) (Answer[CorrectionContent], veredicto.Usage, error)
	Info() veredicto.ModelInfo
}
