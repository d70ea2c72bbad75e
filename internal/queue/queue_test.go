package queue_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/queue"
)

// clock is a settable clock for the queue.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

func open(t *testing.T, root string, c *clock) *queue.Dir {
	t.Helper()
	q, err := queue.Open(root, queue.Config{MaxReceiveCount: 3, Visibility: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	q.SetClock(c.now)
	return q
}

func bodies(rs []queue.Received) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.Body)
	}
	return out
}

// TestQueueSurvivesReopening: sent and in-flight messages, their receive
// counts and visibility are on disk; a second Dir on the same folder (the
// server restarted) sees them as the first left them.
func TestQueueSurvivesReopening(t *testing.T) {
	ctx := context.Background()
	root, c := t.TempDir(), &clock{t: time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)}
	q := open(t, root, c)
	for _, b := range []string{"one", "two"} {
		if _, err := q.Send(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	got, err := q.Receive(ctx, 1)
	if err != nil || !slices.Equal(bodies(got), []string{"one"}) {
		t.Fatalf("receive: %q %v, want [one]", bodies(got), err)
	}

	q = open(t, root, c) // restart
	got, err = q.Receive(ctx, 10)
	if err != nil || !slices.Equal(bodies(got), []string{"two"}) {
		t.Fatalf("after restart: %q %v, want [two] (one is still invisible)", bodies(got), err)
	}
	c.advance(time.Minute)
	got, err = q.Receive(ctx, 10)
	if err != nil || !slices.Equal(bodies(got), []string{"one", "two"}) {
		t.Fatalf("after the visibility timeout: %q %v, want [one two]", bodies(got), err)
	}
	if got[0].ReceiveCount != 2 {
		t.Errorf("receive count of one = %d, want 2", got[0].ReceiveCount)
	}
	for _, r := range got {
		if err := q.Delete(ctx, r.ReceiptHandle); err != nil {
			t.Fatal(err)
		}
	}
	c.advance(time.Hour)
	if n, dead, err := q.Depth(ctx); n != 0 || dead != 0 || err != nil {
		t.Errorf("depth after deleting both: %d queued, %d dead, %v; want 0, 0", n, dead, err)
	}
}

// TestStaleReceiptDeletesNothing: once a message is received again, the
// first receiver's handle no longer deletes it.
func TestStaleReceiptDeletesNothing(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)}
	q := open(t, t.TempDir(), c)
	q.Send(ctx, "m")
	first, _ := q.Receive(ctx, 1)
	c.advance(time.Minute)
	second, _ := q.Receive(ctx, 1)
	if len(first) != 1 || len(second) != 1 {
		t.Fatalf("receives %d, %d; want 1, 1", len(first), len(second))
	}
	if err := q.Delete(ctx, first[0].ReceiptHandle); err != nil {
		t.Fatal(err)
	}
	if n, _, _ := q.Depth(ctx); n != 1 {
		t.Errorf("a stale receipt handle deleted the message (queued %d, want 1)", n)
	}
	if err := q.Delete(ctx, "nonsense"); !errors.As(err, new(*veredicto.InvalidInputError)) {
		t.Errorf("Delete(nonsense) = %v, want InvalidInputError", err)
	}
}

// TestDeadLetterAndRedrive: a message received MaxReceiveCount times
// without being deleted moves to the dead-letter queue on the next receive;
// redrive puts it back with its count reset.
func TestDeadLetterAndRedrive(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)}
	root := t.TempDir()
	q := open(t, root, c)
	id, _ := q.Send(ctx, "poison")
	for i := 1; i <= 3; i++ {
		got, err := q.Receive(ctx, 10)
		if err != nil || len(got) != 1 || got[0].ReceiveCount != i {
			t.Fatalf("receive %d: %+v %v", i, got, err)
		}
		c.advance(time.Minute)
	}
	got, err := q.Receive(ctx, 10)
	if err != nil || len(got) != 0 {
		t.Fatalf("fourth receive: %q %v, want nothing (moved to the dead-letter queue)", bodies(got), err)
	}
	dead, err := open(t, root, c).Dead(ctx, 0) // as `veredicto queue dlq list` would
	if err != nil || len(dead) != 1 || dead[0].ID != id || dead[0].ReceiveCount != 3 || dead[0].DeadAt.IsZero() {
		t.Fatalf("dead letters %+v %v, want the message received 3 times", dead, err)
	}
	if _, err := q.Redrive(ctx, "no-such-id"); !errors.As(err, new(*veredicto.NotFoundError)) {
		t.Errorf("redrive of an unknown id: %v, want NotFoundError", err)
	}
	if n, err := q.Redrive(ctx); n != 1 || err != nil {
		t.Fatalf("redrive: %d %v, want 1", n, err)
	}
	got, err = q.Receive(ctx, 10)
	if err != nil || len(got) != 1 || got[0].ID != id || got[0].ReceiveCount != 1 {
		t.Fatalf("after redrive: %+v %v, want the message with receive count 1", got, err)
	}
	if _, dead, _ := q.Depth(ctx); dead != 0 {
		t.Errorf("%d dead letters after redrive, want 0", dead)
	}
}

// TestConsumerDeletesAllButTheReportedFailures plays Lambda's event source
// mapping: reported messages stay, the rest are deleted; a handler error
// or an unknown item identifier keeps the whole batch.
func TestConsumerDeletesAllButTheReportedFailures(t *testing.T) {
	cases := []struct {
		name       string
		handle     func(events.SQSEvent) (events.SQSEventResponse, error)
		wantQueued int
	}{
		{"one reported", func(ev events.SQSEvent) (events.SQSEventResponse, error) {
			return events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{{ItemIdentifier: ev.Records[1].MessageId}}}, nil
		}, 1},
		{"none reported", func(events.SQSEvent) (events.SQSEventResponse, error) { return events.SQSEventResponse{}, nil }, 0},
		{"handler error", func(events.SQSEvent) (events.SQSEventResponse, error) {
			return events.SQSEventResponse{}, errors.New("boom")
		}, 3},
		{"unknown identifier", func(events.SQSEvent) (events.SQSEventResponse, error) {
			return events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{{ItemIdentifier: "elsewhere"}}}, nil
		}, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			c := &clock{t: time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)}
			q := open(t, t.TempDir(), c)
			for _, b := range []string{"a", "b", "c"} {
				q.Send(ctx, b)
			}
			var seen events.SQSEvent
			cons := &queue.Consumer{Queue: q, Handle: func(_ context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
				seen = ev
				return tc.handle(ev)
			}}
			if n, _, err := cons.Once(ctx); n != 3 || err != nil {
				t.Fatalf("Once: %d %v, want 3", n, err)
			}
			if r := seen.Records[0]; r.EventSource != "aws:sqs" || r.Attributes["ApproximateReceiveCount"] != "1" || r.ReceiptHandle == "" {
				t.Errorf("record %+v lacks what Lambda passes", r)
			}
			if n, _, _ := q.Depth(ctx); n != tc.wantQueued {
				t.Errorf("queued after the batch: %d, want %d", n, tc.wantQueued)
			}
		})
	}
}

// TestWatcherNotifiesNewAndRewrittenMarkers: a READY marker is notified
// once, again when it is written again, and not again after a restart.
func TestWatcherNotifiesNewAndRewrittenMarkers(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	c := &clock{t: time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)}
	q := open(t, filepath.Join(data, "queue"), c)
	inputs := filepath.Join(data, "inputs")
	writeFile(t, inputs, "searches/acme/s1/READY", "")
	writeFile(t, inputs, "searches/acme/s1/jd.md", "# JD\n")
	writeFile(t, inputs, "searches/old/READY", "") // outside the layout: not watched
	w := &queue.Watcher{Inputs: inputs, Bucket: "veredicto-inputs", Queue: q}
	scan := func(want int) {
		t.Helper()
		if n, err := w.Scan(ctx); n != want || err != nil {
			t.Fatalf("scan queued %d (%v), want %d", n, err, want)
		}
	}
	scan(1)
	scan(0)
	w = &queue.Watcher{Inputs: inputs, Bucket: "veredicto-inputs", Queue: open(t, filepath.Join(data, "queue"), c)} // restart
	scan(0)
	writeFile(t, inputs, "searches/acme/s1/READY", "concurrency: 2\n") // uploaded again
	scan(1)
	// copied in again with its old modification time (cp -p, tar): a new
	// upload, notified at its arrival
	arrived := time.Now().Add(-time.Second)
	old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	writeFile(t, inputs, "searches/acme/s1/READY", "concurrency: 3\n")
	if err := os.Chtimes(filepath.Join(inputs, "searches/acme/s1/READY"), old, old); err != nil {
		t.Fatal(err)
	}
	scan(1)
	got, err := q.Receive(ctx, 10)
	if err != nil || len(got) != 3 {
		t.Fatalf("receive: %d messages (%v), want 3", len(got), err)
	}
	var copied events.S3Event
	if err := json.Unmarshal([]byte(got[2].Body), &copied); err != nil || len(copied.Records) != 1 || copied.Records[0].EventTime.Before(arrived) {
		t.Errorf("a marker copied with an old time: %s (%v), want its arrival (after %s)", got[2].Body, err, arrived)
	}
	var n events.S3Event
	if err := json.Unmarshal([]byte(got[0].Body), &n); err != nil || len(n.Records) != 1 ||
		n.Records[0].S3.Object.Key != "searches/acme/s1/READY" || n.Records[0].EventName != "ObjectCreated:Put" || n.Records[0].S3.Bucket.Name != "veredicto-inputs" {
		t.Errorf("notification %s (%v), want ObjectCreated:Put of searches/acme/s1/READY in veredicto-inputs", got[0].Body, err)
	}
}
