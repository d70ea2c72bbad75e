package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/confirm"
	"github.com/veredicto/veredicto/internal/eventlog"
	"github.com/veredicto/veredicto/internal/labels"
	"github.com/veredicto/veredicto/internal/labels/labelstest"
	"github.com/veredicto/veredicto/internal/poll"
	"github.com/veredicto/veredicto/internal/stream"
)

// fakeExecutions resolves names under one state machine for one tenant
// and describes every execution as succeeded with its output.
type fakeExecutions struct {
	tenant  string
	outputs map[string]string // by ARN
}

func execARN(name string) string { return "arn:aws:states:us-east-1:000000000000:execution:M:" + name }

func (f fakeExecutions) ResolveExecution(_ context.Context, tenant, ref string) (string, error) {
	if tenant != f.tenant {
		return "", &veredicto.NotFoundError{What: "execution " + ref}
	}
	if strings.HasPrefix(ref, "arn:") {
		return ref, nil
	}
	return execARN(ref), nil
}

func (f fakeExecutions) Describe(_ context.Context, tenant, arn string) (ExecutionState, error) {
	if tenant != f.tenant {
		return ExecutionState{}, &veredicto.NotFoundError{What: "execution " + arn}
	}
	return ExecutionState{Status: "SUCCEEDED", Output: json.RawMessage(f.outputs[arn])}, nil
}

// withLinks gives the rig's chat Links on its own store and log, not
// started.
func withLinks(r *rig, ex fakeExecutions) *Links {
	l := &Links{Store: r.svc.Store, Events: r.events, Log: r.events, Watch: r.events, Executions: ex, Poll: 20 * time.Millisecond, Logger: r.svc.Logger}
	r.svc.Links = l
	return l
}

// startSearch is a model that starts search id on the first call of each
// turn and then says it is done.
func startSearch(id string) *scripted {
	return &scripted{answer: func(n int, p Prompt) Reply {
		if p.Messages[len(p.Messages)-1].Role == "tool" {
			return Reply{Content: "Lanzada."}
		}
		return delegateCall("s", "delegate_to_search-analyst", map[string]any{"reason": "lanzar", "request": "lanza", "operation": "start",
			"search_id": id, "candidate_ids": []string{}, "dimension": ""})
	}}
}

// recordHistory appends what stream.Recorder appends for ev to the
// execution's stream (serve does it from the execution's history).
func recordHistory(t *testing.T, r *rig, arn string, ev stream.Event) {
	t.Helper()
	rec := &stream.Recorder{Log: r.events}
	if err := rec.Record(context.Background(), "acme", arn, ev); err != nil {
		t.Fatal(err)
	}
}

func linkedOf(e map[string]any) map[string]any {
	m, _ := e["linked"].(map[string]any)
	return m
}

// TestSearchStartedFromTheChatReportsBack is issue 32's bug: a search
// started from a conversation reports back to it. The link is kept; the
// execution's progress and the senior review it waits on (with its id, so
// the consultant decides from the chat) reach the conversation's stream,
// the review once; its end is said in Spanish with where the report is;
// and the follower stops.
func TestSearchStartedFromTheChatReportsBack(t *testing.T) {
	r := newRig(t, startSearch("cfo-2026"), Options{})
	arn := execARN("x-cfo-2026")
	l := withLinks(r, fakeExecutions{tenant: "acme", outputs: map[string]string{
		arn: `{"tenant":"acme","metrics":{"candidates":5,"escalation_rate":0.4}}`}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wait := l.Start(ctx)
	defer wait()
	defer cancel()

	res := r.turn(t, "c1", "Lanza la evaluación de la búsqueda cfo-2026")
	open, err := l.Open(ctx, "acme", "c1")
	if err != nil || len(open) != 1 {
		t.Fatalf("open links %+v, %v; want the search's", open, err)
	}
	if lk := open[0]; lk.Execution != arn || lk.Kind != KindSearch || lk.Subject != "cfo-2026" || lk.Turn != res.Turn || lk.From == 0 {
		t.Errorf("link %+v", lk)
	}

	recordHistory(t, r, arn, stream.Event{ID: 1, Type: "ExecutionStarted"})
	recordHistory(t, r, arn, stream.Event{ID: 2, Type: "TaskStateEntered", State: "Gem5"}) // a state's start: left to the execution's stream
	recordHistory(t, r, arn, stream.Event{ID: 3, Type: "TaskSucceeded", State: "Gem5"})
	review, err := r.confirms.Confirm(ctx, confirm.Request{TaskToken: "tok-1", ToolName: "senior_review", Category: "decision", Sensitivity: "high",
		Undoable: ptrBool(false), Preview: json.RawMessage(`{"search_id":"cfo-2026","candidate_id":"c-005"}`), Tenant: "acme", Execution: arn})
	if err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 5*time.Second, func() bool {
		n := 0
		for _, e := range r.eventsOf(t, "c1") {
			if linkedOf(e) != nil && e["type"] == eventlog.TypeExecutionStep {
				n++
			}
		}
		return n == 2
	}, "the search's two progress steps on the conversation's stream")
	recordHistory(t, r, arn, stream.Event{ID: 4, Type: "ExecutionSucceeded", Output: map[string]any{}})

	var end map[string]any
	poll.Until(t, 5*time.Second, func() bool {
		for _, e := range r.eventsOf(t, "c1") {
			if e["type"] == TypeLinkedFinished {
				end = e
			}
		}
		return end != nil && l.Following() == 0
	}, "the search's end on the conversation's stream, and its follower gone")
	msg, _ := end["message"].(string)
	if want := "Búsqueda cfo-2026 (desde el turno 1): terminó con escalamiento (2 de 5 candidatos al consultor senior). Informe: /searches/cfo-2026/summary"; msg != want {
		t.Errorf("end message %q\nwant %q", msg, want)
	}
	labelstest.Check(t, "the chat's end message", msg)
	if end["outcome"] != OutcomeEscalated || end["turn"] != float64(res.Turn) || linkedOf(end)["execution"] != arn {
		t.Errorf("end %v", end)
	}
	pending := 0
	for _, e := range r.eventsOf(t, "c1") {
		if e["type"] == eventlog.TypePendingConfirmation && e["id"] == review.ID {
			pending++
		}
		if e["type"] == eventlog.TypeFinish && e["turn"] != float64(res.Turn) {
			t.Errorf("a finish that is not the turn's reached the conversation: %v", e)
		}
	}
	if pending != 1 {
		t.Errorf("the senior review is on the conversation's stream %d times, want once", pending)
	}
	if open, _ := l.Open(ctx, "acme", "c1"); len(open) != 0 {
		t.Errorf("still open after its end: %+v", open)
	}
	if _, ok, _ := r.svc.Store.Get(ctx, linkEndKey(Link{Tenant: "acme", ChatID: "c1", ID: LinkID("acme", "c1", arn)})); !ok {
		t.Error("the link's end is not kept")
	}
}

// TestLinksResumeAfterARestart: a server stopped while a linked search
// ran resumes following it at its next start, from where the
// conversation's stream says it got: nothing is copied twice, and the end
// is said.
func TestLinksResumeAfterARestart(t *testing.T) {
	r := newRig(t, startSearch("cfo-2026"), Options{})
	arn := execARN("x-cfo-2026")
	ex := fakeExecutions{tenant: "acme", outputs: map[string]string{arn: `{"metrics":{"candidates":3}}`}}
	l := withLinks(r, ex)
	ctx, cancel := context.WithCancel(context.Background())
	wait := l.Start(ctx)
	r.turn(t, "c2", "Lanza la evaluación de la búsqueda cfo-2026")
	recordHistory(t, r, arn, stream.Event{ID: 1, Type: "ExecutionStarted"})
	steps := func() int {
		n := 0
		for _, e := range r.eventsOf(t, "c2") {
			if linkedOf(e) != nil && e["type"] == eventlog.TypeExecutionStep {
				n++
			}
		}
		return n
	}
	poll.Until(t, 5*time.Second, func() bool { return steps() == 1 }, "the first step copied")
	cancel() // the server stops
	wait()
	recordHistory(t, r, arn, stream.Event{ID: 2, Type: "TaskSucceeded", State: "Gem5"})
	recordHistory(t, r, arn, stream.Event{ID: 3, Type: "ExecutionSucceeded", Output: map[string]any{}})

	again := &Links{Store: r.svc.Store, Events: r.events, Log: r.events, Executions: ex, Poll: 20 * time.Millisecond, Logger: r.svc.Logger}
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	wait2 := again.Start(ctx2)
	defer wait2()
	defer cancel2()
	poll.Until(t, 5*time.Second, func() bool {
		for _, e := range r.eventsOf(t, "c2") {
			if e["type"] == TypeLinkedFinished {
				return true
			}
		}
		return false
	}, "the end said after the restart")
	// Each of the execution's three steps once: the start before the
	// restart, GEM5's and the execution's end after it.
	var sources []string
	for _, e := range r.eventsOf(t, "c2") {
		if m := linkedOf(e); m != nil && e["type"] == eventlog.TypeExecutionStep {
			sources = append(sources, fmt.Sprint(m["source"]))
		}
	}
	if got := strings.Join(sources, ","); got != "1,2,3" {
		t.Errorf("steps copied from the execution's events %s, want 1,2,3", got)
	}
	for _, e := range r.eventsOf(t, "c2") {
		if e["type"] == TypeLinkedFinished && !strings.Contains(e["message"].(string), "terminó (3 candidatos evaluados)") {
			t.Errorf("end message %q", e["message"])
		}
	}
}

// TestLinksAreBounded: a conversation follows at most MaxPerChat
// workflows at once (one more is refused before it starts, in Spanish),
// another tenant's execution is never linked, and a workflow followed
// past MaxAge is let go with a message.
func TestLinksAreBounded(t *testing.T) {
	t.Run("per conversation", func(t *testing.T) {
		r := newRig(t, startSearch("cfo-2026"), Options{})
		l := withLinks(r, fakeExecutions{tenant: "acme"})
		l.MaxPerChat = 1
		r.turn(t, "c3", "Lanza la evaluación de la búsqueda cfo-2026")
		r.svc.Model = startSearch("cto-2026")
		r.turn(t, "c3", "Lanza la evaluación de la búsqueda cto-2026")
		if got := strings.Join(r.searches.started, ","); got != "cfo-2026" {
			t.Errorf("searches started %q; want only the first", got)
		}
		refused := false
		for _, e := range r.eventsOf(t, "c3") {
			if ti, ok := e["toolInvocation"].(map[string]any); ok && ti["state"] == "error" && strings.Contains(ti["error"].(string), "ya sigue 1 flujo en curso") {
				refused = true
			}
		}
		if !refused {
			t.Errorf("no refusal on the stream: %s", types(r.eventsOf(t, "c3")))
		}
		// Another conversation has room of its own.
		if err := l.Room(context.Background(), "acme", "c4"); err != nil {
			t.Errorf("another conversation: %v", err)
		}
	})
	t.Run("tenant", func(t *testing.T) {
		r := newRig(t, startSearch("cfo-2026"), Options{})
		l := withLinks(r, fakeExecutions{tenant: "zeta"}) // the execution is not acme's
		r.turn(t, "c5", "Lanza la evaluación de la búsqueda cfo-2026")
		if open, _ := l.Open(context.Background(), "acme", "c5"); len(open) != 0 {
			t.Errorf("linked to an execution the tenant does not own: %+v", open)
		}
		if evs, _ := r.events.Read(context.Background(), "acme", eventlog.OriginStream(execARN("x-cfo-2026")), 0, 1); len(evs) != 0 {
			t.Error("the conversation became the origin of another tenant's execution")
		}
	})
	t.Run("age", func(t *testing.T) {
		r := newRig(t, startSearch("cfo-2026"), Options{})
		l := withLinks(r, fakeExecutions{tenant: "acme"})
		l.MaxAge = time.Millisecond
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		wait := l.Start(ctx)
		defer wait()
		defer cancel()
		r.turn(t, "c6", "Lanza la evaluación de la búsqueda cfo-2026")
		poll.Until(t, 5*time.Second, func() bool {
			for _, e := range r.eventsOf(t, "c6") {
				if e["type"] == TypeLinkedFinished && e["outcome"] == OutcomeUnfollowed &&
					strings.Contains(e["message"].(string), "dejó de seguir su avance. Estado: /searches/cfo-2026") {
					return l.Following() == 0
				}
			}
			return false
		}, "the search let go after MaxAge, said so")
	})
}

// TestJudgeReadsHowAWorkflowEnded: a succeeded workflow that handed cases
// to a person is said escalated, with the detail in Spanish.
func TestJudgeReadsHowAWorkflowEnded(t *testing.T) {
	for _, tc := range []struct {
		kind, output, outcome, detail string
	}{
		{KindSearch, `{"metrics":{"candidates":5,"escalation_rate":0.2}}`, OutcomeEscalated, " (1 de 5 candidatos al consultor senior)"},
		{KindSearch, `{"metrics":{"candidates":1,"escalation_rate":0}}`, OutcomeSucceeded, " (1 candidato evaluado)"},
		{KindDebate, `{"escalado_para":"HUMANO","decision":"","pending":true}`, OutcomeEscalated, " (destino: una persona; sin respuesta todavía)"},
		{KindDebate, `{"escalado_para":"COUNCIL","decision":"avanzar"}`, OutcomeEscalated, " (destino: el consejo de tres miembros; decisión: avanzar)"},
		{KindDebate, `{"escalado_para":"NENHUM","decision":"no avanzar"}`, OutcomeSucceeded, " (decisión: no avanzar)"},
		{KindCompanion, `{"step":{"status":"completed","decision":"consider"}}`, OutcomeSucceeded, " (postulación completa; considerar)"},
		{KindCompanion, `{}`, OutcomeSucceeded, ""},
	} {
		t.Run(tc.kind+tc.output, func(t *testing.T) {
			outcome, detail := judge(tc.kind, json.RawMessage(tc.output))
			if outcome != tc.outcome || detail != tc.detail {
				t.Errorf("judge = %q %q, want %q %q", outcome, detail, tc.outcome, tc.detail)
			}
			labelstest.Check(t, "the detail", detail)
		})
	}
	for _, o := range []string{OutcomeSucceeded, OutcomeEscalated, OutcomeFailed, OutcomeTimedOut, OutcomeAborted, OutcomeUnfollowed, OutcomeClosed} {
		if _, ok := labels.Lookup(labels.LinkedOutcome, o); !ok {
			t.Errorf("outcome %s has no label", o)
		}
	}
}

// getFails is a store whose Get of one key fails.
type getFails struct {
	KV
	key string
}

func (s getFails) Get(ctx context.Context, key string) ([]byte, bool, error) {
	if key == s.key {
		return nil, false, errors.New("disk error")
	}
	return s.KV.Get(ctx, key)
}

// TestLinksStartFollowsTheReadableLinks: at a start, a link that cannot
// be read is skipped and named in the log; the other links are still
// followed (one read error used to leave every workflow unfollowed until
// the next start). A record whose content names another conversation
// than its key is skipped too.
func TestLinksStartFollowsTheReadableLinks(t *testing.T) {
	r := newRig(t, startSearch("cfo-2026"), Options{})
	ctx := context.Background()
	now := time.Now()
	put := func(key string, lk Link) {
		t.Helper()
		b, _ := json.Marshal(lk)
		if _, err := r.svc.Store.PutIfAbsent(ctx, key, b); err != nil {
			t.Fatal(err)
		}
	}
	link := func(chat, name string) Link {
		return Link{Tenant: "acme", ChatID: chat, ID: LinkID("acme", chat, execARN(name)), Execution: execARN(name), At: now}
	}
	bad, good, moved := link("c1", "x-a"), link("c2", "x-b"), link("c3", "x-c")
	put(linkKey(bad), bad)
	put(linkKey(good), good)
	other := moved
	other.ChatID = "c4" // the record says c4, its key c3
	put(linkKey(moved), other)
	edited := link("c5", "x-e")
	edited.ID = "x" // key and record agree, but the id is not the link's
	put(linkKey(edited), edited)

	var logs bytes.Buffer
	l := &Links{Store: getFails{KV: r.svc.Store, key: linkKey(bad)}, Events: r.events, Log: r.events, Watch: r.events,
		Executions: fakeExecutions{tenant: "acme"}, Poll: 20 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	runCtx, cancel := context.WithCancel(ctx)
	wait := l.Start(runCtx)
	following := l.Following()
	cancel()
	wait()
	if following != 1 {
		t.Errorf("following %d workflows at the start, want the readable one", following)
	}
	for _, want := range []string{"chat link not read; skipped this time", "disk error", "does not match its key"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log does not say %q:\n%s", want, logs.String())
		}
	}
}

// TestAStartTheChatCannotFollowPromisesNothing: when the conversation
// cannot link the search it started (here the execution cannot be
// found under the tenant), the tool says so and how to ask for its
// state, instead of promising to report its progress and end.
func TestAStartTheChatCannotFollowPromisesNothing(t *testing.T) {
	r := newRig(t, startSearch("cfo-2026"), Options{})
	withLinks(r, fakeExecutions{tenant: "someone-else"})
	r.turn(t, "c9", "Lanza la evaluación de la búsqueda cfo-2026")
	var summary string
	for _, e := range r.eventsOf(t, "c9") {
		if ti, ok := e["toolInvocation"].(map[string]any); ok && ti["state"] == "result" {
			summary = fmt.Sprint(ti["result"].(map[string]any)["summary"])
		}
	}
	if !strings.Contains(summary, "no pudo quedar vinculada a su avance") || strings.Contains(summary, "avisará") {
		t.Errorf("the tool's summary %q, want no promise of news and the way to ask", summary)
	}
}
