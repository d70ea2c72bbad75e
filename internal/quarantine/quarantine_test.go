package quarantine

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func logTo(buf *bytes.Buffer) *slog.Logger { return slog.New(slog.NewTextHandler(buf, nil)) }

func TestReplaceKeepsTheBytesAndNamesThem(t *testing.T) {
	data := t.TempDir()
	var logs bytes.Buffer
	b := New(data, "confirmations", logTo(&logs))
	b.now = func() time.Time { return time.Unix(0, 42) }
	path := filepath.Join(data, "confirmations", "dGVuYW50", "cf_1.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	secret := []byte(`{"preview":"María's CV"` + "\x00")
	if err := os.WriteFile(path, secret, 0o600); err != nil {
		t.Fatal(err)
	}
	it, err := b.Replace(path, "not valid JSON (syntax error at byte 24)", func(it Item) error {
		return os.WriteFile(path, []byte(`{"status":"damaged"}`), 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(data, "quarantine", "confirmations", "dGVuYW50", "cf_1.json.42")
	if it.Quarantined != want || it.Path != "dGVuYW50/cf_1.json" || it.Store != "confirmations" {
		t.Errorf("item %+v, want it at %s", it, want)
	}
	if got, _ := os.ReadFile(want); !bytes.Equal(got, secret) {
		t.Errorf("quarantined bytes %q, want the original", got)
	}
	if got, _ := os.ReadFile(path); string(got) != `{"status":"damaged"}` {
		t.Errorf("replacement %q", got)
	}
	if strings.Contains(logs.String(), "María") || !strings.Contains(logs.String(), want) || strings.Count(logs.String(), "\n") != 1 {
		t.Errorf("want one log line naming the quarantine path and not the content, got %q", logs.String())
	}

	items, err := List(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || items[0].Quarantined != want || items[0].Reason != it.Reason || !items[0].At.Equal(time.Unix(0, 42)) {
		t.Errorf("List = %+v", items)
	}
}

func TestReplaceMovesBackWhenTheReplacementFails(t *testing.T) {
	data := t.TempDir()
	b := New(data, "sfn", logTo(new(bytes.Buffer)))
	path := filepath.Join(data, "sfn", "meta.json")
	os.MkdirAll(filepath.Dir(path), 0o700)
	os.WriteFile(path, []byte("{bad"), 0o600)
	_, err := b.Replace(path, "x", func(Item) error { return errors.New("no space left on device") })
	if err == nil || !strings.Contains(err.Error(), "no space left on device") {
		t.Fatalf("err %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "{bad" {
		t.Errorf("the damaged file was not put back: %q", got)
	}
	if items, _ := List(data); len(items) != 0 {
		t.Errorf("nothing is quarantined when the move is undone, got %+v", items)
	}
}

func TestKeepAndListWithoutNote(t *testing.T) {
	data := t.TempDir()
	b := New(data, "queue/inputs", logTo(new(bytes.Buffer)))
	it, err := b.Keep(filepath.Join(data, "queue", "inputs", "messages", "x.json"), []byte("junk"), "why")
	if err != nil {
		t.Fatal(err)
	}
	if it.Path != "messages/x.json" || it.Store != "queue/inputs" {
		t.Errorf("item %+v", it)
	}
	os.Remove(it.Quarantined + noteSuffix)
	items, err := List(data)
	if err != nil || len(items) != 1 {
		t.Fatalf("List = %+v, %v", items, err)
	}
	// without its note, the name still says where it came from and when
	if got := items[0]; got.Store != "queue" || got.Path != "inputs/messages/x.json" || got.At.IsZero() || !strings.Contains(got.Reason, "no note") {
		t.Errorf("item without note %+v", got)
	}
	empty, err := List(t.TempDir())
	if err != nil || empty == nil || len(empty) != 0 {
		t.Errorf("List of no quarantine = %#v, %v; want an empty list", empty, err)
	}
}

func TestReasonNeverQuotesTheBytes(t *testing.T) {
	var v struct {
		N int `json:"n"`
	}
	for _, in := range []string{`{"n":"María"}`, `{"n":12345678}x`, `{"n":`, `María`} {
		err := json.Unmarshal([]byte(in), &v)
		if err == nil {
			t.Fatalf("%s decoded", in)
		}
		r := Reason(err)
		if strings.Contains(r, "María") || strings.Contains(r, "12345678") || r == "" {
			t.Errorf("Reason(%q) = %q", in, r)
		}
	}
}
