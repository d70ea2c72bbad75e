package chat

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/llm/llmtest"
)

// TestOpenAIModelToolCalls runs a whole delegated turn through the adapter
// against the scripted OpenAI-compatible server: the tools are offered
// with strict schemas, the tool call is executed, and its result goes back
// as a tool message with the call's id.
func TestOpenAIModelToolCalls(t *testing.T) {
	srv := llmtest.NewServer(t, func(c llmtest.Call) llmtest.Reply {
		if c.N == 1 {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{llmtest.NewToolCall("call_7", "delegate_to_search-analyst", map[string]any{
				"reason": "comparar informes", "request": "compara", "operation": "compare", "search_id": "cfo-2026",
				"candidate_ids": []string{"c-001", "c-006"}, "dimension": "deuda"})}}
		}
		return llmtest.Reply{Content: "Hecho: " + c.Last().ToolCallID}
	})
	m, err := NewOpenAIModel("k", srv.BaseURL(), "gpt-test")
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, m, Options{})
	res := r.turn(t, "oa", "Compara a c-001 con c-006 en deuda en la búsqueda cfo-2026")
	if res.Delegated != "search-analyst" || !strings.HasSuffix(res.Text, "Hecho: call_7") {
		t.Fatalf("turn = %+v", res)
	}
	calls := srv.Calls()
	if len(calls) != 2 {
		t.Fatalf("%d calls, want 2", len(calls))
	}
	if !calls[0].Stream {
		t.Error("the supervisor did not stream")
	}
	names := strings.Join(calls[0].ToolNames(), ",")
	if !strings.Contains(names, "delegate_to_debate") || strings.Contains(names, "delegate_to_veredicto") {
		t.Errorf("tools offered = %s", names)
	}
	for _, tool := range calls[0].Tools {
		if !tool.Function.Strict {
			t.Errorf("%s is not strict", tool.Function.Name)
		}
	}
	if !strings.Contains(calls[0].System(), "INTERNAL DELEGATION HINT") {
		t.Error("no hint at 0.9")
	}
	msgs := calls[1].Messages
	if a := msgs[len(msgs)-2]; a.Role != "assistant" || len(a.ToolCalls) != 1 || a.ToolCalls[0].ID != "call_7" {
		t.Errorf("assistant message = %+v", a)
	}
	if last := calls[1].Last(); last.Role != "tool" || last.ToolCallID != "call_7" || !strings.Contains(last.Content, "<<<") {
		t.Errorf("tool message = %+v", last)
	}
}

func TestOpenAIModelErrors(t *testing.T) {
	for _, tc := range []struct {
		status    int
		transient bool
	}{{http.StatusTooManyRequests, true}, {http.StatusInternalServerError, true}, {http.StatusBadRequest, false}} {
		srv := llmtest.NewServer(t, func(llmtest.Call) llmtest.Reply { return llmtest.Reply{Status: tc.status} })
		m, _ := NewOpenAIModel("k", srv.BaseURL(), "gpt-test")
		_, err := m.Next(context.Background(), Prompt{System: "s", Messages: []Message{{Role: "user", Content: "hola"}}})
		var te *veredicto.TransientError
		if err == nil || errors.As(err, &te) != tc.transient {
			t.Errorf("status %d: err = %v, want transient %v", tc.status, err, tc.transient)
		}
	}
}

// TestStreamedTextDeltas: a streamed answer reaches the stream as it
// arrives, in coalesced text-delta events whose concatenation is the text.
func TestStreamedTextDeltas(t *testing.T) {
	long := strings.Repeat("La terna está lista para revisión del cliente. ", 8)
	srv := llmtest.NewServer(t, func(llmtest.Call) llmtest.Reply { return llmtest.Reply{Content: long} })
	m, _ := NewOpenAIModel("k", srv.BaseURL(), "gpt-test")
	r := newRig(t, m, Options{})
	res := r.turn(t, "st", "hola")
	if res.Text != long {
		t.Fatalf("text = %q", res.Text)
	}
	var joined strings.Builder
	deltas := 0
	for _, e := range r.eventsOf(t, "st") {
		if e["type"] == TypeTextDelta {
			deltas++
			joined.WriteString(e["delta"].(string))
		}
	}
	words := len(strings.Fields(long))
	if joined.String() != long || deltas < 2 || deltas >= words {
		t.Errorf("%d deltas for %d streamed words (want coalesced, more than one); joined %q", deltas, words, joined.String())
	}
	for _, status := range []int{429, 400} {
		srv := llmtest.NewServer(t, func(llmtest.Call) llmtest.Reply { return llmtest.Reply{Status: status} })
		m, _ := NewOpenAIModel("k", srv.BaseURL(), "gpt-test")
		_, err := m.Stream(context.Background(), Prompt{Messages: []Message{{Role: "user", Content: "x"}}}, func(string) error { return nil })
		var te *veredicto.TransientError
		if err == nil || errors.As(err, &te) != (status == 429) {
			t.Errorf("stream status %d: %v", status, err)
		}
	}
}

// A reply is bounded; one the model was cut off in says so, streamed or not.
func TestCutOffRepliesSaySo(t *testing.T) {
	srv := llmtest.NewServer(t, func(llmtest.Call) llmtest.Reply {
		return llmtest.Reply{Content: "La terna está lista y la primera", Truncated: true}
	})
	m, _ := NewOpenAIModel("k", srv.BaseURL(), "gpt-test")
	p := Prompt{Messages: []Message{{Role: "user", Content: "x"}}}
	whole, err := m.Next(context.Background(), p)
	if err != nil || !strings.HasSuffix(whole.Content, CutOffNote) {
		t.Fatalf("Next = %q, %v", whole.Content, err)
	}
	var streamed strings.Builder
	rep, err := m.Stream(context.Background(), p, func(d string) error { streamed.WriteString(d); return nil })
	if err != nil || !strings.HasSuffix(rep.Content, CutOffNote) || streamed.String() != rep.Content {
		t.Fatalf("Stream = %q (streamed %q), %v", rep.Content, streamed.String(), err)
	}
	for _, c := range srv.Calls() {
		if c.MaxCompletionTokens != MaxReplyTokens {
			t.Errorf("call %d bounded at %d tokens, want %d", c.N, c.MaxCompletionTokens, MaxReplyTokens)
		}
	}
}

// TestStreamAsProvidersSendIt: a stream's comments, event names and blank
// lines carry nothing, one that ends without [DONE] is what came, and an
// error object inside it is the provider's refusal, not an outage.
func TestStreamAsProvidersSendIt(t *testing.T) {
	for _, tc := range []struct {
		name, body, text string
		refused          bool
	}{
		{"comments and events", ": keep-alive\n\nevent: message\ndata: {\"choices\":[{\"delta\":{\"content\":\"Ho\"}}]}\n\n" +
			"data:{\"choices\":[{\"delta\":{\"content\":\"la\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n", "Hola", false},
		{"no [DONE]", "data: {\"choices\":[{\"delta\":{\"content\":\"Hola\"}}]}\n\n", "Hola", false},
		{"an error inside", "data: {\"choices\":[{\"delta\":{\"content\":\"Ho\"}}]}\n\ndata: {\"error\":{\"message\":\"Ana Pérez, CV: context length exceeded\",\"code\":\"context_length_exceeded\"}}\n\n", "", true},
		{"an error on a line of its own", "{\"error\":{\"message\":\"Ana Pérez, CV: context length exceeded\",\"type\":\"invalid_request_error\",\"code\":\"context_length_exceeded\"}}\n", "", true},
		{"a chunk that is not JSON", "data: <html>\n\n", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var req struct {
					Stream bool `json:"stream"`
				}
				if json.NewDecoder(r.Body).Decode(&req) != nil || !req.Stream || r.Header.Get("Accept") != "text/event-stream" {
					t.Errorf("not a streamed request: stream %v, Accept %q", req.Stream, r.Header.Get("Accept"))
				}
				w.Header().Set("Content-Type", "text/event-stream")
				w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			m, _ := NewOpenAIModel("k", srv.URL, "gpt-test")
			var got strings.Builder
			rep, err := m.Stream(context.Background(), Prompt{Messages: []Message{{Role: "user", Content: "x"}}}, func(d string) error { got.WriteString(d); return nil })
			var te *veredicto.TransientError
			switch {
			case tc.refused && (err == nil || errors.As(err, &te) || strings.Contains(err.Error(), "Ana Pérez")):
				t.Errorf("got %v; want the provider's refusal, not transient, without its message (it may quote the conversation)", err)
			case tc.refused && strings.Contains(tc.body, "context_length_exceeded") && !strings.Contains(err.Error(), "context_length_exceeded"):
				t.Errorf("got %v; want the error's code named", err)
			case !tc.refused && (err != nil || rep.Content != tc.text || got.String() != tc.text):
				t.Errorf("got %q (streamed %q), %v; want %q", rep.Content, got.String(), err, tc.text)
			}
		})
	}
}

// TestAnAnswerThatIsNotJSONIsTheProviders: a 200 whose body is not a chat
// completion (a proxy's HTML page) fails the turn as the provider's, not as
// an outage the queue would deliver again, model call and all.
func TestAnAnswerThatIsNotJSONIsTheProviders(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("<html>proxy</html>")) }))
	defer srv.Close()
	notTransient(t, srv.URL)
}

// notTransient fails t unless the model's call against url fails for a
// reason that is not an outage.
func notTransient(t *testing.T, url string) {
	t.Helper()
	m, _ := NewOpenAIModel("k", url, "gpt-test")
	_, err := m.Next(context.Background(), Prompt{Messages: []Message{{Role: "user", Content: "x"}}})
	var te *veredicto.TransientError
	if err == nil || errors.As(err, &te) {
		t.Errorf("err = %v; want a failure that is not transient", err)
	}
}

// streamOf streams a reply from a server that answers body.
func streamOf(t *testing.T, body string) (Reply, error) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte(body))
	}))
	defer srv.Close()
	m, _ := NewOpenAIModel("k", srv.URL, "gpt-test")
	return m.Stream(context.Background(), Prompt{Messages: []Message{{Role: "user", Content: "x"}}}, func(string) error { return nil })
}

// A 200 whose body is a pretty-printed error object (go-openai accumulated
// non-data lines and reported it) must not be an empty, successful reply.
func TestAStreamThatIsAnErrorObjectIsAnError(t *testing.T) {
	rep, err := streamOf(t, "{\n  \"error\": {\n    \"message\": \"Ana\",\n    \"type\": \"invalid_request_error\"\n  }\n}\n")
	var te *veredicto.TransientError
	if err == nil || errors.As(err, &te) || strings.Contains(err.Error(), "Ana") || !strings.Contains(err.Error(), "invalid_request_error") {
		t.Errorf("got reply %+v, %v; want the provider's error, its type named, its message left out", rep, err)
	}
	if _, err := streamOf(t, ""); err == nil || errors.As(err, &te) {
		t.Errorf("an empty stream: %v; want a failure that is not transient", err)
	}
}

// SSE: a data line with an empty value dispatches no event (heartbeat).
func TestAnEmptyEventIsAKeepAlive(t *testing.T) {
	rep, err := streamOf(t, "data:\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"Hola\"}}]}\n\ndata: [DONE]\n\n")
	if err != nil || rep.Content != "Hola" {
		t.Errorf("got %q, %v; want Hola", rep.Content, err)
	}
}

// A line over maxStreamLine is the provider's, not an outage.
func TestAStreamLineTooLongIsTheProviders(t *testing.T) {
	_, err := streamOf(t, "data: {\"choices\":[{\"delta\":{\"content\":\""+strings.Repeat("a", maxStreamLine+10)+"\"}}]}\n\n")
	var te *veredicto.TransientError
	if err == nil || errors.As(err, &te) {
		t.Errorf("err = %v; want a failure that is not transient", err)
	}
}

// An answer over maxAnswerBytes (read whole) is the provider's, not an outage.
func TestAnAnswerTooLargeIsTheProviders(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte(`{"choices":[{"message":{"content":"` + strings.Repeat("a", maxAnswerBytes) + `"}}]}`))
	}))
	defer srv.Close()
	notTransient(t, srv.URL)
}

// A first tool-call delta without "index" (some compatible servers).
func TestAToolCallWithoutIndexIsTheFirst(t *testing.T) {
	rep, err := streamOf(t, "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}}]}\n\ndata: [DONE]\n\n")
	if err != nil || len(rep.ToolCalls) != 1 {
		t.Errorf("got %+v, %v", rep, err)
	}
}

// A configuration error (certificate not trusted) is not an outage.
func TestAnUntrustedCertificateIsNotAnOutage(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer srv.Close()
	notTransient(t, srv.URL)
}
