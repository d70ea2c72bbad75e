package llm_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/llm"
	"github.com/veredicto/veredicto/internal/llm/llmtest"
)

// closedPort is an address on this machine where nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestUnreachableProviderFailsAtOnce: a wrong OPENAI_BASE_URL (nothing
// listens) fails the first call at once, with no retries, naming the
// address and the fix; it is the provider's error, which no Retry repeats.
func TestUnreachableProviderFailsAtOnce(t *testing.T) {
	url := "http://" + closedPort(t) + "/v1"
	c, err := llm.NewOpenAI(llm.OpenAIConfig{APIKey: "k", BaseURL: url, Model: "gpt-4o-mini", Backoff: time.Second, MaxAttempts: 4})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = c.Complete(context.Background(), llm.Request{Schema: "s", JSONSchema: []byte(`{"type":"object"}`), System: "x", User: "y"})
	took := time.Since(start)
	var ue *llm.UnreachableError
	if !errors.As(err, &ue) || veredicto.ErrorName(err) != llm.NameProvider {
		t.Fatalf("error %v (%s), want a ProviderError naming the unreachable provider", err, veredicto.ErrorName(err))
	}
	for _, want := range []string{url, "connection refused", "OPENAI_BASE_URL", "veredicto doctor"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if took > 900*time.Millisecond {
		t.Errorf("took %v: a refused connection is not retried (the backoff is 1 s)", took)
	}
}

// TestProviderThatAnsweredIsRetried: once the provider has answered, a
// refused connection is an outage: retried, then transient.
func TestProviderThatAnsweredIsRetried(t *testing.T) {
	srv := llmtest.NewServer(t, func(llmtest.Call) llmtest.Reply { return llmtest.Reply{Content: `{}`} })
	c, err := llm.NewOpenAI(llm.OpenAIConfig{APIKey: "k", BaseURL: srv.BaseURL(), Model: "gpt-4o-mini", Backoff: time.Millisecond, MaxAttempts: 3})
	if err != nil {
		t.Fatal(err)
	}
	req := llm.Request{Schema: "s", JSONSchema: []byte(`{"type":"object"}`), System: "x", User: "y"}
	if _, err := c.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	srv.Close()
	_, err = c.Complete(context.Background(), req)
	var te *veredicto.TransientError
	if !errors.As(err, &te) || errors.As(err, new(*llm.UnreachableError)) {
		t.Errorf("after an answer, a refused connection: %v, want a TransientError after the retries", err)
	}
}
