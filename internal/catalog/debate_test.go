package catalog_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/asl"
	fileblob "github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/catalog"
	"github.com/veredicto/veredicto/internal/confirm"
	confirmengine "github.com/veredicto/veredicto/internal/confirm/engine"
	"github.com/veredicto/veredicto/internal/confirm/memory"
	"github.com/veredicto/veredicto/internal/debate"
	"github.com/veredicto/veredicto/internal/poll"
	filestore "github.com/veredicto/veredicto/internal/store/file"
)

// scriptedAgents answer the debate's calls by rule, with no network.
type scriptedAgents struct {
	position func(in debate.PositionInput) debate.Position
	vote     func(in debate.VoteInput) debate.Vote
}

// Position uses the round's retrieval tool when it has it (agents query
// during the rounds), then answers by rule.
func (s scriptedAgents) Position(ctx context.Context, in debate.PositionInput) (debate.Position, veredicto.Usage, error) {
	if in.Tool != nil {
		got, _ := in.Tool.Query(ctx, in.Question.Question)
		in.Chunks = append(in.Chunks, got...)
	}
	return s.position(in), veredicto.Usage{Calls: 1, PromptTokens: 10}, nil
}

func (s scriptedAgents) Rebuttal(_ context.Context, in debate.RebuttalInput) (debate.Rebuttal, veredicto.Usage, error) {
	return debate.Rebuttal{KeepsPosition: debate.KeepYes, Stance: s.position(debate.PositionInput{Question: in.Question, Participant: in.Participant, Round: 2})},
		veredicto.Usage{Calls: 1, PromptTokens: 10}, nil
}

func (s scriptedAgents) Synthesis(ctx context.Context, in debate.SynthesisInput) (debate.Synthesis, veredicto.Usage, error) {
	out, _, err := debate.Offline{}.Synthesis(ctx, in)
	return out, veredicto.Usage{Calls: 1, PromptTokens: 10}, err
}

func (s scriptedAgents) Vote(_ context.Context, in debate.VoteInput) (debate.Vote, veredicto.Usage, error) {
	return s.vote(in), veredicto.Usage{Calls: 1, PromptTokens: 10}, nil
}

type debateRun struct {
	steps     *debate.Steps
	logs      *filestore.Memory
	reports   string
	decisions *confirm.Service
	eng       *asl.Engine
}

func newDebateRun(t *testing.T, agents debate.Agents) *debateRun {
	t.Helper()
	r := &debateRun{logs: filestore.NewMemory(), reports: t.TempDir(),
		decisions: &confirm.Service{Store: memory.New(), Logger: slog.New(slog.DiscardHandler)}}
	knowledge := t.TempDir()
	writeKnowledge(t, knowledge)
	r.steps = &debate.Steps{Agents: agents, Knowledge: fileblob.NewDir(knowledge), Reports: fileblob.NewDir(r.reports), Logs: r.logs,
		Logger: slog.New(slog.DiscardHandler)}
	r.eng = asl.New(catalog.DebateRegistry(r.steps, r.decisions))
	r.decisions.Tasks = confirmengine.Tasks{Engine: r.eng}
	return r
}

func writeKnowledge(t *testing.T, dir string) {
	t.Helper()
	d := fileblob.NewDir(dir)
	for k, v := range map[string]string{
		"knowledge/acme/policies/offers.md": "Ninguna oferta se emite con contradicciones abiertas: primero se piden referencias.",
		"knowledge/acme/policies/band.md":   "La banda salarial del cargo CFO llega a 40.000 BRL mensuales.",
		"knowledge/globex/secret.md":        "Documento de otro tenant.",
	} {
		if err := d.Put(context.Background(), k, []byte(v), "text/markdown"); err != nil {
			t.Fatal(err)
		}
	}
}

func (r *debateRun) start(t *testing.T, question string, humanTimeout int, decide func(id string)) (*asl.Result, debate.Log) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	q, err := json.Marshal(yamlToMap(t, question))
	if err != nil {
		t.Fatal(err)
	}
	x, err := catalog.StartDebate(ctx, r.eng, debate.StartInput{Tenant: "acme", DebateID: "d-1", Question: q, Knowledge: []string{"knowledge/acme/policies/"}, HumanTimeoutSeconds: humanTimeout}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if decide != nil {
		decide(pendingDecision(t, r.decisions))
	}
	res, err := x.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != asl.StatusSucceeded {
		for _, ev := range res.History() {
			t.Logf("%s %s %s", ev.Type, ev.State, ev.Scope)
		}
		t.Fatalf("execution %s: %s: %s", res.Status, res.Error, res.Cause)
	}
	log, err := debate.ReadLog(ctx, r.logs, "acme", "d-1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := debate.ReadLog(ctx, r.logs, "globex", "d-1"); err == nil {
		t.Error("another tenant reads the debate")
	}
	return res, log
}

func pendingDecision(t *testing.T, svc *confirm.Service) string {
	t.Helper()
	var id string
	poll.Until(t, 30*time.Second, func() bool {
		list, _, err := svc.Store.List(t.Context(), "acme", time.Now(), 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range list {
			if c.Status == confirm.StatusPending && c.TaskToken != "" {
				if c.ToolName != "debate_decision" {
					t.Errorf("tool %q, want debate_decision", c.ToolName)
				}
				id = c.ID
				return true
			}
		}
		return false
	}, "a debate decision waiting")
	return id
}

func yamlToMap(t *testing.T, y string) map[string]any {
	t.Helper()
	q, err := debate.ParseQuestion("q", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	ps := []any{}
	for _, p := range q.Participants {
		ps = append(ps, map[string]any{"id": p.ID, "brief": p.Brief})
	}
	m := map[string]any{"question": q.Question, "options": q.Options, "participants": ps, "irreversible": q.Irreversible}
	if strings.Contains(y, "max: 5") {
		m["config"] = map[string]any{"debate": map[string]any{"rounds": map[string]any{"max": 5}}}
	}
	return m
}

const debateQuestion = "question: ¿Avanzamos con la oferta a c-005 o pedimos referencias?\noptions: [avanzar, pedir referencias]\nparticipants:\n  - {id: cfo, brief: Costo y banda salarial}\n  - {id: chro, brief: Referencias y cultura}\n"

func agree(conf int) scriptedAgents {
	return scriptedAgents{position: func(in debate.PositionInput) debate.Position {
		var premises []string
		for _, c := range in.Chunks[:1] {
			premises = append(premises, "[RAG:"+c.ID+"]")
		}
		return debate.Position{Recommendation: "pedir referencias", Position: "p", Timing: "30d", Confidence: conf, Premises: premises}
	}, vote: func(in debate.VoteInput) debate.Vote { return debate.Vote{Vote: in.Decision, Confidence: 30} }}
}

func TestDebateWorkflowConverges(t *testing.T) {
	r := newDebateRun(t, agree(90))
	res, log := r.start(t, debateQuestion, 0, nil)
	b := log.DebateLog
	if b.SessionID != "d-1" || len(b.Rodadas) != 1 || b.Resultado.EscaladoPara != debate.TargetNone || b.RAGQueries.Total != 2 {
		t.Fatalf("log %+v", b)
	}
	if len(b.RAGQueries.ChunksCitados) != 1 || !strings.HasPrefix(b.RAGQueries.ChunksCitados[0], "policies-") {
		t.Errorf("chunks cited %v, want ids free of the kind and tenant", b.RAGQueries.ChunksCitados)
	}
	var out debate.FinishOutput
	if err := json.Unmarshal(res.Output, &out); err != nil || out.Decision != "pedir referencias" || out.LogKey != "debates/acme/d-1/debate_log.yaml" {
		t.Errorf("finish %+v (%v)", out, err)
	}
	for _, name := range []string{"debate_log.yaml", "debate.md", "debate.json"} {
		if _, err := fileblob.NewDir(r.reports).Get(context.Background(), "debates/acme/d-1/"+name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// The retrieved chunks travel in the log store, not in the state: no
	// state input or output of the run holds a chunk's text, and the
	// report's evidence does.
	texts := []string{"banda salarial del cargo CFO", "Ninguna oferta se emite"}
	for _, ev := range res.History() {
		for _, v := range []any{ev.Input, ev.Output} {
			b, _ := json.Marshal(v)
			for _, text := range texts {
				if strings.Contains(string(b), text) {
					t.Errorf("%s of %s carries a chunk's text", ev.Type, ev.State)
				}
			}
		}
	}
	batches, err := r.logs.List(t.Context(), "debate/acme/d-1/library/")
	if err != nil || len(batches) == 0 {
		t.Errorf("library batches %v (%v)", batches, err)
	}
	full, err := fileblob.NewDir(r.reports).Get(context.Background(), "debates/acme/d-1/debate.json")
	if err != nil || !strings.Contains(string(full), texts[1]) {
		t.Errorf("debate.json lacks the cited chunk's text (%v)", err)
	}
}

func TestDebateWorkflowLoopImpasseCouncilThenHuman(t *testing.T) {
	for _, approve := range []bool{true, false} {
		t.Run(map[bool]string{true: "approved", false: "rejected"}[approve], func(t *testing.T) {
			agents := scriptedAgents{
				position: func(in debate.PositionInput) debate.Position {
					rec, timing := "avanzar", "30d"
					if in.Participant.ID == "chro" {
						rec, timing = "pedir referencias", "90d"
					}
					return debate.Position{Recommendation: rec, Position: "p", Timing: timing, Confidence: 60, Premises: []string{}}
				},
				vote: func(in debate.VoteInput) debate.Vote {
					if !in.Impasse {
						t.Error("the council was not told IMPASSE")
					}
					return debate.Vote{Vote: "pedir referencias", Confidence: 40}
				},
			}
			r := newDebateRun(t, agents)
			res, log := r.start(t, debateQuestion, 0, func(id string) {
				if _, err := r.decisions.Resolve(t.Context(), "acme", confirm.Resolution{ID: id, Approved: approve, By: "ana", Comment: "visto"}); err != nil {
					t.Errorf("Resolve: %v", err)
				}
			})
			b := log.DebateLog
			if len(b.Rodadas) != 3 || !b.Resultado.CircuitBreaker || b.Resultado.EscaladoPara != debate.TargetHuman {
				t.Fatalf("rounds %d breaker %v escalado %s", len(b.Rodadas), b.Resultado.CircuitBreaker, b.Resultado.EscaladoPara)
			}
			if b.Rodadas[1].Tipo != "rebatidas" || b.Rodadas[2].Tipo != "refinamento" {
				t.Errorf("round kinds %s %s", b.Rodadas[1].Tipo, b.Rodadas[2].Tipo)
			}
			// Rounds 1 and 2 left the state for the log store when round 3
			// closed, and came back whole for the report.
			archived, err := r.logs.List(t.Context(), "debate/acme/d-1/rounds/")
			if err != nil || len(archived) != 2 {
				t.Errorf("archived rounds %v (%v), want rounds 1 and 2", archived, err)
			}
			for _, rd := range b.Rodadas {
				if len(rd.AgentesResponderam) == 0 {
					t.Errorf("round %d has no answers in the log", rd.Numero)
				}
			}
			var out debate.FinishOutput
			if err := json.Unmarshal(res.Output, &out); err != nil {
				t.Fatal(err)
			}
			wantDecision := map[bool]string{true: "pedir referencias", false: ""}[approve]
			if out.Decision != wantDecision || out.Pending {
				t.Errorf("finish %+v, want decision %q", out, wantDecision)
			}
			md, err := fileblob.NewDir(r.reports).Get(context.Background(), "debates/acme/d-1/debate.md")
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(md), "IMPASSE: las posiciones se estabilizaron") || !strings.Contains(string(md), "DISYUNTOR ACTIVADO") {
				t.Error("debate.md lacks the breaker block and the impasse")
			}
		})
	}
}

// TestDebateWorkflowCouncilThenHumanPending: the irreversible route's
// council stays under 60%; nobody answers in time: pending.
func TestDebateWorkflowCouncilThenHumanPending(t *testing.T) {
	r := newDebateRun(t, agree(90))
	res, log := r.start(t, debateQuestion+"irreversible: true\n", 1, nil)
	var out debate.FinishOutput
	if err := json.Unmarshal(res.Output, &out); err != nil {
		t.Fatal(err)
	}
	if !out.Pending || out.Decision != "" || log.DebateLog.Resultado.EscaladoPara != debate.TargetHuman {
		t.Errorf("finish %+v escalado %s, want a pending human decision", out, log.DebateLog.Resultado.EscaladoPara)
	}
}

// TestDebateWorkflowKnowledgeOutsideTheTenant: another tenant's prefix is
// refused by the first step, before anything is read, naming the prefix
// (whether or not that tenant stores anything there); a missing prefix of
// the tenant's own is NotFoundError.
func TestDebateWorkflowKnowledgeOutsideTheTenant(t *testing.T) {
	r := newDebateRun(t, debate.Offline{})
	q, _ := json.Marshal(yamlToMap(t, debateQuestion))
	ctx := context.Background()
	for _, tc := range []struct{ id, prefix, want string }{
		{"d-2", "knowledge/globex/", veredicto.NameInvalidInput},
		{"d-3", "knowledge/acme/../globex/", veredicto.NameInvalidInput},
		{"d-4", "knowledge/acme/nothing/", veredicto.NameNotFound},
	} {
		x, err := catalog.StartDebate(ctx, r.eng, debate.StartInput{Tenant: "acme", DebateID: tc.id, Question: q, Knowledge: []string{tc.prefix}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := x.Wait(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != asl.StatusFailed || res.Error != tc.want || !strings.Contains(res.Cause, tc.prefix) {
			t.Errorf("knowledge %q: %s %s (%s), want FAILED %s naming the prefix", tc.prefix, res.Status, res.Error, res.Cause, tc.want)
		}
	}
}
