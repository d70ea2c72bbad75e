package debate

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/llm"
)

// benchClient is an llm.Client that answers from a script with no network
// and bills tokens as the prompts' size (≈ 4 characters a token), so the
// benchmark reports the real prompts' cost per route.
type benchClient struct {
	answer func(req llm.Request) any
}

func (c benchClient) Complete(_ context.Context, req llm.Request) (llm.Response, error) {
	b, err := json.Marshal(c.answer(req))
	if err != nil {
		return llm.Response{}, err
	}
	return llm.Response{Content: b, Usage: veredicto.Usage{Calls: 1,
		PromptTokens: (len(req.System) + len(req.User) + len(req.JSONSchema)) / 4, CompletionTokens: len(b) / 4}}, nil
}

func participantIn(user string) string {
	var p string
	fmt.Sscanf(user, "participant: %s", &p)
	return p
}

// BenchmarkDebateRoutes runs one debate per route through LLMAgents over
// the example knowledge base and reports calls and tokens per debate.
func BenchmarkDebateRoutes(b *testing.B) {
	chunks, err := LoadKnowledge("../../examples/debate/knowledge")
	if err != nil {
		b.Fatal(err)
	}
	ix := NewIndex(chunks)
	cite := "[RAG:" + chunks[0].ID + "]"
	agree := func(conf int) func(string, int) Position {
		return func(string, int) Position {
			return Position{Recommendation: "avanzar", Position: "Avanzar con la oferta.", Reasoning: "Según " + cite, Premises: []string{cite},
				Risks: []Risk{{Category: "financial", Description: "costo"}}, Timing: "30d", Confidence: conf, Limitations: []string{}}
		}
	}
	split := func(p string, _ int) Position {
		pos := agree(80)(p, 0)
		if p == "chro" {
			pos.Recommendation, pos.Timing, pos.Premises, pos.Risks = "no avanzar", "90d", []string{}, []Risk{{Category: "people", Description: "equipo"}}
		}
		return pos
	}
	routes := []struct {
		name     string
		extra    string
		parts    []string
		position func(string, int) Position
		follow   bool // the rebuttal adopts avanzar
		vote     int
	}{
		{"simple", "mode: simple\n", []string{"cfo"}, agree(80), false, 90},
		{"debate_round1", "", []string{"cfo", "chro", "ceo"}, agree(80), false, 90},
		{"debate_round2", "", []string{"cfo", "chro", "ceo"}, split, true, 90},
		{"loop_impasse_council", "", []string{"cfo", "chro", "ceo"}, split, false, 90},
		{"council_to_human", "irreversible: true\n", []string{"cfo", "chro", "ceo"}, agree(80), false, 40},
	}
	for _, rt := range routes {
		b.Run(rt.name, func(b *testing.B) {
			client := benchClient{answer: func(req llm.Request) any {
				p := participantIn(req.User)
				switch req.Schema {
				case SchemaRAGQuery:
					// The tool: a query that finds the chunk the answers cite.
					return RAGRequest{Query: string([]rune(chunks[0].Text)[:min(120, len([]rune(chunks[0].Text)))])}
				case SchemaPosition:
					return rt.position(p, 1)
				case SchemaRebuttal:
					st := rt.position(p, 2)
					if rt.follow {
						st = agree(75)(p, 2)
					}
					return Rebuttal{Agreements: []string{}, Divergences: []string{}, BlindSpots: []string{}, KeepsPosition: KeepYes, Stance: st}
				case SchemaSynthesis:
					return Synthesis{Summary: "El comité recomienda avanzar " + cite, Consensus: []string{}, Divergences: []string{}, Action: "Avanzar."}
				default:
					return Vote{Vote: "avanzar", Confidence: rt.vote, Rationale: "r", Premises: []string{}}
				}
			}}
			var calls, tokens int
			for i := 0; i < b.N; i++ {
				e := &Engine{Agents: LLMAgents{Client: client}, Retriever: IndexRetriever{ix}, Chunks: ix.Len(), OptionalCouncil: true, Logger: quiet()}
				y := "question: ¿Avanzamos con la oferta a c-005 por su compensación y referencias?\noptions: [avanzar, no avanzar]\nparticipants:\n"
				for _, p := range rt.parts {
					y += "  - {id: " + p + ", brief: Rol " + p + " del comité}\n"
				}
				q, err := ParseQuestion("q.yaml", []byte(y+rt.extra))
				if err != nil {
					b.Fatal(err)
				}
				r, err := e.Run(context.Background(), q)
				if err != nil {
					b.Fatal(err)
				}
				calls, tokens = r.Usage.Calls, r.Usage.PromptTokens+r.Usage.CompletionTokens
			}
			b.ReportMetric(float64(calls), "calls/debate")
			b.ReportMetric(float64(tokens), "tokens/debate")
		})
	}
}

// BenchmarkEngineRound is the engine's own cost per round (routing, RAG,
// goroutines and timeouts, convergence, hashing, breaker, synthesis and
// report), with agents that answer at once: a 3-round debate of 4 agents
// that never converges, per round.
func BenchmarkEngineRound(b *testing.B) {
	chunks, err := LoadKnowledge("../../examples/debate/knowledge")
	if err != nil {
		b.Fatal(err)
	}
	ix := NewIndex(chunks)
	y := "question: ¿Avanzamos con la oferta a c-005?\noptions: [avanzar, no avanzar]\nparticipants:\n" +
		"  - {id: cfo, brief: a}\n  - {id: chro, brief: b}\n  - {id: ceo, brief: c}\n  - {id: cs, brief: d}\n"
	q, err := ParseQuestion("q.yaml", []byte(y))
	if err != nil {
		b.Fatal(err)
	}
	f := &funcAgents{position: func(ctx context.Context, in PositionInput) (Position, error) {
		rec, timing := "avanzar", "30d"
		if in.Participant.ID == "chro" || in.Participant.ID == "cs" {
			rec, timing = "no avanzar", "90d"
		}
		return Position{Recommendation: rec, Timing: timing, Confidence: 50 + in.Round, Position: "p"}, nil
	}}
	e := &Engine{Agents: f, Retriever: IndexRetriever{ix}, Chunks: ix.Len(), Logger: quiet()}
	b.ResetTimer()
	rounds := 0
	for i := 0; i < b.N; i++ {
		f.calls = f.calls[:0]
		r, err := e.Run(context.Background(), q)
		if err != nil {
			b.Fatal(err)
		}
		_ = r.Markdown()
		rounds += len(r.Rounds)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rounds), "ns/round")
}
