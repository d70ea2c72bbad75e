package debate

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/veredicto/veredicto"
)

func TestValidateStart(t *testing.T) {
	q := json.RawMessage(`{"question": "¿Avanzamos?", "options": ["a", "b"], "participants": [{"id": "cfo", "brief": "x"}]}`)
	tests := []struct {
		name  string
		in    StartInput
		field string
	}{
		{"ok", StartInput{Tenant: "acme", DebateID: "d-1", Question: q}, ""},
		{"no tenant", StartInput{DebateID: "d-1", Question: q}, "tenant"},
		{"bad id", StartInput{Tenant: "acme", DebateID: "d/1", Question: q}, "debate_id"},
		{"no question", StartInput{Tenant: "acme", DebateID: "d-1"}, "question"},
		{"bad question", StartInput{Tenant: "acme", DebateID: "d-1", Question: json.RawMessage(`{"question": "x"}`)}, "options"},
		{"human timeout", StartInput{Tenant: "acme", DebateID: "d-1", Question: q, HumanTimeoutSeconds: -1}, "human_timeout_seconds"},
	}
	for _, tt := range tests {
		err := ValidateStart(tt.in)
		var ie *veredicto.InvalidInputError
		switch {
		case tt.field == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.field != "" && (!errors.As(err, &ie) || ie.Field != tt.field):
			t.Errorf("%s: err = %v, want InvalidInputError on %s", tt.name, err, tt.field)
		}
	}
}

// TestStepsBoundAgentsByTheRound: an agent step that starts after its
// round's time is spent is a TIMEOUT without waiting for the model.
func TestStepsBoundAgentsByTheRound(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	called := false
	agents := &funcAgents{position: func(ctx context.Context, in PositionInput) (Position, error) {
		called = true
		<-ctx.Done()
		return Position{}, ctx.Err()
	}}
	s := &Steps{Agents: agents, Now: func() time.Time { return now }, Logger: quiet()}
	q := json.RawMessage(`{"question": "¿Avanzamos?", "options": ["a", "b"], "participants": [{"id": "cfo", "brief": "x"}, {"id": "ceo", "brief": "y"}]}`)
	f, err := s.Prepare(context.Background(), StartInput{Tenant: "acme", DebateID: "d-1", Question: q})
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(121 * time.Second) // past timeout.per_round (120 s), within the total (300 s)
	out, err := s.Position(context.Background(), Turn{Flow: f, Index: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Answer.TimedOut || out.Event != "TIMEOUT: CEO em rodada 1" || !called {
		t.Errorf("turn %+v (called %v), want a TIMEOUT of CEO in round 1", out, called)
	}
}
