package debate

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/llm"
	"github.com/veredicto/veredicto/internal/llm/llmtest"
)

// The scenarios of issue 12's Checks, end to end through the real
// OpenAI-compatible adapter against the scripted test server.

var participantRE = regexp.MustCompile(`^participant: (\S+)`)

func participantOf(c llmtest.Call) string {
	m := participantRE.FindStringSubmatch(c.User())
	if m == nil {
		return ""
	}
	return m[1]
}

func reply(t *testing.T, v any) llmtest.Reply {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return llmtest.Reply{Content: string(b), PromptTokens: 100, CompletionTokens: 20}
}

func position(rec string, timing string, conf int, premises ...string) Position {
	return Position{Recommendation: rec, Position: "Posición de prueba.", Reasoning: strings.Join(premises, " "),
		Premises: append([]string{}, premises...), Risks: []Risk{{Category: "financial", Description: "costo"}},
		Timing: timing, Confidence: conf, Limitations: []string{}}
}

func synthesis() Synthesis {
	return Synthesis{Summary: "El comité recomienda avanzar con la oferta dentro de la banda.", Consensus: []string{}, Divergences: []string{}, Action: "Actuar."}
}

// script answers by schema and participant. query is the agent's use of
// the retrieval tool (default: a query that finds the policy chunk).
type script struct {
	query     func(p string, round int) string
	position  func(p string, round int) Position
	rebuttal  func(p string) Rebuttal
	vote      func(p string) Vote
	synthesis func() Synthesis
	delay     map[string]time.Duration // per participant
}

var roundRE = regexp.MustCompile(`Ronda (\d+)`)

func (s script) respond(t *testing.T) func(llmtest.Call) llmtest.Reply {
	return func(c llmtest.Call) llmtest.Reply {
		p := participantOf(c)
		var r llmtest.Reply
		switch c.Schema {
		case SchemaRAGQuery:
			round, _ := strconv.Atoi(roundRE.FindStringSubmatch(c.User())[1])
			q := "compensación de la oferta"
			if s.query != nil {
				q = s.query(p, round)
			}
			r = reply(t, RAGRequest{Query: q})
		case SchemaPosition:
			round := 1
			if m := roundRE.FindStringSubmatch(c.User()); m != nil && m[1] != "1" {
				round = 3
			}
			r = reply(t, s.position(p, round))
		case SchemaRebuttal:
			r = reply(t, s.rebuttal(p))
		case SchemaSynthesis:
			syn := synthesis()
			if s.synthesis != nil {
				syn = s.synthesis()
			}
			r = reply(t, syn)
		case SchemaVote:
			r = reply(t, s.vote(p))
		default:
			t.Errorf("unexpected schema %q", c.Schema)
		}
		r.Delay = s.delay[p]
		return r
	}
}

const kbChunk = "policies-md_001"

func newEngine(t *testing.T, s script) (*Engine, *llmtest.Server) {
	t.Helper()
	srv := llmtest.NewServer(t, s.respond(t))
	client, err := llm.NewOpenAI(llm.OpenAIConfig{APIKey: "test", BaseURL: srv.BaseURL(), Model: "test-model", MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	ix := NewIndex(ChunkText("policies.md", "La oferta a c-005 está dentro de la banda salarial de compensación."))
	tick := time.Unix(1_700_000_000, 0)
	var mu sync.Mutex
	return &Engine{
		Agents: LLMAgents{Client: client}, Retriever: IndexRetriever{ix}, Chunks: ix.Len(), OptionalCouncil: true,
		Now: func() time.Time {
			mu.Lock()
			defer mu.Unlock()
			tick = tick.Add(10 * time.Millisecond)
			return tick
		},
		NewID:  func() string { return "session-1" },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}, srv
}

func question(t *testing.T, extra string, participants ...string) Question {
	t.Helper()
	y := "question: ¿Avanzamos con la oferta a c-005 por su compensación?\noptions: [avanzar, no avanzar]\nparticipants:\n"
	for _, p := range participants {
		y += "  - {id: " + p + ", brief: Rol " + p + " de compensación}\n"
	}
	q, err := ParseQuestion("QUESTION.yaml", []byte(y+extra))
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func cite(id string) string { return "[RAG:" + id + "]" }

func TestE2EConvergeRound1(t *testing.T) {
	e, srv := newEngine(t, script{position: func(p string, _ int) Position {
		return position("avanzar", "30d", 80, cite(kbChunk))
	}})
	r, err := e.Run(context.Background(), question(t, "", "cfo", "chro", "ceo"))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rounds) != 1 || r.Convergence != 100 || r.Target != TargetNone || r.Final != "avanzar" || r.Trip != nil {
		t.Fatalf("rounds %d convergence %v target %s final %q trip %v", len(r.Rounds), r.Convergence, r.Target, r.Final, r.Trip)
	}
	calls := srv.Calls()
	var who, queried []string
	for _, c := range calls {
		if !c.Strict {
			t.Errorf("call %d is not strict", c.N)
		}
		switch c.Schema {
		case SchemaRAGQuery:
			queried = append(queried, participantOf(c))
		case SchemaPosition:
			who = append(who, participantOf(c))
			if !strings.Contains(c.User(), "### [RAG:"+kbChunk+"]\n<<<\nfuente: policies.md\n\n") {
				t.Errorf("the chunk is not delimited data in %s's message", participantOf(c))
			}
			if !strings.Contains(string(c.JSONSchema), `"enum":["avanzar","no avanzar"]`) {
				t.Errorf("the schema does not restrict recommendation to the options: %s", c.JSONSchema)
			}
		}
	}
	// Each agent used the round's tool once, then answered: nothing was
	// retrieved before the round.
	if len(who) != 3 || len(queried) != 3 || len(calls) != 7 {
		t.Errorf("calls %d (tool by %v, positions by %v), want 3 tool uses, 3 positions and 1 synthesis", len(calls), queried, who)
	}
	log := r.DebateLog().DebateLog
	if log.Metricas.TokensConsumidos != 7*120 || log.RAGQueries.Total != 3 || len(log.RAGQueries.ChunksCitados) != 1 {
		t.Errorf("log metrics %+v rag %+v", log.Metricas, log.RAGQueries)
	}
}

func TestE2EConvergeRound2(t *testing.T) {
	e, srv := newEngine(t, script{
		position: func(p string, _ int) Position {
			if p == "chro" {
				return position("no avanzar", "90d", 70)
			}
			return position("avanzar", "30d", 80, cite(kbChunk))
		},
		rebuttal: func(p string) Rebuttal {
			return Rebuttal{Agreements: []string{}, Divergences: []string{}, BlindSpots: []string{}, KeepsPosition: map[bool]string{true: KeepNo, false: KeepYes}[p == "chro"],
				Stance: position("avanzar", "30d", 75, cite(kbChunk))}
		},
	})
	r, err := e.Run(context.Background(), question(t, "", "cfo", "chro"))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rounds) != 2 || r.Rounds[0].Convergence >= 70 || r.Rounds[1].Convergence != 100 || r.Final != "avanzar" || r.Rounds[1].Changes != 1 {
		t.Fatalf("rounds %d convergences %v/%v changes %d final %q", len(r.Rounds), r.Rounds[0].Convergence, r.Convergence, r.Rounds[len(r.Rounds)-1].Changes, r.Final)
	}
	// Round 2 is sequential: the second agent sees the first one's new stance.
	var rebuttals []llmtest.Call
	for _, c := range srv.Calls() {
		if c.Schema == SchemaRebuttal {
			rebuttals = append(rebuttals, c)
		}
	}
	if len(rebuttals) != 2 || participantOf(rebuttals[0]) != "cfo" || participantOf(rebuttals[1]) != "chro" {
		t.Fatalf("rebuttals %d", len(rebuttals))
	}
	if !strings.Contains(rebuttals[1].User(), `"confidence": 75`) {
		t.Error("chro's rebuttal does not show cfo's round-2 stance")
	}
}

func TestE2ELoopImpasseCouncil(t *testing.T) {
	stuck := func(p string) Position {
		if p == "chro" {
			return position("no avanzar", "90d", 70)
		}
		return position("avanzar", "30d", 80, cite(kbChunk))
	}
	e, srv := newEngine(t, script{
		position: func(p string, _ int) Position { return stuck(p) },
		rebuttal: func(p string) Rebuttal {
			return Rebuttal{Agreements: []string{}, Divergences: []string{"El plazo de la oferta no coincide"}, BlindSpots: []string{}, KeepsPosition: KeepYes, Stance: stuck(p)}
		},
		vote: func(p string) Vote {
			return Vote{Vote: "avanzar", Confidence: 90, Rationale: "Evidencia " + cite(kbChunk), Premises: []string{cite(kbChunk)}}
		},
	})
	r, err := e.Run(context.Background(), question(t, "", "cfo", "chro"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Trip == nil || r.Trip.Trigger != TriggerLoop || !r.Escalation.Impasse || r.Council == nil {
		t.Fatalf("trip %+v escalation %+v council %v", r.Trip, r.Escalation, r.Council)
	}
	if r.Target != TargetCouncil || r.Final != "avanzar" || r.Council.Result != 90 {
		t.Errorf("target %s final %q result %v, want the council's decision at 90%%", r.Target, r.Final, r.Council.Result)
	}
	impasseVotes := 0
	for _, c := range srv.Calls() {
		if c.Schema == SchemaVote && strings.Contains(c.User(), "IMPASSE: true") {
			impasseVotes++
		}
	}
	if impasseVotes != 3 {
		t.Errorf("%d council calls carry IMPASSE: true, want 3", impasseVotes)
	}
	md := r.Markdown()
	for _, want := range []string{"DISYUNTOR ACTIVADO", "MOTIVO: loop detectado", "RONDAS EJECUTADAS: 3 de 3", "IMPASSE: las posiciones se estabilizaron sin convergencia",
		"Agentes en conflicto: cfo, chro", "Escalado a: el consejo de tres miembros", "Mantiene |", "| Sí |"} {
		if !strings.Contains(md, want) {
			t.Errorf("debate.md lacks %q", want)
		}
	}
	if !r.DebateLog().DebateLog.Resultado.CircuitBreaker {
		t.Error("the log does not say the circuit breaker fired")
	}
}

func TestE2ECouncilBelow60HumanPending(t *testing.T) {
	e, _ := newEngine(t, script{
		position: func(p string, _ int) Position { return position("avanzar", "30d", 90, cite(kbChunk)) },
		vote: func(p string) Vote {
			rec := map[string]string{"consejo-riesgo": "no avanzar", "consejo-negocio": "avanzar", "consejo-independiente": "avanzar"}[p]
			return Vote{Vote: rec, Confidence: 80, Rationale: "r", Premises: []string{}}
		},
	})
	// Irreversible: the critical route; the council is mandatory.
	r, err := e.Run(context.Background(), question(t, "irreversible: true\n", "cfo", "chro"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Mode != ModeCouncil || r.Council == nil {
		t.Fatalf("mode %s council %v", r.Mode, r.Council)
	}
	if r.Council.Decision != "avanzar" || r.Council.Result >= 60 {
		t.Fatalf("council %q %.1f, want avanzar under 60", r.Council.Decision, r.Council.Result)
	}
	if r.Target != TargetHuman || !r.Pending || r.Final != "" {
		t.Fatalf("target %s pending %v final %q, want a pending human decision", r.Target, r.Pending, r.Final)
	}
	if !strings.HasPrefix(strings.SplitN(r.Markdown(), "## Decisión\n\n", 2)[1], "**PENDIENTE DE DECISIÓN HUMANA.**") {
		t.Error("debate.md does not put the pending decision first")
	}
	if r.DebateLog().DebateLog.Resultado.EscaladoPara != TargetHuman {
		t.Error("log escalado_para is not HUMANO")
	}
}

func TestE2EAgentTimeoutExcluded(t *testing.T) {
	e, _ := newEngine(t, script{
		position: func(p string, _ int) Position { return position("avanzar", "30d", 80, cite(kbChunk)) },
		delay:    map[string]time.Duration{"ceo": time.Hour},
	})
	r, err := e.Run(context.Background(), question(t, "config:\n  timeout:\n    per_agent: 0.2\n", "cfo", "chro", "ceo"))
	if err != nil {
		t.Fatal(err)
	}
	rd := r.Rounds[0]
	if got := rd.TimedOut(); len(got) != 1 || got[0] != "ceo" {
		t.Fatalf("timed out %v, want ceo", got)
	}
	if rd.Convergence != 100 || r.Final != "avanzar" {
		t.Errorf("convergence %v final %q: the timeout must be excluded, not counted as disagreement", rd.Convergence, r.Final)
	}
	if !contains(r.Events, "TIMEOUT: CEO en la ronda 1") {
		t.Errorf("events %v lack the seed's TIMEOUT line", r.Events)
	}
	l := r.DebateLog().DebateLog.Rodadas[0]
	if len(l.AgentesTimeout) != 1 || len(l.AgentesResponderam) != 2 {
		t.Errorf("log round %+v", l)
	}
}

// TestE2ERound3Retrieves: four roles, the budget of five queries counted
// per debate. Round 1's agents each use the tool (4), round 2's agents
// are offered the last query and do not use it, so round 3's first agent
// still retrieves: the engine reserved nothing, refused nothing, and the
// checklist finds the limit kept.
func TestE2ERound3Retrieves(t *testing.T) {
	stance := func(p string) Position {
		if p == "chro" || p == "cto" {
			return position("no avanzar", "90d", 70, cite(kbChunk))
		}
		return position("avanzar", "30d", 80, cite(kbChunk))
	}
	e, srv := newEngine(t, script{
		query: func(p string, round int) string {
			if round == 2 {
				return "" // the chunks held are enough
			}
			return "banda salarial de compensación"
		},
		position: func(p string, _ int) Position { return stance(p) },
		rebuttal: func(p string) Rebuttal {
			return Rebuttal{Agreements: []string{}, Divergences: []string{"La banda salarial justifica otra decisión " + cite(kbChunk)}, BlindSpots: []string{}, KeepsPosition: KeepYes, Stance: stance(p)}
		},
		vote: func(p string) Vote {
			return Vote{Vote: "avanzar", Confidence: 70, Rationale: "Evidencia " + cite(kbChunk), Premises: []string{cite(kbChunk)}}
		},
	})
	r, err := e.Run(context.Background(), question(t, "", "cfo", "chro", "ceo", "cto"))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rounds) != 3 {
		t.Fatalf("%d rounds, want 3", len(r.Rounds))
	}
	byRound := map[int][]string{}
	for _, c := range srv.Calls() {
		if c.Schema == SchemaRAGQuery {
			round, _ := strconv.Atoi(roundRE.FindStringSubmatch(c.User())[1])
			byRound[round] = append(byRound[round], participantOf(c))
		}
	}
	if len(byRound[1]) != 4 || len(byRound[2]) != 4 || len(byRound[3]) != 1 || byRound[3][0] != "cfo" {
		t.Errorf("tool offered by round %v, want all four in rounds 1-2 and the first of the roster in round 3", byRound)
	}
	if r.RAG.Total != 5 || r.RAG.Succeeded != 5 || r.RAG.Refused != 0 {
		t.Errorf("rag %+v, want 5 queries, none refused", r.RAG)
	}
	if c := checkOf(t, r.Checklists, "¿Consultas RAG"); !c.OK {
		t.Errorf("the checklist flags the RAG limit: %s", c.Note)
	}
	for _, ev := range r.Events {
		if strings.Contains(ev, "RAG") {
			t.Errorf("event %q: no query was refused or lost", ev)
		}
	}
}

func TestE2EInventedCitationRejected(t *testing.T) {
	var mu sync.Mutex
	asked := map[string]int{}
	e, srv := newEngine(t, script{position: func(p string, _ int) Position {
		mu.Lock()
		defer mu.Unlock()
		asked[p]++
		if p == "cfo" && asked[p] == 1 {
			return position("avanzar", "30d", 80, cite("invented_999"))
		}
		return position("avanzar", "30d", 80, cite(kbChunk))
	}})
	r, err := e.Run(context.Background(), question(t, "", "cfo", "chro"))
	if err != nil {
		t.Fatal(err)
	}
	var reask *llmtest.Call
	for _, c := range srv.Calls() {
		if c.Schema == SchemaPosition && participantOf(c) == "cfo" && len(c.Messages) == 4 {
			reask = &c
		}
	}
	if reask == nil || !strings.Contains(reask.Messages[3].Content, "invented_999") {
		t.Fatal("the invented citation was not carried back in a re-ask")
	}
	if contains(r.Cited, "invented_999") || r.Rounds[0].Answers[0].Position.Premises[0] != cite(kbChunk) {
		t.Errorf("the invented citation survived: %v", r.Cited)
	}

	// Invented twice: the agent's answer is rejected, not used.
	e2, _ := newEngine(t, script{position: func(p string, _ int) Position {
		if p == "cfo" {
			return position("no avanzar", "30d", 80, cite("invented_999"))
		}
		return position("avanzar", "30d", 80, cite(kbChunk))
	}})
	r2, err := e2.Run(context.Background(), question(t, "", "cfo", "chro", "ceo"))
	if err != nil {
		t.Fatal(err)
	}
	if rd := r2.Rounds[0]; !contains(rd.Invalid, "cfo") || rd.Answers[0].Position != nil {
		t.Errorf("invalid %v, cfo position %v", rd.Invalid, rd.Answers[0].Position)
	}
}

func TestE2EProviderFailureFailsTheDebate(t *testing.T) {
	srv := llmtest.NewServer(t, func(llmtest.Call) llmtest.Reply { return llmtest.Reply{Status: 401} })
	client, err := llm.NewOpenAI(llm.OpenAIConfig{APIKey: "k", BaseURL: srv.BaseURL(), Model: "m", MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	e := &Engine{Agents: LLMAgents{Client: client}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	_, err = e.Run(context.Background(), question(t, "", "cfo", "chro"))
	var pe *llm.ProviderError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want a ProviderError", err)
	}
}

func TestE2ETooLongAnswerIsReasked(t *testing.T) {
	var mu sync.Mutex
	n := 0
	e, srv := newEngine(t, script{position: func(p string, _ int) Position {
		mu.Lock()
		defer mu.Unlock()
		pos := position("avanzar", "30d", 80, cite(kbChunk))
		if p == "cfo" && n == 0 {
			n++
			pos.Reasoning = strings.Repeat("muy largo ", 300)
		}
		return pos
	}})
	r, err := e.Run(context.Background(), question(t, "", "cfo", "chro"))
	if err != nil {
		t.Fatal(err)
	}
	reasked := false
	for _, c := range srv.Calls() {
		if len(c.Messages) == 4 && strings.Contains(c.Messages[3].Content, "reasoning has 3000 characters") {
			reasked = true
		}
	}
	if !reasked || len(r.Rounds[0].Answers[0].Position.Reasoning) > MaxTextChars {
		t.Errorf("an answer over the bounds was not re-asked (reasked %v)", reasked)
	}
}
