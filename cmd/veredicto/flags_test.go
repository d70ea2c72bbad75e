package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/veredicto/veredicto/internal/flags"
	"github.com/veredicto/veredicto/internal/llm/llmtest"
)

const flagsExamples = "../../examples/flags/"

var flagsExampleArgs = []string{
	"--questions", flagsExamples + "questions.yaml",
	"--transcript", flagsExamples + "transcript_rrhh.yaml",
	"--transcript", flagsExamples + "transcript_tecnico.yaml",
	"--context", flagsExamples + "context.yaml",
}

func runFlagsCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}
	code = m.runFlags(context.Background(), args)
	return code, out.String(), errb.String()
}

func decodeFlags(t *testing.T, out string) flags.Flags {
	t.Helper()
	var f flags.Flags
	dec := yaml.NewDecoder(strings.NewReader(out))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("stdout is not Flags YAML: %v\n%s", err, out)
	}
	return f
}

// exampleAnswerTexts returns every answer text of the example transcripts,
// to check that none leaks to stderr.
func exampleAnswerTexts(t *testing.T) []string {
	t.Helper()
	var texts []string
	for _, name := range []string{"transcript_rrhh.yaml", "transcript_tecnico.yaml"} {
		data, err := os.ReadFile(flagsExamples + name)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := flags.ParseTranscript(name, data)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range tr.Answers {
			texts = append(texts, a.AnswerText)
		}
	}
	return texts
}

func TestFlagsExample(t *testing.T) {
	code, out, errs := runFlagsCLI(t, append(flagsExampleArgs, "--llm", "offline")...)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, errs)
	}
	got := decodeFlags(t, out)

	// What the example was written to show, per question (see the YAML files):
	type want struct {
		closure, over, contradiction, hedging, drift bool
		authority                                    flags.Level
		risk                                         flags.Risk
	}
	wants := []struct {
		id     string
		target flags.Target
		want   want
	}{
		// "Creo que…": hedging only → media, medio.
		{"rrhh_q1", flags.TargetRRHH, want{closure: true, hedging: true, authority: flags.LevelMedia, risk: flags.RiskMedio}},
		// binario answered "Sí, aunque depende…": drift and hedging → baja, medio.
		{"rrhh_q2", flags.TargetRRHH, want{closure: true, hedging: true, drift: true, authority: flags.LevelBaja, risk: flags.RiskMedio}},
		// forced closure, over max_words 60, mentions "consejo" → media, medio.
		{"rrhh_q3", flags.TargetRRHH, want{over: true, authority: flags.LevelMedia, risk: flags.RiskMedio}},
		// 52 vs the fact's 48 millions of adjusted EBITDA 2025 → contradiction: alta, alto.
		{"tec_q1", flags.TargetTecnico, want{closure: true, contradiction: true, authority: flags.LevelAlta, risk: flags.RiskAlto}},
		// talks about the plan, none of financiaría/adquisición/de/logística/norte → drift: media, bajo.
		{"tec_q2", flags.TargetTecnico, want{closure: true, drift: true, authority: flags.LevelMedia, risk: flags.RiskBajo}},
		// "Depende…" over max_words 40 but closed by itself (no forced
		// closure): not over-explained, the seed's "excede longitud sin
		// aportar cierre"; 2,5 veces agrees with the policy → media, medio.
		{"tec_q3", flags.TargetTecnico, want{closure: true, hedging: true, authority: flags.LevelMedia, risk: flags.RiskMedio}},
	}
	if len(got.ByQuestion) != len(wants) {
		t.Fatalf("by_question has %d entries, want %d", len(got.ByQuestion), len(wants))
	}
	for i, w := range wants {
		q := got.ByQuestion[i]
		g := want{q.ClosureOK, q.OverExplanation, q.ContradictionWithContext, q.HedgingDetected, q.DriftDetected, q.AuthorityLevel, q.VerbalRisk}
		if q.QuestionID != w.id || q.Target != w.target || g != w.want {
			t.Errorf("by_question[%d] = %s %s %+v, want %s %s %+v", i, q.QuestionID, q.Target, g, w.id, w.target, w.want)
		}
	}
	// 5 of 6 closed (83%) → ok; authority media 4×2=8 > alta 1×3, baja 1×1;
	// the highest risk is alto.
	wantSummary := flags.Summary{OverallClosure: flags.ClosureOK, OverallAuthority: flags.LevelMedia, OverallVerbalRisk: flags.RiskAlto}
	if got.Summary != wantSummary {
		t.Errorf("summary %+v, want %+v", got.Summary, wantSummary)
	}

	// The seed's field order, at the top and in every by_question entry.
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	keys := func(n *yaml.Node) string {
		var k []string
		for i := 0; i < len(n.Content); i += 2 {
			k = append(k, n.Content[i].Value)
		}
		return strings.Join(k, ",")
	}
	root := doc.Content[0]
	if k := keys(root); k != "flags_id,generated_at,summary,by_question" {
		t.Errorf("top-level keys %s", k)
	}
	if k := keys(root.Content[5]); k != "overall_closure,overall_authority,overall_verbal_risk" {
		t.Errorf("summary keys %s", k)
	}
	for _, item := range root.Content[7].Content {
		if k := keys(item); k != "question_id,target,closure_ok,authority_level,verbal_risk,over_explanation,contradiction_with_context,hedging_detected,drift_detected" {
			t.Errorf("by_question keys %s", k)
		}
	}

	if !strings.HasPrefix(got.FlagsID, "fl_") || len(got.FlagsID) != 15 {
		t.Errorf("flags_id %q, want fl_ + 12 hex", got.FlagsID)
	}
	_, out2, _ := runFlagsCLI(t, append(flagsExampleArgs, "--llm", "offline")...)
	if again := decodeFlags(t, out2); again.FlagsID != got.FlagsID {
		t.Errorf("flags_id %q then %q for the same inputs", got.FlagsID, again.FlagsID)
	}
	if !strings.Contains(errs, "contradiction judge: offline") {
		t.Errorf("stderr lacks the judge notice: %q", errs)
	}
	for _, text := range exampleAnswerTexts(t) {
		if strings.Contains(errs, text) {
			t.Errorf("stderr leaks an answer text")
		}
	}
}

func TestFlagsRunLLMJudgeAndClock(t *testing.T) {
	srv := llmtest.NewServer(t, func(c llmtest.Call) llmtest.Reply {
		// Contradiction only for the answer stating 52 millions.
		if strings.Contains(c.User(), "52 millones") {
			return llmtest.Reply{Content: `{"contradicts":true,"fact_ids":["f_ebitda_2025"]}`}
		}
		return llmtest.Reply{Content: `{"contradicts":false,"fact_ids":[]}`}
	})
	env := map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": srv.BaseURL(), "OPENAI_MODEL": "m"}
	cfg, err := parseFlagsArgs(flagsExampleArgs, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	cfg.now = func() time.Time { return time.Date(2026, 1, 7, 19, 20, 0, 0, time.FixedZone("CET", 3600)) }
	var stdout, stderr bytes.Buffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr}
	if code := m.flagsRun(context.Background(), cfg, func(k string) string { return env[k] }); code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "\ngenerated_at: 2026-01-07T18:20:00Z\n") {
		t.Errorf("generated_at is not the injected clock in UTC:\n%s", stdout.String())
	}
	calls := srv.Calls()
	if len(calls) != 6 {
		t.Errorf("%d LLM calls, want one per answered question (6)", len(calls))
	}
	for _, c := range calls {
		if c.Schema != "flags_contradiction" || c.Model != "m" {
			t.Errorf("call %d: schema %q model %q", c.N, c.Schema, c.Model)
		}
	}
	got := decodeFlags(t, stdout.String())
	for _, q := range got.ByQuestion {
		if want := q.QuestionID == "tec_q1"; q.ContradictionWithContext != want {
			t.Errorf("%s contradiction %v, want %v", q.QuestionID, q.ContradictionWithContext, want)
		}
	}
	if !strings.Contains(stderr.String(), "openai-compatible, model m") {
		t.Errorf("stderr lacks the judge notice: %q", stderr.String())
	}
}

func TestFlagsRunLLMFailure(t *testing.T) {
	srv := llmtest.NewServer(t, func(llmtest.Call) llmtest.Reply { return llmtest.Reply{Status: 400} })
	env := map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": srv.BaseURL()}
	cfg, err := parseFlagsArgs(flagsExampleArgs, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr}
	code := m.flagsRun(context.Background(), cfg, func(k string) string { return env[k] })
	if code != exitFailed || stdout.Len() != 0 {
		t.Errorf("exit %d, stdout %q; want exit 1 and nothing on stdout", code, stdout.String())
	}
	if !strings.Contains(stderr.String(), "rrhh_q1") {
		t.Errorf("stderr %q does not name the question", stderr.String())
	}
}

func TestFlagsMissingAnswerWarning(t *testing.T) {
	code, out, errs := runFlagsCLI(t, "--llm", "offline", "--questions", flagsExamples+"questions.yaml",
		"--transcript", flagsExamples+"transcript_rrhh.yaml")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, errs)
	}
	got := decodeFlags(t, out)
	for _, q := range got.ByQuestion {
		if !strings.HasPrefix(q.QuestionID, "tec_") {
			continue
		}
		want := flags.QuestionFlags{QuestionID: q.QuestionID, Target: flags.TargetTecnico, DriftDetected: true,
			AuthorityLevel: flags.LevelBaja, VerbalRisk: flags.RiskBajo}
		if q != want {
			t.Errorf("unanswered %s flagged %+v, want %+v", q.QuestionID, q, want)
		}
		if !strings.Contains(errs, "warning: question "+q.QuestionID+" has no answer") {
			t.Errorf("no warning for %s in stderr %q", q.QuestionID, errs)
		}
	}
	// 2 of 6 closed (rrhh_q3 forced, tec_* unanswered) → fail. Authority:
	// media 2×2 = 4 ties baja 4×1 = 4 (rrhh_q2 and the three tec_*) → baja.
	// Risk: the rrhh answers reach medio at most.
	wantSummary := flags.Summary{OverallClosure: flags.ClosureFail, OverallAuthority: flags.LevelBaja, OverallVerbalRisk: flags.RiskMedio}
	if got.Summary != wantSummary {
		t.Errorf("summary %+v, want %+v", got.Summary, wantSummary)
	}
	if strings.Contains(errs, "contradiction judge") {
		t.Errorf("judge notice printed without a context pack: %q", errs)
	}
}

func TestFlagsDuplicateAnswerWarning(t *testing.T) {
	// The technical transcript given twice: the first wins, with warnings.
	code, _, errs := runFlagsCLI(t, "--llm", "offline", "--questions", flagsExamples+"questions.yaml",
		"--transcript", flagsExamples+"transcript_tecnico.yaml", "--transcript", flagsExamples+"transcript_tecnico.yaml",
		"--transcript", flagsExamples+"transcript_rrhh.yaml")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, errs)
	}
	if n := strings.Count(errs, "is answered in"); n != 3 {
		t.Errorf("%d duplicate warnings, want 3 (tec_q1..3): %q", n, errs)
	}
}

func TestFlagsHedgingOverride(t *testing.T) {
	hedges := writeFile(t, t.TempDir(), "hedges.txt", "# only this marker\nprimero\n")
	code, out, errs := runFlagsCLI(t, append(flagsExampleArgs, "--llm", "offline", "--hedging", hedges)...)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, errs)
	}
	hedged := map[string]bool{}
	for _, q := range decodeFlags(t, out).ByQuestion {
		hedged[q.QuestionID] = q.HedgingDetected
	}
	// rrhh_q3 and tec_q2 start with "Primero"; "Creo" and "Depende" no
	// longer count.
	want := map[string]bool{"rrhh_q1": false, "rrhh_q2": false, "rrhh_q3": true, "tec_q1": false, "tec_q2": true, "tec_q3": false}
	for id, w := range want {
		if hedged[id] != w {
			t.Errorf("%s hedging %v, want %v", id, hedged[id], w)
		}
	}
}

func TestFlagsBadInput(t *testing.T) {
	dir := t.TempDir()
	q := flagsExamples + "questions.yaml"
	unknownQ := writeFile(t, dir, "transcript.yaml", "transcript_id: t\ntarget: tecnico\nanswers:\n"+
		"  - question_id: tec_q1\n    answer_text: Cuarenta y ocho millones\n    forced_closure: false\n"+
		"  - question_id: tec_q2\n    answer_text: Con deuda\n    forced_closure: false\n"+
		"  - question_id: tec_q9\n    answer_text: Secreto del candidato\n    forced_closure: false\n")
	unknownField := writeFile(t, dir, "extra.yaml", "transcript_id: t\ntarget: tecnico\nanswers:\n  - question_id: tec_q1\n    answer_text: Secreto del candidato\n    forced_closure: false\n    score: 5\n")
	noText := writeFile(t, dir, "notext.yaml", "transcript_id: t\ntarget: tecnico\nanswers:\n  - question_id: tec_q1\n    forced_closure: false\n")
	badCtx := writeFile(t, dir, "ctx.yaml", "context_pack_id: cp\nfacts:\n  - text: sin id\n")
	badHedges := writeFile(t, dir, "hedges.txt", "creo\n???\n")
	badQuestions := writeFile(t, dir, "q.yaml", "question_set_id: qs\nquestions:\n  - question_id: q1\n    target: rrhh\n    question_text: ¿Qué?\n")
	tr := flagsExamples + "transcript_tecnico.yaml"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"answer to unknown question", []string{"--questions", q, "--transcript", unknownQ}, unknownQ + `: answers[2].question_id: "tec_q9" is not in question set qs_cfo_001`},
		{"unknown field", []string{"--questions", q, "--transcript", unknownField}, unknownField + ": answers[0].score: is not a known field"},
		{"missing answer_text", []string{"--questions", q, "--transcript", noText}, noText + ": answers[0].answer_text: is required"},
		{"missing closure_rule", []string{"--questions", badQuestions, "--transcript", tr}, badQuestions + ": questions[0].closure_rule: is required"},
		{"fact without id", []string{"--questions", q, "--transcript", tr, "--context", badCtx}, badCtx + ": facts[0].id: is required"},
		{"bad hedging file", []string{"--questions", q, "--transcript", tr, "--hedging", badHedges}, badHedges + ": line 2: has no letters or digits"},
		{"missing file", []string{"--questions", filepath.Join(dir, "nope.yaml"), "--transcript", tr}, "nope.yaml"},
		{"no questions", []string{"--transcript", tr}, "--questions is required"},
		{"no transcript", []string{"--questions", q}, "at least one --transcript is required"},
		{"bad llm", []string{"--questions", q, "--transcript", tr, "--llm", "magic"}, "--llm must be offline or openai"},
		{"positional", []string{"--questions", q, "--transcript", tr, "extra.yaml"}, `unexpected argument "extra.yaml"`},
		{"no arguments", nil, "Usage: veredicto flags"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := tt.args
			if len(args) > 0 && !hasLLM(args) {
				// Never reach a real provider from OPENAI_API_KEY in the environment.
				args = append(append([]string(nil), args...), "--llm", "offline")
			}
			code, out, errs := runFlagsCLI(t, args...)
			if code != exitUsage || !strings.Contains(errs, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 mentioning %q", code, errs, tt.want)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing on bad input", out)
			}
			if strings.Contains(errs, "Secreto del candidato") {
				t.Errorf("stderr leaks an answer text: %q", errs)
			}
		})
	}
}

func hasLLM(args []string) bool {
	for _, a := range args {
		if a == "--llm" {
			return true
		}
	}
	return false
}
