package debate

import (
	"fmt"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/yamldoc"
)

// Modes of the routing checkpoint.
const (
	ModeAuto    = "auto"
	ModeSimple  = "simple"
	ModeDebate  = "debate"
	ModeCouncil = "council"
)

// Risk levels a question may declare; Catastrophic routes to the council and
// escalates to a person (the seed's risco: CATASTROFICO).
const (
	RiskLow          = "BAIXO"
	RiskMedium       = "MEDIO"
	RiskHigh         = "ALTO"
	RiskCatastrophic = "CATASTROFICO"
)

var riskLevels = []string{RiskLow, RiskMedium, RiskHigh, RiskCatastrophic}

// Question is QUESTION.yaml.
type Question struct {
	Question     string        `yaml:"question"`
	Options      []string      `yaml:"options"`
	Participants []Participant `yaml:"participants"`
	Mode         string        `yaml:"mode"`
	ValueAtRisk  *Money        `yaml:"value_at_risk"`
	Irreversible bool          `yaml:"irreversible"`
	RiskLevel    string        `yaml:"risk_level"`
	Config       Config        `yaml:"config"`
}

// Participant is one role of the committee: an id ("cfo") and a short brief
// of what it speaks for.
type Participant struct {
	ID    string `yaml:"id" json:"id"`
	Brief string `yaml:"brief" json:"brief"`
}

// Money is an amount in a currency (default BRL, the seed's R$).
type Money struct {
	Amount   float64 `yaml:"amount" json:"amount"`
	Currency string  `yaml:"currency" json:"currency"`
}

// Seconds is a duration written in seconds in YAML (an alias, so a decoding
// error says "a number is expected").
type Seconds = float64

// Dur is the duration of s seconds.
func Dur(s Seconds) time.Duration { return time.Duration(s * float64(time.Second)) }

// Config holds the seed's parameters under their own names, nested
// (debate.rounds.max, convergence.threshold, timeout.per_agent, …). Zero
// values take the seed's defaults (see Defaults); durations are seconds.
type Config struct {
	Debate struct {
		Rounds struct {
			Min     int `yaml:"min"`
			Typical int `yaml:"typical"`
			Max     int `yaml:"max"`
		} `yaml:"rounds"`
	} `yaml:"debate"`
	Convergence struct {
		Threshold float64 `yaml:"threshold"` // percent
	} `yaml:"convergence"`
	Timeout struct {
		PerAgent Seconds `yaml:"per_agent"`
		PerRound Seconds `yaml:"per_round"`
		Total    Seconds `yaml:"total"`
		Council  Seconds `yaml:"council"`
	} `yaml:"timeout"`
	CircuitBreaker struct {
		MaxIterations  int `yaml:"max_iterations"`
		MaxRefinements int `yaml:"max_refinements"`
	} `yaml:"circuit_breaker"`
	RAG struct {
		MaxQueries int     `yaml:"max_queries"`
		Timeout    Seconds `yaml:"timeout"`
	} `yaml:"rag"`
	Escalation struct {
		// ValueThreshold is the value at risk above which the council is
		// mandatory (R$100k), in the question's currency.
		ValueThreshold float64 `yaml:"value_threshold"`
		// SynthesisThreshold: synthesis confidence at or above it emits the
		// decision (70).
		SynthesisThreshold float64 `yaml:"synthesis_threshold"`
		// HumanThreshold: below it a person decides (50).
		HumanThreshold float64 `yaml:"human_threshold"`
		// CouncilThreshold: council result at or above it decides (60).
		CouncilThreshold float64 `yaml:"council_threshold"`
	} `yaml:"escalation"`
}

// Defaults is the seed's parameter table.
func Defaults() Config {
	var c Config
	c.Debate.Rounds.Min, c.Debate.Rounds.Typical, c.Debate.Rounds.Max = 1, 2, 3
	c.Convergence.Threshold = 70
	c.Timeout.PerAgent, c.Timeout.PerRound, c.Timeout.Total, c.Timeout.Council = 30, 120, 300, 180
	c.CircuitBreaker.MaxIterations, c.CircuitBreaker.MaxRefinements = 5, 2
	c.RAG.MaxQueries, c.RAG.Timeout = 5, 15
	c.Escalation.ValueThreshold = 100_000
	c.Escalation.SynthesisThreshold = 70
	c.Escalation.HumanThreshold = 50
	c.Escalation.CouncilThreshold = 60
	return c
}

// withDefaults fills every zero parameter from Defaults.
func (c Config) withDefaults() Config {
	d := Defaults()
	setI := func(v *int, def int) {
		if *v == 0 {
			*v = def
		}
	}
	setF := func(v *float64, def float64) {
		if *v == 0 {
			*v = def
		}
	}
	setS := func(v *Seconds, def Seconds) {
		if *v == 0 {
			*v = def
		}
	}
	setI(&c.Debate.Rounds.Min, d.Debate.Rounds.Min)
	setI(&c.Debate.Rounds.Typical, d.Debate.Rounds.Typical)
	setI(&c.Debate.Rounds.Max, d.Debate.Rounds.Max)
	setF(&c.Convergence.Threshold, d.Convergence.Threshold)
	setS(&c.Timeout.PerAgent, d.Timeout.PerAgent)
	setS(&c.Timeout.PerRound, d.Timeout.PerRound)
	setS(&c.Timeout.Total, d.Timeout.Total)
	setS(&c.Timeout.Council, d.Timeout.Council)
	setI(&c.CircuitBreaker.MaxIterations, d.CircuitBreaker.MaxIterations)
	setI(&c.CircuitBreaker.MaxRefinements, d.CircuitBreaker.MaxRefinements)
	setI(&c.RAG.MaxQueries, d.RAG.MaxQueries)
	setS(&c.RAG.Timeout, d.RAG.Timeout)
	setF(&c.Escalation.ValueThreshold, d.Escalation.ValueThreshold)
	setF(&c.Escalation.SynthesisThreshold, d.Escalation.SynthesisThreshold)
	setF(&c.Escalation.HumanThreshold, d.Escalation.HumanThreshold)
	setF(&c.Escalation.CouncilThreshold, d.Escalation.CouncilThreshold)
	return c
}

// Bounds on what a question may ask for: everything that loops or grows
// has one.
const (
	MaxParticipants = 12
	MaxOptions      = 10
	MaxRounds       = 10
	MaxQuestionLen  = 2000
	MaxBriefLen     = 1000
	maxSeconds      = 3600
)

// ParseQuestion decodes and validates QUESTION.yaml strictly: unknown
// fields, a missing question, fewer than two options, duplicate or invalid
// participant ids, an unknown mode or risk level and out-of-range
// parameters are *veredicto.InvalidInputError naming file and field. The
// returned question has its defaults applied (mode auto, currency BRL, the
// seed's parameters).
func ParseQuestion(file string, data []byte) (Question, error) {
	var q Question
	if err := yamldoc.Decode(file, data, &q); err != nil {
		return Question{}, err
	}
	bad := func(field, format string, args ...any) error {
		return &veredicto.InvalidInputError{File: file, Field: field, Problem: fmt.Sprintf(format, args...)}
	}
	q.Question = strings.TrimSpace(q.Question)
	switch {
	case q.Question == "":
		return Question{}, bad("question", "is required")
	case len([]rune(q.Question)) > MaxQuestionLen:
		return Question{}, bad("question", "is longer than %d characters", MaxQuestionLen)
	case len(q.Options) < 2:
		return Question{}, bad("options", "needs at least two possible recommendations")
	case len(q.Options) > MaxOptions:
		return Question{}, bad("options", "has more than %d options", MaxOptions)
	}
	seen := map[string]bool{}
	for i, o := range q.Options {
		o = strings.TrimSpace(o)
		if o == "" {
			return Question{}, bad(fmt.Sprintf("options[%d]", i), "is empty")
		}
		if seen[o] {
			return Question{}, bad(fmt.Sprintf("options[%d]", i), "repeats option %q", o)
		}
		seen[o] = true
		q.Options[i] = o
	}
	if len(q.Participants) == 0 {
		return Question{}, bad("participants", "needs at least one role")
	}
	if len(q.Participants) > MaxParticipants {
		return Question{}, bad("participants", "has more than %d roles", MaxParticipants)
	}
	ids := map[string]bool{}
	for i, p := range q.Participants {
		f := fmt.Sprintf("participants[%d]", i)
		p.ID = strings.TrimSpace(p.ID)
		if !validID(p.ID) {
			return Question{}, bad(f+".id", "must be 1-40 letters, digits, '-' or '_'")
		}
		if ids[p.ID] {
			return Question{}, bad(f+".id", "repeats participant %q", p.ID)
		}
		ids[p.ID] = true
		p.Brief = strings.TrimSpace(p.Brief)
		if p.Brief == "" {
			return Question{}, bad(f+".brief", "is required (what this role speaks for)")
		}
		if len([]rune(p.Brief)) > MaxBriefLen {
			return Question{}, bad(f+".brief", "is longer than %d characters", MaxBriefLen)
		}
		q.Participants[i] = p
	}
	switch q.Mode {
	case "":
		q.Mode = ModeAuto
	case ModeAuto, ModeSimple, ModeCouncil:
	case ModeDebate:
		if len(q.Participants) < 2 {
			return Question{}, bad("mode", "debate needs at least two participants")
		}
	default:
		return Question{}, bad("mode", "must be auto, simple, debate or council")
	}
	if q.ValueAtRisk != nil {
		if q.ValueAtRisk.Amount < 0 {
			return Question{}, bad("value_at_risk.amount", "must not be negative")
		}
		c := strings.ToUpper(strings.TrimSpace(q.ValueAtRisk.Currency))
		if c == "" {
			c = "BRL"
		}
		if len(c) != 3 || strings.Trim(c, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
			return Question{}, bad("value_at_risk.currency", "must be a three-letter currency code (e.g. BRL)")
		}
		q.ValueAtRisk.Currency = c
		// The seed's bound is R$100k: in another currency the threshold
		// must be given in it, or the comparison would mix currencies.
		if c != "BRL" && q.Config.Escalation.ValueThreshold == 0 {
			return Question{}, bad("config.escalation.value_threshold", "is required when value_at_risk.currency is %s: the default, 100000, is the seed's R$100k; give the threshold in %s", c, c)
		}
	}
	if q.RiskLevel != "" {
		q.RiskLevel = strings.ToUpper(strings.TrimSpace(q.RiskLevel))
		if !contains(riskLevels, q.RiskLevel) {
			return Question{}, bad("risk_level", "must be one of %s", strings.Join(riskLevels, ", "))
		}
	}
	if err := q.Config.validate(); err != nil {
		err.File = file
		return Question{}, err
	}
	q.Config = q.Config.withDefaults()
	if q.Config.Debate.Rounds.Min > q.Config.Debate.Rounds.Max {
		return Question{}, bad("config.debate.rounds.min", "is greater than config.debate.rounds.max")
	}
	return q, nil
}

func (c Config) validate() *veredicto.InvalidInputError {
	bad := func(field, problem string) *veredicto.InvalidInputError {
		return &veredicto.InvalidInputError{Field: "config." + field, Problem: problem}
	}
	ints := []struct {
		f    string
		v    int
		max  int
		zero bool
	}{
		{"debate.rounds.min", c.Debate.Rounds.Min, MaxRounds, true},
		{"debate.rounds.typical", c.Debate.Rounds.Typical, MaxRounds, true},
		{"debate.rounds.max", c.Debate.Rounds.Max, MaxRounds, true},
		{"circuit_breaker.max_iterations", c.CircuitBreaker.MaxIterations, 3 * MaxRounds, true},
		{"circuit_breaker.max_refinements", c.CircuitBreaker.MaxRefinements, MaxRounds, true},
		{"rag.max_queries", c.RAG.MaxQueries, 20, true},
	}
	for _, x := range ints {
		if x.v < 0 || x.v > x.max {
			return bad(x.f, fmt.Sprintf("must be between 1 and %d", x.max))
		}
	}
	pcts := []struct {
		f string
		v float64
	}{
		{"convergence.threshold", c.Convergence.Threshold},
		{"escalation.synthesis_threshold", c.Escalation.SynthesisThreshold},
		{"escalation.human_threshold", c.Escalation.HumanThreshold},
		{"escalation.council_threshold", c.Escalation.CouncilThreshold},
	}
	for _, x := range pcts {
		if x.v < 0 || x.v > 100 {
			return bad(x.f, "must be a percentage between 0 and 100")
		}
	}
	if c.Escalation.ValueThreshold < 0 {
		return bad("escalation.value_threshold", "must not be negative")
	}
	secs := []struct {
		f string
		v Seconds
	}{
		{"timeout.per_agent", c.Timeout.PerAgent},
		{"timeout.per_round", c.Timeout.PerRound},
		{"timeout.total", c.Timeout.Total},
		{"timeout.council", c.Timeout.Council},
		{"rag.timeout", c.RAG.Timeout},
	}
	for _, x := range secs {
		if x.v < 0 || x.v > maxSeconds {
			return bad(x.f, fmt.Sprintf("must be between 0 and %d seconds", maxSeconds))
		}
	}
	return nil
}

func validID(s string) bool {
	if s == "" || len(s) > 40 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// MarshalQuestion writes q as QUESTION.yaml, which ParseQuestion reads
// back as q: what a debate's audit record keeps of a question made in
// code (FromSearch).
func MarshalQuestion(q Question) ([]byte, error) {
	b, err := yaml.Marshal(q)
	if err != nil {
		return nil, fmt.Errorf("encode question: %w", err)
	}
	return b, nil
}
