package flags

import (
	"strings"
	"testing"
)

// TestFindingsNameTheSpanBehindEachFlag: every rule that fired is
// recorded with the part of the answer behind it, in character offsets
// of the answer with its accents composed.
func TestFindingsNameTheSpanBehindEachFlag(t *testing.T) {
	hedges, _ := compileMarkers(nil)
	stop := compileStopwords(DefaultStopwords)
	long := strings.TrimSpace(strings.Repeat("palabra ", 5)) + " y más o menos cierre"
	tests := []struct {
		name string
		q    Question
		a    Answer
		qf   QuestionFlags
		want []string
	}{
		{"hedging in NFD text", Question{QuestionID: "q1", QuestionText: "¿Por qué se va?", ClosureRule: "abierta"},
			Answer{AnswerText: "Pues, más o menos cre\u0301o que me voy."}, QuestionFlags{ClosureOK: true, HedgingDetected: true},
			[]string{`marker "más o menos": answer[6:17] "más o menos"`}},
		{"binario drift", Question{QuestionID: "q2", QuestionText: "¿Se traslada?", ClosureRule: "binario"},
			Answer{AnswerText: "  Sí. "}, QuestionFlags{ClosureOK: true, DriftDetected: true},
			[]string{`closure_rule binario: answer[2:5] "Sí." is not exactly Sí or No`}},
		{"core-word drift", Question{QuestionID: "q3", QuestionText: "¿Cuál fue el EBITDA?", ClosureRule: "cifra"},
			Answer{AnswerText: "Bastante bueno."}, QuestionFlags{ClosureOK: true, DriftDetected: true},
			[]string{`none of the question's core words (fue, ebitda) is in answer[0:15] "Bastante bueno."`}},
		{"over-explanation past max_words", Question{QuestionID: "q4", QuestionText: "¿Cómo?", ClosureRule: "abierta", MaxWords: 5},
			Answer{AnswerText: long, ForcedClosure: true}, QuestionFlags{OverExplanation: true},
			[]string{"the transcript marks forced_closure", `10 words, over max_words 5, and a forced closure: past the limit answer[40:60] "y más o menos cierre"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			qf := derive(tt.qf)
			var details []string
			for _, d := range findings(tt.q, &tt.a, "t.yaml", qf, hedges, stop, nil, false) {
				details = append(details, d.Outcome+" "+d.Detail)
			}
			got := strings.Join(details, "\n")
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("findings:\n%s\nwant %s", got, w)
				}
			}
		})
	}
}
