package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/app/debateapp"
	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/audit"
	fileblob "github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/catalog"
	"github.com/veredicto/veredicto/internal/confirm"
	confirmengine "github.com/veredicto/veredicto/internal/confirm/engine"
	"github.com/veredicto/veredicto/internal/confirm/memory"
	"github.com/veredicto/veredicto/internal/debate"
	"github.com/veredicto/veredicto/internal/llm"
	"github.com/veredicto/veredicto/internal/llm/llmtest"
	"github.com/veredicto/veredicto/internal/poll"
	filestore "github.com/veredicto/veredicto/internal/store/file"
)

// TestStateMachineDebateIsRecordedAndReplays: a debate of the state
// machine, as serve runs it, keeps its record under
// DATA/reports/audit/<tenant>/<execution>/: the knowledge by its keys,
// each participant's and council member's calls in their chains, the
// rounds, the council, and the person's approval with who, when and the
// hash of the preview they saw, tied to the decision applied. With the
// provider stopped the replay delivers the recorded approval and writes
// debate_log.yaml, debate.md and debate.json byte for byte.
func TestStateMachineDebateIsRecordedAndReplays(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := llmtest.NewServer(t, func(c llmtest.Call) llmtest.Reply {
		var v any
		switch c.Schema {
		case debate.SchemaRAGQuery:
			v = debate.RAGRequest{Query: "banda salarial"}
		case debate.SchemaPosition:
			v = debate.Position{Recommendation: "pedir referencias", Position: "Primero las referencias.", Reasoning: "La política lo pide.",
				Premises: []string{}, Risks: []debate.Risk{}, Timing: "30d", Confidence: 90, Limitations: []string{}}
		case debate.SchemaSynthesis:
			v = debate.Synthesis{Summary: "El comité pide referencias antes de ofertar.", Consensus: []string{}, Divergences: []string{}, Action: "Pedir referencias."}
		case debate.SchemaVote:
			v = debate.Vote{Vote: "pedir referencias", Confidence: 30, Rationale: "Dudas abiertas sobre el equipo.", Premises: []string{}}
		}
		b, _ := json.Marshal(v)
		return llmtest.Reply{Content: string(b)}
	})
	client, err := llm.NewOpenAI(llm.OpenAIConfig{APIKey: "k", BaseURL: srv.BaseURL(), Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	in, rep, ctxDir := LocalLayout(data)
	if err := fileblob.NewDir(in).Put(ctx, "knowledge/acme/policies/band.md", []byte("La banda salarial del cargo CFO llega a 40.000 BRL mensuales."), "text/markdown"); err != nil {
		t.Fatal(err)
	}
	records := &audit.Folders{Root: filepath.Join(rep, AuditPrefix)}
	steps := debateapp.Recorded(debateapp.Steps(client, fileblob.NewDir(in), fileblob.NewDir(rep), filestore.NewLocal(ctxDir), nil), records)
	decisions := &confirm.Service{Store: memory.New()}
	eng := asl.New(catalog.DebateRegistry(steps, decisions))
	decisions.Tasks = confirmengine.Tasks{Engine: eng}
	q := `{"question": "¿Avanzamos con la oferta a c-005?", "options": ["avanzar", "pedir referencias"], "irreversible": true,
		"participants": [{"id": "cfo", "brief": "Costo"}, {"id": "chro", "brief": "Referencias"}]}`
	x, err := catalog.StartDebate(ctx, eng, debate.StartInput{Tenant: "acme", DebateID: "d-1", Question: json.RawMessage(q), Knowledge: []string{"knowledge/acme/policies/"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var id string
	poll.Until(t, 30*time.Second, func() bool {
		list, _, _ := decisions.Store.List(ctx, "acme", time.Now(), 10)
		for _, c := range list {
			if c.Status == confirm.StatusPending && c.TaskToken != "" {
				id = c.ID
			}
		}
		return id != ""
	}, "the debate's decision waiting")
	if _, err := decisions.Resolve(ctx, "acme", confirm.Resolution{ID: id, Approved: true, By: "ana", Comment: "Con referencias"}); err != nil {
		t.Fatal(err)
	}
	res, err := x.Wait(ctx)
	if err != nil || res.Status != asl.StatusSucceeded {
		t.Fatalf("%v %s %s", err, res.Error, res.Cause)
	}

	execution := catalog.DebateExecutionName("acme", "d-1")
	rec, err := LocateRecord(execution, data, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if problems, err := audit.Verify(ctx, rec.Store(), rec.ReadFile); err != nil || len(problems) > 0 {
		t.Fatalf("verify: %v %v", problems, err)
	}
	var st audit.Start
	for _, e := range readEntries(t, rec.Dir, audit.MainChain) {
		if e.Kind == audit.KindStart {
			json.Unmarshal(e.Data, &st)
		}
	}
	if st.Workflow != debate.WorkflowName || st.Tenant != "acme" || st.Documents["knowledge/acme/policies/band.md"] == "" {
		t.Errorf("the start: %+v", st)
	}
	var human audit.HumanDecision
	var applied audit.Decision
	for _, e := range readEntries(t, rec.Dir, audit.MainChain) {
		switch e.Kind {
		case audit.KindHuman:
			json.Unmarshal(e.Data, &human)
		case audit.KindDecision:
			var d audit.Decision
			if json.Unmarshal(e.Data, &d) == nil && d.Name == "decision" {
				applied = d
			}
		}
	}
	if human.Status != "approved" || human.Principal != "ana" || human.Confirmation != id || len(human.Preview) != 64 || human.DecidedAt.IsZero() || human.Comment != "Con referencias" {
		t.Errorf("the person's decision: %+v (confirmation %s)", human, id)
	}
	if applied.Confirmation != id || applied.Applies != "approved" || applied.Outcome != "pedir referencias" {
		t.Errorf("the decision applied: %+v", applied)
	}
	if calls := readEntries(t, rec.Dir, "council/consejo-riesgo"); len(calls) == 0 {
		t.Error("no chain of the council member consejo-riesgo")
	}

	srv.Close()
	out := t.TempDir()
	got, err := Replay(ctx, rec, out)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range got.Files {
		if !f.Identical {
			t.Errorf("%s differs", f.Path)
		}
		paths = append(paths, f.Path)
	}
	if strings.Join(paths, " ") != "debates/acme/d-1/debate.json debates/acme/d-1/debate.md debates/acme/d-1/debate_log.yaml" {
		t.Errorf("replayed %v", paths)
	}
}

func readEntries(t *testing.T, dir, chain string) []audit.Entry {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "chains", strings.ReplaceAll(chain, "/", "%2F")+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []audit.Entry
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e audit.Entry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}
