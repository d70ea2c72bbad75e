package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/chat"
)

// TestChatTerminalFeedback: the terminal client asks «¿Faltó delegar?»
// after a turn that delegated nothing and «¿Era esto lo que pedías?» after
// a delegation; the answers (with the agent chosen by number) reach the
// server as the tenant's labelled examples, counted in the metrics; a
// line that is not an answer is the next message.
func TestChatTerminalFeedback(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l := startLiveChat(ctx, t, nil, chat.Options{ConfirmPoll: 20 * time.Millisecond})
	tok := l.token(t, "acme", "ana")
	stdin := strings.Join([]string{
		"Contrástame a las dos finalistas", // offline, keywords: not delegated
		"s",                                // ¿Faltó delegar? sí
		"1",                                // → the first specialist, the analyst
		"Lanza la evaluación de la búsqueda demo-cfo-andina", // delegated to the analyst
		"n",                 // ¿Era esto lo que pedías? no
		"0",                 // → nobody
		"Hola, ¿qué tal?",   // not delegated
		"Gracias, nada más", // not an answer: the next message
		"",                  // ¿Faltó delegar? skipped
		"/exit",
	}, "\n") + "\n"
	code, out, errOut := runCLI(t, stdin, "chat", "--endpoint", l.base, "--token", tok, "--chat", "fb1", "--turn-timeout", "30s")
	if code != exitOK {
		t.Fatalf("chat: exit %d: %s\n%s", code, errOut, out)
	}
	for _, want := range []string{"¿Faltó delegar? [s/n, Enter para seguir]: ", "1) analista de búsqueda (search-analyst)",
		"¿Era esto lo que pedías? [s/n, Enter para seguir]: ", "0) a nadie", "[gracias: anotado]"} {
		if !strings.Contains(out, want) {
			t.Errorf("the terminal does not show %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "[gracias: anotado]"); n != 2 {
		t.Errorf("%d answers recorded, want 2:\n%s", n, out)
	}
	_, body := l.call(ctx, t, "GET", "/api/chat/metrics", tok, "")
	var m chat.Metrics
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatal(err)
	}
	if m.Turns != 4 || m.Feedback != (chat.FeedbackCounters{Examples: 2, MissedYes: 1, RightNo: 1}) {
		t.Errorf("metrics: %d turns, feedback %+v; want 4 turns, one missed yes and one right no", m.Turns, m.Feedback)
	}
	if a := m.Agents["search-analyst"]; a.FeedbackMissed != 1 || a.FeedbackWrong != 1 {
		t.Errorf("analyst counters %+v, want one missed and one wrong", a)
	}
}

// TestChatRecalibrateCLI: answers given through the API make a tenant
// due; "veredicto chat recalibrate" refits on the embedded corpus and
// those answers, promotes the model (the tenant was on the keywords),
// writes it where serve reads it, and the decision shows in the metrics.
func TestChatRecalibrateCLI(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l := startLiveChat(ctx, t, nil, chat.Options{ConfirmPoll: 20 * time.Millisecond})
	tok := l.token(t, "acme", "ana")
	stdin := "Contrástame a las dos finalistas\ns\n1\n/exit\n"
	if code, out, errOut := runCLI(t, stdin, "chat", "--endpoint", l.base, "--token", tok, "--chat", "rc1", "--turn-timeout", "30s"); code != exitOK {
		t.Fatalf("chat: exit %d: %s\n%s", code, errOut, out)
	}
	code, out, errOut := runCLI(t, "", "chat", "recalibrate", "--tenant", "acme", "--data", l.data)
	if code != exitOK {
		t.Fatalf("recalibrate: exit %d: %s", code, errOut)
	}
	var rec chat.Recalibration
	if err := json.Unmarshal([]byte(out), &rec); err != nil {
		t.Fatalf("recalibrate printed %q: %v", out, err)
	}
	if !rec.Promoted || rec.Current != "keywords" || rec.Newest.Requests != 1 || rec.Heldout.Candidate.F1 <= rec.Heldout.Current.F1 {
		t.Errorf("decision = %+v; want promoted over the keywords, judged on the one answer", rec)
	}
	if _, err := os.Stat(filepath.Join(l.data, "reports", "chat", "models", "acme", "model.json")); err != nil {
		t.Errorf("the promoted model is not where serve reads it: %v", err)
	}
	_, body := l.call(ctx, t, "GET", "/api/chat/metrics", tok, "")
	var m chat.Metrics
	if err := json.Unmarshal([]byte(body), &m); err != nil || m.Recalibration == nil || m.Recalibration.Candidate != rec.Candidate {
		t.Errorf("metrics' recalibration = %+v (%v)", m.Recalibration, err)
	}
	if code, _, errOut := runCLI(t, "", "chat", "recalibrate", "--data", l.data); code != exitUsage || !strings.Contains(errOut, "--tenant is required") {
		t.Errorf("without --tenant: exit %d, %q", code, errOut)
	}
}
