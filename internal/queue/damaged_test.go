package queue_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/quarantine"
	"github.com/veredicto/veredicto/internal/queue"
)

// TestDamagedFilesBecomeDeadLetters: a foreign file and a message file
// that does not decode, in the queue's folder after a restart, each
// become a dead letter naming the reason, their bytes in the quarantine;
// the good messages are received as before, and no error is returned for
// the damage (the consumer would retry it for ever).
func TestDamagedFilesBecomeDeadLetters(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)}
	data := t.TempDir()
	root := filepath.Join(data, "queue", "inputs")
	box := quarantine.New(data, "queue/inputs", nil)
	q, err := queue.Open(root, queue.Config{Quarantine: box})
	if err != nil {
		t.Fatal(err)
	}
	q.SetClock(c.now)
	bad, _ := q.Send(ctx, "to be damaged")
	if _, err := q.Send(ctx, "good"); err != nil {
		t.Fatal(err)
	}
	// the server stops; the disk and a person leave these behind
	os.WriteFile(filepath.Join(root, "messages", bad+".json"), []byte(`{"id":"`+bad+`","body":"Ana's CV`), 0o600)
	os.WriteFile(filepath.Join(root, "messages", "notes.txt"), []byte("hello"), 0o600)

	found, err := queue.Damaged(root, box)
	if err != nil || len(found) != 2 {
		t.Fatalf("Damaged = %+v, %v; want both files named in place", found, err)
	}

	q, _ = queue.Open(root, queue.Config{Quarantine: box}) // restart
	q.SetClock(c.now)
	got, err := q.Receive(ctx, 10)
	if err != nil || !slices.Equal(bodies(got), []string{"good"}) {
		t.Fatalf("receive: %q %v, want [good] and no error", bodies(got), err)
	}
	dead, err := q.Dead(ctx, 0)
	if err != nil || len(dead) != 2 {
		t.Fatalf("dead letters %+v, %v; want the two damaged files", dead, err)
	}
	reasons := map[string]string{}
	for _, d := range dead {
		if d.Damage == nil || d.Damage.Quarantined == "" || d.Body != "" {
			t.Fatalf("dead letter %+v, want one that names its damage", d)
		}
		reasons[d.Damage.File] = d.Damage.Reason
	}
	if r := reasons["messages/"+bad+".json"]; !strings.Contains(r, "not valid JSON") || strings.Contains(r, "Ana") {
		t.Errorf("reason for the undecodable message: %q", r)
	}
	if r := reasons["messages/notes.txt"]; !strings.Contains(r, "did not write") {
		t.Errorf("reason for the foreign file: %q", r)
	}
	if items, _ := quarantine.List(data); len(items) != 2 {
		t.Errorf("quarantine %+v, want both files' bytes", items)
	}
	if found, _ := queue.Damaged(root, box); len(found) != 0 {
		t.Errorf("still damaged in place: %+v", found)
	}
	var bad2 *veredicto.InvalidInputError
	if _, err := q.Redrive(ctx, dead[0].ID); !errors.As(err, &bad2) {
		t.Errorf("redrive of a damaged file's dead letter: %v, want InvalidInputError", err)
	}
	if n, err := q.Redrive(ctx); n != 0 || err != nil {
		t.Errorf("redrive all: %d %v, want none moved, no error", n, err)
	}
	if _, dead, _ := q.Depth(ctx); dead != 2 {
		t.Errorf("%d dead letters, want the 2 damaged files still there", dead)
	}
}

// TestDamagedDeadLetter: a file of dead/ that does not decode is listed
// as the dead letter that replaces it, not an error of the listing.
func TestDamagedDeadLetter(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	q, err := queue.Open(root, queue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	id := "1795781030255252799-000001-0a0b0c0d"
	os.WriteFile(filepath.Join(root, "dead", id+".json"), []byte{0xff, 0xfe}, 0o600)
	dead, err := q.Dead(ctx, 0)
	if err != nil || len(dead) != 1 || dead[0].ID != id || dead[0].Damage == nil {
		t.Fatalf("Dead = %+v, %v", dead, err)
	}
}
