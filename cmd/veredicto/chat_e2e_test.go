package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/veredicto/veredicto/internal/app"
	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/chat"
	"github.com/veredicto/veredicto/internal/control"
	"github.com/veredicto/veredicto/internal/llm/llmtest"
	"github.com/veredicto/veredicto/internal/poll"
)

// startLiveChat is startLive with the chat's supervisor on model.
func startLiveChat(ctx context.Context, t *testing.T, model chat.Model, opts chat.Options) live {
	t.Helper()
	l, _ := startChatServer(ctx, t, model, opts)
	return l
}

// startChatServer is startLiveChat, returning the server as well.
func startChatServer(ctx context.Context, t *testing.T, model chat.Model, opts chat.Options) (live, *app.Server) {
	t.Helper()
	data := t.TempDir()
	inputs, _, _ := app.LocalLayout(data)
	copyDir(t, filepath.Join("..", "..", "examples", "search-demo"), filepath.Join(inputs, "searches", "acme", "demo-cfo-andina"))
	ip := serveInProcess(ctx, t, app.ServerConfig{Data: data, ChatModel: model, ChatOptions: &opts})
	key, err := auth.LoadOrCreateKey(data)
	if err != nil {
		t.Fatal(err)
	}
	return live{base: ip.base, data: data, key: key}, ip.srv
}

// scriptedChatModel is the chat's supervisor on an OpenAI-compatible
// server answering scriptedSupervisor.
func scriptedChatModel(t *testing.T) (*llmtest.Server, chat.Model) {
	t.Helper()
	srv := llmtest.NewServer(t, scriptedSupervisor)
	model, err := chat.NewOpenAIModel("test-key", srv.BaseURL(), "gpt-test")
	if err != nil {
		t.Fatal(err)
	}
	return srv, model
}

// chatEvents follows GET /api/events?chat=<id> and hands out its messages.
type chatEvents struct {
	ch   chan map[string]any
	seen []map[string]any
}

func followChat(ctx context.Context, t *testing.T, l live, tok, chatID string) *chatEvents {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", l.base+"/api/events?chat="+chatID+"&access_token="+tok, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("chat stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	ce := &chatEvents{ch: make(chan map[string]any, 1024)}
	go func() {
		defer resp.Body.Close()
		defer close(ce.ch)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var m map[string]any
				if json.Unmarshal([]byte(d), &m) == nil {
					ce.ch <- m
				}
			}
		}
	}()
	return ce
}

// until returns the events up to and including the first one match
// accepts (bounded at 30 s).
func (ce *chatEvents) until(t *testing.T, match func(map[string]any) bool) []map[string]any {
	t.Helper()
	var got []map[string]any
	timeout := time.After(30 * time.Second)
	for {
		select {
		case m, ok := <-ce.ch:
			if !ok {
				t.Fatalf("the chat stream closed; got %s", typesOf(got))
			}
			got = append(got, m)
			ce.seen = append(ce.seen, m)
			if match(m) {
				return got
			}
		case <-timeout:
			t.Fatalf("timed out; got %s", typesOf(got))
		}
	}
}

func finishOf(turn int) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["type"] == "finish" && m["turn"] == float64(turn) }
}

func typesOf(evs []map[string]any) string {
	var ts []string
	for _, e := range evs {
		ts = append(ts, fmt.Sprint(e["type"]))
	}
	return strings.Join(ts, ",")
}

// scriptedSupervisor answers like a model would for the e2e requests.
func scriptedSupervisor(c llmtest.Call) llmtest.Reply {
	last := c.Last()
	if last.Role == "tool" {
		if strings.Contains(last.Content, "rechazó") {
			return llmtest.Reply{Content: "Entendido: no envié nada."}
		}
		return llmtest.Reply{Content: "Listo."}
	}
	u := last.Content
	switch {
	case strings.HasPrefix(u, "Lanza"):
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{llmtest.NewToolCall("call_s", "delegate_to_search-analyst", map[string]any{
			"reason": "lanzar la evaluación", "request": u, "operation": "start", "search_id": "demo-cfo-andina", "candidate_ids": []string{}, "dimension": ""})}}
	case strings.HasPrefix(u, "Que el comité debata"):
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{llmtest.NewToolCall("call_d", "delegate_to_debate", map[string]any{
			"reason": "abrir un debate del comité", "request": u, "search_id": "demo-cfo-andina", "candidate_id": "c-005",
			"question": "¿Avanzamos con c-005?", "options": []string{}})}}
	case strings.HasPrefix(u, "Compara"):
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{llmtest.NewToolCall("call_c", "delegate_to_search-analyst", map[string]any{
			"reason": "comparar los informes", "request": u, "operation": "compare", "search_id": "demo-cfo-andina",
			"candidate_ids": []string{"c-001", "c-006"}, "dimension": "deuda"})}}
	case strings.HasPrefix(u, "Envía"):
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{llmtest.NewToolCall("call_r", "delegate_to_reports", map[string]any{
			"reason": "enviar el informe al cliente", "request": u, "operation": "send", "search_id": "demo-cfo-andina",
			"candidate_ids": []string{"c-001"}, "recipient": "cliente@example.com"})}}
	}
	return llmtest.Reply{Content: "Prefiero comentarlo yo mismo."}
}

func TestServeChat(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, model := scriptedChatModel(t)
	l := startLiveChat(ctx, t, model, chat.Options{ConfirmPoll: 20 * time.Millisecond})
	acme, zeta := l.token(t, "acme", "ana"), l.token(t, "zeta", "zed")
	post := func(tok, msg string) (int, string) {
		t.Helper()
		b, _ := json.Marshal(map[string]string{"chat_id": "e2e", "message": msg})
		return l.call(ctx, t, "POST", "/api/chat", tok, string(b))
	}
	// Subscribed before the first message: a new chat's stream is served.
	events := followChat(ctx, t, l, acme, "e2e")

	t.Run("delegated turn", func(t *testing.T) {
		if st, body := post(acme, "Lanza la evaluación de la búsqueda demo-cfo-andina"); st != http.StatusAccepted || !strings.Contains(body, `"turn": 1`) {
			t.Fatalf("POST /api/chat: %d %s", st, body)
		}
		evs := events.until(t, finishOf(1))
		got := typesOf(evs)
		if !strings.HasPrefix(got, "text-delta,tool-invocation,execution-step,execution-step,tool-invocation,text-delta") || !strings.HasSuffix(got, ",finish") {
			t.Fatalf("SSE order = %s", got)
		}
		if d := evs[0]["delta"].(string); !strings.Contains(d, "Delego en analista de búsqueda: lanzar la evaluación") {
			t.Errorf("first delta = %q, want the brief reason", d)
		}
		res := evs[4]["toolInvocation"].(map[string]any)
		if res["state"] != "result" || !strings.Contains(fmt.Sprint(res["result"]), "acme--demo-cfo-andina") {
			t.Errorf("tool result = %v", res)
		}
		// The search really started: the tenant sees it, another does not.
		if st, body := l.call(ctx, t, "GET", "/searches/demo-cfo-andina", acme, ""); st != http.StatusOK {
			t.Errorf("GET search: %d %s", st, body)
		}
		if st, _ := l.call(ctx, t, "GET", "/searches/demo-cfo-andina", zeta, ""); st != http.StatusNotFound {
			t.Errorf("other tenant GET search: %d", st)
		}
		if n := len(srv.Calls()); n != 2 {
			t.Errorf("%d model calls, want 2", n)
		}
		if sys := srv.Calls()[0].System(); strings.Contains(sys, "INTERNAL DELEGATION HINT") == false {
			t.Error("no hint for a request at ≥ 0.55")
		}
	})

	t.Run("missed delegation", func(t *testing.T) {
		if st, body := post(acme, "Abre un debate sobre c-005"); st != http.StatusAccepted {
			t.Fatalf("POST: %d %s", st, body)
		}
		evs := events.until(t, finishOf(2))
		if got := typesOf(evs); got != "text-delta,delegation-missed,finish" {
			t.Fatalf("events = %s", got)
		}
		if evs[1]["target"] != "debate" {
			t.Errorf("delegation-missed = %v", evs[1])
		}
		st, body := l.call(ctx, t, "GET", "/api/chat/metrics", acme, "")
		var m chat.Metrics
		if st != http.StatusOK || json.Unmarshal([]byte(body), &m) != nil {
			t.Fatalf("metrics: %d %s", st, body)
		}
		if m.Turns != 2 || m.Agents["debate"].Missed != 1 || m.Agents["search-analyst"].Delegated != 1 {
			t.Errorf("metrics = %+v", m)
		}
		if _, body := l.call(ctx, t, "GET", "/api/chat/metrics", zeta, ""); !strings.Contains(body, `"turns": 0`) {
			t.Errorf("other tenant's metrics = %s", body)
		}
	})

	// The reports need the search to have finished.
	poll.Until(t, 30*time.Second, func() bool {
		_, body := l.call(ctx, t, "GET", "/searches/demo-cfo-andina", acme, "")
		return strings.Contains(body, `"status": "SUCCEEDED"`)
	}, "the search demo-cfo-andina to succeed")
	outbox := filepath.Join(l.data, "outbox", "acme")
	sent := func() int {
		es, _ := os.ReadDir(outbox)
		return len(es)
	}
	for i, approve := range []bool{true, false} {
		turn := 3 + i
		t.Run(fmt.Sprintf("confirmation approved=%v", approve), func(t *testing.T) {
			before := sent()
			if st, body := post(acme, "Envía el informe de c-001 de la búsqueda demo-cfo-andina a cliente@example.com"); st != http.StatusAccepted {
				t.Fatalf("POST: %d %s", st, body)
			}
			// The turn's own confirmation (the search started in turn 1
			// brings its senior reviews here too).
			evs := events.until(t, func(m map[string]any) bool {
				return m["type"] == "pending-confirmation" && m["toolName"] == "delegate_to_reports"
			})
			p := evs[len(evs)-1]
			if p["category"] != "email_send" || p["sensitivity"] != "high" || p["undoable"] != false || p["toolName"] != "delegate_to_reports" {
				t.Errorf("pending-confirmation = %v", p)
			}
			if sent() != before {
				t.Fatal("the report was sent before the decision")
			}
			// Another tenant cannot resolve it: exactly like a missing one.
			body := fmt.Sprintf(`{"id":%q,"approved":%v}`, p["id"], approve)
			if st, _ := l.call(ctx, t, "POST", "/api/confirmations", zeta, body); st != http.StatusNotFound {
				t.Errorf("other tenant resolving: %d, want 404", st)
			}
			if st, b := l.call(ctx, t, "POST", "/api/confirmations", acme, body); st != http.StatusOK {
				t.Fatalf("resolve: %d %s", st, b)
			}
			evs = events.until(t, finishOf(turn))
			got := typesOf(evs)
			if !strings.HasPrefix(got, "confirmation-resolved,") {
				t.Errorf("after the decision: %s", got)
			}
			if n := strings.Count(typesOf(events.seen), "confirmation-resolved"); n != i+1 {
				t.Errorf("%d confirmation-resolved on the stream after %d decisions", n, i+1)
			}
			want := before
			if approve {
				want++
			}
			if n := sent(); n != want {
				t.Errorf("approved=%v: %d messages in the outbox, want %d", approve, n, want)
			}
			last := srv.Calls()[len(srv.Calls())-1].Last()
			if approve == strings.Contains(last.Content, "rechazó") {
				t.Errorf("the model was told %q", last.Content)
			}
		})
	}

	t.Run("compare from the reports", func(t *testing.T) {
		if st, body := post(acme, "Compara a c-001 con c-006 en deuda"); st != http.StatusAccepted {
			t.Fatalf("POST: %d %s", st, body)
		}
		evs := events.until(t, finishOf(5))
		var rows []any
		for _, e := range evs {
			if ti, ok := e["toolInvocation"].(map[string]any); ok && ti["state"] == "result" {
				rows, _ = ti["result"].(map[string]any)["data"].([]any)
			}
		}
		if len(rows) != 2 {
			t.Fatalf("comparison rows = %v (events %s)", rows, typesOf(evs))
		}
		for _, row := range rows {
			r := row.(map[string]any)
			if r["decision"] == "" || len(r["scores"].(map[string]any)) == 0 {
				t.Errorf("row without decision or stage scores: %v", r)
			}
		}
		// The comparison reached the model as delimited data.
		if last := srv.Calls()[len(srv.Calls())-1].Last(); last.Role != "tool" || !strings.Contains(last.Content, "<<<") || !strings.Contains(last.Content, "c-006") {
			t.Errorf("tool message = %.300s", last.Content)
		}
	})

	t.Run("debate machine registered", func(t *testing.T) {
		// The template's DebateStateMachine, started through the Step
		// Functions API with the input internal/debate documents.
		client := sfnClient(t, l.base, l.data)
		if st, body := post(acme, "Que el comité debata si avanzamos con c-005"); st != http.StatusAccepted {
			t.Fatalf("POST: %d %s", st, body)
		}
		evs := events.until(t, finishOf(6))
		var arn string
		for _, e := range evs {
			if ti, ok := e["toolInvocation"].(map[string]any); ok && ti["state"] == "result" {
				arn, _ = ti["result"].(map[string]any)["data"].(map[string]any)["execution"].(string)
			}
		}
		if arn == "" {
			t.Fatalf("no execution started (events %s)", typesOf(evs))
		}
		out, err := client.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
		if err != nil {
			t.Fatal(err)
		}
		var input map[string]any
		_ = json.Unmarshal([]byte(aws.ToString(out.Input)), &input)
		// The input issue 12 documents (internal/debate StartInput).
		q, _ := input["question"].(map[string]any)
		knowledge := fmt.Sprint(input["knowledge"])
		if input["tenant"] != "acme" || input["debate_id"] == "" || q["question"] != "¿Avanzamos con c-005?" || len(q["participants"].([]any)) < 2 ||
			!strings.Contains(knowledge, "searches/acme/demo-cfo-andina/") || !strings.Contains(knowledge, "reports/acme/demo-cfo-andina/c-005/") {
			t.Errorf("execution input = %v", input)
		}
	})

	t.Run("debate machine not registered", func(t *testing.T) {
		client := sfnClient(t, l.base, l.data)
		if _, err := client.DeleteStateMachine(ctx, &sfn.DeleteStateMachineInput{StateMachineArn: aws.String(control.StateMachineARN(app.DebateMachine))}); err != nil {
			t.Fatal(err)
		}
		if st, body := post(acme, "Que el comité debata si avanzamos con c-005"); st != http.StatusAccepted {
			t.Fatalf("POST: %d %s", st, body)
		}
		evs := events.until(t, finishOf(7))
		var errMsg any
		for _, e := range evs {
			if ti, ok := e["toolInvocation"].(map[string]any); ok && ti["state"] == "error" {
				errMsg = ti["error"]
			}
		}
		if !strings.Contains(fmt.Sprint(errMsg), "DebateStateMachine no está registrado") {
			t.Errorf("debate tool error = %v (events %s)", errMsg, typesOf(evs))
		}
	})

	t.Run("audit record", func(t *testing.T) {
		// Every turn is in the chat's record under the tenant, which
		// verifies after the last one; the approved send names who
		// approved it, and the turns name who wrote them.
		mustRun(t, "audit", "verify", chat.RecordName("e2e"), "--data", l.data, "--tenant", "acme")
		dir := filepath.Join(l.data, "reports", "audit", "acme", chat.RecordName("e2e"))
		turns, _ := filepath.Glob(filepath.Join(dir, "chains", "turn%2F*.jsonl"))
		if len(turns) != 7 {
			t.Errorf("%d turn chains, want 7", len(turns))
		}
		human := findEntry(t, dir, "turn/0003", audit.KindHuman)
		var hd audit.HumanDecision
		json.Unmarshal(human.Data, &hd)
		if hd.Status != "approved" || hd.Principal != "ana" || len(hd.Preview) != 64 {
			t.Errorf("turn 3's confirmation: %+v", hd)
		}
		start := findEntry(t, dir, "turn/0001", audit.KindStart)
		if !strings.Contains(string(start.Data), `"from":"ana"`) || !strings.Contains(string(start.Data), `"workflow":"chat"`) {
			t.Errorf("turn 1's start: %s", start.Data)
		}

		// A chat's record is verified, not replayed: replay says so.
		code, _, stderr := runCLI(t, "", "replay", chat.RecordName("e2e"), "--data", l.data, "--tenant", "acme", "--out", t.TempDir())
		if code != exitUsage || !strings.Contains(stderr, "chat record is verified but not replayed") {
			t.Errorf("replay of a chat: exit %d\n%s", code, stderr)
		}

		// One changed byte in a copy of the record fails verification,
		// naming the turn.
		verifyFailsOn(t, dir, "the approver changed", func(d string) {
			p := filepath.Join(d, "chains", "turn%2F0003.jsonl")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, []byte(strings.Replace(string(b), `"principal":"ana"`, `"principal":"anA"`, 1)), 0o600)
		}, "turn/0003")
	})

	if st, _ := l.call(ctx, t, "POST", "/api/chat", "", `{"chat_id":"e2e","message":"hola"}`); st != http.StatusUnauthorized {
		t.Errorf("anonymous POST: %d", st)
	}
	if st, body := l.call(ctx, t, "POST", "/api/chat", acme, `{"chat_id":"e2e","mesage":"hola"}`); st != http.StatusBadRequest || !strings.Contains(body, "mesage") {
		t.Errorf("bad body: %d %s", st, body)
	}
}

// TestServeRejectsABadAgentsRegistry: a registry naming a tool the runtime
// does not implement stops serve at start, naming the file and field.
func TestServeRejectsABadAgentsRegistry(t *testing.T) {
	seed, _ := filepath.Abs(filepath.Join("..", "..", "examples", "delegation", "agents-seed.yaml"))
	t.Setenv("CHAT_AGENTS_FILE", seed)
	data := t.TempDir()
	_, err := app.NewServer(t.Context(), app.ServerConfig{Data: data, Template: filepath.Join("..", "..", "template.yaml"), Self: "http://127.0.0.1:1",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err == nil || !strings.Contains(err.Error(), "agents-seed.yaml: agents[1].action") || !strings.Contains(err.Error(), `"external"`) {
		t.Fatalf("assemble with the seed registry: %v, want its file and agents[1].action", err)
	}
}

func TestChatCLIUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"chat", "-h"}, exitOK, "Usage: veredicto chat"},
		{[]string{"chat", "--chat", "a/b", "--token", "x"}, exitUsage, "--chat must be"},
		{[]string{"chat", "extra"}, exitUsage, `unexpected argument "extra"`},
	} {
		var out, errb strings.Builder
		m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}
		if code := m.Run(context.Background(), tc.args); code != tc.code || !strings.Contains(out.String()+errb.String(), tc.want) {
			t.Errorf("%v: exit %d, output %q; want %d and %q", tc.args, code, out.String()+errb.String(), tc.code, tc.want)
		}
	}
}
