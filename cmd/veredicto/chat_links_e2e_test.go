package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/chat"
	"github.com/veredicto/veredicto/internal/poll"
)

// TestServeChatFollowsItsWorkflows is issue 32's chat bug end to end: a
// search started from a conversation on "veredicto serve" (its background
// work started, as the command does) reports back to it. Its progress and
// its senior review — with the confirmation's id, decided from the chat by
// the authenticated consultant — reach the conversation's stream, and the
// chat says in Spanish when it ends, with where the report is. Another
// tenant's conversation of the same name sees none of it.
func TestServeChatFollowsItsWorkflows(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, model := scriptedChatModel(t)
	l, srv := startChatServer(ctx, t, model, chat.Options{ConfirmPoll: 20 * time.Millisecond})
	// What "veredicto serve" starts once it listens, the following of
	// the workflows conversations start included.
	t.Cleanup(srv.Start(ctx))
	acme, zeta := l.token(t, "acme", "ana"), l.token(t, "zeta", "zed")
	events := followChat(ctx, t, l, acme, "links")
	others := followChat(ctx, t, l, zeta, "links")

	b, _ := json.Marshal(map[string]string{"chat_id": "links", "message": "Lanza la evaluación de la búsqueda demo-cfo-andina"})
	if st, body := l.call(ctx, t, "POST", "/api/chat", acme, string(b)); st != http.StatusAccepted {
		t.Fatalf("POST /api/chat: %d %s", st, body)
	}
	var review map[string]any
	evs := events.until(t, func(m map[string]any) bool {
		if m["type"] == "pending-confirmation" && m["toolName"] == "senior_review" {
			review = m
		}
		return m["type"] == chat.TypeLinkedFinished
	})
	end := evs[len(evs)-1]
	msg := fmt.Sprint(end["message"])
	t.Logf("the chat says: %s", msg)
	if !strings.HasPrefix(msg, "Búsqueda demo-cfo-andina (desde el turno 1): terminó") || !strings.HasSuffix(msg, "Informe: /searches/demo-cfo-andina/summary") {
		t.Errorf("end message %q", msg)
	}
	linked, _ := end["linked"].(map[string]any)
	arn := fmt.Sprint(linked["execution"])
	if !strings.Contains(arn, ":execution:ExecutiveSearchStateMachine:") || end["turn"] != float64(1) {
		t.Errorf("end %v", end)
	}
	steps := 0
	for _, e := range evs {
		if lk, _ := e["linked"].(map[string]any); lk != nil && e["type"] == "execution-step" && lk["execution"] == arn {
			steps++
		}
	}
	if steps < 3 {
		t.Errorf("%d of the search's steps on the conversation's stream (events %s)", steps, typesOf(evs))
	}

	// The demo escalates c-005 to the senior consultant: the review is
	// on the conversation's stream with its id, and decided from there.
	if review == nil {
		t.Fatalf("no senior review on the conversation's stream (events %s)", typesOf(evs))
	}
	if end["outcome"] != chat.OutcomeEscalated || !strings.Contains(msg, "al consultor senior") {
		t.Errorf("outcome %v, message %q; want the search's escalation", end["outcome"], msg)
	}
	body := fmt.Sprintf(`{"id":%q,"approved":true,"comment":"visto en el chat"}`, review["id"])
	if st, b := l.call(ctx, t, "POST", "/api/confirmations", acme, body); st != http.StatusOK {
		t.Fatalf("decide the review from the chat: %d %s", st, b)
	}
	resolved := events.until(t, func(m map[string]any) bool { return m["type"] == "confirmation-resolved" && m["id"] == review["id"] })
	if r := resolved[len(resolved)-1]; r["decided_by"] != "ana" || r["status"] != "approved" {
		t.Errorf("the resolution on the chat's stream: %v", r)
	}

	// Nothing of it reached another tenant's conversation of the same
	// name.
	select {
	case m := <-others.ch:
		t.Errorf("another tenant's conversation received %v", m)
	case <-time.After(200 * time.Millisecond):
	}
	// The follower is gone: bounded by the execution's life.
	poll.Until(t, 5*time.Second, func() bool { return srv.Chat.Service.Links.Following() == 0 }, "no workflow followed any more")
}
