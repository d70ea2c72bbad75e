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
// workflows the conversation started said — their start, what went wrong
// and their end, in Spanish; each state's progress is left to the
// console — and skips an earlier turn's events replayed on connect.
func TestChatShowsItsWorkflows(t *testing.T) {
	var out bytes.Buffer
	c := &chatClient{out: &out, events: make(chan map[string]any, 16)}
	lk := map[string]any{"id": "l1", "kind": "search", "subject": "demo-cfo-andina", "execution": "arn:x"}
	c.events <- map[string]any{"type": "text-delta", "turn": float64(1), "delta": "ya dicho"}
	c.events <- map[string]any{"type": "execution-step", "turn": float64(1), "linked": lk, "step": map[string]any{"agent": "execution", "action": "started", "content": "Ejecución comenzó"}}
	c.events <- map[string]any{"type": "execution-step", "turn": float64(1), "linked": lk, "step": map[string]any{"agent": "Gem1", "action": "finished", "content": "GEM1 terminó"}}
	c.events <- map[string]any{"type": "execution-step", "turn": float64(1), "linked": lk, "step": map[string]any{"agent": "Gem2", "action": "retried", "content": "GEM2 se reintentó (intento 2)"}}
	c.events <- map[string]any{"type": chat.TypeLinkedFinished, "turn": float64(1), "linked": lk,
		"message": "Búsqueda demo-cfo-andina (desde el turno 1): terminó. Informe: /searches/demo-cfo-andina/summary"}
	if err := c.drainLinked(context.Background(), bufio.NewScanner(strings.NewReader(""))); err != nil {
		t.Fatal(err)
	}
	want := "  · Búsqueda demo-cfo-andina: Ejecución comenzó\n  · Búsqueda demo-cfo-andina: GEM2 se reintentó (intento 2)\n[aviso] Búsqueda demo-cfo-andina (desde el turno 1): terminó. Informe: /searches/demo-cfo-andina/summary\n"
	if got := out.String(); got != want {
		t.Errorf("shown:\n%s\nwant:\n%s", got, want)
	}
}
