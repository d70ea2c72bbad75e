package main

import (
	"bufio"
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/veredicto/veredicto/internal/chat"
)

// TestChatShowsItsWorkflows: between turns, the chat shows what the
// workflows the conversation started said — their progress and their
// end, in Spanish — and skips an earlier turn's events replayed on
// connect.
func TestChatShowsItsWorkflows(t *testing.T) {
	var out bytes.Buffer
	c := &chatClient{out: &out, events: make(chan map[string]any, 8)}
	lk := map[string]any{"id": "l1", "kind": "search", "subject": "demo-cfo-andina", "execution": "arn:x"}
	c.events <- map[string]any{"type": "text-delta", "turn": float64(1), "delta": "ya dicho"}
	c.events <- map[string]any{"type": "execution-step", "turn": float64(1), "linked": lk, "step": map[string]any{"agent": "Gem1", "content": "GEM1 terminó"}}
	c.events <- map[string]any{"type": chat.TypeLinkedFinished, "turn": float64(1), "linked": lk,
		"message": "Búsqueda demo-cfo-andina (desde el turno 1): terminó. Informe: /searches/demo-cfo-andina/summary"}
	if err := c.drainLinked(context.Background(), bufio.NewScanner(strings.NewReader(""))); err != nil {
		t.Fatal(err)
	}
	want := "  · Búsqueda demo-cfo-andina: GEM1 terminó\n[aviso] Búsqueda demo-cfo-andina (desde el turno 1): terminó. Informe: /searches/demo-cfo-andina/summary\n"
	if got := out.String(); got != want {
		t.Errorf("shown:\n%s\nwant:\n%s", got, want)
	}
}
