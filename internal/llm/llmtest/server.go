// Package llmtest provides an OpenAI-compatible HTTP server for tests: each
// chat completion is answered by a script, so tests drive agents, retries and
// re-asks, and the chat's tool calls and streams, through the real OpenAI
// adapters.
package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Message is one chat message of a captured call.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// ToolCallID is set on a tool result message; ToolCalls on an
	// assistant message that called tools.
	ToolCallID string     `json:"tool_call_id,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
}

// Call is a chat-completion request as the server received it.
type Call struct {
	N          int // 1-based, in arrival order
	Model      string
	Schema     string // response_format.json_schema.name
	Strict     bool
	JSONSchema json.RawMessage
	Messages   []Message
	// Tools are the tools the request offered (name, description and
	// parameters as sent).
	Tools []Tool
	// Stream is set when the request asked for a streamed answer; the
	// server then sends the reply as Server-Sent Events chunks (see
	// serveStream).
	Stream bool
	// MaxCompletionTokens is the request's bound on the answer.
	MaxCompletionTokens int
	// RemoteAddr is the client's end of the connection the call came on.
	RemoteAddr string
	// At is when the call arrived.
	At time.Time
}

// User returns the content of the first user message.
func (c Call) User() string {
	for _, m := range c.Messages {
		if m.Role == "user" {
			return m.Content
		}
	}
	return ""
}

// System returns the content of the system message.
func (c Call) System() string {
	for _, m := range c.Messages {
		if m.Role == "system" {
			return m.Content
		}
	}
	return ""
}

// Reply scripts the answer to one call.
type Reply struct {
	Status int // HTTP status; 0 means 200
	// RetryAfter, when set, is sent as the Retry-After header of a failure.
	RetryAfter       string
	Content          string
	PromptTokens     int
	CachedTokens     int
	CompletionTokens int
	Delay            time.Duration
	// ToolCalls, when set, are the assistant's tool calls (finish_reason
	// "tool_calls"); Content may then be empty.
	ToolCalls []ToolCall
	// Truncated answers with finish_reason "length": Content was cut off at
	// the request's bound.
	Truncated bool
}

// ToolCall is one function call of an assistant message.
type ToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// NewToolCall builds a function call with arguments args (encoded as JSON
// unless already a string).
func NewToolCall(id, name string, args any) ToolCall {
	c := ToolCall{ID: id, Type: "function"}
	c.Function.Name = name
	if s, ok := args.(string); ok {
		c.Function.Arguments = s
	} else {
		b, _ := json.Marshal(args)
		c.Function.Arguments = string(b)
	}
	return c
}

// Tool is one tool a request offered.
type Tool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
		Strict      bool            `json:"strict"`
	} `json:"function"`
}

// ToolNames lists the names of the tools a call offered.
func (c Call) ToolNames() []string {
	var out []string
	for _, t := range c.Tools {
		out = append(out, t.Function.Name)
	}
	return out
}

// Last returns the call's last message.
func (c Call) Last() Message {
	if len(c.Messages) == 0 {
		return Message{}
	}
	return c.Messages[len(c.Messages)-1]
}

// Server is a scripted OpenAI-compatible endpoint.
type Server struct {
	*httptest.Server
	mu      sync.Mutex
	calls   []Call
	respond func(Call) Reply
}

// NewServer starts a server on 127.0.0.1 that answers with respond; it is
// closed when the test ends.
func NewServer(tb testing.TB, respond func(Call) Reply) *Server {
	tb.Helper()
	s := &Server{respond: respond}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	tb.Cleanup(s.Close)
	return s
}

// URL is the base URL to configure as OPENAI_BASE_URL.
func (s *Server) BaseURL() string { return s.Server.URL + "/v1" }

// Calls returns the calls received so far.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

type chatRequest struct {
	Model          string    `json:"model"`
	Messages       []Message `json:"messages"`
	Tools          []Tool    `json:"tools"`
	Stream         bool      `json:"stream"`
	MaxCompletion  int       `json:"max_completion_tokens"`
	ResponseFormat *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
			Strict bool            `json:"strict"`
		} `json:"json_schema"`
	} `json:"response_format"`
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	var req chatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad json","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	c := Call{N: len(s.calls) + 1, Model: req.Model, Messages: req.Messages, Tools: req.Tools, Stream: req.Stream, MaxCompletionTokens: req.MaxCompletion,
		RemoteAddr: r.RemoteAddr, At: time.Now()}
	if rf := req.ResponseFormat; rf != nil && rf.JSONSchema != nil {
		c.Schema, c.Strict, c.JSONSchema = rf.JSONSchema.Name, rf.JSONSchema.Strict, rf.JSONSchema.Schema
	}
	s.calls = append(s.calls, c)
	s.mu.Unlock()

	rep := s.respond(c)
	if rep.Delay > 0 {
		select {
		case <-time.After(rep.Delay):
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if rep.Status != 0 && rep.Status != http.StatusOK {
		if rep.RetryAfter != "" {
			w.Header().Set("Retry-After", rep.RetryAfter)
		}
		w.WriteHeader(rep.Status)
		fmt.Fprintf(w, `{"error":{"message":"scripted failure %d","type":"server_error"}}`, rep.Status)
		return
	}
	if req.Stream {
		serveStream(w, c, rep)
		return
	}
	message := map[string]any{"role": "assistant", "content": rep.Content}
	finish := "stop"
	if len(rep.ToolCalls) > 0 {
		message["tool_calls"], finish = rep.ToolCalls, "tool_calls"
	}
	if rep.Truncated {
		finish = "length"
	}
	resp := map[string]any{
		"id":      fmt.Sprintf("chatcmpl-%d", c.N),
		"object":  "chat.completion",
		"created": 0,
		"model":   req.Model,
		"choices": []any{map[string]any{
			"index":         0,
			"finish_reason": finish,
			"message":       message,
		}},
		"usage": map[string]any{
			"prompt_tokens":         rep.PromptTokens,
			"completion_tokens":     rep.CompletionTokens,
			"total_tokens":          rep.PromptTokens + rep.CompletionTokens,
			"prompt_tokens_details": map[string]any{"cached_tokens": rep.CachedTokens},
		},
	}
	_ = json.NewEncoder(w).Encode(resp)
}

// serveStream answers a streamed request as OpenAI does: one chunk per
// word of the content, then each tool call in two chunks (its id and name
// with the first half of the arguments, then the rest), a last chunk with
// the finish reason, and "data: [DONE]".
func serveStream(w http.ResponseWriter, c Call, rep Reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	flusher, _ := w.(http.Flusher)
	send := func(delta map[string]any, finish any) {
		chunk := map[string]any{"id": fmt.Sprintf("chatcmpl-%d", c.N), "object": "chat.completion.chunk", "created": 0, "model": c.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
		b, _ := json.Marshal(chunk)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	send(map[string]any{"role": "assistant", "content": ""}, nil)
	for rest := rep.Content; rest != ""; {
		i := strings.IndexByte(rest, ' ') + 1
		if i == 0 {
			i = len(rest)
		}
		send(map[string]any{"content": rest[:i]}, nil)
		rest = rest[i:]
	}
	for i, tc := range rep.ToolCalls {
		args := tc.Function.Arguments
		half := len(args) / 2
		send(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": tc.ID, "type": "function",
			"function": map[string]any{"name": tc.Function.Name, "arguments": args[:half]}}}}, nil)
		send(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": args[half:]}}}}, nil)
	}
	finish := "stop"
	if len(rep.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	if rep.Truncated {
		finish = "length"
	}
	send(map[string]any{}, finish)
	fmt.Fprint(w, "data: [DONE]\n\n")
}
