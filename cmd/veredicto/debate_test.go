package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/veredicto/veredicto/internal/debate"
	"github.com/veredicto/veredicto/internal/llm/llmtest"
)

func TestDebateRunOfflineExample(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	m := &Main{Stdout: &stdout, Stderr: &stderr}
	code := m.Run(context.Background(), []string{"debate", "run", "../../examples/debate/QUESTION.yaml",
		"--knowledge", "../../examples/debate/knowledge", "--out", out, "--llm", "offline"})
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, stderr.String())
	}
	data, err := os.ReadFile(filepath.Join(out, "debate_log.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// Exactly the seed's fields, no more.
	var raw map[string]map[string]any
	if err := yaml.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range raw["debate_log"] {
		keys = append(keys, k)
	}
	want := "metricas participantes query rag_queries resultado rodadas session_id timestamp_fim timestamp_inicio"
	if got := strings.Join(sorted(keys), " "); got != want {
		t.Errorf("debate_log fields %q, want %q", got, want)
	}
	md, err := os.ReadFile(filepath.Join(out, "debate.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"## Decisión", "[línea base offline]", "## Checklists", "[RAG:report-c-005-md_001]"} {
		if !strings.Contains(string(md), w) {
			t.Errorf("debate.md lacks %q", w)
		}
	}
	// A second run into the same folder is refused: nothing is overwritten.
	stderr.Reset()
	code = m.Run(context.Background(), []string{"debate", "run", "../../examples/debate/QUESTION.yaml", "--out", out, "--llm", "offline"})
	if code != exitUsage || !strings.Contains(stderr.String(), "already holds a debate") {
		t.Errorf("rerun: exit %d, stderr %s", code, stderr.String())
	}
}

func sorted(xs []string) []string {
	sort.Strings(xs)
	return xs
}

func TestDebateRunBadQuestion(t *testing.T) {
	dir := t.TempDir()
	q := filepath.Join(dir, "QUESTION.yaml")
	if err := os.WriteFile(q, []byte("question: ¿Sí?\noptions: [a, b]\nparticipants:\n  - id: cfo\n    brief: x\nmode: vote\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	m := &Main{Stdout: &stdout, Stderr: &stderr}
	code := m.Run(context.Background(), []string{"debate", "run", q, "--out", filepath.Join(dir, "out")})
	if code != exitUsage || !strings.Contains(stderr.String(), "QUESTION.yaml: mode:") {
		t.Errorf("exit %d, stderr %q, want 2 naming the file and field", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); !os.IsNotExist(err) {
		t.Error("a bad question created the output folder")
	}
}

// TestDebateRunHumanPendingExitCode: a council under 60% leaves the
// decision to a person; the batch run records it as pending and exits 3.
func TestDebateRunHumanPendingExitCode(t *testing.T) {
	srv := llmtest.NewServer(t, func(c llmtest.Call) llmtest.Reply {
		var v any
		switch c.Schema {
		case debate.SchemaPosition:
			v = debate.Position{Recommendation: "avanzar con la oferta", Position: "p", Reasoning: "r", Premises: []string{},
				Risks: []debate.Risk{}, Timing: "30d", Confidence: 90, Limitations: []string{}}
		case debate.SchemaSynthesis:
			v = debate.Synthesis{Summary: "s", Consensus: []string{}, Divergences: []string{}, Action: "a"}
		case debate.SchemaVote:
			v = debate.Vote{Vote: "descartar la candidatura", Confidence: 30, Rationale: "r", Premises: []string{}}
		}
		b, _ := json.Marshal(v)
		return llmtest.Reply{Content: string(b)}
	})
	dir := t.TempDir()
	data, err := os.ReadFile("../../examples/debate/QUESTION.yaml")
	if err != nil {
		t.Fatal(err)
	}
	q := filepath.Join(dir, "QUESTION.yaml")
	if err := os.WriteFile(q, bytes.Replace(data, []byte("irreversible: false"), []byte("irreversible: true"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": srv.BaseURL(), "OPENAI_MODEL": "m"}
	var stdout, stderr bytes.Buffer
	m := &Main{Stdout: &stdout, Stderr: &stderr}
	cfg := debateRunConfig{question: q, out: filepath.Join(dir, "out")}
	code := m.debateRun(context.Background(), cfg, func(k string) string { return env[k] })
	if code != exitPending {
		t.Fatalf("exit %d, want %d; stdout %s stderr %s", code, exitPending, stdout.String(), stderr.String())
	}
	log, err := os.ReadFile(filepath.Join(dir, "out", "debate_log.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), "escalado_para: HUMANO") {
		t.Errorf("log does not record the escalation to HUMANO:\n%s", log)
	}
}

func TestSearchDebateCommand(t *testing.T) {
	out := t.TempDir()
	cand := filepath.Join(out, "c-005")
	if err := os.MkdirAll(cand, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"report.json": `{"search_id":"demo","candidate_id":"c-005","decision":"ESCALADO_CONSULTOR_SENIOR","escalation":{"motivo":"falta de evidencia estructural"}}`,
		"report.md":   "# Informe de c-005\n\nFalta evidencia de los logros declarados; pedir referencias.",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(cand, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var stdout, stderr bytes.Buffer
	m := &Main{Stdout: &stdout, Stderr: &stderr}
	code := m.Run(context.Background(), []string{"search", "debate", cand, "--search", "../../examples/search-demo", "--llm", "offline"})
	if code != exitOK && code != exitPending {
		t.Fatalf("exit %d, stderr %s", code, stderr.String())
	}
	md, err := os.ReadFile(filepath.Join(cand, "debate", "debate.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "c-005") || !strings.Contains(string(md), "falta de evidencia estructural") || !strings.Contains(string(md), "[RAG:informe-c-005-report-md_001]") {
		t.Errorf("debate.md does not debate c-005 on its report:\n%.600s", md)
	}
	if strings.Contains(string(md), "candidates-c-001") {
		t.Error("another candidate's documents reached the debate")
	}
}

// TestDebateRunWarnsOfAnEmptyKnowledgeFolder: a --knowledge folder with
// no documents says so instead of debating silently without evidence.
func TestDebateRunWarnsOfAnEmptyKnowledgeFolder(t *testing.T) {
	empty := t.TempDir()
	var stdout, stderr bytes.Buffer
	m := &Main{Stdout: &stdout, Stderr: &stderr}
	m.Run(context.Background(), []string{"debate", "run", "../../examples/debate/QUESTION.yaml",
		"--knowledge", empty, "--out", filepath.Join(t.TempDir(), "out"), "--llm", "offline"})
	if !strings.Contains(stderr.String(), "warning: "+empty+" holds no documents with text") {
		t.Errorf("no warning of the empty knowledge folder:\n%s", stderr.String())
	}
}
