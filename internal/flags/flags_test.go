package flags

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/llm"
)

// fakeJudge is a scripted ContradictionJudge that records its calls.
type fakeJudge struct {
	mu      sync.Mutex
	calls   []string
	verdict func(answer string) (bool, error)
}

func (j *fakeJudge) Contradicts(_ context.Context, answer string, _ []Fact) (bool, error) {
	j.mu.Lock()
	j.calls = append(j.calls, answer)
	j.mu.Unlock()
	if j.verdict == nil {
		return false, nil
	}
	return j.verdict(answer)
}

func oneQuestion(q Question) QuestionSet {
	q.QuestionID = "q1"
	if q.Target == "" {
		q.Target = TargetTecnico
	}
	return QuestionSet{QuestionSetID: "qs_test", Questions: []Question{q}, Source: "questions.yaml"}
}

func oneAnswer(text string, forced bool) Transcript {
	return Transcript{TranscriptID: "t1", Target: TargetTecnico, Source: "t1.yaml",
		Answers: []Answer{{QuestionID: "q1", AnswerText: text, ForcedClosure: forced}}}
}

func classifyOne(t *testing.T, q Question, answer string, forced bool, opts Options) QuestionFlags {
	t.Helper()
	f, _, err := Classify(context.Background(), oneQuestion(q), []Transcript{oneAnswer(answer, forced)}, nil, &fakeJudge{}, opts)
	if err != nil {
		t.Fatalf("Classify: %v", err)
	}
	if len(f.ByQuestion) != 1 {
		t.Fatalf("by_question has %d entries, want 1", len(f.ByQuestion))
	}
	return f.ByQuestion[0]
}

func nWords(n int) string {
	return strings.TrimSpace(strings.Repeat("margen ", n))
}

func TestClassifyRules(t *testing.T) {
	margin := Question{QuestionText: "¿Cuál es el margen bruto?", ClosureRule: "cifra"}
	yesNo := Question{QuestionText: "¿Está dispuesto a trasladarse?", ClosureRule: "binario"}
	short := Question{QuestionText: "¿Cuál es el margen bruto?", ClosureRule: "abierta", MaxWords: 5}
	onlyStop := Question{QuestionText: "¿Por qué?", ClosureRule: "abierta"}
	whyGo := Question{QuestionText: "¿Por qué Go?", ClosureRule: "abierta"}
	howMuch := Question{QuestionText: "¿Por cuánto se vendió?", ClosureRule: "cifra"}
	whatMargin := Question{QuestionText: "¿Qué margen?", ClosureRule: "cifra"}
	type want struct{ closure, over, hedging, drift bool }
	tests := []struct {
		name   string
		q      Question
		answer string
		forced bool
		want   want
	}{
		// closure_ok = NOT forced_closure
		{"not forced", margin, "El margen es del 40%.", false, want{closure: true}},
		{"forced", margin, "El margen es del 40%.", true, want{closure: false}},

		// hedging: whole words and phrases, case-insensitive, literal
		{"hedge creo", margin, "Creo que el margen es del 40%.", false, want{closure: true, hedging: true}},
		{"hedge upper case", margin, "CREO que el margen es del 40%.", false, want{closure: true, hedging: true}},
		{"hedge depende", margin, "Depende del margen del trimestre.", false, want{closure: true, hedging: true}},
		{"hedge phrase", margin, "El margen, más o menos, es 40.", false, want{closure: true, hedging: true}},
		{"hedge phrase mixed case", margin, "El margen es Más O Menos 40.", false, want{closure: true, hedging: true}},
		{"hedge phrase across punctuation", margin, "El margen es más, o menos, 40.", false, want{closure: true, hedging: true}},
		{"no hedge: accent differs (creó)", margin, "Creó el margen actual.", false, want{closure: true}},
		{"no hedge: inside a word (recreo)", margin, "El recreo no cambia el margen.", false, want{closure: true}},
		{"no hedge: unaccented phrase", margin, "El margen es mas o menos 40.", false, want{closure: true}},
		{"no hedge: phrase words apart", margin, "El margen es más alto o menos volátil.", false, want{closure: true}},
		{"hedge in decomposed accents", margin, "El margen es ma\u0301s o menos 40.", false, want{closure: true, hedging: true}},

		// drift, binario: exactly "Sí" or "No" ignoring case, trimmed
		{"binario Sí", yesNo, "Sí", false, want{closure: true}},
		{"binario sí", yesNo, "sí", false, want{closure: true}},
		{"binario SÍ", yesNo, "SÍ", false, want{closure: true}},
		{"binario No", yesNo, "No", false, want{closure: true}},
		{"binario NO padded", yesNo, "  NO \n", false, want{closure: true}},
		{"binario decomposed Sí", yesNo, "Si\u0301", false, want{closure: true}},
		{"binario Sí. drifts", yesNo, "Sí.", false, want{closure: true, drift: true}},
		{"binario No! drifts", yesNo, "No!", false, want{closure: true, drift: true}},
		{"binario unaccented Si drifts", yesNo, "Si", false, want{closure: true, drift: true}},
		{"binario qualified drifts", yesNo, "Sí, claro", false, want{closure: true, drift: true}},
		{"binario with hedge", yesNo, "Depende", false, want{closure: true, hedging: true, drift: true}},

		// drift, other rules: at least one core word, literal
		{"core word present", margin, "Cuarenta por ciento de margen.", false, want{closure: true}},
		{"core word upper case", margin, "MARGEN: 40%.", false, want{closure: true}},
		{"core word inflected drifts", margin, "Los márgenes mejoraron.", false, want{closure: true, drift: true}},
		{"only stopwords shared drifts", margin, "La cifra, un secreto.", false, want{closure: true, drift: true}},
		{"question with no core words drifts", onlyStop, "Por qué no.", false, want{closure: true, drift: true}},

		// stopwords: "por qué" is one stopword of two words (the seed's
		// list: qué, cómo, cuál, cuándo, por qué, el, la, un, una)
		{"por qué is one stopword: por alone does not anchor", whyGo, "Por costumbre.", false, want{closure: true, drift: true}},
		{"por qué removed, core word kept", whyGo, "Por su concurrencia: Go.", false, want{closure: true}},
		{"lone por is a core word", howMuch, "Por veinte millones.", false, want{closure: true}},
		{"lone qué is a stopword", whatMargin, "Qué pregunta.", false, want{closure: true, drift: true}},

		// over_explanation: "excede longitud sin aportar cierre" — more
		// than max_words words and a forced closure
		{"exactly max_words, forced", short, nWords(5), true, want{}},
		{"max_words plus one, forced", short, nWords(6), true, want{over: true}},
		{"max_words plus one, closed by itself", short, nWords(6), false, want{closure: true}},
		{"short and forced is not over-explained", short, nWords(2), true, want{}},
		{"punctuation is not a word", short, nWords(5) + " — …", true, want{}},
		{"exactly default 120, forced", margin, nWords(DefaultMaxWords), true, want{}},
		{"default 120 plus one, forced", margin, nWords(DefaultMaxWords + 1), true, want{over: true}},
		{"default 120 plus one, closed", margin, nWords(DefaultMaxWords + 1), false, want{closure: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := classifyOne(t, tt.q, tt.answer, tt.forced, Options{})
			g := want{got.ClosureOK, got.OverExplanation, got.HedgingDetected, got.DriftDetected}
			if g != tt.want {
				t.Errorf("got %+v, want %+v", g, tt.want)
			}
			if got.ContradictionWithContext {
				t.Error("contradiction_with_context is true without a context pack")
			}
			if a := authorityLevel(got.ClosureOK, got.HedgingDetected, got.DriftDetected); got.AuthorityLevel != a {
				t.Errorf("authority_level %s, want %s", got.AuthorityLevel, a)
			}
			if r := verbalRisk(false, got.OverExplanation, got.HedgingDetected); got.VerbalRisk != r {
				t.Errorf("verbal_risk %s, want %s", got.VerbalRisk, r)
			}
		})
	}
}

func TestAuthorityLevel(t *testing.T) {
	tests := []struct {
		closureOK, hedging, drift bool
		want                      Level
	}{
		{true, false, false, LevelAlta},
		{false, false, false, LevelMedia},
		{true, true, false, LevelMedia},
		{true, false, true, LevelMedia},
		{false, true, false, LevelBaja},
		{false, false, true, LevelBaja},
		{true, true, true, LevelBaja},
		{false, true, true, LevelBaja},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("closure=%v,hedging=%v,drift=%v", tt.closureOK, tt.hedging, tt.drift), func(t *testing.T) {
			if got := authorityLevel(tt.closureOK, tt.hedging, tt.drift); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestVerbalRisk(t *testing.T) {
	tests := []struct {
		contradiction, over, hedging bool
		want                         Risk
	}{
		{false, false, false, RiskBajo},
		{true, false, false, RiskAlto},
		{false, true, false, RiskMedio},
		{false, false, true, RiskMedio},
		{false, true, true, RiskAlto},
		{true, true, false, RiskAlto},
		{true, false, true, RiskAlto},
		{true, true, true, RiskAlto},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("contradiction=%v,over=%v,hedging=%v", tt.contradiction, tt.over, tt.hedging), func(t *testing.T) {
			if got := verbalRisk(tt.contradiction, tt.over, tt.hedging); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	// flags builds question flags from a compact spec: closure ok count,
	// total, authority levels and risks (levels and risks default to
	// baja/bajo when shorter than total).
	build := func(ok, total int, levels []Level, risks []Risk) []QuestionFlags {
		qf := make([]QuestionFlags, total)
		for i := range qf {
			qf[i] = QuestionFlags{ClosureOK: i < ok, AuthorityLevel: LevelBaja, VerbalRisk: RiskBajo}
			if i < len(levels) {
				qf[i].AuthorityLevel = levels[i]
			}
			if i < len(risks) {
				qf[i].VerbalRisk = risks[i]
			}
		}
		return qf
	}
	A, M, B := LevelAlta, LevelMedia, LevelBaja
	tests := []struct {
		name    string
		ok      int
		levels  []Level
		risks   []Risk
		closure Closure
		auth    Level
		risk    Risk
	}{
		{"closure exactly 80%", 4, []Level{A, A, A, A, A}, nil, ClosureOK, A, RiskBajo},
		{"closure 8 of 10", 8, []Level{A, A, A, A, A, A, A, A, A, A}, nil, ClosureOK, A, RiskBajo},
		{"closure 75%", 3, []Level{A, A, A, A}, nil, ClosureFail, A, RiskBajo},
		{"closure 7 of 9 (77.8%)", 7, []Level{A, A, A, A, A, A, A, A, A}, nil, ClosureFail, A, RiskBajo},
		{"closure all", 3, []Level{M, M, M}, nil, ClosureOK, M, RiskBajo},
		{"closure none", 0, []Level{B}, nil, ClosureFail, B, RiskBajo},
		{"tie alta 2×3 = media 3×2 goes to media", 5, []Level{A, A, M, M, M}, nil, ClosureOK, M, RiskBajo},
		{"tie media 1×2 = baja 2×1 goes to baja", 3, []Level{M, B, B}, nil, ClosureOK, B, RiskBajo},
		{"tie alta 1×3 = baja 3×1 goes to baja", 4, []Level{A, B, B, B}, nil, ClosureOK, B, RiskBajo},
		{"weight beats count: alta 2×3 > media 2×2", 4, []Level{A, A, M, M}, nil, ClosureOK, A, RiskBajo},
		{"weight beats count: media 2×2 > baja 3×1", 5, []Level{M, M, B, B, B}, nil, ClosureOK, M, RiskBajo},
		{"count beats weight: baja 4×1 > alta 1×3", 5, []Level{A, B, B, B, B}, nil, ClosureOK, B, RiskBajo},
		{"risk max medio", 2, []Level{A, A}, []Risk{RiskBajo, RiskMedio}, ClosureOK, A, RiskMedio},
		{"risk max alto", 3, []Level{A, A, A}, []Risk{RiskMedio, RiskAlto, RiskBajo}, ClosureOK, A, RiskAlto},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := summarize(build(tt.ok, len(tt.levels), tt.levels, tt.risks))
			want := Summary{OverallClosure: tt.closure, OverallAuthority: tt.auth, OverallVerbalRisk: tt.risk}
			if got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
		})
	}
}

func twoQuestions() QuestionSet {
	return QuestionSet{QuestionSetID: "qs_001", Source: "questions.yaml", Questions: []Question{
		{QuestionID: "rrhh_q1", Target: TargetRRHH, QuestionText: "¿Está dispuesto a viajar?", ClosureRule: "binario"},
		{QuestionID: "tec_q1", Target: TargetTecnico, QuestionText: "¿Cuál fue el EBITDA de 2025?", ClosureRule: "cifra"},
	}}
}

func TestClassifyMissingAnswer(t *testing.T) {
	tr := Transcript{TranscriptID: "t", Target: TargetRRHH, Source: "rrhh.yaml",
		Answers: []Answer{{QuestionID: "rrhh_q1", AnswerText: "Sí"}}}
	judge := &fakeJudge{}
	pack := &ContextPack{ContextPackID: "cp", Facts: []Fact{{ID: "f1", Text: "El EBITDA de 2025 fue de 48 millones."}}}
	got, warnings, err := Classify(context.Background(), twoQuestions(), []Transcript{tr}, pack, judge, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := QuestionFlags{QuestionID: "tec_q1", Target: TargetTecnico, ClosureOK: false, DriftDetected: true,
		AuthorityLevel: LevelBaja, VerbalRisk: RiskBajo}
	if got.ByQuestion[1] != want {
		t.Errorf("missing answer flagged %+v, want %+v", got.ByQuestion[1], want)
	}
	if got.ByQuestion[0].QuestionID != "rrhh_q1" || !got.ByQuestion[0].ClosureOK {
		t.Errorf("answered question flagged %+v", got.ByQuestion[0])
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "tec_q1") || !strings.Contains(warnings[0], "no answer") {
		t.Errorf("warnings %q, want one naming tec_q1", warnings)
	}
	if len(judge.calls) != 1 || judge.calls[0] != "Sí" {
		t.Errorf("judge calls %q, want only the answered question", judge.calls)
	}
	// 1 of 2 closed: 50% < 80%.
	if got.Summary.OverallClosure != ClosureFail {
		t.Errorf("overall_closure %s, want fail", got.Summary.OverallClosure)
	}
}

func TestClassifyFirstTranscriptWins(t *testing.T) {
	first := Transcript{TranscriptID: "a", Target: TargetRRHH, Source: "a.yaml",
		Answers: []Answer{{QuestionID: "rrhh_q1", AnswerText: "Sí"}}}
	second := Transcript{TranscriptID: "b", Target: TargetTecnico, Source: "b.yaml", Answers: []Answer{
		{QuestionID: "tec_q1", AnswerText: "El EBITDA de 2025 fue 48 millones."},
		{QuestionID: "rrhh_q1", AnswerText: "Depende", ForcedClosure: true},
	}}
	got, warnings, err := Classify(context.Background(), twoQuestions(), []Transcript{first, second}, nil, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	q := got.ByQuestion[0]
	if !q.ClosureOK || q.HedgingDetected || q.DriftDetected {
		t.Errorf("rrhh_q1 flagged %+v, want the first transcript's clean \"Sí\"", q)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "rrhh_q1") || !strings.Contains(warnings[0], "a.yaml") || !strings.Contains(warnings[0], "b.yaml") {
		t.Errorf("warnings %q, want one naming rrhh_q1, a.yaml and b.yaml", warnings)
	}
	for _, w := range warnings {
		if strings.Contains(w, "Depende") {
			t.Errorf("warning leaks answer text: %q", w)
		}
	}
}

func TestClassifyUnknownQuestion(t *testing.T) {
	tr := Transcript{TranscriptID: "t", Target: TargetTecnico, Source: "transcript.yaml", Answers: []Answer{
		{QuestionID: "tec_q1", AnswerText: "48 millones de EBITDA"},
		{QuestionID: "rrhh_q1", AnswerText: "No"},
		{QuestionID: "tec_q9", AnswerText: "Texto"},
	}}
	_, _, err := Classify(context.Background(), twoQuestions(), []Transcript{tr}, nil, nil, Options{})
	var ie *veredicto.InvalidInputError
	if !errors.As(err, &ie) {
		t.Fatalf("error %v (%T), want *veredicto.InvalidInputError", err, err)
	}
	want := `transcript.yaml: answers[2].question_id: "tec_q9" is not in question set qs_001`
	if err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if ie.File != "transcript.yaml" || ie.Field != "answers[2].question_id" {
		t.Errorf("file %q field %q", ie.File, ie.Field)
	}
}

func TestClassifyContradiction(t *testing.T) {
	tr := Transcript{TranscriptID: "t", Target: TargetTecnico, Source: "t.yaml", Answers: []Answer{
		{QuestionID: "rrhh_q1", AnswerText: "Sí"},
		{QuestionID: "tec_q1", AnswerText: "El EBITDA de 2025 fue 52 millones."},
	}}
	pack := &ContextPack{ContextPackID: "cp", Facts: []Fact{{ID: "f1", Text: "x"}}}
	judge := &fakeJudge{verdict: func(a string) (bool, error) { return strings.Contains(a, "52"), nil }}

	t.Run("judge verdict per answer", func(t *testing.T) {
		got, _, err := Classify(context.Background(), twoQuestions(), []Transcript{tr}, pack, judge, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got.ByQuestion[0].ContradictionWithContext || !got.ByQuestion[1].ContradictionWithContext {
			t.Errorf("contradictions %v %v, want false true", got.ByQuestion[0].ContradictionWithContext, got.ByQuestion[1].ContradictionWithContext)
		}
		if got.ByQuestion[1].VerbalRisk != RiskAlto || got.Summary.OverallVerbalRisk != RiskAlto {
			t.Errorf("risk %s, overall %s, want alto", got.ByQuestion[1].VerbalRisk, got.Summary.OverallVerbalRisk)
		}
	})
	t.Run("no pack: not comparable, no judge call", func(t *testing.T) {
		j := &fakeJudge{verdict: func(string) (bool, error) { return true, nil }}
		got, _, err := Classify(context.Background(), twoQuestions(), []Transcript{tr}, nil, j, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range got.ByQuestion {
			if q.ContradictionWithContext {
				t.Errorf("%s: contradiction without a context pack", q.QuestionID)
			}
		}
		if len(j.calls) != 0 {
			t.Errorf("%d judge calls without a context pack", len(j.calls))
		}
	})
	t.Run("pack without facts: no judge call", func(t *testing.T) {
		j := &fakeJudge{verdict: func(string) (bool, error) { return true, nil }}
		if _, _, err := Classify(context.Background(), twoQuestions(), []Transcript{tr}, &ContextPack{ContextPackID: "cp"}, j, Options{}); err != nil {
			t.Fatal(err)
		}
		if len(j.calls) != 0 {
			t.Errorf("%d judge calls with no facts", len(j.calls))
		}
	})
	t.Run("invalid judge answer marks the risk, unexplained", func(t *testing.T) {
		// Seed 002: "Ante duda → marcar riesgo, nunca neutralizar" and
		// "No explicar el flag": the reason goes to the log only.
		j := &fakeJudge{verdict: func(a string) (bool, error) {
			if strings.Contains(a, "52") {
				return false, fmt.Errorf("llm judge: %w", &llm.InvalidOutputError{Schema: ContradictionSchema, Problem: "fact_ids[0]: is not a fact id of the input"})
			}
			return false, nil
		}}
		var logs bytes.Buffer
		got, warnings, err := Classify(context.Background(), twoQuestions(), []Transcript{tr}, pack, j,
			Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		if err != nil {
			t.Fatalf("an invalid judge answer aborted the classification: %v", err)
		}
		if got.ByQuestion[0].ContradictionWithContext || !got.ByQuestion[1].ContradictionWithContext {
			t.Errorf("contradictions %v %v, want false true", got.ByQuestion[0].ContradictionWithContext, got.ByQuestion[1].ContradictionWithContext)
		}
		if got.ByQuestion[1].VerbalRisk != RiskAlto {
			t.Errorf("verbal_risk %s, want alto", got.ByQuestion[1].VerbalRisk)
		}
		out, _ := yaml.Marshal(got)
		if strings.Contains(string(out), "invalid") || strings.Contains(string(out), "InvalidOutput") || strings.Contains(strings.Join(warnings, " "), "judge") {
			t.Errorf("the flags explain the flag:\n%s\nwarnings %v", out, warnings)
		}
		if l := logs.String(); !strings.Contains(l, "question_id=tec_q1") || !strings.Contains(l, "InvalidOutputError") || strings.Contains(l, "52 millones") || strings.Contains(l, "EBITDA") {
			t.Errorf("log %q: want the question and the reason, never the answer", l)
		}
	})
	t.Run("judge error", func(t *testing.T) {
		boom := errors.New("boom")
		j := &fakeJudge{verdict: func(string) (bool, error) { return false, boom }}
		_, _, err := Classify(context.Background(), twoQuestions(), []Transcript{tr}, pack, j, Options{})
		if !errors.Is(err, boom) || !strings.Contains(err.Error(), "rrhh_q1") {
			t.Errorf("error %v, want boom naming rrhh_q1", err)
		}
	})
}

func TestClassifyHedgingOverride(t *testing.T) {
	q := Question{QuestionText: "¿Cuál es el margen bruto?", ClosureRule: "cifra"}
	custom := Options{HedgingMarkers: []string{"en mi opinión"}}
	if got := classifyOne(t, q, "Creo que el margen es 40.", false, custom); got.HedgingDetected {
		t.Error("default marker \"creo\" still detected with a replaced lexicon")
	}
	if got := classifyOne(t, q, "En mi opinión, el margen es 40.", false, custom); !got.HedgingDetected {
		t.Error("custom marker not detected")
	}
	if _, _, err := Classify(context.Background(), oneQuestion(q), nil, nil, nil, Options{HedgingMarkers: []string{"¿?"}}); err == nil {
		t.Error("a marker with no words was accepted")
	}
}

func TestParseMarkers(t *testing.T) {
	got, err := ParseMarkers("hedges.txt", []byte("# doubt markers\ncreo\n\n  en mi opinión  \r\nigual\n"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "|") != "creo|en mi opinión|igual" {
		t.Errorf("markers %q", got)
	}
	_, err = ParseMarkers("hedges.txt", []byte("creo\n---\n"))
	var ie *veredicto.InvalidInputError
	if !errors.As(err, &ie) || ie.File != "hedges.txt" || ie.Field != "line 2" {
		t.Errorf("error %v, want hedges.txt line 2", err)
	}
	if _, err := ParseMarkers("empty.txt", []byte("# nothing\n\n")); err == nil {
		t.Error("a file with no markers was accepted")
	}
}

func TestClassifyIDAndClock(t *testing.T) {
	qs := twoQuestions()
	tr := []Transcript{{TranscriptID: "t", Target: TargetRRHH, Answers: []Answer{{QuestionID: "rrhh_q1", AnswerText: "Sí"}}}}
	at := time.Date(2026, 1, 7, 19, 20, 0, 500, time.FixedZone("CET", 3600))
	opts := Options{Now: func() time.Time { return at }}
	a, _, err := Classify(context.Background(), qs, tr, nil, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 1, 7, 18, 20, 0, 0, time.UTC); !a.GeneratedAt.Equal(want) || a.GeneratedAt.Location() != time.UTC {
		t.Errorf("generated_at %v, want %v in UTC, whole seconds", a.GeneratedAt, want)
	}
	b, _, _ := Classify(context.Background(), qs, tr, nil, nil, opts)
	if a.FlagsID != b.FlagsID || !strings.HasPrefix(a.FlagsID, "fl_") || len(a.FlagsID) != 15 {
		t.Errorf("flags ids %q %q, want equal fl_ + 12 hex", a.FlagsID, b.FlagsID)
	}
	tr[0].Answers[0].AnswerText = "No"
	c, _, _ := Classify(context.Background(), qs, tr, nil, nil, opts)
	if c.FlagsID == a.FlagsID {
		t.Errorf("flags id %q unchanged when an answer changed", c.FlagsID)
	}
	opts.FlagsID = "fl_given"
	d, _, _ := Classify(context.Background(), qs, tr, nil, nil, opts)
	if d.FlagsID != "fl_given" {
		t.Errorf("flags id %q, want the given one", d.FlagsID)
	}
	if NewID([]byte("ab"), []byte("c")) == NewID([]byte("a"), []byte("bc")) {
		t.Error("NewID ignores input boundaries")
	}
}

func TestParseErrors(t *testing.T) {
	type parser func(name string, data []byte) error
	pq := func(n string, d []byte) error { _, err := ParseQuestionSet(n, d); return err }
	pt := func(n string, d []byte) error { _, err := ParseTranscript(n, d); return err }
	pc := func(n string, d []byte) error { _, err := ParseContextPack(n, d); return err }
	const q1 = "question_set_id: qs\nquestions:\n  - question_id: q1\n    target: rrhh\n    question_text: ¿Qué?\n    closure_rule: abierta\n"
	tests := []struct {
		name    string
		parse   parser
		file    string
		yaml    string
		field   string
		problem string
	}{
		{"unknown question field", pq, "questions.yaml", q1 + "    colour: red\n", "questions[0].colour", "is not a known field"},
		{"unknown top-level field", pt, "t.yaml", "target: rrhh\ncandidate: Ana\nanswers: []\n", "candidate", "is not a known field"},
		{"missing question_set_id", pq, "questions.yaml", "questions:\n  - question_id: q1\n", "question_set_id", "is required"},
		{"no questions", pq, "questions.yaml", "question_set_id: qs\n", "questions", "is required"},
		{"missing question_id", pq, "questions.yaml", q1 + "  - target: rrhh\n    question_text: x\n    closure_rule: abierta\n", "questions[1].question_id", "is required"},
		{"missing target", pq, "questions.yaml", q1 + "  - question_id: q2\n    question_text: x\n    closure_rule: abierta\n", "questions[1].target", "is required"},
		{"bad target", pq, "questions.yaml", q1 + "  - question_id: q2\n    target: finanzas\n    question_text: x\n    closure_rule: abierta\n", "questions[1].target", `is "finanzas", want rrhh or tecnico`},
		{"missing question_text", pq, "questions.yaml", q1 + "  - question_id: q2\n    target: rrhh\n    closure_rule: abierta\n", "questions[1].question_text", "is required"},
		{"missing closure_rule", pq, "questions.yaml", q1 + "  - question_id: q2\n    target: rrhh\n    question_text: x\n", "questions[1].closure_rule", "is required"},
		{"misspelt binario", pq, "questions.yaml", q1 + "  - question_id: q2\n    target: rrhh\n    question_text: x\n    closure_rule: binaro\n", "questions[1].closure_rule", `"binaro" looks like a misspelt binario`},
		{"binario in English", pq, "questions.yaml", q1 + "  - question_id: q2\n    target: rrhh\n    question_text: x\n    closure_rule: Binary\n", "questions[1].closure_rule", "looks like a misspelt binario"},
		{"fractional max_words", pq, "questions.yaml", q1 + "    max_words: 0.5\n", "questions[0].max_words", "0.5 is not a whole number"},
		{"negative max_words", pq, "questions.yaml", q1 + "    max_words: -3\n", "questions[0].max_words", "want a positive number"},
		{"max_words not a number", pq, "questions.yaml", q1 + "    max_words: many\n", "questions[0].max_words", "is text where a whole number is expected"},
		{"duplicate question_id", pq, "questions.yaml", q1 + "  - question_id: q1\n    target: rrhh\n    question_text: x\n    closure_rule: abierta\n", "questions[1].question_id", `"q1" repeats questions[0]`},
		{"missing transcript target", pt, "t.yaml", "transcript_id: t\nanswers: []\n", "target", "is required"},
		{"missing answer_text", pt, "t.yaml", "target: rrhh\nanswers:\n  - question_id: q1\n    forced_closure: false\n", "answers[0].answer_text", "is required"},
		{"blank answer_text", pt, "t.yaml", "target: rrhh\nanswers:\n  - question_id: q1\n    answer_text: '  '\n", "answers[0].answer_text", "is required"},
		{"missing answer question_id", pt, "t.yaml", "target: rrhh\nanswers:\n  - answer_text: Sí\n", "answers[0].question_id", "is required"},
		{"forced_closure not a bool", pt, "t.yaml", "target: rrhh\nanswers:\n  - question_id: q1\n    answer_text: Sí\n    forced_closure: tal vez\n", "answers[0].forced_closure", "is text where true or false is expected"},
		{"duplicate answer", pt, "t.yaml", "target: rrhh\nanswers:\n  - question_id: q1\n    answer_text: Sí\n  - question_id: q1\n    answer_text: No\n", "answers[1].question_id", `"q1" repeats answers[0]`},
		{"fact without id", pc, "c.yaml", "context_pack_id: cp\nfacts:\n  - text: x\n", "facts[0].id", "is required"},
		{"fact without text", pc, "c.yaml", "context_pack_id: cp\nfacts:\n  - id: f1\n", "facts[0].text", "is required"},
		{"unknown fact field", pc, "c.yaml", "facts:\n  - id: f1\n    text: x\n    source: y\n", "facts[0].source", "is not a known field"},
		{"empty file", pt, "t.yaml", "# nothing here\n", "", "is empty"},
		{"not YAML", pq, "questions.yaml", "questions: [a\n", "", "is not valid YAML"},
		{"root is a list", pq, "questions.yaml", "- a\n- b\n", "", "the value is a list where a mapping is expected"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.parse(tt.file, []byte(tt.yaml))
			var ie *veredicto.InvalidInputError
			if !errors.As(err, &ie) {
				t.Fatalf("error %v (%T), want *veredicto.InvalidInputError", err, err)
			}
			if ie.File != tt.file || ie.Field != tt.field || !strings.Contains(ie.Problem, tt.problem) {
				t.Errorf("got file %q field %q problem %q; want %q %q containing %q", ie.File, ie.Field, ie.Problem, tt.file, tt.field, tt.problem)
			}
			if !strings.HasPrefix(err.Error(), tt.file+": "+tt.field) {
				t.Errorf("message %q does not start with the file and field", err)
			}
			// Values may be interview text: never echoed.
			for _, leak := range []string{"tal vez", "many"} {
				if strings.Contains(tt.yaml, leak) && strings.Contains(err.Error(), leak) {
					t.Errorf("message %q echoes the value %q", err, leak)
				}
			}
		})
	}
}

func TestParseValid(t *testing.T) {
	qs, err := ParseQuestionSet("q.yaml", []byte("question_set_id: qs\nquestions:\n  - question_id: q1\n    target: tecnico\n    question_text: ¿Cuál?\n    closure_rule: cifra\n    max_words: 40\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := Question{QuestionID: "q1", Target: TargetTecnico, QuestionText: "¿Cuál?", ClosureRule: "cifra", MaxWords: 40}
	if qs.Source != "q.yaml" || qs.QuestionSetID != "qs" || len(qs.Questions) != 1 || qs.Questions[0] != want {
		t.Errorf("parsed %+v", qs)
	}
	tr, err := ParseTranscript("t.yaml", []byte("transcript_id: t\ntarget: tecnico\nanswers:\n  - question_id: q1\n    answer_text: '40'\n    forced_closure: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Source != "t.yaml" || len(tr.Answers) != 1 || tr.Answers[0] != (Answer{QuestionID: "q1", AnswerText: "40", ForcedClosure: true}) {
		t.Errorf("parsed %+v", tr)
	}
}
