package queue_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/veredicto/veredicto"
	fileblob "github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/intake"
	"github.com/veredicto/veredicto/internal/moto"
	"github.com/veredicto/veredicto/internal/queue"
	"github.com/veredicto/veredicto/internal/starter"
	filestore "github.com/veredicto/veredicto/internal/store/file"
)

// sqsSource plays Lambda's SQS event source mapping over a real SQS API:
// receive a batch, invoke the handler, delete what it did not report.
type sqsSource struct {
	client *sqs.Client
	url    string
}

func (s sqsSource) poll(ctx context.Context, t *testing.T, handle queue.Handler) (events.SQSEventResponse, int) {
	t.Helper()
	out, err := s.client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(s.url), MaxNumberOfMessages: 10,
		MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}})
	if err != nil {
		t.Fatalf("ReceiveMessage: %v", err)
	}
	if len(out.Messages) == 0 {
		return events.SQSEventResponse{}, 0
	}
	var ev events.SQSEvent
	seen := map[string]bool{}
	for _, m := range out.Messages {
		// With VisibilityTimeout 0 (so that redeliveries need no wait),
		// moto can hand the same message twice in one receive: Lambda's
		// event source is given each message once per batch.
		if seen[aws.ToString(m.MessageId)] {
			continue
		}
		seen[aws.ToString(m.MessageId)] = true
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle),
			Body: aws.ToString(m.Body), Attributes: m.Attributes, EventSource: "aws:sqs"})
	}
	resp, err := handle(ctx, ev)
	if err != nil {
		t.Fatalf("handler: %v", err)
	}
	failed := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}
	for _, r := range ev.Records {
		if failed[r.MessageId] {
			continue
		}
		if _, err := s.client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(s.url), ReceiptHandle: aws.String(r.ReceiptHandle)}); err != nil {
			t.Fatalf("DeleteMessage: %v", err)
		}
	}
	return resp, len(ev.Records)
}

// scriptedStarter fails the first start of the names in failOnce with a
// TransientError and counts the executions really started.
type scriptedStarter struct {
	mu       sync.Mutex
	failOnce map[string]bool
	started  map[string]int
}

func (s *scriptedStarter) Start(_ context.Context, name string, _ []byte) (starter.Execution, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failOnce[name] {
		delete(s.failOnce, name)
		return starter.Execution{}, &veredicto.TransientError{Op: "start execution " + name, Err: errors.New("ThrottlingException")}
	}
	s.started[name]++
	return starter.Execution{Name: name, Started: s.started[name] == 1}, nil
}

func (s *scriptedStarter) Describe(_ context.Context, name string) (starter.Status, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started[name] == 0 {
		return starter.Status{}, &veredicto.NotFoundError{What: "execution " + name}
	}
	return starter.Status{Name: name, Status: "RUNNING"}, nil
}

// TestHandleSQSOnMoto runs TriggerFunction's handler against a real SQS API
// (moto_server): messages sent as S3 would, received in a batch whose
// malformed body and transiently failing start alone are reported, the
// rest deleted; the malformed body reaches the dead-letter queue after
// maxReceiveCount receives, and a redrive puts it back on the queue.
func TestHandleSQSOnMoto(t *testing.T) {
	endpoint := moto.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := sqs.New(sqs.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})

	dlq, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("veredicto-inputs-dlq"),
		Attributes: map[string]string{"MessageRetentionPeriod": "1209600"}})
	if err != nil {
		t.Fatalf("CreateQueue dlq: %v", err)
	}
	attrs, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: dlq.QueueUrl,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	redrive, _ := json.Marshal(map[string]string{"deadLetterTargetArn": attrs.Attributes["QueueArn"], "maxReceiveCount": "2"})
	src, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("veredicto-inputs"),
		Attributes: map[string]string{"RedrivePolicy": string(redrive), "VisibilityTimeout": "0"}})
	if err != nil {
		t.Fatalf("CreateQueue: %v", err)
	}

	data := t.TempDir()
	inputs := filepath.Join(data, "inputs")
	for _, id := range []string{"s1", "s2"} {
		dir := "searches/acme/" + id + "/"
		writeFile(t, inputs, dir+"jd.md", "# CFO\n")
		writeFile(t, inputs, dir+"kickoff.md", "# Kickoff\n")
		writeFile(t, inputs, dir+"company.md", "# Empresa\n")
		writeFile(t, inputs, dir+"candidates/c-1/cv.md", "# CV\n")
		writeFile(t, inputs, dir+"READY", "")
	}
	st := &scriptedStarter{failOnce: map[string]bool{starter.ExecutionName("acme", "s2"): true}, started: map[string]int{}}
	svc := &intake.Service{Inputs: fileblob.NewDir(inputs), Reports: fileblob.NewDir(filepath.Join(data, "reports")),
		Records: filestore.NewMemory(), Starter: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}

	good1, _ := queue.S3Notification("veredicto-inputs", "searches/acme/s1/READY", 0, time.Now())
	good2, _ := queue.S3Notification("veredicto-inputs", "searches/acme/s2/READY", 0, time.Now())
	const testEvent = `{"Service":"Amazon S3","Event":"s3:TestEvent","Time":"2026-11-23T09:00:00.000Z","Bucket":"veredicto-inputs","RequestId":"R","HostId":"H"}`
	const malformed = `{"Records":[{"s3":`
	ids := map[string]string{} // message id -> what it is
	for name, body := range map[string]string{"good1": good1, "good2": good2, "test": testEvent, "malformed": malformed} {
		out, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: src.QueueUrl, MessageBody: aws.String(body)})
		if err != nil {
			t.Fatalf("SendMessage: %v", err)
		}
		ids[aws.ToString(out.MessageId)] = name
	}

	source := sqsSource{client: client, url: aws.ToString(src.QueueUrl)}
	resp, n := source.poll(ctx, t, svc.HandleSQS)
	if n != 4 {
		t.Fatalf("first receive got %d messages, want the 4 sent", n)
	}
	var failed []string
	for _, f := range resp.BatchItemFailures {
		failed = append(failed, ids[f.ItemIdentifier])
	}
	sort.Strings(failed)
	if want := []string{"good2", "malformed"}; !slices.Equal(failed, want) {
		t.Errorf("first batch reported %q, want %q (partial batch failure)", failed, want)
	}
	for i := 0; i < 5; i++ { // redeliveries, bounded
		if _, n := source.poll(ctx, t, svc.HandleSQS); n == 0 {
			break
		}
	}
	for _, id := range []string{"s1", "s2"} {
		if got := st.started[starter.ExecutionName("acme", id)]; got != 1 {
			t.Errorf("%s started %d times, want 1", id, got)
		}
	}

	dead, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: dlq.QueueUrl, MaxNumberOfMessages: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(dead.Messages) != 1 || aws.ToString(dead.Messages[0].Body) != malformed {
		t.Fatalf("dead-letter queue holds %d messages (%v), want the malformed body alone", len(dead.Messages), dead.Messages)
	}
	// Redrive: back to the source queue, gone from the dead-letter queue.
	m := dead.Messages[0]
	if _, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: src.QueueUrl, MessageBody: m.Body}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: dlq.QueueUrl, ReceiptHandle: m.ReceiptHandle}); err != nil {
		t.Fatal(err)
	}
	back, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: src.QueueUrl, MaxNumberOfMessages: 10,
		MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameApproximateReceiveCount}})
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Messages) != 1 || aws.ToString(back.Messages[0].Body) != malformed || back.Messages[0].Attributes["ApproximateReceiveCount"] != "1" {
		t.Errorf("after redrive the queue holds %v, want the malformed body received once", back.Messages)
	}
}
