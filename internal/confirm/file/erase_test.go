package file

import (
	"os"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/confirm"
)

// TestEraseExecution: the confirmations an execution asked (named by its
// ARN) are removed; another execution's, one whose name merely ends the
// same, and a damaged file that cannot say whose it is stay.
func TestEraseExecution(t *testing.T) {
	s := Local(t.TempDir())
	now := time.Now().UTC()
	for token, exec := range map[string]string{"a": "arn:aws:states:local:0:execution:executive_search:s-1-run", "b": "arn:aws:states:local:0:execution:executive_search:s-1-run",
		"c": "arn:aws:states:local:0:execution:executive_search:s-2-run", "d": "arn:aws:states:local:0:execution:executive_search:xs-1-run"} {
		r := confirm.Record{ID: confirm.IDFor("acme", token), Tenant: "acme", Ask: confirm.Ask{Execution: exec, ToolName: "senior_review",
			Category: "c", Sensitivity: "high", Preview: []byte(`"evaluación"`), CreatedAt: now, ExpiresAt: now.Add(time.Hour)}, Status: confirm.StatusPending, TaskToken: token}
		if err := s.Put(t.Context(), r, 0); err != nil {
			t.Fatal(err)
		}
	}
	_, damaged := put(t, s, "e")
	os.WriteFile(damaged, []byte("\x00"), 0o600)
	if n, err := s.EraseExecution(t.Context(), "acme", "s-1-run"); err != nil || n != 2 {
		t.Fatalf("erase: %d, %v; want the two confirmations of s-1-run", n, err)
	}
	for token, want := range map[string]bool{"a": false, "b": false, "c": true, "d": true} {
		if _, err := s.Get(t.Context(), "acme", confirm.IDFor("acme", token)); (err == nil) != want {
			t.Errorf("confirmation %s: present %v, want %v", token, err == nil, want)
		}
	}
	if _, err := os.Stat(damaged); err != nil {
		t.Errorf("the damaged file was removed: %v", err)
	}
	if n, err := s.EraseExecution(t.Context(), "globex", "s-1-run"); err != nil || n != 0 {
		t.Errorf("a tenant without confirmations: %d, %v", n, err)
	}
}
