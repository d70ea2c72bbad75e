package audit_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/llm"
)

// TestAScopeNamesItsAgentAndItsTimeouts: a scope's Agent (a debate's
// participant) names its model calls in the record and its replay's
// divergence; a call that failed after the step's deadline replays as a
// context.DeadlineExceeded; NowOf records the step's own clock and a
// replay reads it back.
func TestAScopeNamesItsAgentAndItsTimeouts(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	rec := audit.NewRecorder(audit.NewDir(dir), nil)
	if _, err := rec.Append(ctx, audit.MainChain, audit.KindStart, audit.Start{Workflow: "test", Execution: "x-1", Input: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	sc := &audit.Scope{Recorder: rec, Execution: "x-1", Chain: "participant/cfo", Agent: "cfo"}
	sctx := audit.WithScope(ctx, sc)
	fixed := time.Date(2026, 3, 1, 10, 0, 0, 5, time.FixedZone("CET", 3600))
	at, err := audit.NowOf(sctx, "round 1 start", func() time.Time { return fixed })
	if err != nil || !at.Equal(fixed) || at.Location() != time.UTC {
		t.Fatalf("NowOf = %v, %v; want %v in UTC", at, err, fixed)
	}
	answered := llm.Request{Schema: "debate_position", System: "s", User: "participant: cfo"}
	if err := sc.Observe(sctx, llm.Attempt{Request: answered, Response: llm.Response{Content: []byte(`{}`)}, Number: 1}); err != nil {
		t.Fatal(err)
	}
	late := llm.Request{Schema: "debate_rebuttal", System: "s", User: "participant: cfo"}
	dctx, cancel := context.WithDeadline(sctx, time.Now().Add(-time.Second))
	defer cancel()
	if err := sc.Observe(dctx, llm.Attempt{Request: late, Err: errors.New("the provider did not answer in time"), Number: 1}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(chainFile(dir, "participant/cfo"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var calls []audit.ModelCall
	for _, l := range lines {
		var e audit.Entry
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatal(err)
		}
		if e.Kind == audit.KindModel {
			var c audit.ModelCall
			json.Unmarshal(e.Data, &c)
			calls = append(calls, c)
		}
	}
	if len(calls) != 2 || calls[0].Agent != "cfo" || calls[0].Schema != "debate_position" || calls[0].DeadlineExceeded || !calls[1].DeadlineExceeded {
		t.Fatalf("recorded calls: %+v", calls)
	}

	r, err := audit.OpenReplay(ctx, audit.NewDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	rs := &audit.Scope{Recorder: audit.NewRecorder(audit.NewDir(t.TempDir()), nil), Execution: "x-1", Chain: "participant/cfo", Agent: "cfo", Replay: r}
	rctx := audit.WithScope(ctx, rs)
	got, err := audit.NowOf(rctx, "round 1 start", func() time.Time { return time.Time{} })
	if err != nil || !got.Equal(fixed) {
		t.Errorf("the replayed reading: %v, %v; want %v", got, err, fixed)
	}
	if _, err := r.Complete(rctx, answered); err != nil {
		t.Errorf("the answered call: %v", err)
	}
	if _, err := r.Complete(rctx, late); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the late call replays as %v; want a context.DeadlineExceeded", err)
	}
	_, err = r.Complete(rctx, llm.Request{Schema: "debate_position", System: "s", User: "participant: cfo, cambiado"})
	var d *audit.DivergedError
	if !errors.As(err, &d) || d.Agent != "cfo" || !strings.Contains(err.Error(), "diverged at cfo") {
		t.Errorf("a changed request of cfo: %v", err)
	}
}
