package companion

import (
	_ "embed"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/labels"
	"github.com/veredicto/veredicto/internal/yamldoc"
)

// Requirement types: A = filtro duro, B = obligatorio, C = deseable real,
// D = deseable inflado.
const (
	TypeA = "A"
	TypeB = "B"
	TypeC = "C"
	TypeD = "D"
)

// Match states.
const (
	MatchCumple       = "cumple"
	MatchTransferible = "transferible"
	MatchParcial      = "parcial"
	MatchNoCumple     = "no_cumple"
)

// Decisions of the decision matrix.
const (
	DecisionMaxPriority    = "max_priority"
	DecisionConsider       = "consider"
	DecisionStrategicOnly  = "strategic_only"
	DecisionNotRecommended = "not_recommended"
)

// Gap types of the gap analysis.
const (
	GapHard         = "hard_gap"
	GapPartial      = "partial"
	GapTransferable = "transferable"
	GapNiceToHave   = "nice_to_have"
)

// TechMaturities and CompanySizes are the culture radar's enums.
var (
	TechMaturities = []string{"legacy", "mixed", "modern", "cutting_edge"}
	CompanySizes   = []string{"startup", "mid", "enterprise", "unknown"}
)

// decisionRank orders decisions from best to worst.
var decisionRank = map[string]int{DecisionMaxPriority: 0, DecisionConsider: 1, DecisionStrategicOnly: 2, DecisionNotRecommended: 3}

// ClassifiedRequirement is one JD requirement classified A–D and matched
// against the profile. Score is fixed by code from Match (Engine.Normalize):
// the model's number is ignored.
type ClassifiedRequirement struct {
	Requirement        string  `json:"requirement" desc:"el requisito, copiado tal cual de la lista dada o, si no hay lista, del texto de la oferta"`
	Type               string  `json:"type" enum:"A,B,C,D" desc:"A filtro duro, B obligatorio, C deseable real, D deseable inflado"`
	TypeJustification  string  `json:"type_justification"`
	Match              string  `json:"match" enum:"cumple,transferible,parcial,no_cumple"`
	MatchJustification string  `json:"match_justification" desc:"evidencia del perfil (ids de experiencias, proyectos o skills)"`
	Score              float64 `json:"score" desc:"1.0 cumple, 0.7 transferible, 0.5 parcial, 0.0 no_cumple (el código lo recalcula)"`
}

// StrengthLink is the classifier's evidence that a professional strength
// answers a requirement or a pain point: what the MVP bonus counts.
type StrengthLink struct {
	Strength string `json:"strength" desc:"nombre exacto de una professional_strength del perfil"`
	Target   string `json:"target" desc:"el requisito o pain point exacto al que responde"`
	Evidence string `json:"evidence" desc:"por qué, citando el perfil"`
}

// SASDimensionScore is one SAS dimension: 0, 5, 10, 15 or 20 points.
type SASDimensionScore struct {
	Score         int    `json:"score" desc:"0, 5, 10, 15 o 20"`
	Justification string `json:"justification"`
}

// SASDimensionEvaluation is the model's evaluation of the 5 SAS rubrics.
type SASDimensionEvaluation struct {
	CareerGoals          SASDimensionScore `json:"career_goals"`
	IntrinsicMotivations SASDimensionScore `json:"intrinsic_motivations"`
	ValuesCulture        SASDimensionScore `json:"values_culture"`
	TechGrowth           SASDimensionScore `json:"tech_growth"`
	AutonomyRole         SASDimensionScore `json:"autonomy_role"`
}

// dimensions lists the evaluation's dimensions in the seed's order.
func (e SASDimensionEvaluation) dimensions() []struct {
	Key, Label string
	Score      SASDimensionScore
} {
	return []struct {
		Key, Label string
		Score      SASDimensionScore
	}{
		{"career_goals", "Metas de Carrera", e.CareerGoals},
		{"intrinsic_motivations", "Motivaciones Intrínsecas", e.IntrinsicMotivations},
		{"values_culture", "Valores y Cultura", e.ValuesCulture},
		{"tech_growth", "Crecimiento Técnico", e.TechGrowth},
		{"autonomy_role", "Autonomía y Tipo de Rol", e.AutonomyRole},
	}
}

// CheckSAS rejects a dimension score other than 0, 5, 10, 15 or 20.
func CheckSAS(e *SASDimensionEvaluation) error {
	for _, d := range e.dimensions() {
		if s := d.Score.Score; s < 0 || s > 20 || s%5 != 0 {
			return fmt.Errorf("%s.score: %d is not one of 0, 5, 10, 15, 20", d.Key, s)
		}
	}
	return nil
}

// MVPResult is the MVP bonus: the strengths that count and the capped total.
type MVPResult struct {
	Total           float64  `json:"total"`
	Uncapped        float64  `json:"uncapped"`
	LinkedStrengths []string `json:"linked_strengths"`
}

// ConfidenceScoreResult is the confidence score, computed by code.
type ConfidenceScoreResult struct {
	ObligatoriosScore float64   `json:"obligatorios_score"`
	DeseablesScore    float64   `json:"deseables_score"`
	Base              float64   `json:"base"`
	MVP               MVPResult `json:"mvp"`
	Final             float64   `json:"final"`
}

// SASResult is the sum of the 5 dimensions.
type SASResult struct {
	Total      int                    `json:"total"`
	Dimensions SASDimensionEvaluation `json:"dimensions"`
	// LowConfidence lists the dimensions judged on the JD text alone.
	LowConfidence []string `json:"low_confidence"`
	Notes         []string `json:"notes"`
}

// CultureLowConfidenceNote is the seed's message when the culture
// dimension rests on the JD text alone (no web research).
const CultureLowConfidenceNote = "La evaluación de cultura está basada solo en el texto de la oferta. Para un análisis más completo, necesitaría investigar la empresa."

// GapItem is one requirement the candidate does not fully meet.
type GapItem struct {
	Requirement        string `json:"requirement"`
	Type               string `json:"type"`
	GapType            string `json:"gap_type"` // hard_gap | partial | transferable | nice_to_have
	MitigationStrategy string `json:"mitigation_strategy"`
	IsMitigable        bool   `json:"is_mitigable"`
}

// ScoringResult is phase 2's computed part.
type ScoringResult struct {
	Confidence     ConfidenceScoreResult `json:"confidence"`
	SAS            SASResult             `json:"sas"`
	GapAnalysis    []GapItem             `json:"gap_analysis"`
	DecisionMatrix string                `json:"decision_matrix"`
	DecisionReason string                `json:"decision_reason"`
	// NonNegotiablesCheck is the seed's {rule: passed}, null for a rule
	// whose fact the JD does not state; NonNegotiablesNotes say, per rule,
	// what the JD states or what to ask.
	NonNegotiablesCheck map[string]*bool  `json:"non_negotiables_check"`
	NonNegotiablesNotes map[string]string `json:"non_negotiables_notes"`
}

// Config holds the scoring defaults (scoring.yaml).
type Config struct {
	MatchScores struct {
		Cumple       float64 `yaml:"cumple"`
		Transferible float64 `yaml:"transferible"`
		Parcial      float64 `yaml:"parcial"`
		NoCumple     float64 `yaml:"no_cumple"`
	} `yaml:"match_scores"`
	TypeDWeight float64 `yaml:"type_d_weight"`
	Weights     struct {
		Obligatorios float64 `yaml:"obligatorios"`
		Deseables    float64 `yaml:"deseables"`
	} `yaml:"weights"`
	MVP struct {
		PerStrength float64 `yaml:"per_strength"`
		Cap         float64 `yaml:"cap"`
	} `yaml:"mvp"`
	Decision struct {
		MaxPriority   Threshold `yaml:"max_priority"`
		Consider      Threshold `yaml:"consider"`
		StrategicOnly Threshold `yaml:"strategic_only"`
		HardFilterCap string    `yaml:"hard_filter_cap"`
	} `yaml:"decision"`
	DriftThreshold          float64 `yaml:"drift_threshold"`
	AntiImpostorMinHardGaps int     `yaml:"anti_impostor_min_hard_gaps"`
}

// Threshold is a decision's minimum final score and SAS total.
type Threshold struct {
	Final float64 `yaml:"final"`
	SAS   int     `yaml:"sas"`
}

//go:embed scoring.yaml
var defaultConfigYAML []byte

// DefaultConfigYAML returns the embedded defaults, for documentation.
func DefaultConfigYAML() []byte { return append([]byte(nil), defaultConfigYAML...) }

// DefaultConfig is the embedded scoring.yaml.
func DefaultConfig() Config { return defaultConfig() }

var defaultConfig = sync.OnceValue(func() Config {
	c, err := ParseConfig("scoring.yaml", defaultConfigYAML)
	if err != nil {
		panic(err) // the embedded file is tested
	}
	return c
})

// ParseConfig decodes a scoring configuration strictly and checks it.
func ParseConfig(name string, data []byte) (Config, error) {
	var c Config
	if err := yamldoc.Decode(name, data, &c); err != nil {
		return c, err
	}
	bad := func(field, problem string) (Config, error) {
		return c, &veredicto.InvalidInputError{File: name, Field: field, Problem: problem}
	}
	for _, s := range []struct {
		f string
		v float64
	}{{"match_scores.cumple", c.MatchScores.Cumple}, {"match_scores.transferible", c.MatchScores.Transferible},
		{"match_scores.parcial", c.MatchScores.Parcial}, {"match_scores.no_cumple", c.MatchScores.NoCumple},
		{"type_d_weight", c.TypeDWeight}} {
		if s.v < 0 || s.v > 1 {
			return bad(s.f, "must be between 0 and 1")
		}
	}
	if c.TypeDWeight == 0 {
		return bad("type_d_weight", "must be greater than 0")
	}
	if math.Abs(c.Weights.Obligatorios+c.Weights.Deseables-1) > 1e-9 {
		return bad("weights", "obligatorios + deseables must be 1")
	}
	if c.MVP.PerStrength < 0 || c.MVP.Cap < 0 {
		return bad("mvp", "per_strength and cap must not be negative")
	}
	if _, ok := decisionRank[c.Decision.HardFilterCap]; !ok {
		return bad("decision.hard_filter_cap", "must be max_priority, consider, strategic_only or not_recommended")
	}
	if c.DriftThreshold <= 0 {
		return bad("drift_threshold", "must be greater than 0")
	}
	if c.AntiImpostorMinHardGaps < 1 {
		return bad("anti_impostor_min_hard_gaps", "must be at least 1")
	}
	return c, nil
}

// Engine is the ScoringEngine: pure arithmetic over what the model
// classified. Same input, same output.
type Engine struct {
	Config Config
}

// NewEngine returns an engine with c.
func NewEngine(c Config) Engine { return Engine{Config: c} }

// MatchScore is the fixed score of a match state; ok is false for an
// unknown state.
func (e Engine) MatchScore(match string) (float64, bool) {
	m := e.Config.MatchScores
	switch match {
	case MatchCumple:
		return m.Cumple, true
	case MatchTransferible:
		return m.Transferible, true
	case MatchParcial:
		return m.Parcial, true
	case MatchNoCumple:
		return m.NoCumple, true
	}
	return 0, false
}

// Normalize returns the requirements with Score set from Match: the model's
// number is ignored. An unknown type or match is an error.
func (e Engine) Normalize(reqs []ClassifiedRequirement) ([]ClassifiedRequirement, error) {
	out := make([]ClassifiedRequirement, len(reqs))
	for i, r := range reqs {
		s, ok := e.MatchScore(r.Match)
		if !ok {
			return nil, fmt.Errorf("requirement %d: unknown match %q", i, r.Match)
		}
		switch r.Type {
		case TypeA, TypeB, TypeC, TypeD:
		default:
			return nil, fmt.Errorf("requirement %d: unknown type %q", i, r.Type)
		}
		r.Score = s
		out[i] = r
	}
	return out, nil
}

// round2 keeps scores stable to the hundredth in JSON and comparisons.
func round2(v float64) float64 { return math.Round(v*100) / 100 }

// Confidence computes the confidence score of the seed: obligatorios (A, B)
// and deseables (C, D, with D worth at most TypeDWeight possible and
// earned), each 0 when the group is empty; base = 0.60·obligatorios +
// 0.40·deseables; final = min(base + MVP, 100). Scores come from Match.
func (e Engine) Confidence(reqs []ClassifiedRequirement, links []StrengthLink) (ConfidenceScoreResult, error) {
	reqs, err := e.Normalize(reqs)
	if err != nil {
		return ConfidenceScoreResult{}, err
	}
	var abPossible, abEarned, cdPossible, cdEarned float64
	for _, r := range reqs {
		switch r.Type {
		case TypeA, TypeB:
			abPossible += 1
			abEarned += r.Score
		case TypeC:
			cdPossible += 1
			cdEarned += math.Min(r.Score, 1)
		case TypeD:
			cdPossible += e.Config.TypeDWeight
			cdEarned += math.Min(r.Score, e.Config.TypeDWeight)
		}
	}
	var res ConfidenceScoreResult
	if abPossible > 0 {
		res.ObligatoriosScore = abEarned / abPossible * 100
	}
	if cdPossible > 0 {
		res.DeseablesScore = cdEarned / cdPossible * 100
	}
	res.Base = res.ObligatoriosScore*e.Config.Weights.Obligatorios + res.DeseablesScore*e.Config.Weights.Deseables
	res.MVP = e.MVP(links)
	res.Final = math.Min(res.Base+res.MVP.Total, 100)
	res.ObligatoriosScore = round2(res.ObligatoriosScore)
	res.DeseablesScore = round2(res.DeseablesScore)
	res.Base = round2(res.Base)
	res.Final = round2(res.Final)
	return res, nil
}

// MVP is +PerStrength for each distinct professional strength linked with
// evidence to a requirement or pain point, capped at Cap. Links must have
// been checked against the profile (CheckLinks).
func (e Engine) MVP(links []StrengthLink) MVPResult {
	seen := map[string]bool{}
	var names []string
	for _, l := range links {
		k := strings.ToLower(strings.TrimSpace(l.Strength))
		if k == "" || strings.TrimSpace(l.Evidence) == "" || seen[k] {
			continue
		}
		seen[k] = true
		names = append(names, l.Strength)
	}
	sort.Strings(names)
	un := float64(len(names)) * e.Config.MVP.PerStrength
	return MVPResult{Total: math.Min(un, e.Config.MVP.Cap), Uncapped: un, LinkedStrengths: names}
}

// SAS sums the 5 dimensions; the culture dimension is marked low-confidence
// with the seed's note when it rests on the JD text alone.
func (e Engine) SAS(ev SASDimensionEvaluation, jdOnly bool) SASResult {
	res := SASResult{Dimensions: ev, LowConfidence: []string{}, Notes: []string{}}
	for _, d := range ev.dimensions() {
		res.Total += d.Score.Score
	}
	if jdOnly {
		res.LowConfidence = append(res.LowConfidence, "values_culture")
		res.Notes = append(res.Notes, CultureLowConfidenceNote)
	}
	return res
}

// Decide applies the decision matrix: max_priority if final ≥ 75 and SAS ≥
// 70; else consider if final ≥ 60 and SAS ≥ 50; else strategic_only if SAS
// ≥ 70; else not_recommended. A type-A requirement with no_cumple caps the
// result at strategic_only (it can only lower it). The reason says which
// rule decided, in Spanish.
func (e Engine) Decide(final float64, sas int, reqs []ClassifiedRequirement) (string, string) {
	d := e.Config.Decision
	var dec, why string
	switch {
	case final >= d.MaxPriority.Final && sas >= d.MaxPriority.SAS:
		dec, why = DecisionMaxPriority, fmt.Sprintf("confidence %.2f ≥ %g y SAS %d ≥ %d", final, d.MaxPriority.Final, sas, d.MaxPriority.SAS)
	case final >= d.Consider.Final && sas >= d.Consider.SAS:
		dec, why = DecisionConsider, fmt.Sprintf("confidence %.2f ≥ %g y SAS %d ≥ %d", final, d.Consider.Final, sas, d.Consider.SAS)
	case sas >= d.StrategicOnly.SAS:
		dec, why = DecisionStrategicOnly, fmt.Sprintf("SAS %d ≥ %d con confidence %.2f bajo el umbral", sas, d.StrategicOnly.SAS, final)
	default:
		dec, why = DecisionNotRecommended, fmt.Sprintf("confidence %.2f y SAS %d bajo todos los umbrales", final, sas)
	}
	for _, r := range reqs {
		if r.Type == TypeA && r.Match == MatchNoCumple {
			if decisionRank[dec] < decisionRank[d.HardFilterCap] {
				return d.HardFilterCap, fmt.Sprintf("%s; limitado a «%s»: un filtro duro (tipo A) no se cumple", why, labels.Of(labels.CompanionDecision, d.HardFilterCap))
			}
			break
		}
	}
	return dec, why
}

// HardGaps are the A/B requirements with no_cumple, in order.
func HardGaps(reqs []ClassifiedRequirement) []ClassifiedRequirement {
	var out []ClassifiedRequirement
	for _, r := range reqs {
		if (r.Type == TypeA || r.Type == TypeB) && r.Match == MatchNoCumple {
			out = append(out, r)
		}
	}
	return out
}

// NeedsAntiImpostorPause reports whether the hard gaps reach the threshold
// (2 by default) that pauses the full mode after phase 2.
func (e Engine) NeedsAntiImpostorPause(reqs []ClassifiedRequirement) bool {
	return len(HardGaps(reqs)) >= e.Config.AntiImpostorMinHardGaps
}

// Gaps lists every requirement not fully met, with a deterministic gap
// type and mitigation strategy; only a type-A no_cumple is not mitigable.
func (e Engine) Gaps(reqs []ClassifiedRequirement) []GapItem {
	gaps := []GapItem{}
	for _, r := range reqs {
		if r.Match == MatchCumple {
			continue
		}
		g := GapItem{Requirement: r.Requirement, Type: r.Type, IsMitigable: true}
		switch {
		case r.Match == MatchTransferible:
			g.GapType = GapTransferable
			g.MitigationStrategy = "Presenta la experiencia equivalente con un ejemplo concreto y nombra explícitamente la transferencia."
		case r.Match == MatchParcial:
			g.GapType = GapPartial
			g.MitigationStrategy = "Muestra lo que ya dominas de este requisito y un plan breve y creíble para completar el resto."
		case r.Type == TypeA:
			g.GapType = GapHard
			g.IsMitigable = false
			g.MitigationStrategy = "Es un filtro duro: no lo maquilles. Si postulas, hazlo de forma estratégica y con honestidad sobre este punto."
		case r.Type == TypeB:
			g.GapType = GapHard
			g.MitigationStrategy = "Reconócelo sin disculparte y compénsalo con tus fortalezas más cercanas y un plan de aprendizaje concreto."
		default:
			g.GapType = GapNiceToHave
			g.MitigationStrategy = "Es deseable, no obligatorio: no necesita mención; si surge, muestra interés y capacidad de aprendizaje."
		}
		gaps = append(gaps, g)
	}
	return gaps
}

// Score computes phase 2's ScoringResult from the classified requirements,
// the checked strength links, the SAS evaluation and the non-negotiables
// check.
func (e Engine) Score(reqs []ClassifiedRequirement, links []StrengthLink, sas SASDimensionEvaluation, jdOnly bool, nonneg map[string]RuleCheck) (ScoringResult, error) {
	conf, err := e.Confidence(reqs, links)
	if err != nil {
		return ScoringResult{}, err
	}
	if err := CheckSAS(&sas); err != nil {
		return ScoringResult{}, err
	}
	s := e.SAS(sas, jdOnly)
	dec, why := e.Decide(conf.Final, s.Total, reqs)
	check, notes := Checks(nonneg)
	return ScoringResult{
		Confidence: conf, SAS: s, GapAnalysis: e.Gaps(reqs),
		DecisionMatrix: dec, DecisionReason: why, NonNegotiablesCheck: check, NonNegotiablesNotes: notes,
	}, nil
}
