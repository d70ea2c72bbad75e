// Package search implements the executive-search evaluation protocol
// (seed 000): GEM5 mandate analysis once per search, then per candidate
// GEM1 → GEM2 → GEM3 with hard gates, GEM4 QA with correction retries, and
// escalation to a senior consultant. The gates and the retry loop live in
// statemachines/executive_search.asl.json; this package holds the contracts,
// the input loading and citation checks, the agents' task handlers, the
// decision rules and the reports.
//
// The agents' two analysts are its subpackages: gems (the LLM agents) and
// offline (the deterministic lexical baseline).
package search

import "github.com/veredicto/veredicto/internal/llm"

// Agent ids: the "gem" of each contract and the LLM schema names.
const (
	AgentGem5       = "gem5"
	AgentGem1       = "gem1"
	AgentGem2       = "gem2"
	AgentGem3       = "gem3"
	AgentGem4       = "gem4"
	AgentCorrection = "correction"
)

// Decisions a candidate can end with (seed §3).
const (
	DecisionApproved   = "APROBADO"
	DecisionDiscarded1 = "DESCARTADO_GEM1"
	DecisionDiscarded2 = "DESCARTADO_GEM2"
	DecisionDiscarded3 = "DESCARTADO_GEM3"
	DecisionEscalated  = "ESCALADO_CONSULTOR_SENIOR"
	// The senior consultant's decisions on an escalated candidate (seed
	// §8): human decisions, recorded with who, when and the comment.
	DecisionApprovedByConsultant  = "APROBADO_POR_CONSULTOR"
	DecisionDiscardedByConsultant = "DESCARTADO_POR_CONSULTOR"
	// StateQARetry is the supervisor's state of a candidate whose QA
	// blocked and who is being corrected (seed 000 §3): recorded, never
	// an ending.
	StateQARetry = "BLOQUEADO_QA_REINTENTO"
)

// Declared uncertainty (seed §3): agents write these instead of inventing.
const (
	NotInSources      = "No informado en fuentes"
	UnvalidatedGuess  = "Hipótesis no validada"
	RecommendationYes = "SI"
	RecommendationNo  = "NO"
	QAApproved        = "APROBADO"
	QABlocked         = "BLOQUEADO"
)

// Meta is the contract header (seed §6). Code fills it, not the model:
// Sources is the set of source ids the output cites.
type Meta struct {
	SearchID      string   `json:"search_id"`
	CandidateID   string   `json:"candidate_id"`
	Gem           string   `json:"gem"`
	Timestamp     string   `json:"timestamp"`
	PromptVersion string   `json:"prompt_version"`
	Sources       []string `json:"sources"`
}

// Scores: score_dimension is an integer 0–10 (null for GEM5), confidence 0–1.
type Scores struct {
	ScoreDimension *int    `json:"score_dimension"`
	Confidence     float64 `json:"confidence"`
}

// Claim is one statement with the sources that support it. A claim with no
// source must say NotInSources or UnvalidatedGuess.
type Claim struct {
	Text    string   `json:"text"`
	Sources []string `json:"sources"`
}

// Issue is a critical finding or blocker.
type Issue struct {
	Severity    string   `json:"severity" enum:"critica,alta,media,baja"`
	Description string   `json:"description"`
	Sources     []string `json:"sources"`
}

// Contract is what every agent returns (seed §6), with C the agent's
// findings. Exactly one of IssuesFound / Blockers is used by convention:
// candidate agents report issues_found, GEM5 reports blockers; both are
// always present (possibly empty) so the JSON shape is fixed.
type Contract[C any] struct {
	Meta        Meta    `json:"meta"`
	Content     C       `json:"content"`
	Scores      Scores  `json:"scores"`
	IssuesFound []Issue `json:"issues_found"`
	Blockers    []Issue `json:"blockers"`
}

// Answer is what the model (or the offline analyst) produces: the contract
// without meta, which code adds.
type Answer[C any] struct {
	Content     C       `json:"content"`
	Scores      Scores  `json:"scores"`
	IssuesFound []Issue `json:"issues_found"`
	Blockers    []Issue `json:"blockers"`
}

// Gem5Answer is the shape GEM5 answers in, for its JSON schema: Answer
// with score_dimension fixed to null (seed 000 §2 and §6: GEM5 scores no
// candidate), so a model cannot legally send a number.
type Gem5Answer struct {
	Content     Gem5Content   `json:"content"`
	Scores      MandateScores `json:"scores"`
	IssuesFound []Issue       `json:"issues_found"`
	Blockers    []Issue       `json:"blockers"`
}

// MandateScores are GEM5's scores: no score_dimension, a confidence.
type MandateScores struct {
	ScoreDimension llm.Null `json:"score_dimension"`
	Confidence     float64  `json:"confidence"`
}

// Gem5Content is the mandate analysis (seed §2, GEM5).
type Gem5Content struct {
	RealProblem       Claim   `json:"problema_real"`
	ExpectedSuccesses []KPI   `json:"exitos_esperados"`
	NoFits            []Claim `json:"no_fits"`
	Stakeholders      []Claim `json:"stakeholders_tensiones"`
	MarketMap         []Claim `json:"mapa_mercado"`
	MandateRisks      []Claim `json:"riesgos_mandato"`
	DecisionCriteria  []Claim `json:"criterios_decision"`
	KeyChallenge      Claim   `json:"desafio_critico"`
	Requirements      []Claim `json:"requisitos_clave"`
}

// KPI is an expected success at 12–18 months.
type KPI struct {
	Description string   `json:"descripcion"`
	KPI         string   `json:"kpi"`
	Horizon     string   `json:"plazo"`
	Sources     []string `json:"sources"`
}

// Achievement is a calibrated achievement: Problema → Acción → Resultado →
// Métrica → Fuente.
type Achievement struct {
	Problem string   `json:"problema"`
	Action  string   `json:"accion"`
	Result  string   `json:"resultado"`
	Metric  string   `json:"metrica"`
	Sources []string `json:"sources"`
}

// Gem1Content: trajectory and achievements.
type Gem1Content struct {
	Trajectory      []Claim       `json:"trayectoria"`
	Achievements    []Achievement `json:"logros"`
	ContinuityRisks []Claim       `json:"riesgos_continuidad"`
	EvidenceGaps    []Claim       `json:"vacios_evidencia"`
}

// Gem2Content: business assessment.
type Gem2Content struct {
	Execution      []Claim `json:"capacidad_ejecucion"`
	UnderPressure  []Claim `json:"desempeno_presion"`
	WorkStyle      []Claim `json:"estilo_tradeoffs"`
	ChallengeFit   Claim   `json:"encaje_desafio_critico"`
	Contradictions []Claim `json:"contradicciones"`
}

// SWOT is the contextualised FODA.
type SWOT struct {
	Strengths     []Claim `json:"fortalezas"`
	Opportunities []Claim `json:"oportunidades"`
	Weaknesses    []Claim `json:"debilidades"`
	Threats       []Claim `json:"amenazas"`
}

// ReferenceCheck is one row of the 360 reference matrix.
type ReferenceCheck struct {
	Statement string   `json:"afirmacion"`
	Status    string   `json:"estado" enum:"confirma,contradice,no_comparable"`
	Sources   []string `json:"sources"`
}

// Gem3Content: verdict and 360 references.
type Gem3Content struct {
	StrategicFit   Claim            `json:"encaje_estrategico"`
	CulturalFit    Claim            `json:"encaje_cultural"`
	SWOT           SWOT             `json:"foda"`
	Risks          []Claim          `json:"riesgos"`
	References     []ReferenceCheck `json:"matriz_referencias"`
	Recommendation string           `json:"recommendation" enum:"SI,NO"`
}

// Gem4Content: the QA audit.
type Gem4Content struct {
	UnsupportedClaims []Claim `json:"claims_sin_sustento"`
	Fluff             []Claim `json:"fluff"`
	CriticalGaps      []Claim `json:"vacios_criticos"`
	Contradictions    []Claim `json:"contradicciones"`
	Decision          string  `json:"decision" enum:"APROBADO,BLOQUEADO"`
	// IrresolvableContradiction: a critical contradiction between sources
	// that no rewrite can resolve (seed §8 escalation trigger).
	IrresolvableContradiction bool `json:"contradiccion_critica_irresoluble"`
	// StructuralEvidenceGap: the sources cannot support a final
	// recommendation at all (seed §8 escalation trigger).
	StructuralEvidenceGap bool `json:"falta_estructural_evidencia"`
}

// CorrectionContent is the correction step's rewrite of GEM1–GEM3 after a
// QA block: unsupported claims removed or declared, fluff deleted, gaps
// declared. Scores are never rewritten: gates stay where the agents put them.
type CorrectionContent struct {
	Gem1    Gem1Content `json:"gem1"`
	Gem2    Gem2Content `json:"gem2"`
	Gem3    Gem3Content `json:"gem3"`
	Changes []Claim     `json:"cambios"`
}
