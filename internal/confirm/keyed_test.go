package confirm_test

import (
	"encoding/json"
	"errors"
	"github.com/veredicto/veredicto/internal/httpapi"
	"testing"

	"github.com/veredicto/veredicto"
	. "github.com/veredicto/veredicto/internal/confirm"
)

const execA, execB = "arn:aws:states:local:000000000000:execution:executive_search:a", "arn:aws:states:local:000000000000:execution:executive_search:b"

// keyed is a keyed question asked by execution, waiting with token ("":
// a lookup that waits for nothing).
func keyed(execution, token string) Request {
	r := request("acme", token)
	r.Key, r.Execution = "senior_review/s-1/c-005", execution
	return r
}

func (f *fixture) ask(t *testing.T, r Request) Response {
	t.Helper()
	resp, err := f.svc.Confirm(t.Context(), r)
	if err != nil {
		t.Fatalf("Confirm(%s, token %q): %v", r.Execution, r.TaskToken, err)
	}
	return resp
}

func TestKeyIDIgnoresJSONLayout(t *testing.T) {
	tests := []struct {
		name    string
		a, b    string
		samekey bool
		same    bool
	}{
		{"key order and spacing", `{"candidate":"c-005","reason":"x"}`, "{ \"reason\": \"x\",\n \"candidate\": \"c-005\" }", true, true},
		{"another package", `{"candidate":"c-005","reason":"x"}`, `{"candidate":"c-005","reason":"y"}`, true, false},
		{"another key", `{"candidate":"c-005"}`, `{"candidate":"c-005"}`, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kb := "senior_review/s-1/c-005"
			if !tt.samekey {
				kb = "senior_review/s-1/c-006"
			}
			a, b := KeyID("acme", "senior_review/s-1/c-005", json.RawMessage(tt.a)), KeyID("acme", kb, json.RawMessage(tt.b))
			if (a == b) != tt.same || !ValidID(a) {
				t.Errorf("KeyID %s vs %s: same %v, want %v", a, b, a == b, tt.same)
			}
		})
	}
}

// TestKeyedLookupThenDecision: a lookup records the question once; a
// decision nobody waits for is final at once (DeliveryNextRun, no SendTask)
// and every later lookup, from any execution, returns it.
func TestKeyedLookupThenDecision(t *testing.T) {
	for _, approve := range []bool{true, false} {
		t.Run(map[bool]string{true: "approved", false: "rejected"}[approve], func(t *testing.T) { testKeyedDecision(t, approve) })
	}
}

func testKeyedDecision(t *testing.T, approve bool) {
	{
		f := newFixture(t)
		first := f.ask(t, keyed(execA, ""))
		if !first.Created || first.Status != StatusPending || first.Decision != nil {
			t.Fatalf("first lookup %+v, want a new pending question", first)
		}
		if again := f.ask(t, keyed(execA, "")); again.ID != first.ID || again.Created {
			t.Errorf("same lookup again %+v, want the same record", again)
		}
		v, err := f.svc.Resolve(t.Context(), "acme", Resolution{ID: first.ID, Approved: approve, By: "ana", Comment: "ok"})
		want := map[bool]string{true: StatusApproved, false: StatusRejected}[approve]
		if err != nil || v.Status != want || v.Delivery != DeliveryNextRun {
			t.Fatalf("Resolve: %+v %v; want %s for the next run", v, err, want)
		}
		got := f.ask(t, keyed(execB, ""))
		if got.ID != first.ID || got.Status != want || got.Decision == nil || got.Decision.Approved != approve || got.Decision.DecidedBy != "ana" || got.Decision.Comment != "ok" {
			t.Errorf("next run's lookup %+v, want ana's decision", got)
		}
		var ce *veredicto.ConflictError
		if _, err := f.svc.Confirm(t.Context(), keyed(execB, "tok-b")); !errors.As(err, &ce) {
			t.Errorf("a task waiting on a decided question: %v, want ConflictError (look it up)", err)
		}
	}
}

// TestKeyedWaitInAnotherProcess: a task waiting in another process's
// engine (Resolver) is attached to the question's one record; a decision
// taken elsewhere is recorded and left to that process, whose Redeliver
// delivers it once; if that process is gone, the next execution's lookup
// applies the decision instead.
func TestKeyedWaitInAnotherProcess(t *testing.T) {
	t.Run("delivered by the waiting process", func(t *testing.T) {
		f := newFixture(t)
		runner := &Service{Store: f.svc.Store, Events: f.log, Tasks: f.tasks, Now: f.clock.Now, Logger: f.svc.Logger, Resolver: "run-1"}
		id := f.ask(t, keyed(execA, "")).ID
		if resp, err := runner.Confirm(t.Context(), keyed(execA, "tok-a")); err != nil || resp.ID != id {
			t.Fatalf("waiting task: %+v %v, want it on record %s", resp, err, id)
		}
		v, err := f.svc.Resolve(t.Context(), "acme", Resolution{ID: id, Approved: true, By: "ana"})
		if err != nil || v.Status != StatusResolving || v.Resolver != "run-1" || f.tasks.sent("tok-a") != 0 {
			t.Fatalf("Resolve elsewhere: %+v %v, sent %d; want the decision recorded and left to run-1", v, err, f.tasks.sent("tok-a"))
		}
		for range 2 {
			if v, err = runner.Redeliver(t.Context(), "acme", id); err != nil || v.Status != StatusApproved {
				t.Fatalf("Redeliver: %+v %v", v, err)
			}
		}
		if n := f.tasks.sent("tok-a"); n != 1 {
			t.Errorf("SendTask calls %d, want 1", n)
		}
	})
	t.Run("applied by the next run when the waiter is gone", func(t *testing.T) {
		f := newFixture(t)
		runner := &Service{Store: f.svc.Store, Events: f.log, Tasks: f.tasks, Now: f.clock.Now, Logger: f.svc.Logger, Resolver: "run-1"}
		id := f.ask(t, keyed(execA, "")).ID
		if _, err := runner.Confirm(t.Context(), keyed(execA, "tok-a")); err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.Resolve(t.Context(), "acme", Resolution{ID: id, Approved: false, By: "ana"}); err != nil {
			t.Fatal(err)
		}
		got := f.ask(t, keyed(execB, ""))
		if got.Status != StatusRejected || got.Decision == nil || got.Decision.DecidedBy != "ana" {
			t.Fatalf("next run's lookup %+v, want ana's rejection", got)
		}
		rec, _ := f.svc.Store.Get(t.Context(), "acme", id)
		if rec.Delivery != DeliveryNextRun || f.tasks.sent("tok-a") != 0 {
			t.Errorf("record %+v, sent %d; want the decision final for the next run, never sent to the gone task", rec, f.tasks.sent("tok-a"))
		}
	})
	t.Run("an expired wait is reopened by the next run", func(t *testing.T) {
		f := newFixture(t)
		r := keyed(execA, "tok-a")
		r.TimeoutSeconds = 60
		id := f.ask(t, r).ID
		f.clock.Add(2 * DefaultTimeout)
		if _, err := f.svc.Resolve(t.Context(), "acme", Resolution{ID: id, Approved: true, By: "ana"}); httpapi.StatusOf(err) != 410 {
			t.Fatalf("late decision: %v, want 410", err)
		}
		got := f.ask(t, keyed(execB, ""))
		if got.ID != id || got.Status != StatusPending {
			t.Fatalf("next run's lookup %+v, want the question pending again", got)
		}
		if v, err := f.svc.Resolve(t.Context(), "acme", Resolution{ID: id, Approved: true, By: "ana"}); err != nil || v.Delivery != DeliveryNextRun || f.tasks.sent("tok-a") != 0 {
			t.Errorf("decision on the reopened question: %+v %v; want it recorded for the next run, nothing sent to the expired task", v, err)
		}
	})
}
