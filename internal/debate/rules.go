package debate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Route is the routing checkpoint: the mode the debate runs in and why.
// An explicit mode is kept (simple with several participants hears only the
// first one). auto chooses council when the question is critical
// (irreversible, CATASTROFICO risk, or value at risk above the threshold),
// else debate with two or more participants, else simple.
func Route(q Question) (mode, reason string) {
	if q.Mode != "" && q.Mode != ModeAuto {
		return q.Mode, "modo pedido en QUESTION.yaml"
	}
	var critical []string
	if q.Irreversible {
		critical = append(critical, "decisión irreversible")
	}
	if q.RiskLevel == RiskCatastrophic {
		critical = append(critical, "riesgo CATASTROFICO")
	}
	if q.ValueAtRisk != nil && q.ValueAtRisk.Amount > q.Config.Escalation.ValueThreshold {
		critical = append(critical, fmt.Sprintf("valor en riesgo %s %.0f por encima del umbral %.0f",
			q.ValueAtRisk.Currency, q.ValueAtRisk.Amount, q.Config.Escalation.ValueThreshold))
	}
	switch {
	case len(critical) > 0:
		return ModeCouncil, "crítica: " + strings.Join(critical, "; ")
	case len(q.Participants) >= 2:
		return ModeDebate, fmt.Sprintf("%d cargos con posiciones propias", len(q.Participants))
	default:
		return ModeSimple, "un solo cargo responde"
	}
}

// Answer is one agent's position in a round. TimedOut marks an agent that
// exceeded its time; Position is nil when it left nothing usable (it is
// then excluded from convergence), or its last position when there was one
// (the seed's "resposta parcial").
type Answer struct {
	Participant string    `json:"participant"`
	Position    *Position `json:"position"`
	TimedOut    bool      `json:"timed_out"`
}

// Answered reports whether the answer counts for convergence.
func (a Answer) Answered() bool { return a.Position != nil }

// Jaccard is |A∩B| / |A∪B| of two sets given as lists (duplicates ignored).
// Two empty sets are equal: 1.
func Jaccard(a, b []string) float64 {
	sa, sb := set(a), set(b)
	if len(sa) == 0 && len(sb) == 0 {
		return 1
	}
	inter := 0
	for k := range sa {
		if sb[k] {
			inter++
		}
	}
	return float64(inter) / float64(len(sa)+len(sb)-inter)
}

// PairAgreement is the four points of one pair.
type PairAgreement struct {
	A, B                                    string
	Recommendation, Premises, Risks, Timing bool
}

// Points is how many of the four points agree.
func (p PairAgreement) Points() int {
	n := 0
	for _, b := range []bool{p.Recommendation, p.Premises, p.Risks, p.Timing} {
		if b {
			n++
		}
	}
	return n
}

// Convergence is the seed's pontos_concordancia / pontos_totais × 100 over
// every pair of agents that answered: four points a pair (same
// recommendation; Jaccard of cited premises ≥ 0.5; Jaccard of risk
// categories ≥ 0.5; same timing). Agents without a position (TIMEOUT) are
// excluded. With fewer than two answers there is nothing to agree on: 0.
func Convergence(answers []Answer) (float64, []PairAgreement) {
	var in []Answer
	for _, a := range answers {
		if a.Answered() {
			in = append(in, a)
		}
	}
	var pairs []PairAgreement
	points := 0
	for i := 0; i < len(in); i++ {
		for j := i + 1; j < len(in); j++ {
			a, b := in[i].Position, in[j].Position
			p := PairAgreement{
				A: in[i].Participant, B: in[j].Participant,
				Recommendation: a.Recommendation == b.Recommendation,
				Premises:       Jaccard(CitedIDs(a.Premises...), CitedIDs(b.Premises...)) >= 0.5,
				Risks:          Jaccard(categories(a.Risks), categories(b.Risks)) >= 0.5,
				Timing:         a.Timing == b.Timing,
			}
			points += p.Points()
			pairs = append(pairs, p)
		}
	}
	if len(pairs) == 0 {
		return 0, nil
	}
	return float64(points) / float64(4*len(pairs)) * 100, pairs
}

func categories(rs []Risk) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Category
	}
	return out
}

// PositionsHash is the loop detector's hash of a round: SHA-256 over the
// canonical positions (participant, recommendation, sorted cited ids,
// sorted risk categories, timing, confidence), sorted by participant. An
// agent without a position hashes as TIMEOUT. Wording does not count: the
// same stance rephrased is the same position.
func PositionsHash(answers []Answer) string {
	lines := make([]string, 0, len(answers))
	for _, a := range answers {
		if !a.Answered() {
			lines = append(lines, a.Participant+"|TIMEOUT")
			continue
		}
		p := a.Position
		lines = append(lines, strings.Join([]string{
			a.Participant,
			p.Recommendation,
			strings.Join(sortedSet(CitedIDs(p.Premises...)), ","),
			strings.Join(sortedSet(categories(p.Risks)), ","),
			p.Timing,
			fmt.Sprint(p.Confidence),
		}, "|"))
	}
	sort.Strings(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(sum[:])
}

// LoopDetector is the seed's algorithm: after each round compare the hash
// with the previous round's; equal increments the counter; a counter of 2
// or more is a loop.
type LoopDetector struct {
	prev    string
	Counter int
}

// Observe records a round's hash and reports whether a loop is detected.
func (l *LoopDetector) Observe(hash string) bool {
	if l.prev != "" && hash == l.prev {
		l.Counter++
	}
	l.prev = hash
	return l.Counter >= 2
}

// Circuit-breaker triggers.
const (
	TriggerTimeout     = "timeout_total"
	TriggerIterations  = "max_iterations"
	TriggerLoop        = "loop"
	TriggerRefinements = "max_refinements"
	TriggerRounds      = "max_rounds"
	// TriggerStateSize is the implementation's own bound, not the seed's:
	// the debate's state (see StateBudget) grew too large to carry another
	// round.
	TriggerStateSize = "max_state_size"
)

// Round kinds (the log's tipo).
const (
	RoundInitial    = "posicoes_iniciais"
	RoundRebuttals  = "rebatidas"
	RoundRefinement = "refinamento"
)

// Escalation targets (the log's escalado_para).
const (
	TargetNone    = "NENHUM"
	TargetCouncil = "COUNCIL"
	TargetHuman   = "HUMANO"
)

// BreakerState is what the breaker reads after a round.
type BreakerState struct {
	Rounds      int // rounds executed
	Iterations  int // passes of the debate loop (every round run, including refinements)
	Refinements int // refinement rounds run (round 3 and later)
	Elapsed     time.Duration
	LoopCounter int
	Converged   bool
}

// Trip is a fired circuit breaker: the seed's condition and action, and
// the target it forces (empty: the escalation table decides).
type Trip struct {
	Trigger   string
	Condition string
	Action    string
	Target    string
	Impasse   bool
}

// Breaker checks the seed's five triggers in order of severity: total
// time, iterations, loop, refinements, rounds. A converged round trips
// nothing but the total time.
func Breaker(s BreakerState, c Config) *Trip {
	switch {
	case s.Elapsed >= Dur(c.Timeout.Total):
		return &Trip{Trigger: TriggerTimeout, Condition: fmt.Sprintf("tiempo total del debate ≥ %g s", c.Timeout.Total),
			Action: "Abortar y escalar con el estado actual"}
	case s.Converged:
		return nil
	case s.Iterations >= c.CircuitBreaker.MaxIterations:
		return &Trip{Trigger: TriggerIterations, Condition: fmt.Sprintf("iteraciones ≥ %d, el máximo", c.CircuitBreaker.MaxIterations),
			Action: "Detener de inmediato y escalar", Target: TargetHuman}
	case s.LoopCounter >= 2:
		return &Trip{Trigger: TriggerLoop, Condition: "loop detectado: las mismas posiciones dos veces",
			Action: "Detener y escalar", Target: TargetCouncil, Impasse: true}
	case s.Refinements >= c.CircuitBreaker.MaxRefinements:
		return &Trip{Trigger: TriggerRefinements, Condition: fmt.Sprintf("refinamientos ≥ %d, el máximo", c.CircuitBreaker.MaxRefinements),
			Action: "Declarar impasse y escalar", Target: TargetCouncil, Impasse: true}
	case s.Rounds >= c.Debate.Rounds.Max:
		return &Trip{Trigger: TriggerRounds, Condition: fmt.Sprintf("rondas ≥ %d, el máximo", c.Debate.Rounds.Max),
			Action: ActionForceSynthesis}
	}
	return nil
}

// ActionForceSynthesis is the seed's action at max_rounds ("forçar
// síntese com divergências"), in Spanish.
const ActionForceSynthesis = "Forzar la síntesis con las divergencias explícitas"

// Decide is the synthesis decision: the recommendation most answering
// agents hold; a tie goes to the larger total confidence, then to the
// earlier option. No valid answer: no proposal (""), never an option
// nobody recommended; the escalation table sends it to a person.
func Decide(answers []Answer, options []string) string {
	count := map[string]int{}
	conf := map[string]int{}
	for _, a := range answers {
		if a.Answered() {
			count[a.Position.Recommendation]++
			conf[a.Position.Recommendation] += a.Position.Confidence
		}
	}
	best := ""
	for _, o := range options {
		if count[o] == 0 {
			continue
		}
		if best == "" || count[o] > count[best] || count[o] == count[best] && conf[o] > conf[best] {
			best = o
		}
	}
	return best
}

// ConflictingAgents are the breaker block's "agentes em conflito": the
// answering agents whose recommendation differs from the one most of them
// hold. With no single largest group (a tie), every answering agent is in
// conflict; with one recommendation, none is. Sorted.
func ConflictingAgents(answers []Answer) []string {
	by := map[string][]string{}
	for _, a := range answers {
		if a.Answered() {
			by[a.Position.Recommendation] = append(by[a.Position.Recommendation], a.Participant)
		}
	}
	if len(by) < 2 {
		return nil
	}
	largest, n, tie := "", 0, false
	for rec, ids := range by {
		switch {
		case len(ids) > n:
			largest, n, tie = rec, len(ids), false
		case len(ids) == n:
			tie = true
		}
	}
	var out []string
	for rec, ids := range by {
		if tie || rec != largest {
			out = append(out, ids...)
		}
	}
	sort.Strings(out)
	return out
}

// SynthesisConfidence is Σ confidence of the answering agents that hold
// decision / (100 × answering agents) × 100: the share of the committee
// behind the decision, weighted by how sure each member is. No answers: 0.
func SynthesisConfidence(answers []Answer, decision string) float64 {
	n, sum := 0, 0
	for _, a := range answers {
		if !a.Answered() {
			continue
		}
		n++
		if a.Position.Recommendation == decision {
			sum += a.Position.Confidence
		}
	}
	if n == 0 {
		return 0
	}
	return float64(sum) / float64(n)
}

// CouncilSize is the council's member count.
const CouncilSize = 3

// CouncilResult is the council's decision and result: the option most
// members voted (ties as Decide), and Σ confidence of its voters / (100 ×
// CouncilSize) × 100. A member that timed out or answered invalidly (nil)
// counts in the denominator: silence does not support the decision. No
// valid vote: no decision, result 0.
func CouncilResult(votes []*Vote, options []string) (string, float64) {
	answers := make([]Answer, len(votes))
	for i, v := range votes {
		if v != nil {
			answers[i] = Answer{Position: &Position{Recommendation: v.Vote, Confidence: v.Confidence}}
		}
	}
	decision := Decide(answers, options)
	sum := 0
	for _, v := range votes {
		if v != nil && v.Vote == decision {
			sum += v.Confidence
		}
	}
	return decision, float64(sum) / CouncilSize
}

// EscalationInput is what the escalation table reads after the synthesis.
type EscalationInput struct {
	Mode                string // the routed mode
	SynthesisConfidence float64
	ConvergenceFinal    float64
	ValueAtRisk         float64
	Irreversible        bool
	RiskLevel           string
	CriticalDivergence  bool
	OutOfScope          bool
	Trip                *Trip
	OptionalCouncil     bool // run the optional council (default true)
	// NoProposal: no agent answered validly, so there is no decision to
	// emit or to put to the council.
	NoProposal bool
}

// Escalation is the table's answer: where the decision goes and why.
type Escalation struct {
	Target    string
	Mandatory bool // the council is mandatory (not the optional one)
	Impasse   bool
	Reasons   []string
}

// Escalate is the seed's escalation flow with its para_council and
// para_humano triggers, in this order:
//  1. No valid answer, so no proposal → HUMANO.
//  2. para_humano that skip the council: circuit breaker max_iterations,
//     tipo_incerteza fora_do_escopo → HUMANO.
//  3. The total time spent ("abortar e escalar com estado atual") →
//     HUMANO below 50 or for a CATASTROFICO risk, else COUNCIL (mandatory):
//     the abort always escalates, never emits.
//  4. Council forced by the breaker (loop or refinements: IMPASSE) → COUNCIL.
//  5. Synthesis confidence ≥ 70: emit, unless a para_council trigger holds
//     (convergencia_final < 70, critical divergence, irreversible, the
//     critical council route, CATASTROFICO) → COUNCIL (mandatory).
//  6. < 70 and value at risk > threshold → COUNCIL (mandatory).
//  7. ≥ 50 → optional COUNCIL (NENHUM when it is switched off);
//     < 50 → HUMANO.
//
// A fired circuit breaker always escalates ("ACAO: Escalando para
// {COUNCIL | HUMANO}"): where the table would emit, the council is
// mandatory. After the council, AfterCouncil decides.
func Escalate(in EscalationInput, c Config) Escalation {
	out := escalate(in, c)
	if in.Trip != nil && out.Target == TargetNone {
		out = Escalation{Target: TargetCouncil, Mandatory: true,
			Reasons: append(out.Reasons, "disyuntor: "+in.Trip.Condition+"; el protocolo escala siempre (consejo o persona)")}
	}
	return out
}

func escalate(in EscalationInput, c Config) Escalation {
	e := c.Escalation
	if in.NoProposal {
		return Escalation{Target: TargetHuman, Reasons: []string{"ningún participante dio una respuesta válida: no hay propuesta que emitir ni votar"}}
	}
	if in.Trip != nil && in.Trip.Trigger == TriggerIterations {
		return Escalation{Target: TargetHuman, Reasons: []string{"disyuntor: " + in.Trip.Condition}}
	}
	if in.OutOfScope {
		return Escalation{Target: TargetHuman, Reasons: []string{"tipo de incertidumbre: fuera del alcance"}}
	}
	// Total time spent (seed: "abortar e escalar com estado atual",
	// synthesis with the current state, "escalar para humano se confiança
	// < 50%"): a person below 50 or for a CATASTROFICO risk, otherwise the
	// council, which has its own time (timeout.council).
	if in.Trip != nil && in.Trip.Trigger == TriggerTimeout {
		switch {
		case in.SynthesisConfidence < e.HumanThreshold:
			return Escalation{Target: TargetHuman, Reasons: []string{"disyuntor: " + in.Trip.Condition,
				fmt.Sprintf("confianza de la síntesis %.1f%% < %.0f%%, reducida por tiempo agotado", in.SynthesisConfidence, e.HumanThreshold)}}
		case in.RiskLevel == RiskCatastrophic:
			return Escalation{Target: TargetHuman, Reasons: []string{"disyuntor: " + in.Trip.Condition, "riesgo CATASTROFICO"}}
		}
		return Escalation{Target: TargetCouncil, Mandatory: true, Reasons: []string{"disyuntor: " + in.Trip.Condition,
			fmt.Sprintf("confianza de la síntesis %.1f%% ≥ %.0f%%, reducida por tiempo agotado: decide el consejo con el estado actual", in.SynthesisConfidence, e.HumanThreshold)}}
	}
	if in.Trip != nil && in.Trip.Impasse {
		return Escalation{Target: TargetCouncil, Mandatory: true, Impasse: true, Reasons: []string{"IMPASSE: " + in.Trip.Condition}}
	}
	var council []string
	if in.ConvergenceFinal < c.Convergence.Threshold {
		council = append(council, fmt.Sprintf("convergencia final %.1f%% < %.0f%%", in.ConvergenceFinal, c.Convergence.Threshold))
	}
	if in.CriticalDivergence {
		council = append(council, "divergencia crítica")
	}
	if in.Irreversible {
		council = append(council, "decisión irreversible")
	}
	if in.RiskLevel == RiskCatastrophic {
		council = append(council, "riesgo CATASTROFICO")
	}
	if in.Mode == ModeCouncil {
		council = append(council, "ruta crítica (consejo)")
	}
	if in.SynthesisConfidence >= e.SynthesisThreshold {
		if len(council) > 0 {
			return Escalation{Target: TargetCouncil, Mandatory: true, Reasons: council}
		}
		return Escalation{Target: TargetNone, Reasons: []string{fmt.Sprintf("confianza de la síntesis %.1f%% ≥ %.0f%%", in.SynthesisConfidence, e.SynthesisThreshold)}}
	}
	low := fmt.Sprintf("confianza de la síntesis %.1f%% < %.0f%%", in.SynthesisConfidence, e.SynthesisThreshold)
	if in.ValueAtRisk > e.ValueThreshold {
		return Escalation{Target: TargetCouncil, Mandatory: true,
			Reasons: append([]string{low, fmt.Sprintf("valor en riesgo %.0f > %.0f: consejo obligatorio", in.ValueAtRisk, e.ValueThreshold)}, council...)}
	}
	if in.SynthesisConfidence < e.HumanThreshold {
		return Escalation{Target: TargetHuman, Reasons: []string{fmt.Sprintf("confianza de la síntesis %.1f%% < %.0f%%", in.SynthesisConfidence, e.HumanThreshold)}}
	}
	if len(council) > 0 {
		return Escalation{Target: TargetCouncil, Mandatory: true, Reasons: append([]string{low}, council...)}
	}
	if !in.OptionalCouncil {
		return Escalation{Target: TargetNone, Reasons: []string{low, "consejo opcional desactivado (--no-optional-council)"}}
	}
	return Escalation{Target: TargetCouncil, Reasons: []string{low, "consejo opcional"}}
}

// AfterCouncil is the end of the escalation flow: a council result ≥ 60
// emits the council's decision; below it, or for a CATASTROFICO risk
// (para_humano whatever the council says), a person decides. A council
// that ran out of time forces the synthesizer's decision, which a person
// takes when the synthesis confidence is below 50.
func AfterCouncil(result float64, timedOut bool, synthesisConfidence float64, riskLevel string, c Config) (target, reason string) {
	if riskLevel == RiskCatastrophic {
		return TargetHuman, "riesgo CATASTROFICO: decide una persona"
	}
	if timedOut {
		if synthesisConfidence < c.Escalation.HumanThreshold {
			return TargetHuman, "council sin tiempo; confianza de la síntesis bajo el umbral humano"
		}
		return TargetNone, "council sin tiempo: se fuerza la síntesis del sintetizador"
	}
	if result >= c.Escalation.CouncilThreshold {
		return TargetNone, fmt.Sprintf("resultado del consejo %.1f%% ≥ %.0f%%", result, c.Escalation.CouncilThreshold)
	}
	return TargetHuman, fmt.Sprintf("resultado del consejo %.1f%% < %.0f%%", result, c.Escalation.CouncilThreshold)
}

func set(xs []string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

func sortedSet(xs []string) []string {
	m := set(xs)
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
