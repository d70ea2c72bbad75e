package intake

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/veredicto/veredicto/internal/batchnote"
)

// s3Notification is the body S3 sends to a queue: an event notification
// (Records), or, once when the notification is configured, a test event.
type s3Notification struct {
	Records []events.S3EventRecord `json:"Records"`
	Event   string                 `json:"Event"` // "s3:TestEvent"
	Service string                 `json:"Service"`
}

// TestEvent is the Event of the message S3 sends to a queue when a
// notification to it is configured.
const TestEvent = "s3:TestEvent"

// parseNotification reads one queue message body.
func parseNotification(body string) (s3Notification, error) {
	var n s3Notification
	dec := json.NewDecoder(bytes.NewReader([]byte(body)))
	if err := dec.Decode(&n); err != nil {
		return n, fmt.Errorf("body is not an S3 event notification: %w", err)
	}
	if dec.More() {
		return n, fmt.Errorf("body holds more than one JSON value")
	}
	if n.Event != TestEvent && len(n.Records) == 0 {
		return n, fmt.Errorf("body is neither an S3 event notification with Records nor %s", TestEvent)
	}
	return n, nil
}

// HandleSQS consumes the inputs queue: each message body is an S3 event
// notification for a READY marker. A message that cannot be processed — a
// body that is not a notification, a key outside
// searches/<tenant>/<search_id>/READY, a failed dependency, documents not
// uploaded yet — is listed in BatchItemFailures, so the queue delivers it
// again and, after its maxReceiveCount, keeps it in the dead-letter queue;
// the other messages of the batch start their searches and are deleted.
// S3's s3:TestEvent is acknowledged and ignored. A duplicate delivery finds
// the execution name taken and starts nothing new. An upload whose READY
// or search.yaml is wrong is logged and acknowledged: the same message can
// never start, and the fix (upload READY again) sends a new one.
func (s *Service) HandleSQS(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	resp := events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
	for _, m := range ev.Records {
		log := s.logger().With("message_id", m.MessageId, "receive_count", m.Attributes["ApproximateReceiveCount"])
		var why []string
		fail := func() {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
			batchnote.Note(ctx, m.MessageId, strings.Join(why, "; "))
		}
		n, err := parseNotification(m.Body)
		if err != nil {
			log.ErrorContext(ctx, "message not processed", "reason", err.Error())
			why = append(why, err.Error())
			fail()
			continue
		}
		if n.Event == TestEvent {
			log.InfoContext(ctx, "s3:TestEvent acknowledged")
			continue
		}
		retry := false
		for _, r := range n.Records {
			o := s.handleRecord(ctx, r)
			switch {
			case o.err != nil:
				log.ErrorContext(ctx, "search not started, will be received again", "error", o.err.Error())
				why = append(why, o.err.Error())
			case o.started != nil:
				log.InfoContext(ctx, "search started", "search_id", o.started.SearchID,
					"execution", o.started.Execution, "new", o.started.Started)
			case o.rejected != "" && o.retry:
				log.WarnContext(ctx, "search not started, will be received again", "reason", o.rejected)
				why = append(why, o.rejected)
			case o.rejected != "":
				log.WarnContext(ctx, "search not started", "reason", o.rejected)
			}
			retry = retry || o.retry
		}
		if retry {
			fail() // every record is received again; those started are duplicates then
		}
	}
	return resp, nil
}
