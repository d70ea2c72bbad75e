package confirm_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/veredicto/veredicto"
	. "github.com/veredicto/veredicto/internal/confirm"
	"github.com/veredicto/veredicto/internal/confirm/memory"
	"github.com/veredicto/veredicto/internal/quarantine"
)

// corrupt overwrites a stored confirmation with bytes that do not decode.
func (f *fixture) corrupt(t *testing.T, tenant, id string) {
	t.Helper()
	path := filepath.Join(f.dir, "confirmations", base64.RawURLEncoding.EncodeToString([]byte(tenant)), id+".json")
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(`{"id":"`+id+`","preview":{"candidate":"Ana Pérez`), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestDamagedConfirmationIsListedAndRefused: a confirmation whose record
// no longer decodes stays listed as damaged, its bytes kept in
// quarantine; a decision on it is a DamagedError (HTTP 409), never a
// TransientError, and nothing reaches the waiting task; the workflow
// asking again replaces it.
func TestDamagedConfirmationIsListedAndRefused(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	id := f.create(t, "acme", "tok-1")
	f.corrupt(t, "acme", id)

	views, _, err := f.svc.List(ctx, "acme")
	if err != nil || len(views) != 1 || views[0].ID != id || views[0].Status != StatusDamaged || views[0].Damage == "" {
		t.Fatalf("List = %+v, %v; want %s listed as damaged", views, err, id)
	}
	items, err := quarantine.List(f.dir)
	if err != nil || len(items) != 1 || items[0].Store != "confirmations" || !strings.HasSuffix(items[0].Path, id+".json") {
		t.Fatalf("quarantine = %+v, %v", items, err)
	}
	if b, _ := os.ReadFile(items[0].Quarantined); !strings.Contains(string(b), "Ana Pérez") {
		t.Errorf("the quarantined bytes are not the record's: %q", b)
	}

	_, err = f.svc.Resolve(ctx, "acme", Resolution{ID: id, Approved: true, By: "ana"})
	var de *veredicto.DamagedError
	if !errors.As(err, &de) || veredicto.Kind(err) == veredicto.NameTransient {
		t.Fatalf("Resolve on a damaged confirmation: %v, want a DamagedError", err)
	}
	if f.tasks.sent("tok-1") != 0 {
		t.Error("a decision on a damaged confirmation reached the task")
	}

	code, body := f.do(t, http.MethodGet, "acme", "")
	var got struct {
		Confirmations []View `json:"confirmations"`
	}
	if code != http.StatusOK || json.Unmarshal([]byte(body), &got) != nil || len(got.Confirmations) != 1 || got.Confirmations[0].Status != "damaged" {
		t.Errorf("GET /api/confirmations = %d %s", code, body)
	}
	if code, body := f.do(t, http.MethodPost, "acme", `{"id":"`+id+`","approved":true}`); code != http.StatusConflict || !strings.Contains(body, "is damaged") {
		t.Errorf("POST on a damaged confirmation = %d %s, want 409 naming the damage", code, body)
	}

	// Step Functions retries the ConfirmFunction invoke: the question is
	// asked again and replaces the damaged record.
	resp, err := f.svc.Confirm(ctx, request("acme", "tok-1"))
	if err != nil || resp.ID != id || resp.Status != StatusPending {
		t.Fatalf("Confirm again = %+v, %v", resp, err)
	}
	if views, _, _ := f.svc.List(ctx, "acme"); len(views) != 1 || views[0].Status != StatusPending {
		t.Errorf("after asking again: %+v", views)
	}
}

// TestDamagedKeyedQuestionIsAskedAgain: a keyed question whose record was
// damaged after its decision is asked again, not failed as transient.
func TestDamagedKeyedQuestionIsAskedAgain(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	first := f.ask(t, keyed(execA, ""))
	if _, err := f.svc.Resolve(ctx, "acme", Resolution{ID: first.ID, Approved: true, By: "ana"}); err != nil {
		t.Fatal(err)
	}
	f.corrupt(t, "acme", first.ID)
	resp, err := f.svc.Confirm(ctx, keyed(execB, "tok-b"))
	if err != nil {
		t.Fatalf("a keyed question over a damaged record: %v", err)
	}
	if resp.ID != first.ID || resp.Status != StatusPending || resp.Decision != nil {
		t.Errorf("asked again = %+v, want pending with no decision", resp)
	}
}

// damagedStore answers every write with a DamagedError (an adapter that
// cannot replace what it found).
type damagedStore struct{ *memory.Store }

func (damagedStore) Put(_ context.Context, r Record, _ int) error {
	return &veredicto.DamagedError{What: "confirmation " + r.ID, Reason: "not valid JSON (syntax error at byte 3)"}
}

// TestDecodingFailuresAreNotTransient: a store error of a named kind keeps
// its name through Confirm; only an outage is a TransientError.
func TestDecodingFailuresAreNotTransient(t *testing.T) {
	svc := &Service{Store: damagedStore{memory.New()}}
	_, err := svc.Confirm(t.Context(), request("acme", "tok"))
	if veredicto.Kind(err) != veredicto.NameDamaged {
		t.Errorf("Confirm over a damaged store: %v (kind %q), want DamagedError", err, veredicto.Kind(err))
	}
}
