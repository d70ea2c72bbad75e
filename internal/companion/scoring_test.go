package companion

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/veredicto/veredicto"
)

func req(typ, match string) ClassifiedRequirement {
	return ClassifiedRequirement{Requirement: typ + "-" + match, Type: typ, Match: match}
}

func links(n int) []StrengthLink {
	var out []StrengthLink
	for i := 0; i < n; i++ {
		out = append(out, StrengthLink{Strength: string(rune('a' + i)), Target: "x", Evidence: "e"})
	}
	return out
}

func near(a, b float64) bool { return math.Abs(a-b) < 0.005 }

func TestConfidenceHandComputed(t *testing.T) {
	e := NewEngine(DefaultConfig())
	tests := []struct {
		name                            string
		reqs                            []ClassifiedRequirement
		links                           []StrengthLink
		oblig, deseab, base, mvp, final float64
	}{
		{"all cumple", []ClassifiedRequirement{req("A", "cumple"), req("B", "cumple"), req("C", "cumple")}, nil, 100, 100, 100, 0, 100},
		// AB: (1 + 0.7)/2 = 85; CD: C parcial 0.5 + D cumple capped 0.5 over 1 + 0.5 = 66.67
		// base = 51 + 26.67 = 77.67
		{"mixed with D", []ClassifiedRequirement{req("A", "cumple"), req("B", "transferible"), req("C", "parcial"), req("D", "cumple")}, nil, 85, 66.67, 77.67, 0, 77.67},
		// no C/D: deseables count 0, base = 0.6·50 = 30
		{"empty deseables", []ClassifiedRequirement{req("A", "cumple"), req("B", "no_cumple")}, nil, 50, 0, 30, 0, 30},
		// no A/B: obligatorios count 0, base = 0.4·100
		{"empty obligatorios", []ClassifiedRequirement{req("C", "cumple"), req("D", "cumple")}, nil, 0, 100, 40, 0, 40},
		{"nothing", nil, nil, 0, 0, 0, 0, 0},
		{"mvp adds 2 per strength", []ClassifiedRequirement{req("B", "parcial")}, links(3), 50, 0, 30, 6, 36},
		{"mvp capped at 10", []ClassifiedRequirement{req("B", "parcial")}, links(7), 50, 0, 30, 10, 40},
		{"final capped at 100", []ClassifiedRequirement{req("A", "cumple"), req("C", "cumple")}, links(5), 100, 100, 100, 10, 100},
		{"D half weight earned", []ClassifiedRequirement{req("D", "parcial")}, nil, 0, 100, 40, 0, 40},
		{"D transferible capped", []ClassifiedRequirement{req("C", "no_cumple"), req("D", "transferible")}, nil, 0, 33.33, 13.33, 0, 13.33},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := e.Confidence(tt.reqs, tt.links)
			if err != nil {
				t.Fatal(err)
			}
			if !near(got.ObligatoriosScore, tt.oblig) || !near(got.DeseablesScore, tt.deseab) || !near(got.Base, tt.base) || !near(got.MVP.Total, tt.mvp) || !near(got.Final, tt.final) {
				t.Errorf("got oblig=%v deseab=%v base=%v mvp=%v final=%v, want %v %v %v %v %v",
					got.ObligatoriosScore, got.DeseablesScore, got.Base, got.MVP.Total, got.Final, tt.oblig, tt.deseab, tt.base, tt.mvp, tt.final)
			}
		})
	}
}

// The seed's four named tests.

func TestTypeDWeightHalved(t *testing.T) {
	e := NewEngine(DefaultConfig())
	// C cumple (1/1) + D no_cumple (0/0.5): deseables = 1/1.5 = 66.67, not 1/2 = 50.
	got, _ := e.Confidence([]ClassifiedRequirement{req("C", "cumple"), req("D", "no_cumple")}, nil)
	if !near(got.DeseablesScore, 66.67) {
		t.Errorf("deseables = %v, want 66.67 (D worth 0.5 possible)", got.DeseablesScore)
	}
}

func TestTransferibleScores07(t *testing.T) {
	e := NewEngine(DefaultConfig())
	for _, modelScore := range []float64{0, 0.3, 0.7, 1} {
		r := req("B", "transferible")
		r.Score = modelScore
		n, err := e.Normalize([]ClassifiedRequirement{r})
		if err != nil {
			t.Fatal(err)
		}
		if n[0].Score != 0.7 {
			t.Errorf("model score %v: got %v, want 0.7 always", modelScore, n[0].Score)
		}
		c, _ := e.Confidence([]ClassifiedRequirement{r}, nil)
		if !near(c.ObligatoriosScore, 70) {
			t.Errorf("model score %v: obligatorios %v, want 70", modelScore, c.ObligatoriosScore)
		}
	}
}

func TestMVPCapAt100(t *testing.T) {
	e := NewEngine(DefaultConfig())
	got, _ := e.Confidence([]ClassifiedRequirement{req("A", "cumple"), req("B", "cumple"), req("C", "cumple"), req("D", "cumple")}, links(10))
	if got.Final != 100 || got.Base+got.MVP.Total <= 100 {
		t.Errorf("final = %v (base %v + mvp %v), want capped at 100", got.Final, got.Base, got.MVP.Total)
	}
}

func TestSameInputSameOutput(t *testing.T) {
	e := NewEngine(DefaultConfig())
	mk := func() []ClassifiedRequirement {
		return []ClassifiedRequirement{req("A", "cumple"), req("B", "parcial"), req("C", "transferible"), req("D", "no_cumple")}
	}
	a, _ := e.Confidence(mk(), links(2))
	for i := 0; i < 20; i++ {
		b, _ := e.Confidence(mk(), links(2))
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("run %d: %+v != %+v", i, b, a)
		}
	}
}

func TestModelScoreIgnored(t *testing.T) {
	e := NewEngine(DefaultConfig())
	r := req("A", "no_cumple")
	r.Score = 1
	got, _ := e.Confidence([]ClassifiedRequirement{r}, nil)
	if got.ObligatoriosScore != 0 {
		t.Errorf("obligatorios = %v, want 0: the model's score must be ignored", got.ObligatoriosScore)
	}
}

func TestNormalizeRejectsUnknown(t *testing.T) {
	e := NewEngine(DefaultConfig())
	for _, r := range []ClassifiedRequirement{req("E", "cumple"), req("A", "casi")} {
		if _, err := e.Normalize([]ClassifiedRequirement{r}); err == nil {
			t.Errorf("%+v: want an error", r)
		}
	}
}

func TestMVPCountsDistinctEvidencedStrengths(t *testing.T) {
	e := NewEngine(DefaultConfig())
	got := e.MVP([]StrengthLink{
		{Strength: "Comunicación", Target: "r1", Evidence: "e"},
		{Strength: "comunicación ", Target: "r2", Evidence: "e"}, // same strength twice: counts once
		{Strength: "Liderazgo", Target: "r1", Evidence: " "},     // no evidence: does not count
		{Strength: "Negocio", Target: "p1", Evidence: "e"},
	})
	if got.Total != 4 || len(got.LinkedStrengths) != 2 {
		t.Errorf("got %+v, want total 4 from 2 strengths", got)
	}
}

func TestSASSumAndCheck(t *testing.T) {
	e := NewEngine(DefaultConfig())
	ev := SASDimensionEvaluation{
		CareerGoals: SASDimensionScore{Score: 20}, IntrinsicMotivations: SASDimensionScore{Score: 15},
		ValuesCulture: SASDimensionScore{Score: 10}, TechGrowth: SASDimensionScore{Score: 5}, AutonomyRole: SASDimensionScore{Score: 0},
	}
	s := e.SAS(ev, true)
	if s.Total != 50 {
		t.Errorf("total = %d, want 50", s.Total)
	}
	if !reflect.DeepEqual(s.LowConfidence, []string{"values_culture"}) || len(s.Notes) != 1 || s.Notes[0] != CultureLowConfidenceNote {
		t.Errorf("low confidence = %v notes = %v", s.LowConfidence, s.Notes)
	}
	if CheckSAS(&ev) != nil {
		t.Error("valid scores rejected")
	}
	for _, bad := range []int{-5, 7, 25} {
		ev2 := ev
		ev2.TechGrowth.Score = bad
		if err := CheckSAS(&ev2); err == nil || !strings.Contains(err.Error(), "tech_growth") {
			t.Errorf("score %d: err = %v, want tech_growth rejected", bad, err)
		}
	}
}

func TestDecisionMatrix(t *testing.T) {
	e := NewEngine(DefaultConfig())
	noA := []ClassifiedRequirement{req("B", "no_cumple")}
	hardA := []ClassifiedRequirement{req("A", "no_cumple")}
	tests := []struct {
		name  string
		final float64
		sas   int
		reqs  []ClassifiedRequirement
		want  string
	}{
		{"max priority at the thresholds", 75, 70, noA, DecisionMaxPriority},
		{"final just under 75", 74.99, 90, noA, DecisionConsider},
		{"sas just under 70", 90, 65, noA, DecisionConsider},
		{"consider at the thresholds", 60, 50, noA, DecisionConsider},
		{"strategic only: low final, high sas", 59.99, 70, noA, DecisionStrategicOnly},
		{"not recommended", 59.99, 65, noA, DecisionNotRecommended},
		{"consider needs sas 50", 80, 45, noA, DecisionNotRecommended},
		{"A no_cumple caps max priority", 90, 90, hardA, DecisionStrategicOnly},
		{"A no_cumple caps consider", 65, 55, hardA, DecisionStrategicOnly},
		{"A no_cumple never raises", 10, 10, hardA, DecisionNotRecommended},
		{"B no_cumple does not cap", 90, 90, []ClassifiedRequirement{req("B", "no_cumple"), req("A", "parcial")}, DecisionMaxPriority},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := e.Decide(tt.final, tt.sas, tt.reqs)
			if got != tt.want || why == "" {
				t.Errorf("Decide(%v, %d) = %q (%s), want %q", tt.final, tt.sas, got, why, tt.want)
			}
		})
	}
}

func TestAntiImpostorRule(t *testing.T) {
	e := NewEngine(DefaultConfig())
	tests := []struct {
		reqs []ClassifiedRequirement
		want bool
	}{
		{[]ClassifiedRequirement{req("A", "no_cumple"), req("B", "no_cumple")}, true},
		{[]ClassifiedRequirement{req("B", "no_cumple"), req("B", "no_cumple"), req("C", "cumple")}, true},
		{[]ClassifiedRequirement{req("A", "no_cumple"), req("C", "no_cumple"), req("D", "no_cumple")}, false},
		{[]ClassifiedRequirement{req("A", "parcial"), req("B", "transferible")}, false},
	}
	for i, tt := range tests {
		if got := e.NeedsAntiImpostorPause(tt.reqs); got != tt.want {
			t.Errorf("case %d: got %v, want %v", i, got, tt.want)
		}
	}
}

func TestGaps(t *testing.T) {
	e := NewEngine(DefaultConfig())
	got := e.Gaps([]ClassifiedRequirement{req("A", "cumple"), req("A", "no_cumple"), req("B", "no_cumple"), req("B", "parcial"), req("C", "transferible"), req("D", "no_cumple")})
	want := []struct {
		typ       string
		mitigable bool
	}{{"hard_gap", false}, {"hard_gap", true}, {"partial", true}, {"transferable", true}, {"nice_to_have", true}}
	if len(got) != len(want) {
		t.Fatalf("got %d gaps, want %d", len(got), len(want))
	}
	for i, w := range want {
		if got[i].GapType != w.typ || got[i].IsMitigable != w.mitigable || got[i].MitigationStrategy == "" {
			t.Errorf("gap %d = %+v, want %s mitigable=%v", i, got[i], w.typ, w.mitigable)
		}
	}
}

func TestConfig(t *testing.T) {
	c := DefaultConfig()
	if c.MatchScores.Transferible != 0.7 || c.TypeDWeight != 0.5 || c.MVP.Cap != 10 || c.Decision.MaxPriority.Final != 75 {
		t.Errorf("defaults = %+v", c)
	}
	for _, tt := range []struct{ yaml, field string }{
		{strings.Replace(string(DefaultConfigYAML()), "obligatorios: 0.60", "obligatorios: 0.70", 1), "weights"},
		{strings.Replace(string(DefaultConfigYAML()), "hard_filter_cap: strategic_only", "hard_filter_cap: maybe", 1), "decision.hard_filter_cap"},
		{strings.Replace(string(DefaultConfigYAML()), "type_d_weight: 0.5", "type_d_wieght: 0.5", 1), "type_d_wieght"},
	} {
		_, err := ParseConfig("s.yaml", []byte(tt.yaml))
		var ie *veredicto.InvalidInputError
		if !errors.As(err, &ie) || ie.Field != tt.field {
			t.Errorf("err = %v, want an invalid input naming %s", err, tt.field)
		}
	}
}
