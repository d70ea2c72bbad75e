package queue

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/veredicto/veredicto/internal/batchnote"

	"github.com/aws/aws-lambda-go/events"
)

// Handler is an SQS-triggered Lambda handler (intake.Service.HandleSQS).
type Handler func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error)

// ReceiveDeleter is the part of a queue the consumer uses.
type ReceiveDeleter interface {
	Receive(ctx context.Context, max int) ([]Received, error)
	Delete(ctx context.Context, receiptHandle string) error
}

// Noter records why a received message was not processed (Dir.Note).
type Noter interface {
	Note(ctx context.Context, receiptHandle, reason string) error
}

// failures collects, during one handler call, why each message it fails
// was not processed (NoteFailure).
// NoteFailure tells the local consumer why the handler fails the message
// id, so its last error is kept with it (and a dead letter says why it
// died): batchnote.Note, for handlers in this package's tests and callers.
func NoteFailure(ctx context.Context, id, reason string) { batchnote.Note(ctx, id, reason) }

var _ ReceiveDeleter = (*Dir)(nil)

// LocalQueueARN is the event source ARN the local consumer reports.
const LocalQueueARN = "arn:aws:sqs:us-east-1:000000000000:veredicto-inputs"

// Consumer plays Lambda's SQS event source mapping with
// ReportBatchItemFailures: it receives a batch, invokes the handler and
// deletes every message the handler did not list as failed. A handler
// error, or a failure naming no message of the batch, leaves the whole
// batch to be received again, as Lambda does.
type Consumer struct {
	Queue     ReceiveDeleter
	Handle    Handler
	BatchSize int           // 1–10; 0 means 10
	Idle      time.Duration // pause when the queue is empty; 0 means 1 s
	Logger    *slog.Logger
}

func (c *Consumer) logger() *slog.Logger {
	if c.Logger != nil {
		return c.Logger
	}
	return slog.Default()
}

// Once receives and handles one batch; it returns how many messages it
// received and how many it deleted.
func (c *Consumer) Once(ctx context.Context) (received, deleted int, err error) {
	msgs, err := c.Queue.Receive(ctx, c.BatchSize)
	if err != nil {
		return 0, 0, fmt.Errorf("receive: %w", err)
	}
	if len(msgs) == 0 {
		return 0, 0, nil
	}
	ev := events.SQSEvent{Records: make([]events.SQSMessage, 0, len(msgs))}
	for _, m := range msgs {
		ev.Records = append(ev.Records, events.SQSMessage{
			MessageId: m.ID, ReceiptHandle: m.ReceiptHandle, Body: m.Body,
			Attributes: map[string]string{
				"ApproximateReceiveCount": strconv.Itoa(m.ReceiveCount),
				"SentTimestamp":           strconv.FormatInt(m.SentAt.UnixMilli(), 10),
			},
			MessageAttributes: map[string]events.SQSMessageAttribute{},
			EventSource:       "aws:sqs", EventSourceARN: LocalQueueARN, AWSRegion: "us-east-1",
		})
	}
	hctx, notes := batchnote.With(ctx)
	resp, herr := c.Handle(hctx, ev)
	note := func(m Received, why string) {
		if n, ok := c.Queue.(Noter); ok && why != "" {
			if err := n.Note(ctx, m.ReceiptHandle, why); err != nil {
				c.logger().WarnContext(ctx, "could not note why a message failed", "message_id", m.ID, "error", err.Error())
			}
		}
	}
	if herr != nil {
		c.logger().ErrorContext(ctx, "queue handler failed: the batch will be received again", "messages", len(msgs), "error", herr.Error())
		for _, m := range msgs {
			note(m, "the handler failed: "+herr.Error())
		}
		return len(msgs), 0, nil
	}
	failed := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}
	for id := range failed {
		known := false
		for _, m := range msgs {
			known = known || m.ID == id
		}
		if !known {
			c.logger().ErrorContext(ctx, "queue handler reported a message not in the batch: the batch will be received again", "message_id", id)
			return len(msgs), 0, nil
		}
	}
	for _, m := range msgs {
		if failed[m.ID] {
			note(m, cmpOr(notes.Why(m.ID), "the handler reported it failed, without saying why"))
			continue
		}
		if err := c.Queue.Delete(ctx, m.ReceiptHandle); err != nil {
			return len(msgs), deleted, fmt.Errorf("delete %s: %w", m.ID, err)
		}
		deleted++
	}
	return len(msgs), deleted, nil
}

// Run consumes until ctx is done. Errors of the queue itself are logged
// and retried after the idle pause.
func (c *Consumer) Run(ctx context.Context) {
	idle := c.Idle
	if idle <= 0 {
		idle = time.Second
	}
	for ctx.Err() == nil {
		n, _, err := c.Once(ctx)
		if err != nil && ctx.Err() == nil {
			c.logger().ErrorContext(ctx, "local queue", "error", err.Error())
		}
		if n > 0 && err == nil {
			continue
		}
		select {
		case <-ctx.Done():
		case <-time.After(idle):
		}
	}
}

// S3Notification is the body S3 sends to a queue when key is created in
// bucket: an event notification with one ObjectCreated:Put record.
func S3Notification(bucket, key string, size int64, at time.Time) (string, error) {
	r := events.S3EventRecord{EventVersion: "2.1", EventSource: "aws:s3", AWSRegion: "us-east-1",
		EventTime: at.UTC(), EventName: "ObjectCreated:Put"}
	r.S3.SchemaVersion = "1.0"
	r.S3.ConfigurationID = "SearchReady"
	r.S3.Bucket.Name = bucket
	r.S3.Bucket.Arn = "arn:aws:s3:::" + bucket
	r.S3.Object.Key = escapeKey(key)
	r.S3.Object.Size = size
	b, err := json.Marshal(events.S3Event{Records: []events.S3EventRecord{r}})
	if err != nil {
		return "", fmt.Errorf("encode notification for %s: %w", key, err)
	}
	return string(b), nil
}

// escapeKey URL-encodes a key as S3 does in notifications: each path
// segment form-encoded, the slashes kept.
func escapeKey(key string) string {
	segs := strings.Split(key, "/")
	for i, s := range segs {
		segs[i] = url.QueryEscape(s)
	}
	return strings.Join(segs, "/")
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
