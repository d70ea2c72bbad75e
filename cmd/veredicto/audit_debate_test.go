package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/debate"
	"github.com/veredicto/veredicto/internal/llm/llmtest"
)

// debateModel scripts a debate's agents: in round 1 the cfo and the ceo
// advance and the chro asks for references (no convergence), each
// looking up the knowledge base first (the consultor asks for references
// too); in round 2 every rebuttal comes
// round to advancing; the synthesizer writes, and the council (the value
// at risk is over the threshold) votes to advance.
func debateModel(t *testing.T) func(llmtest.Call) llmtest.Reply {
	return func(c llmtest.Call) llmtest.Reply {
		who, _, _ := strings.Cut(strings.TrimPrefix(c.User(), "participant: "), "\n")
		advance, refs := "avanzar con la oferta", "pedir referencias antes de ofertar"
		var v any
		switch c.Schema {
		case debate.SchemaRAGQuery:
			v = debate.RAGRequest{Query: "banda salarial oferta"}
		case debate.SchemaPosition:
			rec, timing, risk := advance, "30d", "financial"
			if who == "chro" || who == "consultor-senior" {
				rec, timing, risk = refs, "90d", "people"
			}
			v = debate.Position{Recommendation: rec, Position: "Posición de " + who + " sobre la oferta.", Reasoning: "Según la política de ofertas.",
				Premises: []string{}, Risks: []debate.Risk{{Category: risk, Description: "riesgo principal"}}, Timing: timing, Confidence: 80, Limitations: []string{}}
		case debate.SchemaRebuttal:
			v = debate.Rebuttal{Agreements: []string{"La banda salarial permite la oferta."}, Divergences: []string{"El plazo de las referencias sigue abierto para la dirección."},
				BlindSpots: []string{}, KeepsPosition: debate.KeepPartial,
				Stance: debate.Position{Recommendation: advance, Position: who + " avanza tras las rebatidas.", Reasoning: "La banda lo permite.",
					Premises: []string{}, Risks: []debate.Risk{}, Timing: "30d", Confidence: 60, Limitations: []string{}}}
		case debate.SchemaSynthesis:
			v = debate.Synthesis{Summary: "El comité converge en avanzar con la oferta dentro de la banda salarial.", Consensus: []string{"avanzar"},
				Divergences: []string{}, Action: "Enviar la oferta a c-005 esta semana."}
		case debate.SchemaVote:
			v = debate.Vote{Vote: advance, Confidence: 80, Rationale: "La síntesis se sostiene en la política de ofertas.", Premises: []string{}}
		default:
			t.Errorf("unexpected schema %q", c.Schema)
		}
		b, _ := json.Marshal(v)
		return llmtest.Reply{Content: string(b)}
	}
}

// TestAuditedDebateVerifiesAndReplaysByteForByte is issue 30's check for
// a debate: a scripted "debate run" keeps its record in OUT/audit, which
// verifies; with the provider stopped "replay" writes debate.md and
// debate_log.yaml byte for byte; an edited report fails verify naming
// it; a run whose prompt to one agent differs from the record's fails
// the replay naming that agent.
func TestAuditedDebateVerifiesAndReplaysByteForByte(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	srv := llmtest.NewServer(t, debateModel(t))
	t.Setenv("OPENAI_API_KEY", "test")
	t.Setenv("OPENAI_BASE_URL", srv.BaseURL())
	t.Setenv("OPENAI_MODEL", "gpt-4o-mini")
	q := filepath.Join(t.TempDir(), "QUESTION.yaml")
	b, err := os.ReadFile("../../examples/debate/QUESTION.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// A debate over the value threshold: the council is mandatory.
	question := strings.Replace(string(b), "amount: 80000", "amount: 150000", 1) + "mode: debate\n"
	if err := os.WriteFile(q, []byte(question), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "", "debate", "run", q, "--knowledge", "../../examples/debate/knowledge", "--out", out)
	if code != exitOK {
		t.Fatalf("debate run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "Audit record: "+filepath.Join(out, "audit")) {
		t.Errorf("the run does not say where its record is:\n%s", stderr)
	}
	mustRun(t, "audit", "verify", out)

	// The record holds the question, the knowledge, each participant's
	// calls in its chain, the rounds' convergence, the council and the
	// files.
	rec := filepath.Join(out, "audit")
	var st audit.Start
	json.Unmarshal(findEntry(t, rec, audit.MainChain, audit.KindStart).Data, &st)
	if st.Workflow != debate.WorkflowName || st.Documents[debate.QuestionDocument] == "" || st.Documents[debate.KnowledgeDocument("policy-offers.md")] == "" ||
		st.Prompts[debate.SchemaPosition] == "" || st.Model.Model != "gpt-4o-mini" {
		t.Errorf("the start: %+v", st)
	}
	var call audit.ModelCall
	json.Unmarshal(findEntry(t, rec, "participant/chro", audit.KindModel).Data, &call)
	if call.Agent != "chro" || call.Schema != debate.SchemaRebuttal || call.PromptVersion == "" || call.Answer == nil {
		t.Errorf("chro's last call: %+v", call)
	}
	decisions := entriesOf(t, rec, audit.MainChain, audit.KindDecision)
	for _, want := range []string{`"name":"route","outcome":"debate"`, `"name":"round_1","score":`, `"name":"round_2","score":100,"threshold":70,"outcome":"converged"`,
		`"name":"escalation","outcome":"COUNCIL"`, `"name":"council","score":`, `"name":"decision","outcome":"avanzar con la oferta"`} {
		if !strings.Contains(decisions, want) {
			t.Errorf("the decisions lack %s:\n%s", want, decisions)
		}
	}

	// The provider is stopped: the replay needs none.
	srv.Close()
	replay := t.TempDir()
	stdout = mustRun(t, "replay", out, "--out", replay)
	if strings.Contains(stdout, "DIFFERS") || !strings.Contains(stdout, "2 reports identical") {
		t.Errorf("replay:\n%s", stdout)
	}
	for _, f := range []string{"debate.md", "debate_log.yaml"} {
		a, _ := os.ReadFile(filepath.Join(out, f))
		b, err := os.ReadFile(filepath.Join(replay, f))
		if err != nil || string(a) != string(b) {
			t.Errorf("%s: the replay's differs (%v)", f, err)
		}
	}
	mustRun(t, "audit", "verify", replay)

	// An edited report fails verify, naming it.
	cp := t.TempDir()
	copyTree(t, out, cp)
	os.WriteFile(filepath.Join(cp, "debate.md"), []byte("# Debate: aprobado\n"), 0o600)
	if code, stdout, _ := runCLI(t, "", "audit", "verify", cp); code != exitFailed || !strings.Contains(stdout, "records debate.md, which was changed after it was written") {
		t.Errorf("an edited debate.md: exit %d\n%s", code, stdout)
	}

	// The run's prompt to the chro (its recorded request) differs from
	// the one the code sends now: the replay stops, naming the chro.
	cp = t.TempDir()
	copyTree(t, out, cp)
	resealed(t, filepath.Join(cp, "audit"), "participant/chro", func(e *audit.Entry) {
		var c audit.ModelCall
		json.Unmarshal(e.Data, &c)
		if c.Schema == debate.SchemaPosition {
			c.Request = audit.Hash([]byte("an earlier prompt"))
			e.Data, _ = json.Marshal(c)
		}
	})
	mustRun(t, "audit", "verify", cp)
	code, _, stderr = runCLI(t, "", "replay", cp, "--out", t.TempDir())
	if code != exitFailed || !strings.Contains(stderr, "replay diverged at chro") || !strings.Contains(stderr, "participant chro") {
		t.Errorf("a changed prompt: exit %d\n%s", code, stderr)
	}
}

// entriesOf is the data of chain's entries of kind, one JSON a line.
func entriesOf(t *testing.T, dir, chain, kind string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "chains", strings.ReplaceAll(chain, "/", "%2F")+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e audit.Entry
		if json.Unmarshal([]byte(line), &e) == nil && e.Kind == kind {
			out = append(out, string(e.Data))
		}
	}
	return strings.Join(out, "\n")
}

// resealed rewrites chain's entries with edit and seals the record
// again (every link and the summary's heads), as if the run had recorded
// them so: a record that verifies, of a run that was different.
func resealed(t *testing.T, dir, chain string, edit func(*audit.Entry)) {
	t.Helper()
	path := func(c string) string { return filepath.Join(dir, "chains", strings.ReplaceAll(c, "/", "%2F")+".jsonl") }
	read := func(c string) []audit.Entry {
		b, err := os.ReadFile(path(c))
		if err != nil {
			t.Fatal(err)
		}
		var es []audit.Entry
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var e audit.Entry
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatal(err)
			}
			es = append(es, e)
		}
		return es
	}
	write := func(c string, es []audit.Entry) (head string, n int) {
		prev := audit.Genesis(c)
		var lines []string
		for _, e := range es {
			e.Prev = prev
			b, _ := json.Marshal(e)
			lines = append(lines, string(b))
			prev = audit.Hash(b)
		}
		if err := os.WriteFile(path(c), []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return prev, len(es)
	}
	es := read(chain)
	for i := range es {
		edit(&es[i])
	}
	head, n := write(chain, es)
	main := read(audit.MainChain)
	for i := range main {
		if main[i].Kind == audit.KindSummary {
			var s audit.Summary
			json.Unmarshal(main[i].Data, &s)
			s.Heads[chain], s.Entries[chain] = head, n
			main[i].Data, _ = json.Marshal(s)
		}
	}
	write(audit.MainChain, main)
}
