package queue_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/veredicto/veredicto/internal/queue"
)

// TestDeadLetterSaysWhy: when the handler fails a whole batch, each
// message keeps the handler's error as its last error, shown on the next
// receive and kept into the dead-letter queue.
func TestDeadLetterSaysWhy(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	q, err := queue.Open(t.TempDir(), queue.Config{MaxReceiveCount: 2, Visibility: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	q.SetClock(func() time.Time { return now })
	q.Send(ctx, `{"a":1}`)
	q.Send(ctx, `{"b":1}`)
	c := &queue.Consumer{Queue: q, Handle: func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
		return events.SQSEventResponse{}, errors.New("dynamodb throttled")
	}}
	if _, _, err := c.Once(ctx); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Minute)
	got, err := q.Receive(ctx, 10) // the second and last receive
	if err != nil || len(got) != 2 {
		t.Fatalf("second receive %d, %v", len(got), err)
	}
	for _, m := range got {
		if m.LastError != "the handler failed: dynamodb throttled" {
			t.Errorf("%s received again with last error %q", m.ID, m.LastError)
		}
	}
	now = now.Add(2 * time.Minute)
	if n, _, err := c.Once(ctx); err != nil || n != 0 {
		t.Fatalf("a third receive got %d messages (%v), want them dead", n, err)
	}
	dead, err := q.Dead(ctx, 0)
	if err != nil || len(dead) != 2 {
		t.Fatalf("dead %d, %v", len(dead), err)
	}
	for _, d := range dead {
		if d.LastError != "the handler failed: dynamodb throttled" || d.ReceiveCount != 2 {
			t.Errorf("%s dead after %d receives with %q, want 2 and the reason it last failed", d.ID, d.ReceiveCount, d.LastError)
		}
	}
}

// TestConsumerNotesEachFailure: a message the handler fails says why it
// did, or that the handler did not say.
func TestConsumerNotesEachFailure(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	q, err := queue.Open(t.TempDir(), queue.Config{MaxReceiveCount: 1, Visibility: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	q.SetClock(func() time.Time { return now })
	bad, _ := q.Send(ctx, `{"bad":1}`)
	q.Send(ctx, `{"mute":1}`)
	c := &queue.Consumer{Queue: q, Handle: func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		var resp events.SQSEventResponse
		for _, m := range ev.Records {
			if m.MessageId == bad {
				queue.NoteFailure(ctx, m.MessageId, "key searches/x/READY is outside the layout")
			}
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
		}
		return resp, nil
	}}
	if _, _, err := c.Once(ctx); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Minute)
	if n, _, _ := c.Once(ctx); n != 0 {
		t.Fatalf("received %d again, want both dead", n)
	}
	dead, _ := q.Dead(ctx, 0)
	if len(dead) != 2 {
		t.Fatalf("dead %+v", dead)
	}
	for _, d := range dead {
		want := "the handler reported it failed, without saying why"
		if d.ID == bad {
			want = "key searches/x/READY is outside the layout"
		}
		if d.LastError != want {
			t.Errorf("%s dead with %q, want %q", d.ID, d.LastError, want)
		}
	}
}

// TestNoteKeepsTheLastReason: each receive's note replaces the one
// before; a note under a stale handle changes nothing.
func TestNoteKeepsTheLastReason(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	q, err := queue.Open(t.TempDir(), queue.Config{MaxReceiveCount: 3, Visibility: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	q.SetClock(func() time.Time { return now })
	q.Send(ctx, `{}`)
	first, _ := q.Receive(ctx, 1)
	q.Note(ctx, first[0].ReceiptHandle, "jd.md not uploaded yet")
	now = now.Add(2 * time.Minute)
	second, _ := q.Receive(ctx, 1)
	if len(second) != 1 || second[0].LastError != "jd.md not uploaded yet" {
		t.Fatalf("second receive %+v, want the first's reason", second)
	}
	q.Note(ctx, first[0].ReceiptHandle, "stale")
	q.Note(ctx, second[0].ReceiptHandle, strings.Repeat("x", queue.MaxNote+10))
	now = now.Add(2 * time.Minute)
	third, _ := q.Receive(ctx, 1)
	if len(third) != 1 || len(third[0].LastError) != queue.MaxNote+len("…") {
		t.Errorf("third receive's last error %d bytes, want the second's, cut at %d", len(third[0].LastError), queue.MaxNote)
	}
}
