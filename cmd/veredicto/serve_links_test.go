package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/poll"

	"github.com/veredicto/veredicto/internal/app"
	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/intake"
)

// TestServeNeverServesWhatAnUploadLinksTo replays the reported attack on
// the whole server: a tenant's uploaded search holds a symbolic link to
// DATA/auth/hs256.key (then to another tenant's document, to /etc/passwd,
// and a candidate folder linked to another tenant's). Starting the search
// names the link and starts nothing; GET /searches/{id}/sources/… never
// answers the key's bytes nor the other tenant's text, whether the link
// was there before the start or planted after a clean run.
func TestServeNeverServesWhatAnUploadLinksTo(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	live := startLive(ctx, t)
	acme := live.token(t, "acme", "test")
	inputs, _, _ := app.LocalLayout(live.data)
	example := filepath.Join("..", "..", "examples", "search-demo")
	keyPath := filepath.Join(live.data, filepath.FromSlash(auth.KeyFile))
	key, err := os.ReadFile(keyPath)
	if err != nil || len(key) == 0 {
		t.Fatalf("the server's signing key: %v", err)
	}
	const bravoText = "BRAVO-CONFIDENTIAL-never-for-acme"
	bravo := filepath.Join(inputs, "searches", "bravo", "b1")
	copyDir(t, example, bravo)
	if err := os.WriteFile(filepath.Join(bravo, "candidates", "c-001", "cv.md"), []byte(bravoText+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	leaks := func(body string) bool {
		return bytes.Contains([]byte(body), key) || strings.Contains(body, bravoText) || strings.Contains(body, "root:x:0:0")
	}
	link := func(search, doc, target string) {
		t.Helper()
		p := filepath.Join(inputs, "searches", "acme", search, filepath.FromSlash(doc))
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	call := func(method, path, body string) (int, string) {
		t.Helper()
		st, b := live.call(ctx, t, method, path, acme, body)
		if leaks(b) {
			t.Fatalf("%s %s answered what a link points at: %.200q", method, path, b)
		}
		return st, b
	}

	// Links uploaded with the search: the start names them, nothing runs.
	for _, tt := range []struct {
		id, doc, target, named string
	}{
		{"s3", "candidates/c-003/notes.md", keyPath, "candidates/c-003/notes.md"},
		{"s4", "candidates/c-001/cv.md", filepath.Join(bravo, "candidates", "c-001", "cv.md"), "candidates/c-001/cv.md"},
		{"s5", "candidates/c-002/cv.md", "/etc/passwd", "candidates/c-002/cv.md"},
		{"s6", "candidates/c-004", filepath.Join(bravo, "candidates", "c-001"), "candidates/c-004"},
	} {
		copyDir(t, example, filepath.Join(inputs, "searches", "acme", tt.id))
		// Without search.yaml the search's id is its folder's: nothing
		// else stops it.
		if err := os.Remove(filepath.Join(inputs, "searches", "acme", tt.id, "search.yaml")); err != nil {
			t.Fatal(err)
		}
		link(tt.id, tt.doc, tt.target)
		st, body := call("POST", "/searches", `{"search_id":"`+tt.id+`"}`)
		if want := tt.named + ": is a symbolic link; upload the file itself"; st != http.StatusBadRequest || !strings.Contains(body, want) {
			t.Errorf("start %s with %s linked to %s: %d %s; want 400 naming %q", tt.id, tt.doc, tt.target, st, body, want)
		}
		if st, body := call("GET", "/searches/"+tt.id+"/sources/"+tt.doc, ""); st != http.StatusNotFound {
			t.Errorf("source %s of the refused search %s: %d %s, want 404", tt.doc, tt.id, st, body)
		}
	}

	// Links planted after a clean run: the sources route refuses them with
	// the loader's message and still serves the documents.
	if st, body := call("POST", "/searches", `{"search_id":"demo-cfo-andina"}`); st != http.StatusAccepted {
		t.Fatalf("start: %d %s", st, body)
	}
	var state intake.SearchState
	poll.Until(t, 30*time.Second, func() bool { // about a second offline
		_, body := call("GET", "/searches/demo-cfo-andina", "")
		if err := json.Unmarshal([]byte(body), &state); err != nil {
			t.Fatalf("state: %v: %s", err, body)
		}
		if state.Status != "RUNNING" && state.Status != "SUCCEEDED" {
			t.Fatalf("state %s: %s", state.Status, body)
		}
		return state.Status == "SUCCEEDED"
	}, "the search to succeed")
	link("demo-cfo-andina", "candidates/c-003/cv.md", keyPath)
	link("demo-cfo-andina", "candidates/c-003/notes.md", keyPath)
	link("demo-cfo-andina", "candidates/c-001/cv.md", filepath.Join(bravo, "candidates", "c-001", "cv.md"))
	link("demo-cfo-andina", "candidates/c-002", filepath.Join(bravo, "candidates", "c-001"))
	const src = "/searches/demo-cfo-andina/sources/"
	for _, tt := range []struct {
		path   string
		status int
		want   string
	}{
		{src + "candidates/c-003/cv.md", http.StatusBadRequest, "candidates/c-003/cv.md: is a symbolic link; upload the file itself"},
		{src + "candidates/c-003/notes.md", http.StatusNotFound, "not found"},
		{src + "candidates/c-001/cv.md", http.StatusBadRequest, "candidates/c-001/cv.md: is a symbolic link; upload the file itself"},
		{src + "candidates/c-002/cv.md", http.StatusBadRequest, "candidates/c-002: is a symbolic link; upload the file itself"},
		{src + "..%2F..%2F..%2F..%2Fauth%2Fhs256.key", http.StatusNotFound, "not found"},
		{src + "%2Fetc%2Fpasswd", http.StatusNotFound, "not found"},
		{src + "jd.md", http.StatusOK, "#"},
	} {
		if st, body := call("GET", tt.path, ""); st != tt.status || !strings.Contains(body, tt.want) {
			t.Errorf("GET %s: %d %.300s; want %d with %q", tt.path, st, body, tt.status, tt.want)
		}
	}
}
