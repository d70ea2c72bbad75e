package debate

import (
	"strings"
	"testing"
	"time"
)

func checkOf(t *testing.T, cs []Check, prefix string) Check {
	t.Helper()
	for _, c := range cs {
		if strings.HasPrefix(c.Item, prefix) {
			return c
		}
	}
	t.Fatalf("no check %q in %+v", prefix, cs)
	return Check{}
}

func TestChecklists(t *testing.T) {
	q := question(t, "", "cfo", "chro")
	start := time.Unix(0, 0)
	ok := &Result{SessionID: "s", Start: start, End: start.Add(time.Second), Question: q, Mode: ModeDebate,
		Rounds: []Round{{Number: 1, Convergence: 50, Answers: []Answer{{Participant: "cfo", TimedOut: true}, {Participant: "chro"}}},
			{Number: 2, Convergence: 75, Answers: []Answer{{Participant: "cfo"}, {Participant: "chro"}}}},
		Synthesis: Synthesis{Summary: "s"}, Target: TargetNone, Final: "avanzar", RAG: RAGStats{Total: 3}}
	cs := Checklists(ok, 4)
	if len(cs) != 16 {
		t.Fatalf("%d checks, want the seed's 6 + 5 + 5", len(cs))
	}
	for _, c := range cs {
		if !c.OK {
			t.Errorf("%s failed (%s) on a clean debate", c.Item, c.Note)
		}
	}

	bad := *ok
	bad.Rounds = []Round{{Number: 1, Convergence: 50, Answers: []Answer{{Participant: "cfo", TimedOut: true}}},
		{Number: 2, Convergence: 40, Answers: []Answer{{Participant: "cfo", TimedOut: true}}}}
	bad.Trip = &Trip{Trigger: TriggerLoop}
	bad.RAG = RAGStats{Total: 5, Refused: 1}
	bad.End = start.Add(301 * time.Second)
	bad.Target, bad.Final, bad.Pending = TargetHuman, "", true
	cs = Checklists(&bad, 0)
	for _, item := range []string{"¿Ningún agente en timeout prolongado?", "¿La convergencia progresa?", "¿Loop no detectado?",
		"¿Tiempo total", "¿Consultas RAG", "¿La decisión final es clara", "¿El RAG está disponible"} {
		if checkOf(t, cs, item).OK {
			t.Errorf("%s passed on a troubled debate", item)
		}
	}
	if !checkOf(t, cs, "¿La escalación").OK {
		t.Error("a pending human decision is an escalation that was made")
	}
}

// TestReportIsSpanish: the report of a debate that tripped the breaker
// reads in Spanish — the seed's Portuguese block translated, the log's
// codes (escalado_para, tipo, Sim/Nao) through their labels — and the
// breaker lists only the member in conflict. The log keeps the seed's
// keys and codes as data.
func TestReportIsSpanish(t *testing.T) {
	q := question(t, "", "cfo", "chro", "ceo")
	a := func(id, rec string) Answer { return Answer{Participant: id, Position: pos(rec, nil, nil, "30d", 60)} }
	start := time.Unix(0, 0)
	r := &Result{SessionID: "s", Start: start, End: start.Add(time.Second), Question: q, Mode: ModeDebate, ModeReason: "3 cargos",
		Rounds: []Round{
			{Number: 1, Kind: "posicoes_iniciais", Answers: []Answer{a("cfo", "avanzar"), a("chro", "avanzar"), a("ceo", "no avanzar")}},
			{Number: 2, Kind: "rebatidas", Answers: []Answer{a("cfo", "avanzar"), a("chro", "avanzar"), a("ceo", "no avanzar")},
				Rebuttals: map[string]*Rebuttal{"cfo": {KeepsPosition: KeepYes}, "chro": {KeepsPosition: KeepPartial}, "ceo": {KeepsPosition: KeepNo}}},
			{Number: 3, Kind: "refinamento", Answers: []Answer{a("cfo", "avanzar"), a("chro", "avanzar"), a("ceo", "no avanzar")}},
		},
		Trip:       Breaker(BreakerState{Rounds: 3, Iterations: 3, Refinements: 1}, q.Config),
		Synthesis:  Synthesis{Summary: "El comité recomienda avanzar.", Consensus: []string{"cfo, chro recomiendan avanzar"}, Divergences: []string{"recomendación — ceo: no avanzar"}},
		Escalation: Escalation{Target: TargetCouncil, Mandatory: true}, Target: TargetCouncil, Final: "avanzar", Decision: "avanzar",
		Events: []string{timeoutEvent("ceo", fase(1))}}
	md := r.Markdown()
	for _, want := range []string{"⚠️ DISYUNTOR ACTIVADO", "MOTIVO: rondas ≥ 3, el máximo", "RONDAS EJECUTADAS: 3 de 3",
		"ESTADO DEL DEBATE:", "• Consensos alcanzados: cfo, chro recomiendan avanzar", "• Divergencias no resueltas: recomendación — ceo: no avanzar",
		"• Agentes en conflicto: ceo\n", "ACCIÓN: Forzar la síntesis con las divergencias explícitas. Escalado a: el consejo de tres miembros",
		"Escalado a: el consejo de tres miembros", "### Ronda 1 (posiciones iniciales)", "### Ronda 2 (réplicas cruzadas)", "### Ronda 3 (refinamiento final)",
		"| Sí |", "| En parte |", "| No |", "TIMEOUT: CEO en la ronda 1", "debate (dos o más cargos): 3 cargos"} {
		if !strings.Contains(md, want) {
			t.Errorf("debate.md lacks %q", want)
		}
	}
	for _, pt := range []string{"ATIVADO", "RODADAS", "EXECUTADAS", "Escalando para", "NENHUM", "Divergencias nao", "alcancados", "conflito", " em ", "Sim", "Nao", "REDUZIDA", "Posicoes", "posicoes_iniciais", "rebatidas", "refinamento"} {
		if strings.Contains(md, pt) {
			t.Errorf("debate.md holds the Portuguese %q", pt)
		}
	}
	l := r.DebateLog().DebateLog
	if l.Resultado.EscaladoPara != "COUNCIL" || l.Rodadas[0].Tipo != "posicoes_iniciais" {
		t.Errorf("the log's codes changed: %+v", l.Resultado)
	}
}
