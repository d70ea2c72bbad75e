package chat

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/llm"
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

// OpenAIModel is the adapter of Model to OpenAI's chat completions API
// (any compatible endpoint) with tool calling, streamed or not; it speaks
// the fields it needs itself, posting through llm.PostChat as the agents'
// structured calls do. Safe for concurrent use.
type OpenAIModel struct {
	http        *http.Client
	url, apiKey string
	model       string
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
	base := strings.TrimSuffix(baseURL, "/")
	if base == "" {
		base = llm.DefaultBaseURL
	}
	return &OpenAIModel{http: &http.Client{}, url: base + "/chat/completions", apiKey: apiKey, model: model}, nil
}

// Name is "openai:<model>", recorded in every stored turn.
func (m *OpenAIModel) Name() string { return "openai:" + m.model }

// post sends p, streamed or not, within the call's timeout; the caller
// reads and closes the answer, then calls cancel.
func (m *OpenAIModel) post(ctx context.Context, p Prompt, stream bool) (*http.Response, context.CancelFunc, error) {
	body, err := json.Marshal(m.request(p, stream))
	if err != nil {
		return nil, nil, fmt.Errorf("chat model %s: encode the request: %w", m.model, err)
	}
	timeout := m.CallTimeout
	if timeout <= 0 {
		timeout = 120 * time.Second
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	resp, err := llm.PostChat(cctx, m.http, m.url, m.apiKey, body, stream)
	if err != nil {
		cancel()
		return nil, nil, m.fail(err)
	}
	return resp, cancel, nil
}

// Next makes one completion. Rate limits and server errors come back as
// *veredicto.TransientError (the turn fails; the user may send again).
func (m *OpenAIModel) Next(ctx context.Context, p Prompt) (Reply, error) {
	resp, cancel, err := m.post(ctx, p, false)
	if err != nil {
		return Reply{}, err
	}
	defer cancel()
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	if err != nil {
		return Reply{}, m.fail(fmt.Errorf("read the answer: %w", err))
	}
	if len(b) > maxAnswerBytes {
		return Reply{}, fmt.Errorf("chat model %s: the answer is over %d bytes", m.model, maxAnswerBytes)
	}
	var out wireResponse
	if err := json.Unmarshal(b, &out); err != nil {
		return Reply{}, m.fail(fmt.Errorf("read the answer: %w", err))
	}
	if len(out.Choices) == 0 {
		return Reply{}, fmt.Errorf("chat model %s: the response has no choices", m.model)
	}
	msg := out.Choices[0].Message
	content := msg.Content
	if out.Choices[0].FinishReason == "length" {
		content += CutOffNote
	}
	rep := Reply{Content: content, Usage: veredicto.Usage{Calls: 1, PromptTokens: out.Usage.PromptTokens, CompletionTokens: out.Usage.CompletionTokens}}
	for _, c := range msg.ToolCalls {
		rep.ToolCalls = append(rep.ToolCalls, ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: rawArgs(c.Function.Arguments)})
	}
	return rep, nil
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

// fail classifies a provider error: a refusal (an HTTP status below 500
// but 408, 409 and 429; an error the stream carried), an answer that is
// not JSON or not HTTP, a certificate not trusted are the provider's —
// asking again would fail the same way; rate limits, server errors,
// network failures and answers cut short are transient (llm.Retryable).
func (m *OpenAIModel) fail(err error) error {
	// A stopped turn (a shutdown) is delivered again; anything else as the
	// agents' calls are classified.
	if errors.Is(err, context.Canceled) || llm.Retryable(err) {
		return &veredicto.TransientError{Op: "chat model " + m.model, Err: err}
	}
	return fmt.Errorf("chat model %s: %w", m.model, err)
}

// streamError is an error object a provider sent inside its stream: its
// type and code, never its message (it may quote the conversation).
type streamError struct{ typ, code string }

func (e *streamError) Error() string {
	msg := "the provider's stream ended with an error"
	if kind := strings.Trim(e.typ+": "+e.code, ": "); kind != "" {
		msg += " (" + kind + ")"
	}
	return msg
}

// streamFailure is the error object of a stream line, nil when the line
// holds none.
func streamFailure(line []byte) error {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(line, &e) != nil || len(e.Error) == 0 || string(e.Error) == "null" {
		return nil
	}
	return failureOf(line)
}

// failureOf is the streamError of a line that holds an error object.
func failureOf(line []byte) error {
	typ, code, _ := llm.ErrorFields(line)
	return &streamError{typ: typ, code: code}
}

// MaxStreamChunks bounds one streamed reply.
const MaxStreamChunks = 20000

// MaxReplyTokens bounds every reply of the model (about 16 KB of text): a
// reply is stored with its turn and shown whole.
const MaxReplyTokens = 4096

// maxAnswerBytes bounds an answer, read whole or streamed (its text and
// tool arguments); maxStreamLine one line of a streamed one; maxErrorBody
// the lines outside a stream's events kept to read an error object from.
const (
	maxAnswerBytes = 4 << 20
	maxStreamLine  = 1 << 20
	maxErrorBody   = 64 << 10
)

// CutOffNote ends a reply the model was cut off in at MaxReplyTokens, so
// that it is never shown as if whole.
const CutOffNote = "\n\n[Respuesta cortada: alcanzó el límite de longitud.]"

// Stream makes one streamed completion: text fragments go to delta as
// they arrive; tool calls are assembled from their fragments.
func (m *OpenAIModel) Stream(ctx context.Context, p Prompt, delta func(string) error) (Reply, error) {
	resp, cancel, err := m.post(ctx, p, true)
	if err != nil {
		return Reply{}, err
	}
	defer cancel()
	defer resp.Body.Close()
	var (
		out    Reply
		text   strings.Builder
		calls  []*ToolCall
		args   []*strings.Builder
		cutOff bool
		size   int // bytes of text and arguments so far (maxAnswerBytes)
	)
	grow := func(n int) error {
		if size += n; size > maxAnswerBytes {
			return fmt.Errorf("chat model %s: the streamed answer is over %d bytes", m.model, maxAnswerBytes)
		}
		return nil
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), maxStreamLine)
	// Lines outside the events: some servers answer an error object there,
	// on one line or several; kept (bounded) to be read as one at the end.
	var other bytes.Buffer
	for n := 0; ; {
		if !sc.Scan() {
			if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
				return Reply{}, fmt.Errorf("chat model %s: a line of the stream is over %d bytes", m.model, maxStreamLine)
			} else if err != nil {
				return Reply{}, m.fail(fmt.Errorf("read the stream: %w", err))
			}
			if err := streamFailure(other.Bytes()); err != nil {
				return Reply{}, m.fail(err)
			}
			if n == 0 {
				return Reply{}, fmt.Errorf("chat model %s: the stream ended before any answer", m.model)
			}
			break // the end without [DONE]: what came is the answer
		}
		// Server-Sent Events: "data: <chunk>" lines; comments, event
		// names and blank lines carry nothing here.
		data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data:"))
		if !ok {
			if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 && line[0] != ':' && !bytes.HasPrefix(line, []byte("event:")) &&
				!bytes.HasPrefix(line, []byte("id:")) && !bytes.HasPrefix(line, []byte("retry:")) && other.Len() < maxErrorBody {
				other.Write(line)
				other.WriteByte('\n')
				if err := streamFailure(line); err != nil { // an error object on a line of its own
					return Reply{}, m.fail(err)
				}
			}
			continue
		}
		data = bytes.TrimSpace(data)
		if len(data) == 0 {
			continue // an empty event: a keep-alive
		}
		if string(data) == "[DONE]" {
			break
		}
		if n++; n > MaxStreamChunks {
			return Reply{}, fmt.Errorf("chat model %s: the stream is over %d chunks", m.model, MaxStreamChunks)
		}
		var chunk wireChunk
		if err := json.Unmarshal(data, &chunk); err != nil {
			return Reply{}, m.fail(fmt.Errorf("a chunk of the stream is not JSON: %w", err))
		}
		if len(chunk.Error) > 0 && string(chunk.Error) != "null" {
			return Reply{}, m.fail(failureOf(data))
		}
		if chunk.Usage != nil {
			out.Usage = veredicto.Usage{Calls: 1, PromptTokens: chunk.Usage.PromptTokens, CompletionTokens: chunk.Usage.CompletionTokens}
		}
		if len(chunk.Choices) == 0 {
			continue
		}
		if chunk.Choices[0].FinishReason == "length" {
			cutOff = true
		}
		d := chunk.Choices[0].Delta
		if err := grow(len(d.Content)); err != nil {
			return Reply{}, err
		}
		if d.Content != "" {
			text.WriteString(d.Content)
			if err := delta(d.Content); err != nil {
				return Reply{}, err
			}
		}
		for _, tc := range d.ToolCalls {
			i := max(len(calls)-1, 0) // no index: the call under way, or the first
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
			if err := grow(len(tc.Function.Arguments)); err != nil {
				return Reply{}, err
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

// The wire: the request and answer fields of the chat completions API the
// adapter uses.
type (
	wireRequest struct {
		Model               string        `json:"model"`
		Messages            []wireMessage `json:"messages"`
		MaxCompletionTokens int           `json:"max_completion_tokens"`
		Tools               []wireTool    `json:"tools,omitempty"`
		ParallelToolCalls   *bool         `json:"parallel_tool_calls,omitempty"`
		Stream              bool          `json:"stream,omitempty"`
	}
	wireMessage struct {
		Role       string         `json:"role"`
		Content    string         `json:"content,omitempty"`
		ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
		ToolCallID string         `json:"tool_call_id,omitempty"`
	}
	wireToolCall struct {
		Index    *int   `json:"index,omitempty"`
		ID       string `json:"id,omitempty"`
		Type     string `json:"type,omitempty"`
		Function struct {
			Name      string `json:"name,omitempty"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	wireTool struct {
		Type     string           `json:"type"`
		Function wireToolFunction `json:"function"`
	}
	wireToolFunction struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
		Strict      bool            `json:"strict"`
	}
	wireUsage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	}
	wireResponse struct {
		Choices []struct {
			Message struct {
				Content   string         `json:"content"`
				ToolCalls []wireToolCall `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage wireUsage `json:"usage"`
	}
	wireChunk struct {
		Choices []struct {
			Delta struct {
				Content   string         `json:"content"`
				ToolCalls []wireToolCall `json:"tool_calls"`
			} `json:"delta"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage *wireUsage `json:"usage"`
		// Error is an error object a provider sent as a chunk.
		Error json.RawMessage `json:"error"`
	}
)

// request is the completion request of a prompt.
func (m *OpenAIModel) request(p Prompt, stream bool) wireRequest {
	msgs := []wireMessage{{Role: "system", Content: p.System}}
	for _, x := range p.Messages {
		om := wireMessage{Role: x.Role, Content: x.Content, ToolCallID: x.ToolCallID}
		for _, c := range x.ToolCalls {
			tc := wireToolCall{ID: c.ID, Type: "function"}
			tc.Function.Name, tc.Function.Arguments = c.Name, string(c.Arguments)
			om.ToolCalls = append(om.ToolCalls, tc)
		}
		msgs = append(msgs, om)
	}
	req := wireRequest{Model: m.model, Messages: msgs, MaxCompletionTokens: MaxReplyTokens, Stream: stream}
	for _, t := range p.Tools {
		req.Tools = append(req.Tools, wireTool{Type: "function", Function: wireToolFunction{
			Name: t.Name, Description: t.Description, Parameters: t.Parameters, Strict: true}})
	}
	if len(req.Tools) > 0 {
		one := false // one tool call a reply: the chat delegates at most once
		req.ParallelToolCalls = &one
	}
	return req
}
