package file

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/confirm"
	"github.com/veredicto/veredicto/internal/quarantine"
)

func put(t *testing.T, s *Store, token string) (confirm.Record, string) {
	t.Helper()
	now := time.Now().UTC()
	r := confirm.Record{ID: confirm.IDFor("acme", token), Tenant: "acme", Ask: confirm.Ask{Execution: "arn:x", ToolName: "t",
		Category: "c", Sensitivity: "low", Preview: []byte(`"p"`), CreatedAt: now, ExpiresAt: now.Add(time.Hour)},
		Status: confirm.StatusPending, TaskToken: token}
	if err := s.Put(t.Context(), r, 0); err != nil {
		t.Fatal(err)
	}
	return r, filepath.Join(s.dir, base64.RawURLEncoding.EncodeToString([]byte("acme")), r.ID+".json")
}

// TestDamagedReadsOnly: the doctor's scan names a damaged file where it is
// and moves nothing; the store's next read moves it aside.
func TestDamagedReadsOnly(t *testing.T) {
	data := t.TempDir()
	s := Local(data)
	r, path := put(t, s, "tok")
	put(t, s, "healthy")
	if err := os.WriteFile(path, []byte("\x00\x01"), 0o600); err != nil {
		t.Fatal(err)
	}
	found, err := s.Damaged()
	if err != nil || len(found) != 1 || found[0].Store != "confirmations" || found[0].Path != "YWNtZQ/"+r.ID+".json" || found[0].Quarantined != "" {
		t.Fatalf("Damaged = %+v, %v", found, err)
	}
	if b, _ := os.ReadFile(path); string(b) != "\x00\x01" {
		t.Fatal("the scan changed the file")
	}
	if got, err := s.Get(t.Context(), "acme", r.ID); err != nil || got.Status != confirm.StatusDamaged || got.Damage.Quarantined == "" {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	if found, _ := s.Damaged(); len(found) != 0 {
		t.Errorf("after the move the scan still finds %+v", found)
	}
	if items, _ := quarantine.List(data); len(items) != 1 {
		t.Errorf("quarantine = %+v", items)
	}
}

// TestDamageThatCannotBeMovedStaysInPlace: when the file cannot be moved
// (here the quarantine folder cannot be made), the confirmation is still
// answered as damaged, and the bytes stay where they were.
func TestDamageThatCannotBeMovedStaysInPlace(t *testing.T) {
	data := t.TempDir()
	s := Local(data)
	r, path := put(t, s, "tok")
	os.WriteFile(path, []byte("{"), 0o600)
	if err := os.WriteFile(filepath.Join(data, quarantine.Folder), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(t.Context(), "acme", r.ID)
	if err != nil || got.Status != confirm.StatusDamaged || got.Damage.Quarantined != "" {
		t.Fatalf("Get = %+v, %v; want damaged, left in place", got, err)
	}
	if b, _ := os.ReadFile(path); string(b) != "{" {
		t.Errorf("the damaged bytes moved: %q", b)
	}
}
