package llm_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/llm"
	"github.com/veredicto/veredicto/internal/llm/llmtest"
)

type verdict struct {
	Recommendation string   `json:"recommendation" enum:"SI,NO"`
	Score          int      `json:"score_dimension"`
	Confidence     float64  `json:"confidence"`
	Sources        []string `json:"sources"`
	Note           *string  `json:"note,omitempty"`
}

func newClient(t *testing.T, srv *llmtest.Server) *llm.OpenAI {
	t.Helper()
	c, err := llm.NewOpenAI(llm.OpenAIConfig{APIKey: "test", BaseURL: srv.BaseURL(), Model: "gpt-4o-mini", Backoff: time.Millisecond, MaxAttempts: 3})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSchemaForIsStrict(t *testing.T) {
	s, err := llm.SchemaFor(verdict{})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(s, &got); err != nil {
		t.Fatal(err)
	}
	req := fmt.Sprint(got["required"])
	if req != "[recommendation score_dimension confidence sources note]" {
		t.Errorf("required %s: every field must be required, omitempty included", req)
	}
	if got["additionalProperties"] != false {
		t.Errorf("additionalProperties %v, want false", got["additionalProperties"])
	}
	note := got["properties"].(map[string]any)["note"].(map[string]any)
	if fmt.Sprint(note["type"]) != "[string null]" {
		t.Errorf("pointer field type %v, want [string null]", note["type"])
	}
}

// TestSchemaForHandsOutCopies: the schemas are kept per type, and what a
// caller does with the one it got changes neither the next one nor a
// validation against it.
func TestSchemaForHandsOutCopies(t *testing.T) {
	first := llm.MustSchemaFor(verdict{})
	want := string(first)
	for i := range first {
		first[i] = ' '
	}
	if got := string(llm.MustSchemaFor(verdict{})); got != want {
		t.Errorf("a caller's change reached the next schema: %s", got)
	}
	doc := `{"recommendation":"QUIZAS","score_dimension":7,"confidence":0.8,"sources":[],"note":null}`
	for range 2 { // decoded, then from the decoded schemas
		if err := llm.Validate(llm.MustSchemaFor(verdict{}), []byte(doc)); err == nil || !strings.Contains(err.Error(), "is not one of") {
			t.Errorf("got %v, want the enum refused", err)
		}
	}
}

func TestValidateNamesTheProblem(t *testing.T) {
	s := llm.MustSchemaFor(verdict{})
	tests := []struct{ doc, want string }{
		{`{"recommendation":"SI","score_dimension":7,"confidence":0.8,"sources":["cv.md"],"note":null}`, ""},
		{`{"recommendation":"QUIZAS","score_dimension":7,"confidence":0.8,"sources":[],"note":null}`, `$.recommendation: is not one of [SI NO]`},
		{`{"recommendation":"SI","score_dimension":7.5,"confidence":0.8,"sources":[],"note":null}`, `$.score_dimension: want an integer`},
		{`{"recommendation":"SI","confidence":0.8,"sources":[],"note":null}`, `$.score_dimension: required field is missing`},
		{`{"recommendation":"SI","score_dimension":7,"confidence":0.8,"sources":[1],"note":null,"extra":1}`, `$: unexpected field "extra"`},
		{`{"recommendation":"SI","score_dimension":7,"confidence":0.8,"sources":[1],"note":null}`, `$.sources[0]: want a string`},
		{`not json`, `not valid JSON`},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			err := llm.Validate(s, []byte(tt.doc))
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("got %v, want valid", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("got %v, want error containing %q", err, tt.want)
			}
		})
	}
}

func TestGenerateReasksOnceWithTheProblem(t *testing.T) {
	srv := llmtest.NewServer(t, func(c llmtest.Call) llmtest.Reply {
		if c.N == 1 {
			return llmtest.Reply{Content: `{"recommendation":"SI","score_dimension":7,"confidence":0.8,"sources":["inventado.md"],"note":null}`, PromptTokens: 100, CompletionTokens: 20}
		}
		return llmtest.Reply{Content: `{"recommendation":"SI","score_dimension":7,"confidence":0.8,"sources":["cv.md"],"note":null}`, PromptTokens: 130, CachedTokens: 100, CompletionTokens: 20}
	})
	check := func(v *verdict) error {
		for _, s := range v.Sources {
			if s != "cv.md" {
				return fmt.Errorf("source %q is not in the sources index", s)
			}
		}
		return nil
	}
	got, usage, err := llm.Generate(context.Background(), newClient(t, srv), llm.Request{Schema: "gem3", System: "s", User: "u"}, check)
	if err != nil {
		t.Fatal(err)
	}
	if got.Sources[0] != "cv.md" {
		t.Errorf("sources %v", got.Sources)
	}
	calls := srv.Calls()
	if len(calls) != 2 {
		t.Fatalf("%d calls, want 2", len(calls))
	}
	if calls[0].Schema != "gem3" || !calls[0].Strict || len(calls[0].JSONSchema) == 0 {
		t.Errorf("first call: schema %q strict %v: want gem3, strict, with a schema", calls[0].Schema, calls[0].Strict)
	}
	last := calls[1].Messages[len(calls[1].Messages)-1].Content
	if !strings.Contains(last, "\n<<<\n"+`source "inventado.md" is not in the sources index`+"\n>>>\n") {
		t.Errorf("re-ask %q does not carry the problem", last)
	}
	if usage.Calls != 2 || usage.PromptTokens != 230 || usage.CachedTokens != 100 || usage.CompletionTokens != 40 {
		t.Errorf("usage %+v", usage)
	}
	// gpt-4o-mini: (130 uncached × 0.15 + 100 cached × 0.075 + 40 × 0.60) / 1e6
	if want := (130*0.15 + 100*0.075 + 40*0.60) / 1e6; fmt.Sprintf("%.10f", usage.CostUSD) != fmt.Sprintf("%.10f", want) {
		t.Errorf("cost %v, want %v", usage.CostUSD, want)
	}
}

func TestGenerateFailsAfterSecondInvalidAnswer(t *testing.T) {
	srv := llmtest.NewServer(t, func(c llmtest.Call) llmtest.Reply {
		return llmtest.Reply{Content: `{"recommendation":"TAL VEZ"}`}
	})
	_, usage, err := llm.Generate[verdict](context.Background(), newClient(t, srv), llm.Request{Schema: "gem3"}, nil)
	var ie *llm.InvalidOutputError
	if !errors.As(err, &ie) {
		t.Fatalf("got %v, want *InvalidOutputError", err)
	}
	if usage.Calls != 2 {
		t.Errorf("%d calls, want 2", usage.Calls)
	}
}

func TestOpenAIRetriesTransientFailures(t *testing.T) {
	tests := []struct {
		name      string
		statuses  []int
		wantErr   any
		wantCalls int
	}{
		{"429 then ok", []int{429, 200}, nil, 2},
		{"500 502 then ok", []int{500, 502, 200}, nil, 3},
		{"always 503", []int{503, 503, 503}, &veredicto.TransientError{}, 3},
		{"401 is not retried", []int{401}, &llm.ProviderError{}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, func(c llmtest.Call) llmtest.Reply {
				st := tt.statuses[min(c.N, len(tt.statuses))-1]
				return llmtest.Reply{Status: st, Content: `{}`}
			})
			_, err := newClient(t, srv).Complete(context.Background(), llm.Request{Schema: "x", JSONSchema: json.RawMessage(`{"type":"object"}`)})
			switch want := tt.wantErr.(type) {
			case nil:
				if err != nil {
					t.Errorf("got %v, want success", err)
				}
			case *veredicto.TransientError:
				if !errors.As(err, &want) {
					t.Errorf("got %T %v, want *TransientError", err, err)
				}
			case *llm.ProviderError:
				if !errors.As(err, &want) {
					t.Errorf("got %T %v, want *ProviderError", err, err)
				}
			}
			if n := len(srv.Calls()); n != tt.wantCalls {
				t.Errorf("%d calls, want %d", n, tt.wantCalls)
			}
		})
	}
}

// TestOpenAIKeepsAConnectionPerCallInFlight: calls made 20 at a time,
// round after round, reuse the connections of the round before instead of
// opening (and the provider accepting) new ones. A connection goes back
// to the pool just after its answer is read, so a call may still find
// none idle and dial: half as many again are allowed (the default
// transport, keeping two, opened about 18 a round).
func TestOpenAIKeepsAConnectionPerCallInFlight(t *testing.T) {
	srv := llmtest.NewServer(t, func(llmtest.Call) llmtest.Reply {
		return llmtest.Reply{Delay: 20 * time.Millisecond, Content: `{}`}
	})
	c := newClient(t, srv)
	const inFlight, rounds = 20, 5
	for range rounds {
		errs := make(chan error, inFlight)
		for range inFlight {
			go func() {
				_, err := c.Complete(context.Background(), llm.Request{Schema: "x", JSONSchema: json.RawMessage(`{"type":"object"}`)})
				errs <- err
			}()
		}
		for range inFlight {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
	}
	conns := map[string]bool{}
	for _, call := range srv.Calls() {
		conns[call.RemoteAddr] = true
	}
	if want := inFlight + inFlight/2; len(conns) > want {
		t.Errorf("%d calls, %d at a time, came on %d connections; want at most %d", inFlight*rounds, inFlight, len(conns), want)
	}
}

func TestOpenAITimeoutIsTransient(t *testing.T) {
	srv := llmtest.NewServer(t, func(c llmtest.Call) llmtest.Reply {
		return llmtest.Reply{Delay: 2 * time.Second, Content: `{}`}
	})
	c, err := llm.NewOpenAI(llm.OpenAIConfig{APIKey: "k", BaseURL: srv.BaseURL(), Model: "m", Backoff: time.Millisecond, MaxAttempts: 2, CallTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Complete(context.Background(), llm.Request{Schema: "x", JSONSchema: json.RawMessage(`{}`)})
	var te *veredicto.TransientError
	if !errors.As(err, &te) {
		t.Fatalf("got %v, want *TransientError", err)
	}
	if n := len(srv.Calls()); n != 2 {
		t.Errorf("%d calls, want 2", n)
	}
}

func TestOpenAIErrorsCarryTheirASLName(t *testing.T) {
	tests := []struct {
		name       string
		reply      llmtest.Reply
		want       string
		retryAfter time.Duration
	}{
		{"429 with Retry-After seconds", llmtest.Reply{Status: 429, RetryAfter: "7"}, "TransientError", 7 * time.Second},
		{"503 without Retry-After", llmtest.Reply{Status: 503}, "TransientError", 0},
		{"400 is the provider's", llmtest.Reply{Status: 400}, "ProviderError", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, func(llmtest.Call) llmtest.Reply { return tt.reply })
			// MaxRetryAfter keeps the client's own waits short; the error
			// still reports what the server asked for.
			c, err := llm.NewOpenAI(llm.OpenAIConfig{APIKey: "k", BaseURL: srv.BaseURL(), Model: "m",
				Backoff: time.Millisecond, MaxAttempts: 2, MaxRetryAfter: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Complete(context.Background(), llm.Request{Schema: "x", JSONSchema: json.RawMessage(`{}`)})
			wrapped := fmt.Errorf("gem1 c-001: %w", err)
			if got := veredicto.ErrorName(wrapped); got != tt.want {
				t.Errorf("ErrorName(%v) = %q, want %q", wrapped, got, tt.want)
			}
			var te *veredicto.TransientError
			if errors.As(err, &te) && te.RetryAfter != tt.retryAfter {
				t.Errorf("RetryAfter = %v, want %v", te.RetryAfter, tt.retryAfter)
			}
		})
	}
}

// Every answer is bounded: the default bound, or a request's smaller one,
// goes with the call; an answer cut off at it is re-asked once, saying so,
// and a second cut-off one is invalid.
func TestAnswersAreBoundedAndACutOffAnswerIsReasked(t *testing.T) {
	full := `{"recommendation":"SI","score_dimension":7,"confidence":0.8,"sources":["cv.md"],"note":null}`
	srv := llmtest.NewServer(t, func(c llmtest.Call) llmtest.Reply {
		if c.N == 1 {
			return llmtest.Reply{Content: full[:30], Truncated: true, CompletionTokens: 2000}
		}
		return llmtest.Reply{Content: full}
	})
	got, _, err := llm.Generate[verdict](context.Background(), newClient(t, srv), llm.Request{Schema: "gem3", MaxOutputTokens: 2000}, nil)
	if err != nil || got.Recommendation != "SI" {
		t.Fatalf("got %+v, %v", got, err)
	}
	calls := srv.Calls()
	if len(calls) != 2 || calls[0].MaxCompletionTokens != 2000 {
		t.Fatalf("calls %d, first bounded at %d tokens, want 2 calls bounded at 2000", len(calls), calls[0].MaxCompletionTokens)
	}
	if last := calls[1].Messages[len(calls[1].Messages)-1].Content; !strings.Contains(last, "quedó cortada") {
		t.Errorf("re-ask %q does not say the answer was cut off", last)
	}

	cut := llmtest.NewServer(t, func(llmtest.Call) llmtest.Reply { return llmtest.Reply{Content: full[:30], Truncated: true} })
	_, _, err = llm.Generate[verdict](context.Background(), newClient(t, cut), llm.Request{Schema: "gem3"}, nil)
	var ie *llm.InvalidOutputError
	if !errors.As(err, &ie) || !strings.Contains(ie.Problem, "quedó cortada") {
		t.Fatalf("got %v, want an *InvalidOutputError saying the answer was cut off", err)
	}
	if n := cut.Calls()[0].MaxCompletionTokens; n != llm.DefaultMaxOutputTokens {
		t.Errorf("default bound %d, want %d", n, llm.DefaultMaxOutputTokens)
	}
}

// TestInvalidOutputErrorMessages pins both forms of the one
// InvalidOutputError: a schema that failed after the re-ask, and an
// agent's contract broken in the caller's own checks (the executive
// search's).
func TestInvalidOutputErrorMessages(t *testing.T) {
	for _, tt := range []struct {
		err  *llm.InvalidOutputError
		want string
	}{
		{&llm.InvalidOutputError{Schema: "gem1", Problem: "score out of range"},
			`model output for schema "gem1" is invalid after one re-ask: score out of range`},
		{&llm.InvalidOutputError{Agent: "gem1", CandidateID: "c-001", Problem: "cites an unknown source"},
			`gem1 output for candidate "c-001" breaks the contract: cites an unknown source`},
	} {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("got  %q\nwant %q", got, tt.want)
		}
		if got := veredicto.ErrorName(tt.err); got != llm.NameInvalidOutput {
			t.Errorf("ErrorName(%v) = %q, want %q", tt.err, got, llm.NameInvalidOutput)
		}
	}
}

// TestOpenAIRequestSaysEveryFieldOnce: the request the adapter encodes
// itself carries the model, the messages verbatim (quotes, line breaks,
// markup, accents), a re-ask's two extra messages, the bound and the
// strict schema as given; the answer's content, usage and cut-off are read
// back; an invalid schema is refused before any call.
func TestOpenAIRequestSaysEveryFieldOnce(t *testing.T) {
	srv := llmtest.NewServer(t, func(c llmtest.Call) llmtest.Reply {
		return llmtest.Reply{Content: `{"ok":true}`, PromptTokens: 1200, CachedTokens: 1000, CompletionTokens: 30, Truncated: c.N == 2}
	})
	c := newClient(t, srv)
	schema := json.RawMessage(`{"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"], "additionalProperties": false}`)
	system, user := "Eres «GEM1».\nResponde solo JSON.", `CV: "Lideré" </script> \u0000 y C:\ruta`+"\t\x01"
	resp, err := c.Complete(context.Background(), llm.Request{Schema: "gem1", JSONSchema: schema, System: system, User: user, MaxOutputTokens: 300})
	if err != nil || string(resp.Content) != `{"ok":true}` || resp.Truncated {
		t.Fatalf("answer %q truncated %v: %v", resp.Content, resp.Truncated, err)
	}
	if u := resp.Usage; u.Calls != 1 || u.PromptTokens != 1200 || u.CachedTokens != 1000 || u.CompletionTokens != 30 || u.CostUSD <= 0 {
		t.Errorf("usage %+v", u)
	}
	resp, err = c.Complete(context.Background(), llm.Request{Schema: "gem1", JSONSchema: schema, System: system, User: user,
		Retry: &llm.Reask{Previous: `{"ok":"sí"}`, Problem: "ok: must be a boolean"}})
	if err != nil || !resp.Truncated {
		t.Fatalf("second answer truncated %v: %v", resp.Truncated, err)
	}
	calls := srv.Calls()
	first, second := calls[0], calls[1]
	if first.Model != "gpt-4o-mini" || first.Schema != "gem1" || !first.Strict || first.MaxCompletionTokens != 300 {
		t.Errorf("first call: model %q schema %q strict %v bound %d", first.Model, first.Schema, first.Strict, first.MaxCompletionTokens)
	}
	var got, want any
	if json.Unmarshal(first.JSONSchema, &got) != nil || json.Unmarshal(schema, &want) != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("schema sent %s, want %s", first.JSONSchema, schema)
	}
	if len(first.Messages) != 2 || first.System() != system || first.User() != user {
		t.Errorf("first call's messages %+v", first.Messages)
	}
	if len(second.Messages) != 4 || second.Messages[2].Role != "assistant" || second.Messages[2].Content != `{"ok":"sí"}` ||
		second.Messages[3].Role != "user" || !strings.Contains(second.Messages[3].Content, "ok: must be a boolean") ||
		second.MaxCompletionTokens != llm.DefaultMaxOutputTokens {
		t.Errorf("the re-ask's messages %+v, bound %d", second.Messages, second.MaxCompletionTokens)
	}

	_, err = c.Complete(context.Background(), llm.Request{Schema: "gem1", JSONSchema: json.RawMessage(`{"type":`)})
	var pe *llm.ProviderError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), `"gem1" is not valid JSON`) || len(srv.Calls()) != 2 {
		t.Errorf("an invalid schema: %v after %d calls; want a ProviderError before any call", err, len(srv.Calls()))
	}
}

// TestOpenAIStatusErrorsKeepTheProvidersWordsApart: a refusal keeps its
// HTTP status, its type and code (the API's words) in its text, and the
// provider's message apart (bounded, on a character's edge), whatever
// shape the body has: a provider may quote the prompt in its message, and
// an error's text reaches the logs and an execution's cause.
func TestOpenAIStatusErrorsKeepTheProvidersWordsApart(t *testing.T) {
	cv := "CV de Ana Pérez: lideré la reestructuración de la deuda"
	for _, tt := range []struct{ body, text, message string }{
		{`{"error":{"message":"Invalid prompt: '` + cv + `'","type":"invalid_request_error","code":"context_length_exceeded"}}`,
			"the provider answered 400 Bad Request (invalid_request_error: context_length_exceeded)", "Invalid prompt: '" + cv + "'"},
		{`<html>bad gateway</html>`, "the provider answered 400 Bad Request", ""},
		{`{"error":{"message":"` + strings.Repeat("x", 2000) + `"}}`, "the provider answered 400 Bad Request", strings.Repeat("x", 512) + "…"},
		{`{"error":"The model does not exist"}`, "the provider answered 400 Bad Request", "The model does not exist"},
		{`{"object":"error","message":"response_format is not supported","type":"BadRequestError","code":400}`,
			"the provider answered 400 Bad Request (BadRequestError: 400)", "response_format is not supported"},
		{`{"error":{"message":"x","type":"` + cv + `"}}`, "the provider answered 400 Bad Request", "x"}, // text is no type
		// bounded on a character's edge: 511 bytes, not half an «ñ»
		{`{"error":{"message":"a` + strings.Repeat("ñ", 400) + `"}}`, "the provider answered 400 Bad Request", "a" + strings.Repeat("ñ", 255) + "…"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(tt.body))
		}))
		c, err := llm.NewOpenAI(llm.OpenAIConfig{APIKey: "k", BaseURL: srv.URL, Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Complete(context.Background(), llm.Request{Schema: "gem1", JSONSchema: json.RawMessage(`{}`)})
		srv.Close()
		var se *llm.StatusError
		if !errors.As(err, &se) || se.StatusCode != 400 || se.Error() != tt.text || se.Message != tt.message {
			t.Errorf("body %.40q: got %v (message %q); want %q, message %q", tt.body, err, se.Message, tt.text, tt.message)
		}
		if strings.Contains(err.Error(), "Ana Pérez") {
			t.Errorf("the error's text quotes the prompt: %v", err)
		}
	}
}

// TestOpenAIRetriesOnlyWhatMayPass: a refused connection after the
// provider answered once, a timeout, a body cut short are tried again; a
// certificate the client does not trust, an answer that is not HTTP or
// not JSON fail at once as the provider's.
func TestOpenAIRetriesOnlyWhatMayPass(t *testing.T) {
	untrusted := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer untrusted.Close()
	notHTTP, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer notHTTP.Close()
	go func() {
		for {
			conn, err := notHTTP.Accept()
			if err != nil {
				return
			}
			// The whole request is read first: an answer written before it
			// would reach the client as a write on a closed connection.
			if req, err := http.ReadRequest(bufio.NewReader(conn)); err == nil {
				io.Copy(io.Discard, req.Body)
			}
			conn.Write([]byte("SSH-2.0-OpenSSH_9.6\r\n\r\n"))
			conn.Close()
		}
	}()
	var htmlCalls atomic.Int32
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { htmlCalls.Add(1); w.Write([]byte("<html>")) }))
	defer html.Close()
	for _, tt := range []struct{ name, url string }{
		{"untrusted certificate", untrusted.URL},
		{"not HTTP", "http://" + notHTTP.Addr().String()},
		{"not JSON", html.URL},
	} {
		c, err := llm.NewOpenAI(llm.OpenAIConfig{APIKey: "k", BaseURL: tt.url, Model: "m", Backoff: time.Millisecond, MaxAttempts: 3})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Complete(context.Background(), llm.Request{Schema: "gem1", JSONSchema: json.RawMessage(`{}`)})
		if got := veredicto.ErrorName(err); got != llm.NameProvider {
			t.Errorf("%s: %s (%v); want %s at once", tt.name, got, err, llm.NameProvider)
		}
	}
	if n := htmlCalls.Load(); n != 1 {
		t.Errorf("an answer that is not JSON was asked %d times, want once", n)
	}
}

// TestOpenAIRetriesAnAnswerCutShort: an answer whose body ends before its
// Content-Length (a proxy restarting) is tried again, as a timeout is.
func TestOpenAIRetriesAnAnswerCutShort(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		body := `{"choices":[{"message":{"role":"assistant","content":"{}"},"finish_reason":"stop"}],"usage":{}}`
		if calls.Add(1) == 1 {
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.Write([]byte(body[:20])) // and the connection closes
			return
		}
		w.Write([]byte(body))
	}))
	defer srv.Close()
	c, err := llm.NewOpenAI(llm.OpenAIConfig{APIKey: "k", BaseURL: srv.URL, Model: "m", Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Complete(context.Background(), llm.Request{Schema: "gem1", JSONSchema: json.RawMessage(`{}`)})
	if err != nil || string(resp.Content) != "{}" || calls.Load() != 2 {
		t.Errorf("got %q, %v after %d calls; want the second call's answer", resp.Content, err, calls.Load())
	}
}
