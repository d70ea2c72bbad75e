package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/veredicto/veredicto"
	fileblob "github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/confirm"
	memoryconfirm "github.com/veredicto/veredicto/internal/confirm/memory"
	"github.com/veredicto/veredicto/internal/eventlog"
	fileeventlog "github.com/veredicto/veredicto/internal/eventlog/file"
	"github.com/veredicto/veredicto/internal/flags"
	"github.com/veredicto/veredicto/internal/intake"
	"github.com/veredicto/veredicto/internal/poll"
	"github.com/veredicto/veredicto/internal/search"
	"github.com/veredicto/veredicto/internal/starter"
	filestore "github.com/veredicto/veredicto/internal/store/file"
)

// sendsReports is a model that has the reports agent send c-001's report
// of cfo-2026 to the client on a turn's first call, then answers reply.
func sendsReports(reply string) *scripted {
	send := map[string]any{"reason": "enviar la terna", "request": "envía", "operation": "send", "search_id": "cfo-2026",
		"candidate_ids": []string{"c-001"}, "recipient": "cliente@example.com"}
	return &scripted{answer: func(n int, p Prompt) Reply {
		if n == 1 {
			return delegateCall("s", "delegate_to_reports", send)
		}
		return Reply{Content: reply}
	}}
}

// scripted is a Model answering from a script and recording its prompts.
type scripted struct {
	mu      sync.Mutex
	prompts []Prompt
	answer  func(n int, p Prompt) Reply
}

func (m *scripted) Next(_ context.Context, p Prompt) (Reply, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.prompts = append(m.prompts, p)
	return m.answer(len(m.prompts), p), nil
}

func delegateCall(id, tool string, args map[string]any) Reply {
	b, _ := json.Marshal(args)
	return Reply{ToolCalls: []ToolCall{{ID: id, Name: tool, Arguments: b}}}
}

// fakeSearches serves one tenant's reports.
type fakeSearches struct {
	tenant  string
	reports map[string]search.Report // "search/candidate"
	mu      sync.Mutex
	started []string
	failing bool
}

func (f *fakeSearches) Start(_ context.Context, tenant, _ string, req intake.StartRequest) (intake.Started, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if tenant != f.tenant {
		return intake.Started{}, &veredicto.NotFoundError{What: "search " + req.SearchID}
	}
	f.started = append(f.started, req.SearchID)
	return intake.Started{SearchID: req.SearchID, Execution: "x-" + req.SearchID, Started: true}, nil
}

func (f *fakeSearches) State(_ context.Context, tenant, id string) (intake.SearchState, error) {
	if tenant != f.tenant {
		return intake.SearchState{}, &veredicto.NotFoundError{What: "search " + id}
	}
	return intake.SearchState{SearchID: id, Status: "SUCCEEDED"}, nil
}

func (f *fakeSearches) Report(_ context.Context, tenant, sid, cid string, md bool) ([]byte, error) {
	if f.failing {
		return nil, fmt.Errorf("disk on fire")
	}
	r, ok := f.reports[sid+"/"+cid]
	if tenant != f.tenant || !ok {
		return nil, &veredicto.NotFoundError{What: "report " + cid}
	}
	if md {
		return []byte("# " + cid + "\n"), nil
	}
	return json.Marshal(r)
}

func report(cid, decision string, score int, issues ...string) search.Report {
	var is []search.Issue
	for _, d := range issues {
		is = append(is, search.Issue{Severity: "critica", Description: d})
	}
	ct, _ := json.Marshal(map[string]any{"scores": search.Scores{ScoreDimension: &score}, "issues_found": is})
	return search.Report{SearchID: "cfo-2026", CandidateID: cid, Decision: decision, StageOrder: []string{"gem1"}, Stages: map[string]json.RawMessage{"gem1": ct}}
}

type memOutbox struct {
	mu   sync.Mutex
	sent []Outgoing
}

func (o *memOutbox) Send(_ context.Context, _ string, m Outgoing) (string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.sent = append(o.sent, m)
	return m.ID, nil
}

type rig struct {
	svc      *Service
	events   *fileeventlog.Log
	confirms *confirm.Service
	searches *fakeSearches
	outbox   *memOutbox
}

func newRig(t testing.TB, model Model, opts Options) *rig {
	t.Helper()
	dir := t.TempDir()
	events := fileeventlog.New(dir + "/events")
	cs := &confirm.Service{Store: memoryconfirm.New(), Events: events}
	fs := &fakeSearches{tenant: "acme", reports: map[string]search.Report{
		"cfo-2026/c-001": report("c-001", "AVANZA", 8, "Deuda de la empresa anterior sin explicar"),
		"cfo-2026/c-006": report("c-006", "NO_AVANZA", 5),
	}}
	ob := &memOutbox{}
	if opts.ConfirmPoll == 0 {
		opts.ConfirmPoll = 10 * time.Millisecond
	}
	svc := &Service{
		Registry: defaultRegistry(t), Model: model, Store: filestore.NewLocal(dir + "/kv"), Events: events,
		Confirmations: cs, ConfirmationStore: cs.Store, Options: opts, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Tools: map[string]Tool{
			ActionSearch:    SearchTool{Searches: fs},
			ActionFlags:     FlagsTool{Inputs: emptyBlobs{}},
			ActionCompanion: MachineTool{Name: "CareerCompanionStateMachine", NewArgs: func() any { return &CompanionArgs{} }},
			ActionDebate:    MachineTool{Name: "DebateStateMachine", NewArgs: func() any { return &DebateArgs{} }},
			ActionReports:   ReportsTool{Searches: fs, Outbox: ob},
		},
	}
	if err := svc.Validate(); err != nil {
		t.Fatal(err)
	}
	return &rig{svc: svc, events: events, confirms: cs, searches: fs, outbox: ob}
}

type emptyBlobs struct{}

func (emptyBlobs) Get(context.Context, string) ([]byte, error) {
	return nil, &veredicto.NotFoundError{What: "blob"}
}
func (emptyBlobs) List(context.Context, string) ([]string, error) { return nil, nil }

func (r *rig) turn(t *testing.T, chatID, msg string) TurnResult {
	t.Helper()
	ctx := context.Background()
	n, err := r.svc.Claim(ctx, "acme", chatID)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.svc.Turn(ctx, "acme", chatID, n, msg)
	if err != nil {
		t.Fatalf("turn: %v", err)
	}
	return res
}

func (r *rig) eventsOf(t *testing.T, chatID string) []map[string]any {
	t.Helper()
	evs, err := r.events.Read(context.Background(), "acme", StreamName(chatID), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, ev := range evs {
		var m map[string]any
		_ = json.Unmarshal(ev.Data, &m)
		out = append(out, m)
	}
	return out
}

func types(evs []map[string]any) string {
	var ts []string
	for _, e := range evs {
		ts = append(ts, e["type"].(string))
	}
	return strings.Join(ts, ",")
}

func TestSystemPromptHintAtThreshold(t *testing.T) {
	model := &scripted{answer: func(int, Prompt) Reply { return Reply{Content: "ok"} }}
	r := newRig(t, model, Options{})
	tests := []struct {
		msg  string
		hint bool
	}{
		{"Abre un debate sobre c-005", true},                      // 0.98
		{"Me gustaría que lo mire el comité si es posible", true}, // 0.62
		{"¿Qué puedes hacer con un debate?", false},               // 0.45
		{"Hola, ¿qué tal?", false},                                // 0
	}
	for i, tc := range tests {
		in := r.svc.Registry.ScoreDelegationIntent(tc.msg)
		if (in.Score >= HintThreshold) != tc.hint {
			t.Fatalf("%q scores %.2f: the table assumes hint=%v", tc.msg, in.Score, tc.hint)
		}
		r.turn(t, fmt.Sprintf("h%d", i), tc.msg)
		p := model.prompts[len(model.prompts)-1]
		hint := fmt.Sprintf(HintText, "debate", "debate")
		if got := strings.Contains(p.System, hint); got != tc.hint {
			t.Errorf("%q (score %.2f): hint in system prompt = %v, want %v", tc.msg, in.Score, got, tc.hint)
		}
		// Scores never reach the model.
		all, _ := json.Marshal(p)
		for _, leak := range []string{fmt.Sprintf("%.2f", in.Score), "score:", "scores"} {
			if in.Score > 0 && strings.Contains(string(all), leak) {
				t.Errorf("%q: the prompt contains %q", tc.msg, leak)
			}
		}
	}
}

func TestToolsListEveryDelegationButSupervisor(t *testing.T) {
	model := &scripted{answer: func(int, Prompt) Reply { return Reply{Content: "ok"} }}
	for _, only := range []bool{false, true} {
		r := newRig(t, model, Options{DelegationOnly: only})
		r.turn(t, "tools", "hola")
		p := model.prompts[len(model.prompts)-1]
		var names []string
		for _, tool := range p.Tools {
			names = append(names, tool.Name)
			var schema map[string]any
			if err := json.Unmarshal(tool.Parameters, &schema); err != nil || schema["additionalProperties"] != false {
				t.Errorf("%s: parameters are not a strict object schema: %s", tool.Name, tool.Parameters)
			}
		}
		want := "delegate_to_search-analyst,delegate_to_flags-classifier,delegate_to_companion,delegate_to_debate,delegate_to_reports,current_time"
		if !only {
			want += ",recent_turns"
		}
		if got := strings.Join(names, ","); got != want {
			t.Errorf("DelegationOnly=%v: tools = %s, want %s", only, got, want)
		}
		if strings.Contains(strings.Join(names, ","), "delegate_to_veredicto") {
			t.Error("the supervisor has a delegation tool")
		}
	}
}

func TestDelegatedTurnCompares(t *testing.T) {
	model := &scripted{answer: func(n int, p Prompt) Reply {
		if n == 1 {
			return delegateCall("call_1", "delegate_to_search-analyst", map[string]any{"reason": "leer y comparar los informes", "request": "compara",
				"operation": "compare", "search_id": "cfo-2026", "candidate_ids": []string{"c-001", "c-006"}, "dimension": "deuda"})
		}
		last := p.Messages[len(p.Messages)-1]
		if last.Role != "tool" || !strings.Contains(last.Content, "<<<") || !strings.Contains(last.Content, `"dimension_mentions":1`) {
			return Reply{Content: "no vi el resultado: " + last.Content}
		}
		return Reply{Content: "c-001 tiene un hallazgo sobre deuda; c-006 ninguno."}
	}}
	r := newRig(t, model, Options{DebugIntent: true})
	res := r.turn(t, "c1", "Compara a c-001 con c-006 en deuda en la búsqueda cfo-2026")
	if res.Delegated != "search-analyst" || res.Missed {
		t.Fatalf("result = %+v, want delegated to search-analyst", res)
	}
	if !strings.Contains(res.Text, "→ Delego en analista de búsqueda: leer y comparar los informes") || !strings.Contains(res.Text, "c-006 ninguno") {
		t.Errorf("text = %q", res.Text)
	}
	evs := r.eventsOf(t, "c1")
	got := types(evs)
	want := "delegation-intent,text-delta,tool-invocation,execution-step,execution-step,execution-step,tool-invocation,text-delta,finish"
	if got != want {
		t.Errorf("events = %s\nwant     %s", got, want)
	}
	if ti := evs[6]["toolInvocation"].(map[string]any); ti["state"] != "result" || ti["toolName"] != "delegate_to_search-analyst" {
		t.Errorf("tool result event = %v", ti)
	}
	m, err := r.svc.Metrics(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	if c := m.Agents["search-analyst"]; c.Intent != 1 || c.Delegated != 1 || c.Missed != 0 {
		t.Errorf("metrics = %+v", m)
	}
}

func TestMissedDelegation(t *testing.T) {
	model := &scripted{answer: func(int, Prompt) Reply { return Reply{Content: "Prefiero responder yo."} }}
	r := newRig(t, model, Options{})
	res := r.turn(t, "m1", "Abre un debate sobre c-005") // 0.98 ≥ 0.75
	if !res.Missed {
		t.Fatal("a turn at 0.98 without delegation is not a missed delegation")
	}
	evs := r.eventsOf(t, "m1")
	if got := types(evs); got != "text-delta,delegation-missed,finish" {
		t.Fatalf("events = %s", got)
	}
	if evs[1]["target"] != "debate" || evs[1]["score"].(float64) != 0.98 {
		t.Errorf("delegation-missed = %v", evs[1])
	}
	// 0.62 is below the missed threshold: no event.
	if res := r.turn(t, "m2", "Me gustaría que lo mire el comité si es posible"); res.Missed {
		t.Error("a turn at 0.62 counted as missed")
	}
	m, _ := r.svc.Metrics(context.Background(), "acme")
	if c := m.Agents["debate"]; c.Intent != 2 || c.Missed != 1 || c.Delegated != 0 {
		t.Errorf("debate counters = %+v, want intent 2, missed 1", c)
	}
	// Another tenant sees none of it.
	other, _ := r.svc.Metrics(context.Background(), "other")
	if other.Turns != 0 {
		t.Errorf("other tenant sees %d turns", other.Turns)
	}
}

func TestOneDelegationPerTurnAndCriticalRetry(t *testing.T) {
	compare := map[string]any{"reason": "r", "request": "q", "operation": "compare", "search_id": "cfo-2026", "candidate_ids": []string{"c-001", "c-006"}, "dimension": ""}
	t.Run("second delegation refused", func(t *testing.T) {
		model := &scripted{answer: func(n int, p Prompt) Reply {
			switch n {
			case 1:
				return delegateCall("a", "delegate_to_search-analyst", compare)
			case 2:
				return delegateCall("b", "delegate_to_debate", map[string]any{"reason": "r", "request": "q", "search_id": "", "candidate_id": "c-001", "question": "q"})
			}
			return Reply{Content: "fin"}
		}}
		r := newRig(t, model, Options{})
		res := r.turn(t, "o1", "compara a c-001 con c-006 en la búsqueda cfo-2026")
		last := model.prompts[2].Messages
		if msg := last[len(last)-1].Content; !strings.Contains(msg, "como máximo una delegación por turno") {
			t.Errorf("second delegation answered %q", msg)
		}
		if res.Delegated != "search-analyst" {
			t.Errorf("delegated = %q", res.Delegated)
		}
	})
	t.Run("failed critical delegation retried once", func(t *testing.T) {
		model := &scripted{answer: func(n int, p Prompt) Reply {
			if n <= 3 {
				return delegateCall(fmt.Sprint(n), "delegate_to_search-analyst", compare)
			}
			return Reply{Content: "fin"}
		}}
		r := newRig(t, model, Options{})
		r.searches.failing = true
		r.turn(t, "o2", "compara a c-001 con c-006 en la búsqueda cfo-2026")
		msgs := model.prompts[3].Messages
		var tools []string
		for _, m := range msgs {
			if m.Role == "tool" {
				tools = append(tools, m.Content)
			}
		}
		if len(tools) != 3 || !strings.Contains(tools[0], "error interno") || !strings.Contains(tools[1], "error interno") ||
			!strings.Contains(tools[2], "solo se reintenta una vez") {
			t.Errorf("tool answers = %q", tools)
		}
	})
}

func TestConfirmationApprovedAndRejected(t *testing.T) {
	for _, approve := range []bool{true, false} {
		t.Run(fmt.Sprint(approve), func(t *testing.T) {
			model := sendsReports("listo")
			r := newRig(t, model, Options{})
			ctx := context.Background()
			done := make(chan TurnResult)
			go func() { done <- r.turn(t, "s1", "Envía la terna al cliente") }()
			var id string
			poll.Until(t, 5*time.Second, func() bool {
				for _, e := range r.eventsOf(t, "s1") {
					if e["type"] == eventlog.TypePendingConfirmation {
						id = e["id"].(string)
						if e["category"] != "email_send" || e["sensitivity"] != "high" || e["undoable"] != false {
							t.Errorf("pending confirmation = %v", e)
						}
					}
				}
				return id != ""
			}, "a pending-confirmation on the chat stream")
			if len(r.outbox.sent) != 0 {
				t.Fatal("sent before the decision")
			}
			if v, err := r.confirms.Resolve(ctx, "acme", confirm.Resolution{ID: id, Approved: approve, By: "ana"}); err != nil || v.Delivery != confirm.DeliveryPolled {
				t.Fatalf("resolve: %+v, %v; want delivery polled", v, err)
			}
			<-done
			if got := len(r.outbox.sent); (got == 1) != approve {
				t.Errorf("approved=%v: %d messages sent", approve, got)
			}
			evs := r.eventsOf(t, "s1")
			if !strings.Contains(types(evs), "pending-confirmation,confirmation-resolved") {
				t.Errorf("events = %s", types(evs))
			}
			last := model.prompts[1].Messages
			told := last[len(last)-1].Content
			if approve != strings.Contains(told, `"sent":true`) || !approve && !strings.Contains(told, "rechazó") {
				t.Errorf("the model was told %q", told)
			}
		})
	}
}

func TestOfflineSupervisor(t *testing.T) {
	r := newRig(t, nil, Options{})
	res := r.turn(t, "off", "Compara a c-001 con c-006 en deuda en la búsqueda cfo-2026")
	if res.Delegated != "search-analyst" || !strings.Contains(res.Text, OfflineNotice) || !strings.Contains(res.Text, `1 sobre "deuda"`) {
		t.Errorf("offline delegated turn = %+v", res)
	}
	res = r.turn(t, "off", "Hola, ¿qué tal?")
	if res.Delegated != "" || res.Text != OfflineTemplate {
		t.Errorf("offline chat turn = %+v", res)
	}
	hist, _ := r.svc.History(context.Background(), "acme", "off", 10)
	if len(hist) != 2 || hist[0].User == "" || hist[1].Turn != 2 || hist[0].Model != "offline" || !strings.HasPrefix(hist[0].PromptVersion, "chat_supervisor@") ||
		hist[0].PromptVersion == "chat_supervisor@missing" {
		t.Errorf("history = %+v", hist)
	}
}

func TestMachineToolNotRegistered(t *testing.T) {
	r := newRig(t, nil, Options{})
	res := r.turn(t, "d", "Abre un debate sobre c-005 en la búsqueda cfo-2026")
	if res.Delegated != "debate" || !strings.Contains(res.Text, "DebateStateMachine no está disponible") {
		t.Errorf("turn = %+v", res)
	}
}

func TestHistoryBoundedInPrompt(t *testing.T) {
	model := &scripted{answer: func(int, Prompt) Reply { return Reply{Content: "ok"} }}
	r := newRig(t, model, Options{HistoryTurns: 2})
	for i := range 4 {
		r.turn(t, "h", fmt.Sprintf("mensaje %d", i))
	}
	p := model.prompts[3]
	if len(p.Messages) != 5 || p.Messages[0].Content != "mensaje 1" || p.Messages[4].Content != "mensaje 3" {
		t.Errorf("prompt messages = %+v, want the last 2 turns and the new message", p.Messages)
	}
}

func TestCheckRejects(t *testing.T) {
	for _, tc := range []struct{ chat, msg, field string }{
		{"", "hola", "chat_id"}, {"a/b", "hola", "chat_id"}, {"ok", "  ", "message"}, {"ok", strings.Repeat("x", MaxMessageBytes+1), "message"},
	} {
		err := Check(tc.chat, tc.msg)
		ie, ok := err.(*veredicto.InvalidInputError)
		if !ok || ie.Field != tc.field {
			t.Errorf("Check(%q, …) = %v, want field %s", tc.chat, err, tc.field)
		}
	}
}

// TestFlagsDelegation classifies an uploaded interview (the flags example)
// through the offline supervisor: the tool reads the tenant's documents
// and runs internal/flags; another tenant's interview is not found.
func TestFlagsDelegation(t *testing.T) {
	dir := t.TempDir()
	blobs := fileblob.NewDir(dir)
	for _, f := range []string{"questions.yaml", "context.yaml", "transcript_rrhh.yaml", "transcript_tecnico.yaml"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "examples", "flags", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := blobs.Put(context.Background(), InterviewPrefix("acme", "int-7")+f, b, "text/yaml"); err != nil {
			t.Fatal(err)
		}
	}
	r := newRig(t, nil, Options{})
	r.svc.Tools[ActionFlags] = FlagsTool{Inputs: blobs, Judge: flags.OfflineJudge{}}
	res := r.turn(t, "f", "Marca las banderas de la entrevista int-7")
	if res.Delegated != "flags-classifier" || !strings.Contains(res.Text, "Banderas de la entrevista int-7 (fl_") {
		t.Fatalf("turn = %+v", res)
	}
	var result map[string]any
	for _, e := range r.eventsOf(t, "f") {
		if ti, ok := e["toolInvocation"].(map[string]any); ok && ti["state"] == "result" {
			result = ti["result"].(map[string]any)
		}
	}
	data, _ := result["data"].(map[string]any)
	if byQ, _ := data["by_question"].([]any); len(byQ) == 0 {
		t.Errorf("no per-question flags in the result: %v", result)
	}
	// Another tenant asking for the same id finds nothing.
	n, _ := r.svc.Claim(context.Background(), "zeta", "f")
	other, _ := r.svc.Turn(context.Background(), "zeta", "f", n, "Marca las banderas de la entrevista int-7")
	if !strings.Contains(other.Text, "la entrevista int-7 no existe") {
		t.Errorf("other tenant: %q", other.Text)
	}
}

// BenchmarkOfflineTurn measures the chat's own overhead per turn with the
// local adapters (durable event log, file store): claim, intent, history,
// one delegation that compares two reports, its events and the stored
// turn; no model.
func BenchmarkOfflineTurn(b *testing.B) {
	r := newRig(b, nil, Options{})
	ctx := context.Background()
	i := 0
	for b.Loop() {
		i++
		chatID := fmt.Sprintf("b%d", i%50) // up to 50 chats with growing history
		n, err := r.svc.Claim(ctx, "acme", chatID)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.svc.Turn(ctx, "acme", chatID, n, "Compara a c-001 con c-006 en deuda en la búsqueda cfo-2026"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestInvalidArgumentsAreNotADelegation: arguments that break the tool's
// schema are refused before anything runs, and the model may correct
// them in the same turn.
func TestInvalidArgumentsAreNotADelegation(t *testing.T) {
	model := &scripted{answer: func(n int, p Prompt) Reply {
		switch n {
		case 1: // missing fields, an unknown one
			return delegateCall("x", "delegate_to_reports", map[string]any{"reason": "r", "operation": "send", "colour": "red"})
		case 2:
			return delegateCall("y", "delegate_to_reports", map[string]any{"reason": "exportar", "request": "q", "operation": "export",
				"search_id": "cfo-2026", "candidate_ids": []string{"c-001"}, "recipient": ""})
		}
		return Reply{Content: "exportado"}
	}}
	r := newRig(t, model, Options{})
	res := r.turn(t, "ia", "Exporta el informe de c-001")
	if res.Delegated != "reports" || !strings.Contains(res.Text, "exportado") {
		t.Fatalf("turn = %+v", res)
	}
	first := model.prompts[1].Messages[len(model.prompts[1].Messages)-1].Content
	if !strings.Contains(first, "Argumentos inválidos") {
		t.Errorf("first tool answer = %q", first)
	}
	second := model.prompts[2].Messages[len(model.prompts[2].Messages)-1].Content
	if !strings.Contains(second, `"ok":true`) {
		t.Errorf("corrected call answered %q", second)
	}
}

// TestConfirmationWaitRunsOut: a confirmation nobody answers within the
// bound is rejected on the person's behalf: nothing is sent, the stream
// says so, and a late answer is refused.
func TestConfirmationWaitRunsOut(t *testing.T) {
	model := sendsReports("ok")
	r := newRig(t, model, Options{ConfirmWait: 100 * time.Millisecond})
	r.turn(t, "late", "Envía la terna al cliente")
	if len(r.outbox.sent) != 0 {
		t.Fatal("sent without an answer")
	}
	var id string
	for _, e := range r.eventsOf(t, "late") {
		if e["type"] == eventlog.TypeConfirmationResolved {
			id = e["id"].(string)
			if e["status"] != "rejected" || e["decided_by"] != "veredicto-chat" {
				t.Errorf("confirmation-resolved = %v", e)
			}
		}
	}
	if id == "" {
		t.Fatalf("no confirmation-resolved: %s", types(r.eventsOf(t, "late")))
	}
	if _, err := r.confirms.Resolve(context.Background(), "acme", confirm.Resolution{ID: id, Approved: true, By: "ana"}); err == nil {
		t.Error("a late approval was accepted")
	}
}

// TestDelegatedConfirmationsReachTheConversation: a workflow the chat
// started asks for a confirmation (the debate's human decision); it goes
// to the conversation's stream as well as the execution's (seed 004: one
// stream), and so does its resolution.
func TestDelegatedConfirmationsReachTheConversation(t *testing.T) {
	model := &scripted{answer: func(n int, p Prompt) Reply {
		if n == 1 {
			return delegateCall("d", "delegate_to_debate", map[string]any{"reason": "r", "request": "q", "search_id": "", "candidate_id": "c-001", "question": "¿Avanzamos?", "options": []string{}})
		}
		return Reply{Content: "fin"}
	}}
	r := newRig(t, model, Options{})
	st := &fakeStarter{}
	r.svc.Tools[ActionDebate] = MachineTool{Name: "DebateStateMachine", NewArgs: func() any { return &DebateArgs{} }, Input: DebateInput,
		Execution: DebateExecution, Client: st, MachineARN: "arn:sm"}
	r.turn(t, "d1", "Abre un debate sobre c-001")
	if len(st.in) != 1 {
		t.Fatalf("%d executions started, want 1", len(st.in))
	}
	// Named as the debates API names its debate_id's execution, so
	// GET /debates/{debate_id} finds a debate the chat started.
	var in struct {
		DebateID string `json:"debate_id"`
	}
	json.Unmarshal([]byte(aws.ToString(st.in[0].Input)), &in)
	if got, want := aws.ToString(st.in[0].Name), starter.ExecutionName("acme", in.DebateID); in.DebateID == "" || got != want {
		t.Errorf("the debate %q runs as %q, want %q", in.DebateID, got, want)
	}
	arn := "arn:x:" + aws.ToString(st.in[0].Name)
	ctx := context.Background()
	resp, err := r.confirms.Confirm(ctx, confirm.Request{TaskToken: "tok-1", ToolName: "debate_decision", Category: "decision",
		Sensitivity: "high", Undoable: ptrBool(false), Preview: json.RawMessage(`{"decision":"avanzar"}`), Tenant: "acme", Execution: arn})
	if err != nil {
		t.Fatal(err)
	}
	has := func(typ string) bool {
		for _, e := range r.eventsOf(t, "d1") {
			if e["type"] == typ && e["id"] == resp.ID {
				return true
			}
		}
		return false
	}
	if !has("pending-confirmation") {
		t.Errorf("the conversation's stream lacks the debate's pending-confirmation: %s", types(r.eventsOf(t, "d1")))
	}
	if evs, _ := r.events.Read(ctx, "acme", arn, 0, 10); len(evs) != 1 {
		t.Errorf("the execution's stream holds %d events, want its pending-confirmation", len(evs))
	}
	if _, err := r.confirms.ExpireExecution(ctx, "acme", arn); err != nil {
		t.Fatal(err)
	}
	if !has("confirmation-resolved") {
		t.Errorf("the conversation's stream lacks the resolution: %s", types(r.eventsOf(t, "d1")))
	}
}

func ptrBool(b bool) *bool { return &b }

// TestCloseInterrupted: a turn a killed server claimed and never finished
// is closed at the next start (stored, finished on the stream), and the
// confirmation it waited on is rejected, so a late approval is a 409, not
// a decision recorded against nothing.
func TestCloseInterrupted(t *testing.T) {
	r := newRig(t, &scripted{answer: func(int, Prompt) Reply { return Reply{Content: "ok"} }}, Options{})
	ctx := context.Background()
	done := r.turn(t, "k1", "Hola")
	if b, ok, _ := r.svc.Store.Get(ctx, askedKey("acme", "k1", done.Turn)); !ok || string(b) != "Hola" {
		t.Fatalf("a turn does not keep its message before it runs: %q", b)
	}
	n, err := r.svc.Claim(ctx, "acme", "k1")
	if err != nil || n != done.Turn+1 {
		t.Fatalf("claim: %d, %v", n, err)
	}
	// The turn started (its message kept) and the server died.
	if _, err := r.svc.Store.PutIfAbsent(ctx, askedKey("acme", "k1", n), []byte("Envía el informe")); err != nil {
		t.Fatal(err)
	}
	resp, err := r.confirms.Confirm(ctx, confirm.Request{ToolName: "reports", Category: "email_send", Sensitivity: "high",
		Undoable: ptrBool(false), Preview: json.RawMessage(`{"to":"x@example.com"}`), Tenant: "acme", Execution: StreamName("k1"),
		Key: fmt.Sprintf("chat/k1/%d/1", n)})
	if err != nil {
		t.Fatal(err)
	}
	closed, err := r.svc.CloseInterrupted(ctx)
	if err != nil || closed != 1 {
		t.Fatalf("CloseInterrupted = %d, %v; want 1", closed, err)
	}
	hist, _ := r.svc.History(ctx, "acme", "k1", 10)
	if len(hist) != 2 || hist[1].Turn != n || hist[1].Error != "Interrupted" || hist[1].User != "Envía el informe" {
		t.Errorf("history %+v, want the interrupted turn stored", hist)
	}
	evs := r.eventsOf(t, "k1")
	if last := evs[len(evs)-1]; last["type"] != "finish" || last["turn"] != float64(n) {
		t.Errorf("the stream ends with %v, want the interrupted turn's finish", last)
	}
	if _, err := r.confirms.Resolve(ctx, "acme", confirm.Resolution{ID: resp.ID, Approved: true, By: "ana"}); veredicto.Kind(err) != veredicto.NameConflict {
		t.Errorf("a late approval: %v, want 409", err)
	}
	if again, _ := r.svc.CloseInterrupted(ctx); again != 0 {
		t.Errorf("a second pass closed %d turns", again)
	}
}

// TestHintAtExactlyTheThreshold: seed §5.2 says "score >= 0.55": a score
// of exactly 0.55 carries the hint, 0.54 does not.
func TestHintAtExactlyTheThreshold(t *testing.T) {
	r := newRig(t, &scripted{answer: func(int, Prompt) Reply { return Reply{Content: "ok"} }}, Options{})
	hint := fmt.Sprintf(HintText, "debate", "debate")
	for score, want := range map[float64]bool{0.55: true, 0.54: false, 0.75: true} {
		if got := strings.Contains(r.svc.SystemPrompt(Intent{Target: "debate", Score: score}), hint); got != want {
			t.Errorf("score %.2f: hint %v, want %v", score, got, want)
		}
	}
}

// TestMissedAtExactlyTheThreshold: a turn that delegated nothing is a
// missed delegation from a score of exactly 0.75; below it, or when
// something was delegated, it is not.
func TestMissedAtExactlyTheThreshold(t *testing.T) {
	for _, tc := range []struct {
		score     float64
		delegated bool
		want      bool
	}{{0.75, false, true}, {0.7499, false, false}, {0.98, false, true}, {0.98, true, false}} {
		if got := missedDelegation(tc.score, tc.delegated); got != tc.want {
			t.Errorf("score %.4f, delegated %v: missed %v, want %v", tc.score, tc.delegated, got, tc.want)
		}
	}
}
