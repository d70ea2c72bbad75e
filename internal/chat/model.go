package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// StreamingModel is a Model that can also stream its reply's text: delta
// is called with each fragment as it arrives (the chat turns them into
// text-delta events); the returned Reply is the whole answer.
type StreamingModel interface {
	Model
	Stream(ctx context.Context, p Prompt, delta func(string) error) (Reply, error)
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

var _ StreamingModel = (*OpenAIModel)(nil)

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

// Name is "openai:<model>", recorded in every stored turn.
func (m *OpenAIModel) Name() string { return "openai:" + m.model }

// Next makes one completion. Rate limits and server errors come back as
// *veredicto.TransientError (the turn fails; the user may send again).
func (m *OpenAIModel) Next(ctx context.Context, p Prompt) (Reply, error) {
	req := m.request(p)
	timeout := m.CallTimeout
	if timeout <= 0 {
		timeout = 120 * time.Second
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := m.client.CreateChatCompletion(cctx, req)
	if err != nil {
		return Reply{}, m.fail(err)
	}
	if len(resp.Choices) == 0 {
		return Reply{}, fmt.Errorf("chat model %s: the response has no choices", m.model)
	}
	msg := resp.Choices[0].Message
	content := msg.Content
	if resp.Choices[0].FinishReason == openai.FinishReasonLength {
		content += CutOffNote
	}
	out := Reply{Content: content, Usage: veredicto.Usage{Calls: 1, PromptTokens: resp.Usage.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens}}
	for _, c := range msg.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: rawArgs(c.Function.Arguments)})
	}
	return out, nil
}

// rawArgs keeps a tool call's arguments as JSON; text that is not JSON is
// kept as a JSON string, which the tool's schema check then rejects.
func rawArgs(s string) json.RawMessage {
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}

// fail classifies a provider error: rate limits, server errors and
// network failures are transient.
func (m *OpenAIModel) fail(err error) error {
	var apiErr *openai.APIError
	if errors.As(err, &apiErr) && apiErr.HTTPStatusCode != http.StatusTooManyRequests && apiErr.HTTPStatusCode < 500 {
		return fmt.Errorf("chat model %s: %w", m.model, err)
	}
	var reqErr *openai.RequestError
	if errors.As(err, &reqErr) && reqErr.HTTPStatusCode != http.StatusTooManyRequests && reqErr.HTTPStatusCode < 500 {
		return fmt.Errorf("chat model %s: %w", m.model, err)
	}
	return &veredicto.TransientError{Op: "chat model " + m.model, Err: err}
}

// MaxStreamChunks bounds one streamed reply.
const MaxStreamChunks = 20000

// MaxReplyTokens bounds every reply of the model (about 16 KB of text): a
// reply is stored with its turn and shown whole.
const MaxReplyTokens = 4096

// CutOffNote ends a reply the model was cut off in at MaxReplyTokens, so
// that it is never shown as if whole.
const CutOffNote = "\n\n[Respuesta cortada: alcanzó el límite de longitud.]"

// Stream makes one streamed completion: text fragments go to delta as
// they arrive; tool calls are assembled from their fragments.
func (m *OpenAIModel) Stream(ctx context.Context, p Prompt, delta func(string) error) (Reply, error) {
	req := m.request(p)
	req.Stream = true
	timeout := m.CallTimeout
	if timeout <= 0 {
		timeout = 120 * time.Second
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	st, err := m.client.CreateChatCompletionStream(cctx, req)
	if err != nil {
		return Reply{}, m.fail(err)
	}
	defer st.Close()
	var (
		out    Reply
		text   strings.Builder
		calls  []*ToolCall
		args   []*strings.Builder
		cutOff bool
	)
	for n := 0; ; n++ {
		if n == MaxStreamChunks {
			return Reply{}, fmt.Errorf("chat model %s: the stream is over %d chunks", m.model, MaxStreamChunks)
		}
		chunk, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Reply{}, m.fail(err)
		}
		if chunk.Usage != nil {
			out.Usage = veredicto.Usage{Calls: 1, PromptTokens: chunk.Usage.PromptTokens, CompletionTokens: chunk.Usage.CompletionTokens}
		}
		if len(chunk.Choices) == 0 {
			continue
		}
		if chunk.Choices[0].FinishReason == openai.FinishReasonLength {
			cutOff = true
		}
		d := chunk.Choices[0].Delta
		if d.Content != "" {
			text.WriteString(d.Content)
			if err := delta(d.Content); err != nil {
				return Reply{}, err
			}
		}
		for _, tc := range d.ToolCalls {
			i := len(calls) - 1
			if tc.Index != nil {
				i = *tc.Index
			}
			if i < 0 || i > 16 {
				return Reply{}, fmt.Errorf("chat model %s: tool call index %d out of range", m.model, i)
			}
			for len(calls) <= i {
				calls, args = append(calls, &ToolCall{}), append(args, &strings.Builder{})
			}
			if tc.ID != "" {
				calls[i].ID = tc.ID
			}
			if tc.Function.Name != "" {
				calls[i].Name = tc.Function.Name
			}
			args[i].WriteString(tc.Function.Arguments)
		}
	}
	if cutOff {
		text.WriteString(CutOffNote)
		if err := delta(CutOffNote); err != nil {
			return Reply{}, err
		}
	}
	out.Content = text.String()
	for i, c := range calls {
		c.Arguments = rawArgs(args[i].String())
		out.ToolCalls = append(out.ToolCalls, *c)
	}
	if out.Usage.Calls == 0 {
		out.Usage.Calls = 1
	}
	return out, nil
}

// request is the completion request of a prompt.
func (m *OpenAIModel) request(p Prompt) openai.ChatCompletionRequest {
	msgs := []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleSystem, Content: p.System}}
	for _, x := range p.Messages {
		om := openai.ChatCompletionMessage{Role: x.Role, Content: x.Content, ToolCallID: x.ToolCallID}
		for _, c := range x.ToolCalls {
			om.ToolCalls = append(om.ToolCalls, openai.ToolCall{ID: c.ID, Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: c.Name, Arguments: string(c.Arguments)}})
		}
		msgs = append(msgs, om)
	}
	req := openai.ChatCompletionRequest{Model: m.model, Messages: msgs, MaxCompletionTokens: MaxReplyTokens}
	for _, t := range p.Tools {
		req.Tools = append(req.Tools, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: t.Name, Description: t.Description, Parameters: json.RawMessage(t.Parameters), Strict: true}})
	}
	if len(req.Tools) > 0 {
		req.ParallelToolCalls = false
	}
	return req
}
