package chat

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/audit/audittest"
	"github.com/veredicto/veredicto/internal/auth"
)

type fakeSQS struct{ bodies []string }

func (f *fakeSQS) SendMessage(_ context.Context, _, body string) (string, error) {
	f.bodies = append(f.bodies, body)
	return "m" + strconv.Itoa(len(f.bodies)), nil
}

// TestQueuedTurn: on AWS a claimed turn is queued and the worker runs it
// from the message, once, in the name of who sent it (the audit record
// names them); a malformed message is dropped, not retried.
func TestQueuedTurn(t *testing.T) {
	r := newRig(t, nil, Options{})
	root := t.TempDir()
	r.svc.Audit = &audit.Folders{Root: root}
	q := &fakeSQS{}
	ctx := context.Background()
	n, err := r.svc.Claim(ctx, "acme", "q1")
	if err != nil || n != 1 {
		t.Fatalf("Claim: %d %v", n, err)
	}
	if err := (SQSEnqueuer{Client: q, QueueURL: "https://sqs/q"}).Enqueue(ctx, TurnJob{Tenant: "acme", ChatID: "q1", Turn: n,
		Message: "Compara a c-001 con c-006 en la búsqueda cfo-2026", Principal: "ana", Via: auth.ViaJWT}); err != nil || len(q.bodies) != 1 {
		t.Fatalf("Enqueue: %v (%d messages)", err, len(q.bodies))
	}
	msg := events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m1", Body: q.bodies[0]}}}
	for i := 0; i < 2; i++ { // a redelivery does not run the turn again
		resp, err := r.svc.HandleSQS(ctx, msg)
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("HandleSQS: %+v %v", resp, err)
		}
	}
	if got := strings.Count(types(r.eventsOf(t, "q1")), "finish"); got != 1 {
		t.Errorf("%d finishes on the stream, want 1", got)
	}
	start := audittest.Entries(t, filepath.Join(root, "acme", RecordName("q1")), turnChain(n))[0]
	if start.Kind != audit.KindStart || !strings.Contains(string(start.Data), `"from":"ana"`) {
		t.Errorf("the queued turn's start: %s", start.Data)
	}
	bad := events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m2", Body: `{"tenant":"acme","chat_id":"a/b","turn":1,"message":"x"}`}}}
	if resp, _ := r.svc.HandleSQS(ctx, bad); len(resp.BatchItemFailures) != 0 {
		t.Error("a malformed message is retried")
	}
}
