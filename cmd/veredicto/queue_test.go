package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/veredicto/veredicto/internal/app"
	"github.com/veredicto/veredicto/internal/control"
	"github.com/veredicto/veredicto/internal/poll"
	"github.com/veredicto/veredicto/internal/queue"
	"github.com/veredicto/veredicto/internal/starter"
)

// TestServeConsumesTheInputsQueue: with serve running, a READY marker
// written to the local inputs bucket starts its search through the queue;
// a notification for a key outside the layout ends in the dead-letter
// queue, where `veredicto queue dlq list` shows it and `redrive` sends it
// back.
func TestServeConsumesTheInputsQueue(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	data := t.TempDir()
	inputs, _, _ := app.LocalLayout(data)
	copyDir(t, filepath.Join("..", "..", "examples", "search-demo"), filepath.Join(inputs, "searches", "acme", "demo-cfo-andina"))

	ip := serveInProcess(ctx, t, app.ServerConfig{Data: data, Queue: queue.Config{MaxReceiveCount: 2, Visibility: 50 * time.Millisecond}})
	base, srv := ip.base, ip.srv
	qctx, stopQueue := context.WithCancel(ctx)
	done := srv.Inputs.Run(qctx)
	defer func() { stopQueue(); <-done }()

	if err := os.WriteFile(filepath.Join(inputs, "searches", "acme", "demo-cfo-andina", "READY"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// queue send refuses a key outside the layout at once; a producer
	// that sends one anyway (S3 would not) gets it to the dead letters,
	// with the reason.
	if code, _, errs := runCLI(t, "", "queue", "send", "searches/old-layout/READY", "--data", data); code != exitUsage ||
		!strings.Contains(errs, "must be searches/<tenant>/<search_id>/READY") || !strings.Contains(errs, "nothing was queued") {
		t.Fatalf("queue send of a key outside the layout: exit %d, %s", code, errs)
	}
	body, err := queue.S3Notification(app.LocalInputsBucket, "searches/old-layout/READY", 0, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Inputs.Queue.Send(ctx, body); err != nil {
		t.Fatal(err)
	}

	client := operatorSFN(t, base, data)
	arn := strings.Replace(control.StateMachineARN(app.ExecutiveSearchMachine), ":stateMachine:", ":execution:", 1) + ":" + starter.ExecutionName("acme", "demo-cfo-andina")
	if !poll.Within(time.Minute, func() bool {
		_, err = client.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
		if err != nil && !errors.As(err, new(*types.ExecutionDoesNotExist)) {
			t.Fatalf("DescribeExecution %s: %v", arn, err)
		}
		return err == nil
	}) {
		t.Fatalf("the READY marker started no execution %s: %v", arn, err)
	}

	var dead []queue.Message
	poll.Until(t, time.Minute, func() bool {
		code, out, errs := runCLI(t, "", "queue", "dlq", "list", "--json", "--data", data)
		if code != exitOK {
			t.Fatalf("dlq list: exit %d, %s", code, errs)
		}
		if err := json.Unmarshal([]byte(out), &dead); err != nil { // one JSON document
			t.Fatalf("dlq list --json: %v\n%s", err, out)
		}
		return len(dead) > 0
	}, "the bad notification to reach the dead-letter queue")
	if len(dead) != 1 || !strings.Contains(dead[0].Body, "searches/old-layout/READY") || dead[0].ReceiveCount != 2 ||
		!strings.Contains(dead[0].LastError, "old-layout") {
		t.Fatalf("dead letters %+v, want the old-layout notification received twice, with why", dead)
	}
	if code, out, errs := runCLI(t, "", "queue", "dlq", "list", "--data", data); code != exitOK || !strings.Contains(errs, "1 dead letter(s)") ||
		!strings.Contains(out, "received 2 time(s)") || !strings.Contains(out, "last error: "+dead[0].LastError) {
		t.Errorf("dlq list: exit %d\n%s%s", code, out, errs)
	}
	stopQueue() // redrive while nothing consumes, then count
	<-done
	if code, _, errs := runCLI(t, "", "queue", "dlq", "redrive", "--data", data); code != exitOK || !strings.Contains(errs, "1 message(s) moved back") {
		t.Errorf("redrive: exit %d, %s", code, errs)
	}
	if queued, deadN, err := srv.Inputs.Queue.Depth(ctx); queued != 1 || deadN != 0 || err != nil {
		t.Errorf("after redrive: %d queued, %d dead (%v); want 1, 0", queued, deadN, err)
	}
	if code, _, _ := runCLI(t, "", "queue", "dlq", "drop", "--data", data); code != exitUsage {
		t.Errorf("unknown subcommand: exit %d, want %d", code, exitUsage)
	}
	if code, out, _ := runCLI(t, "", "queue", "dlq", "list", "--json", "--data", data); code != exitOK || out != "[]\n" {
		t.Errorf("an empty dead-letter queue as JSON: exit %d, %q, want []", code, out)
	}
}

// TestQueueSendRefusesOtherKeys: only READY markers of the layout are
// queued; anything else is refused at once, naming the layout.
func TestQueueSendRefusesOtherKeys(t *testing.T) {
	data := t.TempDir()
	for _, key := range []string{"bogus-key", "searches/acme/READY", "searches/acme/s1/jd.md", "searches/../s1/READY", "searches/acme/s1/x/READY", "inputs/acme/s1/READY"} {
		if code, out, errs := runCLI(t, "", "queue", "send", key, "--data", data); code != exitUsage || out != "" || !strings.Contains(errs, "is not a READY marker") {
			t.Errorf("send %q: exit %d, %q %q; want 2, refused", key, code, out, errs)
		}
	}
	q, err := queue.Open(app.InputsQueueDir(data), queue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if queued, _, _ := q.Depth(context.Background()); queued != 0 {
		t.Errorf("%d messages queued by refused sends", queued)
	}
}

// TestQueueSendNotifiesTheUploadTime: `queue send` of an existing marker
// notifies when it arrived, as S3 does: a marker copied in with an old
// modification time (cp -p) counts from its arrival, and sending the same
// unchanged marker again notifies the same time, so a hand-sent
// notification never passes for a new upload (which would run an ended
// search again).
func TestQueueSendNotifiesTheUploadTime(t *testing.T) {
	data := t.TempDir()
	inputs, _, _ := app.LocalLayout(data)
	ready := filepath.Join(inputs, "searches", "acme", "s1", "READY")
	if err := os.MkdirAll(filepath.Dir(ready), 0o755); err != nil {
		t.Fatal(err)
	}
	before := time.Now().Add(-time.Second)
	if err := os.WriteFile(ready, []byte("concurrency: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)
	if err := os.Chtimes(ready, old, old); err != nil { // as cp -p leaves it
		t.Fatal(err)
	}
	for _, key := range []string{"searches/acme/s1/READY", "searches/acme/s1/READY", "searches/acme/s2/READY"} {
		if code, _, errs := runCLI(t, "", "queue", "send", key, "--data", data); code != exitOK {
			t.Fatalf("queue send %s: exit %d, %s", key, code, errs)
		}
	}
	q, err := queue.Open(app.InputsQueueDir(data), queue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := q.Receive(context.Background(), 10)
	if err != nil || len(got) != 3 {
		t.Fatalf("queued: %d, %v", len(got), err)
	}
	times := map[string][]time.Time{}
	for _, m := range got {
		var ev events.S3Event
		if err := json.Unmarshal([]byte(m.Body), &ev); err != nil || len(ev.Records) != 1 {
			t.Fatalf("body %s: %v", m.Body, err)
		}
		k := ev.Records[0].S3.Object.Key
		times[k] = append(times[k], ev.Records[0].EventTime)
	}
	s1 := times["searches/acme/s1/READY"]
	if len(s1) != 2 || !s1[0].Equal(s1[1]) || s1[0].Before(before) {
		t.Errorf("an existing marker notified at %v, want twice the same time, its arrival (after %s), not its old mtime %s", s1, before, old)
	}
	if at := times["searches/acme/s2/READY"]; len(at) != 1 || time.Since(at[0]) > time.Minute {
		t.Errorf("a marker not (yet) written notified at %v, want now", at)
	}
}

// TestQueueDLQListsDamagedFiles: a foreign file the server's consumer met
// in the queue's folder is a dead letter naming why, and its bytes are
// in the data folder's quarantine.
func TestQueueDLQListsDamagedFiles(t *testing.T) {
	data := t.TempDir()
	q, err := app.OpenInputs(data, queue.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(app.InputsQueueDir(data), "messages", "stray.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := q.Receive(t.Context(), 10); err != nil || len(got) != 0 {
		t.Fatalf("receive: %+v %v", got, err)
	}
	code, out, errs := runCLI(t, "", "queue", "dlq", "list", "--data", data)
	if code != exitOK || !strings.Contains(out, "damaged file messages/stray.json") || !strings.Contains(out, "did not write") {
		t.Errorf("dlq list: exit %d\n%s%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(data, "quarantine", "queue", "inputs", "messages")); err != nil {
		t.Errorf("the stray file is not in the quarantine: %v", err)
	}
}
