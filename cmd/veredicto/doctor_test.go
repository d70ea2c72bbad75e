package main

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/confirm"
	fileconfirm "github.com/veredicto/veredicto/internal/confirm/file"
	"github.com/veredicto/veredicto/internal/doctor"
)

// TestDoctor runs "veredicto doctor" on a data folder as serve leaves it,
// then with a confirmation record corrupted: exit 0 and every check
// passed, then exit 1 naming the damaged record (what, where, why, never
// its content), as text and as one JSON document, moving nothing.
func TestDoctor(t *testing.T) {
	data := t.TempDir()
	if _, err := auth.LoadOrCreateKey(data); err != nil {
		t.Fatal(err)
	}
	store := fileconfirm.Local(data)
	svc := &confirm.Service{Store: store}
	undoable := false
	resp, err := svc.Confirm(t.Context(), confirm.Request{TaskToken: "tok", ToolName: "send_offer", Category: "email_send",
		Sensitivity: "high", Undoable: &undoable, Preview: json.RawMessage(`{"to":"Ana Pérez"}`), Tenant: "acme",
		Execution: "arn:aws:states:us-east-1:000000000000:execution:Offer:o-1"})
	if err != nil {
		t.Fatal(err)
	}

	code, out, errs := runCLI(t, "", "doctor", "--data", data)
	if code != exitOK || !strings.Contains(out, "All 3 checks passed") {
		t.Fatalf("a healthy folder: exit %d\n%s%s", code, out, errs)
	}

	record := filepath.Join(data, "confirmations", base64.RawURLEncoding.EncodeToString([]byte("acme")), resp.ID+".json")
	if err := os.WriteFile(record, []byte(`{"id":"`+resp.ID+`","preview":{"to":"Ana Pérez`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI(t, "", "doctor", "--data", data)
	if code != exitFailed {
		t.Fatalf("a damaged record: exit %d, want %d\n%s%s", code, exitFailed, out, errs)
	}
	for _, want := range []string{"[ok  ] data-folder", "[ok  ] key-permissions", "[FAIL] damaged-records",
		"confirmation record YWNtZQ/" + resp.ID + ".json, damaged in place", "where: " + record, "not valid JSON", "1 of 3 checks found problems"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Ana") {
		t.Errorf("the output quotes the record:\n%s", out)
	}
	if b, _ := os.ReadFile(record); !strings.Contains(string(b), "Ana Pérez") {
		t.Error("doctor changed the record: it must only read")
	}

	code, out, _ = runCLI(t, "", "doctor", "--data", data, "--json")
	var report doctor.Report
	if err := json.Unmarshal([]byte(out), &report); err != nil || code != exitFailed {
		t.Fatalf("--json: exit %d, %v\n%s", code, err, out)
	}
	if report.OK || len(report.Checks) != 3 || report.Checks[2].Name != "damaged-records" || report.Checks[2].Status != doctor.StatusFail ||
		len(report.Checks[2].Findings) != 1 || report.Checks[2].Findings[0].Where != record {
		t.Errorf("--json report %+v", report)
	}
	if !strings.Contains(out, `"findings": []`) {
		t.Errorf("a passing check's findings are not an empty list:\n%s", out)
	}

	// Once the store has read it, the record is in the quarantine, named.
	if _, err := store.Get(t.Context(), "acme", resp.ID); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runCLI(t, "", "doctor", "--data", data)
	if code != exitFailed || !strings.Contains(out, "moved to quarantine") || !strings.Contains(out, filepath.Join(data, "quarantine", "confirmations")) || !strings.Contains(out, "when:") {
		t.Errorf("after the move: exit %d\n%s", code, out)
	}
}

// TestDoctorKeyPermissions: keys readable by others fail the check, named.
func TestDoctorKeyPermissions(t *testing.T) {
	data := t.TempDir()
	if _, err := auth.LoadOrCreateKey(data); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(data, auth.KeyFile)
	os.Chmod(key, 0o644)
	os.Chmod(filepath.Dir(key), 0o755)
	code, out, _ := runCLI(t, "", "doctor", "--data", data)
	if code != exitFailed || !strings.Contains(out, "[FAIL] key-permissions") || !strings.Contains(out, "its mode is 0644; it must be 0600") ||
		!strings.Contains(out, "its mode is 0755; it must be a folder with mode 0700") {
		t.Errorf("exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "", "doctor", "--data", filepath.Join(data, "nope"), "--json")
	var report doctor.Report
	if json.Unmarshal([]byte(out), &report) != nil || code != exitFailed || report.Checks[0].Status != doctor.StatusFail {
		t.Errorf("a missing folder: exit %d\n%s", code, out)
	}
	if code, _, _ := runCLI(t, "", "doctor", "extra"); code != exitUsage {
		t.Errorf("an argument: exit %d, want %d", code, exitUsage)
	}
}
