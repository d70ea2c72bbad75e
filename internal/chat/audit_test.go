package chat

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/audit/audittest"
	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/confirm"
	"github.com/veredicto/veredicto/internal/eventlog"
	"github.com/veredicto/veredicto/internal/poll"
)

func verifyRecord(t *testing.T, dir string) []audit.Problem {
	t.Helper()
	ps, err := audit.Verify(context.Background(), audit.NewDir(dir), nil)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// TestEveryTurnIsRecorded: each turn of a chat appends to the chat's
// record, tenant-scoped: the message by its text and who sent it, the
// intent decision (agent, score, threshold), each supervisor call with
// its prompt and reply by their texts, the tool calls, the confirmation
// asked and its outcome with the principal who decided, the decision
// applied from it, and the turn's end; after every turn a summary in the
// main chain makes the record verify, and changing a byte of a turn
// fails verification there.
func TestEveryTurnIsRecorded(t *testing.T) {
	model := sendsReports("listo")
	r := newRig(t, model, Options{})
	root := t.TempDir()
	r.svc.Audit = &audit.Folders{Root: root}
	dir := filepath.Join(root, "acme", RecordName("s1"))
	ctx := auth.WithPrincipal(context.Background(), auth.Principal{Name: "ana", Tenant: "acme", Via: auth.ViaJWT})
	n, err := r.svc.Claim(ctx, "acme", "s1")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() {
		_, err := r.svc.Turn(ctx, "acme", "s1", n, "Envía la terna de c-001 al cliente")
		done <- err
	}()
	var id string
	poll.Until(t, 5*time.Second, func() bool {
		for _, e := range r.eventsOf(t, "s1") {
			if e["type"] == eventlog.TypePendingConfirmation {
				id = e["id"].(string)
			}
		}
		return id != ""
	}, "a pending-confirmation on the chat stream")
	if _, err := r.confirms.Resolve(ctx, "acme", confirm.Resolution{ID: id, Approved: true, By: "ana"}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if ps := verifyRecord(t, dir); len(ps) != 0 {
		t.Fatalf("after the first turn: %v", ps)
	}

	es := audittest.Entries(t, dir, turnChain(n))
	var start audit.Start
	json.Unmarshal(es[0].Data, &start)
	msg, _ := audit.NewDir(dir).Text(ctx, start.Documents["message"])
	if es[0].Kind != audit.KindStart || start.Workflow != WorkflowName || start.Tenant != "acme" || string(msg) != "Envía la terna de c-001 al cliente" ||
		!strings.Contains(string(start.Input), `"from":"ana"`) {
		t.Errorf("the turn's start: %+v (message %q)", start, msg)
	}
	var kinds []string
	var intent, applied []audit.Decision
	var tools, humans []string
	for _, e := range es {
		kinds = append(kinds, e.Kind)
		var d audit.Decision
		var h audit.HumanDecision
		switch {
		case e.Kind == audit.KindDecision && json.Unmarshal(e.Data, &d) == nil && d.Name == DecisionIntent:
			intent = append(intent, d)
		case e.Kind == audit.KindDecision && json.Unmarshal(e.Data, &d) == nil && d.Name == DecisionTool:
			tools = append(tools, d.Outcome+" "+d.Detail)
		case e.Kind == audit.KindDecision && json.Unmarshal(e.Data, &d) == nil && d.Name == DecisionConfirmation:
			applied = append(applied, d)
		case e.Kind == audit.KindHuman && json.Unmarshal(e.Data, &h) == nil:
			humans = append(humans, h.Status+" "+h.Confirmation+" "+h.Principal)
			if len(h.Preview) != 64 {
				t.Errorf("a confirmation without its preview's hash: %+v", h)
			}
		}
	}
	if len(intent) != 1 || intent[0].Outcome != "reports" || *intent[0].Threshold != HintThreshold || *intent[0].Score < HintThreshold {
		t.Errorf("the intent decision: %+v", intent)
	}
	if strings.Count(strings.Join(kinds, " "), audit.KindModel) != 2 {
		t.Errorf("kinds %v; want the supervisor's two calls", kinds)
	}
	if len(tools) != 1 || !strings.HasPrefix(tools[0], "ok delegate_to_reports (delegation to reports)") {
		t.Errorf("tool calls %q", tools)
	}
	if strings.Join(humans, "|") != "pending "+id+" |approved "+id+" ana" {
		t.Errorf("the confirmation: %q; want asked, then approved by ana", humans)
	}
	if len(applied) != 1 || applied[0].Outcome != "run" || applied[0].Confirmation != id || applied[0].Applies != "approved" {
		t.Errorf("the decision applied: %+v", applied)
	}
	if last := es[len(es)-1]; last.Kind != audit.KindDecision || !strings.Contains(string(last.Data), DecisionTurnEnd) {
		t.Errorf("the turn does not end with its end: %s", last.Data)
	}

	// A second turn: its own chain, a new summary; the record verifies.
	model.answer = func(int, Prompt) Reply { return Reply{Content: "Hola, ¿en qué te ayudo?"} }
	r.turn(t, "s1", "Hola")
	if ps := verifyRecord(t, dir); len(ps) != 0 {
		t.Fatalf("after the second turn: %v", ps)
	}
	sums := 0
	for _, e := range audittest.Entries(t, dir, audit.MainChain) {
		if e.Kind == audit.KindSummary {
			sums++
		}
	}
	if sums != 2 {
		t.Errorf("%d summaries, want one per turn", sums)
	}

	// Tampering with a turn fails verification at that turn.
	p := filepath.Join(dir, "chains", "turn%2F0001.jsonl")
	b, _ := os.ReadFile(p)
	os.WriteFile(p, []byte(strings.Replace(string(b), `"principal":"ana"`, `"principal":"eve"`, 1)), 0o600)
	if ps := verifyRecord(t, dir); len(ps) == 0 || ps[0].Chain != "turn/0001" {
		t.Errorf("a changed principal: %v", ps)
	}
}

// TestUnansweredConfirmationIsRecorded: a confirmation the turn gives up
// on is recorded as rejected on the person's behalf, and the action is
// recorded as not run.
func TestUnansweredConfirmationIsRecorded(t *testing.T) {
	model := sendsReports("ok")
	r := newRig(t, model, Options{ConfirmWait: 100 * time.Millisecond})
	root := t.TempDir()
	r.svc.Audit = &audit.Folders{Root: root}
	res := r.turn(t, "late", "Envía la terna al cliente")
	dir := filepath.Join(root, "acme", RecordName("late"))
	if ps := verifyRecord(t, dir); len(ps) != 0 {
		t.Fatalf("verify: %v", ps)
	}
	var got []string
	for _, e := range audittest.Entries(t, dir, turnChain(res.Turn)) {
		var h audit.HumanDecision
		var d audit.Decision
		if e.Kind == audit.KindHuman && json.Unmarshal(e.Data, &h) == nil {
			got = append(got, h.Status+" by "+h.Principal)
		}
		if e.Kind == audit.KindDecision && json.Unmarshal(e.Data, &d) == nil && d.Name == DecisionConfirmation {
			got = append(got, d.Outcome)
		}
	}
	if strings.Join(got, ", ") != "pending by , rejected by veredicto-chat, not_run" {
		t.Errorf("recorded %q", got)
	}
}

// TestInterruptedTurnIsClosedInTheRecord: a turn a killed server left
// mid-way has a record that does not verify (no summary names it);
// closing the interrupted turns at the next start ends its record, which
// then verifies.
func TestInterruptedTurnIsClosedInTheRecord(t *testing.T) {
	r := newRig(t, &scripted{answer: func(int, Prompt) Reply { return Reply{Content: "ok"} }}, Options{})
	root := t.TempDir()
	r.svc.Audit = &audit.Folders{Root: root}
	ctx := context.Background()
	n, err := r.svc.Claim(ctx, "acme", "k1")
	if err != nil {
		t.Fatal(err)
	}
	// The turn opened its record, then the server died.
	if _, err := r.svc.openTurn(ctx, &turn{s: r.svc, tenant: "acme", chatID: "k1", n: n}, "offline", "Hola"); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "acme", RecordName("k1"))
	if ps := verifyRecord(t, dir); len(ps) == 0 {
		t.Fatal("an unfinished turn's record verifies")
	}
	if closed, err := r.svc.CloseInterrupted(ctx); err != nil || closed != 1 {
		t.Fatalf("closed %d, %v", closed, err)
	}
	if ps := verifyRecord(t, dir); len(ps) != 0 {
		t.Errorf("after closing: %v", ps)
	}
	es := audittest.Entries(t, dir, turnChain(n))
	if last := es[len(es)-1]; !strings.Contains(string(last.Data), `"outcome":"interrupted"`) {
		t.Errorf("the turn's last entry: %s", last.Data)
	}
}
