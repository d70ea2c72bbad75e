package debate

import (
	"math"
	"strings"
	"testing"
	"time"
)

func pos(rec string, premises []string, risks []string, timing string, conf int) *Position {
	p := &Position{Recommendation: rec, Premises: premises, Timing: timing, Confidence: conf}
	for _, r := range risks {
		p.Risks = append(p.Risks, Risk{Category: r})
	}
	return p
}

func TestJaccard(t *testing.T) {
	tests := []struct {
		a, b []string
		want float64
	}{
		{nil, nil, 1},
		{[]string{"x"}, nil, 0},
		{[]string{"x", "y"}, []string{"y", "z"}, 1.0 / 3},
		{[]string{"x", "y"}, []string{"x", "y", "y"}, 1},
		{[]string{"a", "b", "c", "d"}, []string{"a", "b"}, 0.5},
	}
	for _, tt := range tests {
		if got := Jaccard(tt.a, tt.b); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("Jaccard(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestConvergence(t *testing.T) {
	a := []string{"[RAG:k_001]", "[RAG:k_002]"}
	tests := []struct {
		name    string
		answers []Answer
		want    float64
		pairs   int
	}{
		{"identical pair", []Answer{
			{Participant: "cfo", Position: pos("A", a, []string{"financial"}, "30d", 80)},
			{Participant: "ceo", Position: pos("A", a, []string{"financial"}, "30d", 60)},
		}, 100, 1},
		{"only recommendation differs", []Answer{
			{Participant: "cfo", Position: pos("A", a, []string{"financial"}, "30d", 80)},
			{Participant: "ceo", Position: pos("B", a, []string{"financial"}, "30d", 80)},
		}, 75, 1},
		{"premises at exactly 0.5 agree, risks below do not", []Answer{
			{Participant: "cfo", Position: pos("A", []string{"[RAG:1]", "[RAG:2]", "[RAG:3]", "[RAG:4]"}, []string{"financial", "legal"}, "30d", 80)},
			{Participant: "ceo", Position: pos("A", []string{"[RAG:1]", "[RAG:2]"}, []string{"financial", "people", "timing"}, "90d", 80)},
		}, 50, 1},
		{"three agents, three pairs", []Answer{
			{Participant: "cfo", Position: pos("A", a, []string{"financial"}, "30d", 80)},
			{Participant: "ceo", Position: pos("A", a, []string{"financial"}, "30d", 80)},
			{Participant: "chro", Position: pos("B", nil, []string{"people"}, "90d", 80)},
		}, 100 * 4.0 / 12, 3},
		{"a timeout is excluded", []Answer{
			{Participant: "cfo", Position: pos("A", a, []string{"financial"}, "30d", 80)},
			{Participant: "ceo", Position: pos("A", a, []string{"financial"}, "30d", 80)},
			{Participant: "chro", TimedOut: true},
		}, 100, 1},
		{"a timeout with a partial position counts", []Answer{
			{Participant: "cfo", Position: pos("A", a, []string{"financial"}, "30d", 80)},
			{Participant: "ceo", Position: pos("A", a, []string{"financial"}, "30d", 80)},
			{Participant: "chro", TimedOut: true, Position: pos("B", nil, []string{"people"}, "90d", 80)},
		}, 100 * 4.0 / 12, 3},
		{"fewer than two answers", []Answer{
			{Participant: "cfo", Position: pos("A", a, nil, "30d", 80)},
			{Participant: "ceo", TimedOut: true},
		}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, pairs := Convergence(tt.answers)
			if math.Abs(got-tt.want) > 1e-9 || len(pairs) != tt.pairs {
				t.Errorf("Convergence = %v over %d pairs, want %v over %d", got, len(pairs), tt.want, tt.pairs)
			}
		})
	}
}

func TestPositionsHash(t *testing.T) {
	base := []Answer{
		{Participant: "cfo", Position: pos("A", []string{"[RAG:1]", "[RAG:2]"}, []string{"financial", "legal"}, "30d", 80)},
		{Participant: "ceo", Position: pos("B", nil, nil, "90d", 60)},
	}
	h := PositionsHash(base)
	reworded := []Answer{
		{Participant: "ceo", Position: &Position{Recommendation: "B", Timing: "90d", Confidence: 60, Position: "otro texto"}},
		{Participant: "cfo", Position: pos("A", []string{"[RAG:2]", "[RAG:1]", "[RAG:1]"}, []string{"legal", "financial"}, "30d", 80)},
	}
	if got := PositionsHash(reworded); got != h {
		t.Error("the same stances reworded, reordered and with repeated ids hash differently")
	}
	changes := map[string][]Answer{
		"recommendation": {{Participant: "cfo", Position: pos("B", []string{"[RAG:1]", "[RAG:2]"}, []string{"financial", "legal"}, "30d", 80)}, base[1]},
		"confidence":     {{Participant: "cfo", Position: pos("A", []string{"[RAG:1]", "[RAG:2]"}, []string{"financial", "legal"}, "30d", 81)}, base[1]},
		"premises":       {{Participant: "cfo", Position: pos("A", []string{"[RAG:1]"}, []string{"financial", "legal"}, "30d", 80)}, base[1]},
		"timeout":        {base[0], {Participant: "ceo", TimedOut: true}},
	}
	for name, as := range changes {
		if PositionsHash(as) == h {
			t.Errorf("a change of %s keeps the hash", name)
		}
	}
}

func TestLoopDetector(t *testing.T) {
	tests := []struct {
		hashes []string
		want   []bool
	}{
		{[]string{"a", "a", "a"}, []bool{false, false, true}},
		{[]string{"a", "b", "b"}, []bool{false, false, false}},
		{[]string{"a", "a", "b", "b"}, []bool{false, false, false, true}},
	}
	for _, tt := range tests {
		var l LoopDetector
		for i, h := range tt.hashes {
			if got := l.Observe(h); got != tt.want[i] {
				t.Errorf("%v: Observe #%d = %v, want %v", tt.hashes, i+1, got, tt.want[i])
			}
		}
	}
}

func TestBreaker(t *testing.T) {
	c := Defaults()
	tests := []struct {
		name    string
		s       BreakerState
		trigger string
		target  string
		impasse bool
	}{
		{"round 1 diverged", BreakerState{Rounds: 1, Iterations: 1}, "", "", false},
		{"round 2 diverged", BreakerState{Rounds: 2, Iterations: 2, LoopCounter: 1}, "", "", false},
		{"rounds at max", BreakerState{Rounds: 3, Iterations: 3, Refinements: 1}, TriggerRounds, "", false},
		{"converged at max rounds", BreakerState{Rounds: 3, Iterations: 3, Refinements: 1, Converged: true}, "", "", false},
		{"iterations", BreakerState{Rounds: 2, Iterations: 5}, TriggerIterations, TargetHuman, false},
		{"refinements", BreakerState{Rounds: 2, Iterations: 2, Refinements: 2}, TriggerRefinements, TargetCouncil, true},
		{"total time", BreakerState{Rounds: 1, Iterations: 1, Elapsed: 300 * time.Second}, TriggerTimeout, "", false},
		{"total time even when converged", BreakerState{Rounds: 1, Converged: true, Elapsed: 301 * time.Second}, TriggerTimeout, "", false},
		{"just under total time", BreakerState{Rounds: 1, Iterations: 1, Elapsed: 299 * time.Second}, "", "", false},
		{"loop wins over rounds", BreakerState{Rounds: 3, Iterations: 3, Refinements: 1, LoopCounter: 2}, TriggerLoop, TargetCouncil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			trip := Breaker(tt.s, c)
			if tt.trigger == "" {
				if trip != nil {
					t.Fatalf("tripped %q, want no trip", trip.Trigger)
				}
				return
			}
			if trip == nil || trip.Trigger != tt.trigger || trip.Target != tt.target || trip.Impasse != tt.impasse {
				t.Fatalf("trip = %+v, want trigger %q target %q impasse %v", trip, tt.trigger, tt.target, tt.impasse)
			}
			if trip.Action == "" || trip.Condition == "" {
				t.Errorf("trip %q has no condition or action", tt.trigger)
			}
		})
	}
}

func TestRoute(t *testing.T) {
	two := []Participant{{ID: "cfo", Brief: "x"}, {ID: "ceo", Brief: "y"}}
	one := two[:1]
	tests := []struct {
		name string
		q    Question
		want string
	}{
		{"auto, two roles", Question{Participants: two}, ModeDebate},
		{"auto, one role", Question{Participants: one}, ModeSimple},
		{"auto, irreversible", Question{Participants: two, Irreversible: true}, ModeCouncil},
		{"auto, catastrophic", Question{Participants: one, RiskLevel: RiskCatastrophic}, ModeCouncil},
		{"auto, value above threshold", Question{Participants: two, ValueAtRisk: &Money{Amount: 100_001, Currency: "BRL"}}, ModeCouncil},
		{"auto, value at threshold", Question{Participants: two, ValueAtRisk: &Money{Amount: 100_000, Currency: "BRL"}}, ModeDebate},
		{"explicit simple", Question{Participants: two, Mode: ModeSimple, Irreversible: true}, ModeSimple},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.q.Config = Defaults()
			got, why := Route(tt.q)
			if got != tt.want || why == "" {
				t.Errorf("Route = %q (%q), want %q with a reason", got, why, tt.want)
			}
		})
	}
}

func TestDecideAndConfidences(t *testing.T) {
	opts := []string{"A", "B", "C"}
	answers := []Answer{
		{Participant: "1", Position: pos("B", nil, nil, "30d", 90)},
		{Participant: "2", Position: pos("B", nil, nil, "30d", 60)},
		{Participant: "3", Position: pos("A", nil, nil, "30d", 100)},
		{Participant: "4", TimedOut: true},
	}
	if d := Decide(answers, opts); d != "B" {
		t.Errorf("Decide = %q, want the majority B", d)
	}
	if c := SynthesisConfidence(answers, "B"); c != 50 {
		t.Errorf("SynthesisConfidence = %v, want (90+60)/3 = 50", c)
	}
	tie := []Answer{{Position: pos("A", nil, nil, "", 50)}, {Position: pos("C", nil, nil, "", 70)}}
	if d := Decide(tie, opts); d != "C" {
		t.Errorf("Decide on a tie = %q, want the more confident C", d)
	}
	if d := Decide(nil, opts); d != "" {
		t.Errorf("Decide with no answers = %q, want no proposal", d)
	}
	if d := Decide([]Answer{{Participant: "1", TimedOut: true}}, opts); d != "" {
		t.Errorf("Decide with only timeouts = %q, want no proposal", d)
	}
	tests := []struct {
		votes []*Vote
		dec   string
		res   float64
	}{
		{[]*Vote{{Vote: "A", Confidence: 90}, {Vote: "A", Confidence: 90}, {Vote: "A", Confidence: 90}}, "A", 90},
		{[]*Vote{{Vote: "A", Confidence: 90}, {Vote: "A", Confidence: 90}, {Vote: "B", Confidence: 90}}, "A", 60},
		{[]*Vote{{Vote: "A", Confidence: 80}, {Vote: "A", Confidence: 80}, {Vote: "B", Confidence: 90}}, "A", 160.0 / 3},
		{[]*Vote{{Vote: "A", Confidence: 90}, nil, nil}, "A", 30},
		{[]*Vote{nil, nil, nil}, "", 0},
	}
	for _, tt := range tests {
		d, r := CouncilResult(tt.votes, opts)
		if d != tt.dec || math.Abs(r-tt.res) > 1e-9 {
			t.Errorf("CouncilResult = %q %v, want %q %v", d, r, tt.dec, tt.res)
		}
	}
}

// TestEscalate is the seed's escalation diagram, table-driven on synthesis
// confidence × value at risk × the optional council, plus each
// para_council / para_humano trigger.
func TestEscalate(t *testing.T) {
	c := Defaults()
	tests := []struct {
		name      string
		in        EscalationInput
		target    string
		mandatory bool
		impasse   bool
	}{
		{"≥70 emits", EscalationInput{SynthesisConfidence: 70, ConvergenceFinal: 80}, TargetNone, false, false},
		{"≥70 with high value still emits (diagram)", EscalationInput{SynthesisConfidence: 85, ConvergenceFinal: 80, ValueAtRisk: 500_000}, TargetNone, false, false},
		{"69 with value above threshold: council mandatory", EscalationInput{SynthesisConfidence: 69, ConvergenceFinal: 80, ValueAtRisk: 100_001}, TargetCouncil, true, false},
		{"40 with value above threshold: council mandatory", EscalationInput{SynthesisConfidence: 40, ConvergenceFinal: 80, ValueAtRisk: 200_000}, TargetCouncil, true, false},
		{"69 at the threshold value: optional council", EscalationInput{SynthesisConfidence: 69, ConvergenceFinal: 80, ValueAtRisk: 100_000, OptionalCouncil: true}, TargetCouncil, false, false},
		{"50: optional council", EscalationInput{SynthesisConfidence: 50, ConvergenceFinal: 80, OptionalCouncil: true}, TargetCouncil, false, false},
		{"50 with the optional council off: emits", EscalationInput{SynthesisConfidence: 50, ConvergenceFinal: 80}, TargetNone, false, false},
		{"49: human", EscalationInput{SynthesisConfidence: 49.9, ConvergenceFinal: 80, OptionalCouncil: true}, TargetHuman, false, false},
		{"≥70, convergence below 70: council", EscalationInput{SynthesisConfidence: 75, ConvergenceFinal: 60}, TargetCouncil, true, false},
		{"≥70, critical divergence: council", EscalationInput{SynthesisConfidence: 75, ConvergenceFinal: 80, CriticalDivergence: true}, TargetCouncil, true, false},
		{"≥70, irreversible: council", EscalationInput{SynthesisConfidence: 75, ConvergenceFinal: 80, Irreversible: true}, TargetCouncil, true, false},
		{"≥70, council route: council", EscalationInput{Mode: ModeCouncil, SynthesisConfidence: 90, ConvergenceFinal: 100}, TargetCouncil, true, false},
		{"60, irreversible, optional council off: council mandatory", EscalationInput{SynthesisConfidence: 60, ConvergenceFinal: 80, Irreversible: true}, TargetCouncil, true, false},
		{"out of scope: human", EscalationInput{SynthesisConfidence: 95, ConvergenceFinal: 100, OutOfScope: true}, TargetHuman, false, false},
		{"breaker max_iterations: human", EscalationInput{SynthesisConfidence: 95, ConvergenceFinal: 40, Trip: &Trip{Trigger: TriggerIterations}}, TargetHuman, false, false},
		{"loop: council with impasse", EscalationInput{SynthesisConfidence: 95, ConvergenceFinal: 40, Trip: &Trip{Trigger: TriggerLoop, Impasse: true}}, TargetCouncil, true, true},
		{"total time, 40 with value above threshold: human, no council", EscalationInput{SynthesisConfidence: 40, ConvergenceFinal: 80, ValueAtRisk: 200_000, Trip: &Trip{Trigger: TriggerTimeout, Condition: "timeout_total >= 300s"}}, TargetHuman, false, false},
		{"total time, 49.9: human", EscalationInput{SynthesisConfidence: 49.9, ConvergenceFinal: 80, Trip: &Trip{Trigger: TriggerTimeout}}, TargetHuman, false, false},
		{"total time, 50: abort and escalate to the council", EscalationInput{SynthesisConfidence: 50, ConvergenceFinal: 40, Irreversible: true, OptionalCouncil: true, Trip: &Trip{Trigger: TriggerTimeout}}, TargetCouncil, true, false},
		{"total time, 90, converged, optional council off: still the council", EscalationInput{SynthesisConfidence: 90, ConvergenceFinal: 100, Trip: &Trip{Trigger: TriggerTimeout}}, TargetCouncil, true, false},
		{"no proposal: human", EscalationInput{NoProposal: true, OptionalCouncil: true, ValueAtRisk: 500_000}, TargetHuman, false, false},
		{"state size at 80%: a breaker always escalates", EscalationInput{SynthesisConfidence: 80, ConvergenceFinal: 80, Trip: &Trip{Trigger: TriggerStateSize}}, TargetCouncil, true, false},
		{"total time, CATASTROFICO: human", EscalationInput{SynthesisConfidence: 90, ConvergenceFinal: 90, RiskLevel: RiskCatastrophic, Trip: &Trip{Trigger: TriggerTimeout}}, TargetHuman, false, false},
		{"breaker max_rounds: the table decides", EscalationInput{SynthesisConfidence: 45, ConvergenceFinal: 40, Trip: &Trip{Trigger: TriggerRounds}, OptionalCouncil: true}, TargetHuman, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Escalate(tt.in, c)
			if got.Target != tt.target || got.Mandatory != tt.mandatory || got.Impasse != tt.impasse || len(got.Reasons) == 0 {
				t.Errorf("Escalate = %+v, want target %s mandatory %v impasse %v with reasons", got, tt.target, tt.mandatory, tt.impasse)
			}
		})
	}
}

func TestAfterCouncil(t *testing.T) {
	c := Defaults()
	tests := []struct {
		result   float64
		timedOut bool
		synth    float64
		risk     string
		want     string
	}{
		{60, false, 0, "", TargetNone},
		{59.9, false, 90, "", TargetHuman},
		{90, false, 90, RiskCatastrophic, TargetHuman},
		{0, true, 55, "", TargetNone},
		{0, true, 45, "", TargetHuman},
	}
	for _, tt := range tests {
		if got, why := AfterCouncil(tt.result, tt.timedOut, tt.synth, tt.risk, c); got != tt.want || why == "" {
			t.Errorf("AfterCouncil(%v, %v, %v, %q) = %q (%q), want %q", tt.result, tt.timedOut, tt.synth, tt.risk, got, why, tt.want)
		}
	}
}

// TestEscalationFlow is the seed's whole escalation diagram, table-driven on
// synthesis confidence × value at risk × council result: where the decision
// finally goes.
func TestEscalationFlow(t *testing.T) {
	c := Defaults()
	final := func(conf, value, council float64) string {
		e := Escalate(EscalationInput{Mode: ModeDebate, SynthesisConfidence: conf, ConvergenceFinal: 80, ValueAtRisk: value, OptionalCouncil: true}, c)
		if e.Target != TargetCouncil {
			return e.Target
		}
		target, _ := AfterCouncil(council, false, conf, "", c)
		if target == TargetNone {
			return TargetCouncil // decided by the council
		}
		return target
	}
	tests := []struct {
		conf, value, council float64
		want                 string
	}{
		{75, 50_000, 0, TargetNone},
		{75, 150_000, 0, TargetNone},
		{60, 50_000, 70, TargetCouncil},
		{60, 50_000, 50, TargetHuman},
		{60, 150_000, 60, TargetCouncil},
		{60, 150_000, 59, TargetHuman},
		{45, 50_000, 90, TargetHuman},
		{45, 150_000, 90, TargetCouncil},
		{45, 150_000, 30, TargetHuman},
		{50, 100_000, 60, TargetCouncil},
		{49.9, 100_000, 60, TargetHuman},
		{70, 100_001, 0, TargetNone},
		{69.9, 100_001, 0, TargetHuman},
	}
	for _, tt := range tests {
		if got := final(tt.conf, tt.value, tt.council); got != tt.want {
			t.Errorf("confidence %v, value %v, council %v: %s, want %s", tt.conf, tt.value, tt.council, got, tt.want)
		}
	}
}

// TestConflictingAgents: the breaker block's "agentes em conflito" are the
// ones against the largest recommendation; on a tie, all of them.
func TestConflictingAgents(t *testing.T) {
	a := func(id, rec string) Answer { return Answer{Participant: id, Position: pos(rec, nil, nil, "30d", 50)} }
	tests := []struct {
		name    string
		answers []Answer
		want    string
	}{
		{"one member dissents", []Answer{a("cfo", "avanzar"), a("chro", "avanzar"), a("ceo", "no avanzar")}, "ceo"},
		{"two against three", []Answer{a("a", "x"), a("b", "x"), a("c", "x"), a("d", "y"), a("e", "z")}, "d,e"},
		{"a tie: all in conflict", []Answer{a("cfo", "avanzar"), a("chro", "no avanzar")}, "cfo,chro"},
		{"agreement: none", []Answer{a("cfo", "avanzar"), a("chro", "avanzar")}, ""},
		{"a timeout is not in conflict", []Answer{a("cfo", "avanzar"), a("chro", "avanzar"), {Participant: "ceo", TimedOut: true}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := strings.Join(ConflictingAgents(tt.answers), ","); got != tt.want {
				t.Errorf("ConflictingAgents = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestVacuous: a synthesis or divergence that states no claim and cites
// nothing.
func TestVacuous(t *testing.T) {
	tests := []struct {
		text string
		want bool
	}{
		{"", true},
		{"—", true},
		{"N/A", true},
		{"Ninguna.", true},
		{"Sin comentarios.", true},
		{"plazo", true},
		{"[RAG:band_001]", false},
		{"El CFO y el CHRO difieren en el plazo", false},
		{"La banda salarial lo permite", false},
	}
	for _, tt := range tests {
		if got := Vacuous(tt.text); got != tt.want {
			t.Errorf("Vacuous(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
	if p := SynthesisProblem(Synthesis{Summary: "Ninguna."}); !strings.HasPrefix(p, "summary:") {
		t.Errorf("empty summary: %q", p)
	}
	if p := SynthesisProblem(Synthesis{Summary: "El comité recomienda avanzar con la oferta.", Divergences: []string{"plazo de la oferta distinto", "—"}}); !strings.HasPrefix(p, "divergences[1]:") {
		t.Errorf("empty divergence: %q", p)
	}
}
