package search

import (
	"slices"
)

// Gate outcomes: how each step of a candidate's evaluation was decided
// (codes in the data and the audit record, shown through the label
// table).
const (
	OutcomePassed        = "supera_umbral"
	OutcomeBelow         = "bajo_umbral"
	OutcomeNoEvidence    = "sin_evidencia_citada"
	OutcomeMissingInputs = "entradas_minimas_faltantes"
	OutcomeIncoherent    = "recomendacion_incoherente"
	OutcomeQARetry       = "qa_bloqueado_reintento"
	OutcomeQAExhausted   = "qa_bloqueado_sin_reintentos"
	OutcomeContradiction = "contradiccion_irresoluble"
)

// Outcomes lists every gate outcome.
func Outcomes() []string {
	return []string{OutcomePassed, OutcomeBelow, OutcomeNoEvidence, OutcomeMissingInputs, OutcomeIncoherent, OutcomeQARetry, OutcomeQAExhausted, OutcomeContradiction}
}

// Gate is one decision of a candidate's evaluation: an agent's gate (its
// score against the threshold), the supervisor's check of its minimum
// documents, GEM3's coherence, or a QA audit. The handlers record it in
// the audit record when it is taken; the report lists the same, computed
// by the same rules, under "Cómo se decidió".
type Gate struct {
	Name      string `json:"gate"` // gate_gem1, gate_gem2, gate_gem3, gate_qa
	Stage     string `json:"stage,omitempty"`
	Score     *int   `json:"score,omitempty"`
	Threshold *int   `json:"threshold,omitempty"`
	Outcome   string `json:"outcome"`
	// State is the supervisor's state the outcome puts the candidate in
	// (BLOQUEADO_QA_REINTENTO), when it is not an ending.
	State string `json:"state,omitempty"`
	// Evidence lists the source ids the score rests on; Missing the
	// minimum documents that kept the agent from running.
	Evidence []string `json:"evidence,omitempty"`
	Missing  []string `json:"missing,omitempty"`
	// Recommendation is GEM3's SI/NO; Decision a QA audit's.
	Recommendation string `json:"recommendation,omitempty"`
	Decision       string `json:"decision,omitempty"`
	Detail         string `json:"detail,omitempty"`
}

func gateName(agent string) string {
	if agent == AgentGem4 {
		return "gate_qa"
	}
	return "gate_" + agent
}

// missingGate is an agent not run for want of its minimum documents.
func missingGate(agent string, missing []string) Gate {
	return Gate{Name: gateName(agent), Outcome: OutcomeMissingInputs, Missing: missing}
}

// scoreGate is GEM1's or GEM2's hard gate, as Gate1 and Gate2 of the
// workflow decide it: below the threshold discards; a passing score with
// no cited evidence at all escalates.
func scoreGate(agent, stage string, score, threshold int, evidence []string, evidenceless bool) Gate {
	g := Gate{Name: gateName(agent), Stage: stage, Score: &score, Threshold: &threshold, Evidence: evidence, Outcome: OutcomePassed}
	switch {
	case score < threshold:
		g.Outcome = OutcomeBelow
	case evidenceless:
		g.Outcome = OutcomeNoEvidence
	}
	return g
}

// gem3Gate is GEM3's, as Gem3Consistent and Gate3 decide it: the score
// gate applies to GEM3's own score whatever its SI/NO says (a SI below the
// threshold is recorded as inconsistent and discarded); a NO with a
// passing score contradicts itself (re-asked once, then escalated); then
// a passing SI with no cited evidence escalates.
func gem3Gate(stage string, score, threshold int, rec string, evidence []string, evidenceless bool) Gate {
	g := scoreGate(AgentGem3, stage, score, threshold, evidence, evidenceless)
	g.Recommendation = rec
	switch {
	case score < threshold && rec == RecommendationYes:
		g.Detail = "la recomendación «sí» no es coherente con un puntaje bajo el umbral: decide el umbral"
	case score >= threshold && rec == RecommendationNo:
		g.Outcome = OutcomeIncoherent
	}
	return g
}

// qaGate is the final gate, as QAGate decides it: a score at the
// threshold with APROBADO releases the report; otherwise an irresolvable
// contradiction or a structural lack of evidence escalates, and a block
// is corrected (BLOQUEADO_QA_REINTENTO) until maxRetries corrections
// were made.
func qaGate(stage string, r StageResult, threshold, attempt, maxRetries int, evidence []string) Gate {
	score := r.Score
	g := Gate{Name: gateName(AgentGem4), Stage: stage, Score: &score, Threshold: &threshold, Decision: r.Decision, Evidence: evidence}
	switch {
	case r.Score >= threshold && r.Decision == QAApproved:
		g.Outcome = OutcomePassed
	case r.IrresolvableContradiction:
		g.Outcome = OutcomeContradiction
	case r.StructuralEvidenceGap:
		g.Outcome = OutcomeNoEvidence
	case attempt >= maxRetries:
		g.Outcome = OutcomeQAExhausted
	default:
		g.Outcome, g.State = OutcomeQARetry, StateQARetry
	}
	return g
}

func agentLabel(agent string) string {
	switch agent {
	case AgentCorrection:
		return "la corrección"
	}
	return "GEM" + agent[len(agent)-1:]
}

// gates rebuilds the decisions of a report's evaluation from its stages,
// with the thresholds the execution used: the report's "Cómo se decidió".
// gapAgent is the agent whose minimum documents (gapDocs) are missing, if
// any.
func gates(rep Report, v reportView, gapAgent string, gapDocs []string) []Gate {
	th := rep.Thresholds
	var out []Gate
	if v.gem1 != nil {
		out = append(out, scoreGate(AgentGem1, "gem1", scoreOf(v.gem1.Scores), th.Gem1, slices.Clone(v.gem1.Meta.Sources), v.gem1Gap))
	}
	if v.gem2 != nil {
		out = append(out, scoreGate(AgentGem2, "gem2", scoreOf(v.gem2.Scores), th.Gem2, slices.Clone(v.gem2.Meta.Sources), v.gem2Gap))
	}
	for _, g3 := range v.gem3s {
		out = append(out, gem3Gate(g3.stage, scoreOf(g3.c.Scores), th.Gem3, g3.c.Content.Recommendation, slices.Clone(g3.c.Meta.Sources), g3.gap))
	}
	for i, a := range v.audits {
		out = append(out, qaGate(a.stage, qaResult(a.c, a.gap, false), th.Gem4, i, th.MaxQARetries, slices.Clone(a.c.Meta.Sources)))
	}
	if gapAgent != "" && rep.Reason == ReasonNoEvidence && !ran(out, gateName(gapAgent)) {
		out = append(out, missingGate(gapAgent, gapDocs))
	}
	return out
}

func ran(gs []Gate, name string) bool {
	for _, g := range gs {
		if g.Name == name {
			return true
		}
	}
	return false
}
