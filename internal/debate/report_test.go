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
