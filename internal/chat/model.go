package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/veredicto/veredicto"
)

// Message is one message of the supervisor's conversation.
type Message struct {
	Role       string     `json:"role"` // user, assistant or tool
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

// ToolCall is the model asking for one tool.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ToolSpec is a tool offered to the model.
type ToolSpec struct {
	Name        string
	Description string
	// Parameters is the arguments' strict JSON schema.
	Parameters json.RawMessage
}

// Prompt is one call of the supervisor model.
type Prompt struct {
	System   string
	Messages []Message
	Tools    []ToolSpec
}

// Reply is the model's answer: text, tool calls, or both.
type Reply struct {
	Content   string
	ToolCalls []ToolCall
	Usage     veredicto.Usage
}

// Model is the supervisor's port: one chat completion with tools.
type Model interface {
	Next(ctx context.Context, p Prompt) (Reply, error)
}

// OpenAIModel is the go-openai adapter of Model: any OpenAI-compatible
// endpoint with tool calling. Safe for concurrent use.
type OpenAIModel struct {
	client *openai.Client
	model  string
	// CallTimeout bounds one call (default 120 s); the caller's deadline
	// wins when sooner.
	CallTimeout time.Duration
}

var _ Model = (*OpenAIModel)(nil)

// NewOpenAIModel builds the adapter; baseURL empty means OpenAI.
func NewOpenAIModel(apiKey, baseURL, model string) (*OpenAIModel, error) {
	if apiKey == "" {
		return nil, errors.New("chat model: OPENAI_API_KEY is empty")
	}
	if model == "" {
		return nil, errors.New("chat model: no model configured (OPENAI_MODEL)")
	}
	cfg := openai.DefaultConfig(apiKey)
	if baseURL != "" {
		cfg.BaseURL = strings.TrimSuffix(baseURL, "/")
	}
	cfg.HTTPClient = &http.Client{}
	return &OpenAIModel{client: openai.NewClientWithConfig(cfg), model: model}, nil
}

// Next makes one completion. Rate limits and server errors come back as
// *veredicto.TransientError (the turn fails; the user may send again).
func (m *OpenAIModel) Next(ctx context.Context, p Prompt) (Reply, error) {
	msgs := []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleSystem, Content: p.System}}
	for _, x := range p.Messages {
		om := openai.ChatCompletionMessage{Role: x.Role, Content: x.Content, ToolCallID: x.ToolCallID}
		for _, c := range x.ToolCalls {
			om.ToolCalls = append(om.ToolCalls, openai.ToolCall{ID: c.ID, Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: c.Name, Arguments: string(c.Arguments)}})
		}
		msgs = append(msgs, om)
	}
	req := openai.ChatCompletionRequest{Model: m.model, Messages: msgs}
	for _, t := range p.Tools {
		req.Tools = append(req.Tools, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: t.Name, Description: t.Description, Parameters: json.RawMessage(t.Parameters), Strict: true}})
	}
	if len(req.Tools) > 0 {
		req.ParallelToolCalls = false
	}
	timeout := m.CallTimeout
	if timeout <= 0 {
		timeout = 120 * time.Second
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := m.client.CreateChatCompletion(cctx, req)
	if err != nil {
		var apiErr *openai.APIError
		if errors.As(err, &apiErr) && apiErr.HTTPStatusCode != http.StatusTooManyRequests && apiErr.HTTPStatusCode < 500 {
			return Reply{}, fmt.Errorf("chat model %s: %w", m.model, err)
		}
		return Reply{}, &veredicto.TransientError{Op: "chat model " + m.model, Err: err}
	}
	if len(resp.Choices) == 0 {
		return Reply{}, fmt.Errorf("chat model %s: the response has no choices", m.model)
	}
	msg := resp.Choices[0].Message
	out := Reply{Content: msg.Content, Usage: veredicto.Usage{Calls: 1, PromptTokens: resp.Usage.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens}}
	for _, c := range msg.ToolCalls {
		args := json.RawMessage(c.Function.Arguments)
		if !json.Valid(args) {
			args, _ = json.Marshal(c.Function.Arguments) // kept as a string: the tool rejects it
		}
		out.ToolCalls = append(out.ToolCalls, ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: args})
	}
	return out, nil
}
