package main

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/app"
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
	t.Setenv("OPENAI_API_KEY", "") // offline: the provider checks pass, saying so
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
	if code != exitOK || !strings.Contains(out, "All 6 checks passed") {
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
		"confirmation record YWNtZQ/" + resp.ID + ".json, damaged in place", "where: " + record, "not valid JSON", "1 of 6 checks found problems"} {
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
	if report.OK || len(report.Checks) != 6 || report.Checks[2].Name != "damaged-records" || report.Checks[2].Status != doctor.StatusFail ||
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

// modelsServer is an OpenAI-compatible provider that lists models and
// answers every completion {"ok": true}, counting the calls.
func modelsServer(t *testing.T, models ...string) (url string, calls *atomic.Int32) {
	t.Helper()
	calls = &atomic.Int32{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/models":
			if r.Header.Get("Authorization") != "Bearer good-key" {
				w.WriteHeader(http.StatusUnauthorized)
				w.Write([]byte(`{"error":{"message":"bad key"}}`))
				return
			}
			var data []map[string]string
			for _, m := range models {
				data = append(data, map[string]string{"id": m, "object": "model"})
			}
			json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
		case "/v1/chat/completions":
			calls.Add(1)
			var req struct {
				Model string `json:"model"`
			}
			if json.NewDecoder(r.Body).Decode(&req) == nil && req.Model == "otro-modelo" { // a model without structured outputs
				w.WriteHeader(http.StatusBadRequest)
				w.Write([]byte(`{"error":{"message":"response_format json_schema is not supported by this model","type":"invalid_request_error"}}`))
				return
			}
			w.Write([]byte(`{"id":"c","object":"chat.completion","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"{\"ok\":true}"}}],"usage":{"prompt_tokens":20,"completion_tokens":4,"total_tokens":24}}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1", calls
}

// TestDoctorProvider: the configured provider is reached, its key and
// model checked, and one tiny structured call made unless --no-call; a
// wrong URL fails within 5 s naming the address and the fix; offline,
// nothing is reached and the report says so.
func TestDoctorProvider(t *testing.T) {
	data := t.TempDir()
	url, calls := modelsServer(t, "gpt-4o-mini", "otro-modelo")
	t.Setenv("OPENAI_API_KEY", "good-key")
	t.Setenv("OPENAI_BASE_URL", url)
	t.Setenv("OPENAI_MODEL", "gpt-4o-mini")
	code, out, errs := runCLI(t, "", "doctor", "--data", data)
	if code != exitOK || !strings.Contains(out, "[ok  ] llm-provider") || !strings.Contains(out, "lists model gpt-4o-mini") ||
		!strings.Contains(out, "one structured call to gpt-4o-mini answered") || calls.Load() != 1 {
		t.Fatalf("a good provider: exit %d, %d calls\n%s%s", code, calls.Load(), out, errs)
	}
	if code, out, _ := runCLI(t, "", "doctor", "--data", data, "--no-call"); code != exitOK || !strings.Contains(out, "not made (--no-call)") || calls.Load() != 1 {
		t.Errorf("--no-call: exit %d, %d calls\n%s", code, calls.Load(), out)
	}

	for _, tt := range []struct {
		name, key, url, model string
		want                  []string
	}{
		{"a refused key", "bad-key", url, "gpt-4o-mini", []string{"refused the key (HTTP 401): check OPENAI_API_KEY"}},
		{"a model it does not list", "good-key", url, "gpt-9", []string{"model gpt-9 is not among the 2 it lists (gpt-4o-mini, otro-modelo): set OPENAI_MODEL"}},
		{"nothing listens", "good-key", "http://" + freeAddr(t) + "/v1", "gpt-4o-mini", []string{"connection refused", "check OPENAI_BASE_URL"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("OPENAI_API_KEY", tt.key)
			t.Setenv("OPENAI_BASE_URL", tt.url)
			t.Setenv("OPENAI_MODEL", tt.model)
			start := time.Now()
			code, out, _ := runCLI(t, "", "doctor", "--data", data)
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("took %v, want under 5 s", took)
			}
			if code != exitFailed || !strings.Contains(out, "[FAIL] llm-provider") || !strings.Contains(out, "not made: the provider check failed") {
				t.Errorf("exit %d\n%s", code, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
	if calls.Load() != 1 {
		t.Errorf("%d calls: a failed provider check makes none", calls.Load())
	}
	// A model that refuses structured outputs: the call fails with the
	// provider's own words and what to do.
	t.Setenv("OPENAI_API_KEY", "good-key")
	t.Setenv("OPENAI_BASE_URL", url)
	t.Setenv("OPENAI_MODEL", "otro-modelo")
	code, out, _ = runCLI(t, "", "doctor", "--data", data)
	for _, w := range []string{"[FAIL] llm-call", "400 Bad Request (invalid_request_error): response_format json_schema is not supported by this model",
		"refused a strict structured-output request"} {
		if code != exitFailed || !strings.Contains(out, w) {
			t.Errorf("a model without structured outputs: exit %d, output lacks %q:\n%s", code, w, out)
		}
	}

	t.Setenv("OPENAI_API_KEY", "")
	code, out, _ = runCLI(t, "", "doctor", "--data", data, "--json")
	var report doctor.Report
	if err := json.Unmarshal([]byte(out), &report); err != nil || code != exitOK || !strings.Contains(report.Checks[3].Summary, "offline") ||
		!strings.Contains(report.Checks[4].Summary, "offline") {
		t.Errorf("offline: exit %d %v\n%s", code, err, out)
	}
}

// TestDoctorServer: a server recorded under --data answers there; a
// record no server answers fails, saying how to fix it; none is fine.
func TestDoctorServer(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	data := t.TempDir()
	if code, out, _ := runCLI(t, "", "doctor", "--data", data); code != exitOK || !strings.Contains(out, "no server is running on") {
		t.Errorf("none: exit %d\n%s", code, out)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	defer srv.Close()
	app.WriteEndpoint(data, srv.URL)
	if code, out, _ := runCLI(t, "", "doctor", "--data", data); code != exitOK || !strings.Contains(out, "the server at "+srv.URL+" answers") {
		t.Errorf("running: exit %d\n%s", code, out)
	}
	app.WriteEndpoint(data, "http://"+freeAddr(t))
	if code, out, _ := runCLI(t, "", "doctor", "--data", data); code != exitFailed || !strings.Contains(out, "[FAIL] server") || !strings.Contains(out, "start it again") {
		t.Errorf("a stale record: exit %d\n%s", code, out)
	}
}
