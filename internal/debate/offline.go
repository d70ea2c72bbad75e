package debate

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/veredicto/veredicto"
)

// OfflineLabel marks every text the offline analyst writes.
const OfflineLabel = "[línea base offline]"

// Offline is the deterministic baseline of the four calls, with no
// network: positions come from the retrieved chunks and the participant's
// brief by fixed lexical rules, and every text says it is a baseline.
//
//   - recommendation: the option whose words occur most in the brief (each
//     twice) and the chunks; ties go to the earlier option.
//   - premises: the first three chunks received ([RAG:<chunk_id>]).
//   - risks: the categories whose cue words (RiskCues) occur in the brief
//     or the cited chunks; "other" when none does.
//   - timing: the first timing cue of the brief (TimingCues), else 30d.
//   - confidence: 40 + 10 per cited chunk, at most 70.
//   - rebuttal: an agent adopts the recommendation a strict majority of
//     the others holds (keeps_position Nao), else keeps its own (Sim).
//   - vote: the synthesis decision, with the synthesis confidence.
type Offline struct{}

// RiskCues are the offline analyst's words per risk category.
var RiskCues = map[string][]string{
	"financial":    {"costo", "coste", "salario", "presupuesto", "compensación", "bono", "brl", "usd", "financier", "dinero"},
	"legal":        {"legal", "contrato", "cláusula", "litigio", "demanda", "regulator", "cumplimiento"},
	"reputational": {"reputación", "reputacional", "prensa", "imagen", "marca", "escándalo"},
	"execution":    {"ejecución", "entrega", "implementación", "operación", "transición"},
	"people":       {"equipo", "cultura", "liderazgo", "retención", "personas", "clima"},
	"timing":       {"plazo", "urgente", "urgencia", "calendario", "demora", "retraso"},
}

// TimingCues map brief words to a timing, checked in this order.
var TimingCues = []struct{ Cue, Timing string }{
	{"inmediat", "immediate"}, {"urgente", "immediate"},
	{"30 días", "30d"}, {"un mes", "30d"},
	{"90 días", "90d"}, {"trimestre", "90d"},
	{"180 días", "180d"}, {"semestre", "180d"},
	{"próximo año", "later"}, {"largo plazo", "later"},
}

func countIn(tokens map[string]int, words []string) int {
	n := 0
	for _, w := range words {
		n += tokens[w]
	}
	return n
}

func tokenCounts(texts ...string) map[string]int {
	m := map[string]int{}
	for _, t := range texts {
		for _, w := range Tokens(t) {
			m[w]++
		}
	}
	return m
}

func offlinePosition(q Question, p Participant, chunks []Chunk) Position {
	var texts []string
	for _, c := range chunks {
		texts = append(texts, c.Text)
	}
	brief := tokenCounts(p.Brief)
	docs := tokenCounts(texts...)
	best, bestScore := q.Options[0], -1
	for _, o := range q.Options {
		ws := Tokens(o)
		s := 2*countIn(brief, ws) + countIn(docs, ws)
		if s > bestScore {
			best, bestScore = o, s
		}
	}
	var premises []string
	var cited []string
	for i, c := range chunks {
		if i == 3 {
			break
		}
		premises = append(premises, "[RAG:"+c.ID+"]")
		cited = append(cited, c.Text)
	}
	lower := strings.ToLower(p.Brief + " " + strings.Join(cited, " "))
	var risks []Risk
	for _, cat := range RiskCategories {
		for _, cue := range RiskCues[cat] {
			if strings.Contains(lower, cue) {
				risks = append(risks, Risk{Category: cat, Description: fmt.Sprintf("%s indicio léxico: %q", OfflineLabel, cue)})
				break
			}
		}
	}
	if len(risks) == 0 {
		risks = []Risk{{Category: "other", Description: OfflineLabel + " sin indicios léxicos de una categoría"}}
	}
	timing := "30d"
	lb := strings.ToLower(p.Brief)
	for _, tc := range TimingCues {
		if strings.Contains(lb, tc.Cue) {
			timing = tc.Timing
			break
		}
	}
	conf := 40 + 10*len(premises)
	if conf > 70 {
		conf = 70
	}
	reasoning := OfflineLabel + " posición derivada por reglas léxicas del cargo y de la evidencia recuperada"
	if len(premises) > 0 {
		reasoning += ": " + strings.Join(premises, ", ")
	}
	return Position{
		Recommendation: best,
		Position:       fmt.Sprintf("%s Como %s, recomiendo %q. No es un juicio de modelo.", OfflineLabel, p.ID, best),
		Reasoning:      reasoning,
		Premises:       premises,
		Risks:          risks,
		Timing:         timing,
		Confidence:     conf,
		Limitations:    []string{OfflineLabel + " posición calculada sin modelo de lenguaje: revisar con un modelo o una persona"},
	}
}

// Position is the baseline position. With the round's tool it first
// queries the knowledge base: the question and its brief (rounds 1-2), or
// the question and the open divergences (a refinement round).
func (Offline) Position(ctx context.Context, in PositionInput) (Position, veredicto.Usage, error) {
	if err := ctx.Err(); err != nil {
		return Position{}, veredicto.Usage{}, err
	}
	chunks := in.Chunks
	if in.Tool != nil {
		text := in.Question.Question + " " + in.Participant.Brief
		if len(in.Focus) > 0 {
			text = in.Question.Question + " " + strings.Join(in.Focus, " ")
		}
		got, _ := in.Tool.Query(ctx, text)
		chunks = mergeChunks(chunks, got)
	}
	return offlinePosition(in.Question, in.Participant, chunks), veredicto.Usage{}, nil
}

// Rebuttal is the baseline rebuttal: follow a strict majority of the others.
func (Offline) Rebuttal(ctx context.Context, in RebuttalInput) (Rebuttal, veredicto.Usage, error) {
	if err := ctx.Err(); err != nil {
		return Rebuttal{}, veredicto.Usage{}, err
	}
	count := map[string]int{}
	var agree, diverge []string
	for _, o := range in.Others {
		count[o.Position.Recommendation]++
		if o.Position.Recommendation == in.Own.Recommendation {
			agree = append(agree, fmt.Sprintf("%s %s también recomienda %q", OfflineLabel, o.Participant, o.Position.Recommendation))
		} else {
			diverge = append(diverge, fmt.Sprintf("%s %s recomienda %q", OfflineLabel, o.Participant, o.Position.Recommendation))
		}
	}
	stance := in.Own
	keeps := KeepYes
	for _, opt := range in.Question.Options {
		if opt != in.Own.Recommendation && 2*count[opt] > len(in.Others) {
			stance.Recommendation = opt
			stance.Position = fmt.Sprintf("%s Como %s, adopto %q, la posición de la mayoría de los demás.", OfflineLabel, in.Participant.ID, opt)
			keeps = KeepNo
		}
	}
	return Rebuttal{
		Agreements:    nonNil(agree),
		Divergences:   nonNil(diverge),
		BlindSpots:    []string{},
		KeepsPosition: keeps,
		Stance:        stance,
	}, veredicto.Usage{}, nil
}

// Synthesis is the code-written synthesis (also used when time ran out,
// and when no agent answered: then it says there is no proposal).
func (Offline) Synthesis(_ context.Context, in SynthesisInput) (Synthesis, veredicto.Usage, error) {
	if in.Decision == "" {
		return Synthesis{
			Summary: fmt.Sprintf("%s Ningún participante dio una respuesta válida: no hay propuesta de decisión. Decide una persona entre las opciones (%s).",
				OfflineLabel, strings.Join(in.Question.Options, "; ")),
			Consensus:   []string{},
			Divergences: nonNil(append([]string(nil), in.Divergences...)),
			Action:      fmt.Sprintf("%s una persona elige entre las opciones: sin propuesta del comité", OfflineLabel),
		}, veredicto.Usage{}, nil
	}
	by := map[string][]string{}
	for _, s := range in.Stances {
		by[s.Position.Recommendation] = append(by[s.Position.Recommendation], s.Participant)
	}
	var parts []string
	for opt, ids := range by {
		sort.Strings(ids)
		parts = append(parts, fmt.Sprintf("%q: %s", opt, strings.Join(ids, ", ")))
	}
	sort.Strings(parts)
	summary := fmt.Sprintf("%s Síntesis escrita por el código a partir de las posiciones finales (%s). Decisión por mayoría: %q, confianza %.1f%%.",
		OfflineLabel, strings.Join(parts, "; "), in.Decision, in.Confidence)
	if in.Impasse {
		summary += " IMPASSE: las posiciones se estabilizaron sin convergencia."
	}
	var consensus []string
	if ids := by[in.Decision]; len(ids) > 1 {
		consensus = append(consensus, fmt.Sprintf("%s recomiendan %q", strings.Join(ids, ", "), in.Decision))
	}
	return Synthesis{
		Summary:     summary,
		Consensus:   nonNil(consensus),
		Divergences: nonNil(append([]string(nil), in.Divergences...)),
		Action:      fmt.Sprintf("%s %s", in.Decision, OfflineLabel),
	}, veredicto.Usage{}, nil
}

// Vote is the baseline vote: the synthesis decision and confidence.
func (Offline) Vote(ctx context.Context, in VoteInput) (Vote, veredicto.Usage, error) {
	if err := ctx.Err(); err != nil {
		return Vote{}, veredicto.Usage{}, err
	}
	return Vote{
		Vote:       in.Decision,
		Confidence: int(in.Confidence + 0.5),
		Rationale:  fmt.Sprintf("%s %s sigue la decisión de la síntesis.", OfflineLabel, in.Member.ID),
		Premises:   []string{},
	}, veredicto.Usage{}, nil
}

func nonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}
