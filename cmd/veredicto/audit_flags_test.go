package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/flags"
	"github.com/veredicto/veredicto/internal/llm/llmtest"
)

// TestAuditedFlagsVerifiesAndReplaysByteForByte is issue 30's check for
// interview flags: "flags --out" writes flags.yaml (what it prints) and
// keeps the record in OUT/audit, which verifies and holds, for every rule
// that fired, the rule and the answer span behind the flag; with the
// judge's provider stopped "replay" writes flags.yaml byte for byte; a
// flipped byte fails verify naming the entry; a run whose prompt to the
// judge differs from the record's fails the replay naming the judge and
// the question.
func TestAuditedFlagsVerifiesAndReplaysByteForByte(t *testing.T) {
	srv := llmtest.NewServer(t, func(c llmtest.Call) llmtest.Reply {
		if c.Schema != flags.ContradictionSchema {
			t.Errorf("unexpected schema %q", c.Schema)
		}
		if strings.Contains(c.User(), "52 millones") {
			return llmtest.Reply{Content: `{"contradicts":true,"fact_ids":["f_ebitda_2025"]}`}
		}
		return llmtest.Reply{Content: `{"contradicts":false,"fact_ids":[]}`}
	})
	t.Setenv("OPENAI_API_KEY", "test")
	t.Setenv("OPENAI_BASE_URL", srv.BaseURL())
	t.Setenv("OPENAI_MODEL", "gpt-4o-mini")
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runCLI(t, "", append([]string{"flags", "--out", out}, flagsExampleArgs...)...)
	if code != exitOK {
		t.Fatalf("flags: exit %d\n%s", code, stderr)
	}
	written, err := os.ReadFile(filepath.Join(out, "flags.yaml"))
	if err != nil || string(written) != stdout {
		t.Fatalf("flags.yaml is not what was printed (%v)", err)
	}
	if f := decodeFlags(t, stdout); f.ByQuestion[3].QuestionID != "tec_q1" || !f.ByQuestion[3].ContradictionWithContext {
		t.Errorf("tec_q1: %+v", f.ByQuestion[3])
	}
	for _, text := range exampleAnswerTexts(t) {
		if strings.Contains(stderr, text) {
			t.Errorf("stderr shows an answer: %q", text)
		}
	}
	mustRun(t, "audit", "verify", out)

	rec := filepath.Join(out, "audit")
	var st audit.Start
	json.Unmarshal(findEntry(t, rec, audit.MainChain, audit.KindStart).Data, &st)
	if st.Workflow != flags.WorkflowName || len(st.Documents) != 4 || st.Prompts[flags.ContradictionSchema] == "" {
		t.Errorf("the start: %+v", st)
	}
	decisions := entriesOf(t, rec, audit.MainChain, audit.KindDecision)
	for _, want := range []string{
		`"outcome":"hedging_detected","evidence":["rrhh_q1"],"detail":"(../../examples/flags/transcript_rrhh.yaml) marker \"creo\": answer[0:4] \"Creo\""`,
		`"outcome":"contradiction_with_context","evidence":["tec_q1"],"detail":"(../../examples/flags/transcript_tecnico.yaml) the judge found it contradicts facts f_ebitda_2025: answer[0:55] \"El EBITDA ajustado de 2025 fue de 52 millones de euros.\""`,
		`"outcome":"closure_ok=false","evidence":["rrhh_q3"]`,
		`"name":"overall_closure","score":`,
	} {
		if !strings.Contains(decisions, want) {
			t.Errorf("the decisions lack %s:\n%s", want, decisions)
		}
	}
	var judged audit.ModelCall
	json.Unmarshal(findEntry(t, rec, audit.MainChain, audit.KindModel).Data, &judged)
	if judged.Agent != flags.ContradictionSchema || judged.Model != "gpt-4o-mini" || judged.Answer == nil {
		t.Errorf("the judge's last call: %+v", judged)
	}

	srv.Close()
	replay := t.TempDir()
	stdout = mustRun(t, "replay", out, "--out", replay)
	if !strings.Contains(stdout, "1 reports identical") {
		t.Errorf("replay:\n%s", stdout)
	}
	again, err := os.ReadFile(filepath.Join(replay, "flags.yaml"))
	if err != nil || string(again) != string(written) {
		t.Errorf("the replay's flags.yaml differs (%v)", err)
	}
	mustRun(t, "audit", "verify", replay)

	cp := t.TempDir()
	copyTree(t, out, cp)
	chain := filepath.Join(cp, "audit", "chains", "main.jsonl")
	b, _ := os.ReadFile(chain)
	i := strings.Index(string(b), `"hedging_detected"`)
	b[i+2] = 'X'
	os.WriteFile(chain, b, 0o600)
	if code, stdout, _ := runCLI(t, "", "audit", "verify", cp); code != exitFailed || !strings.Contains(stdout, "main entry") {
		t.Errorf("a flipped byte: exit %d\n%s", code, stdout)
	}

	// The judge's prompt for tec_q1 in the run differs from today's.
	cp = t.TempDir()
	copyTree(t, out, cp)
	done := false
	resealed(t, filepath.Join(cp, "audit"), audit.MainChain, func(e *audit.Entry) {
		var c audit.ModelCall
		if e.Kind != audit.KindModel || json.Unmarshal(e.Data, &c) != nil || done {
			return
		}
		user, _ := os.ReadFile(filepath.Join(cp, "audit", "texts", c.Messages[1].Hash))
		if t := c.Messages[1].Text; t != nil {
			user = []byte(*t) // a user message not reused elsewhere is kept inline
		}
		if strings.Contains(string(user), "52 millones") {
			c.Request, done = audit.Hash([]byte("an earlier prompt")), true
			e.Data, _ = json.Marshal(c)
		}
	})
	mustRun(t, "audit", "verify", cp)
	code, _, stderr = runCLI(t, "", "replay", cp, "--out", t.TempDir())
	if code != exitFailed || !strings.Contains(stderr, "replay diverged at flags_contradiction") || !strings.Contains(stderr, "tec_q1") {
		t.Errorf("a changed prompt: exit %d\n%s", code, stderr)
	}
}
