package control

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/poll"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/confirm"
	fileconfirm "github.com/veredicto/veredicto/internal/confirm/file"
	"github.com/veredicto/veredicto/internal/eventlog"
	"github.com/veredicto/veredicto/internal/eventlog/eventlogtest"
	fileeventlog "github.com/veredicto/veredicto/internal/eventlog/file"
	"github.com/veredicto/veredicto/internal/quarantine"
	"github.com/veredicto/veredicto/internal/queue"
)

// These tests stop a manager as a kill would leave it, damage one record
// on disk, start again on the same data folder and check that the damage
// is contained (moved to DATA/quarantine, named) and everything else goes
// on: execution metadata, a confirmation record, an event-log line and a
// queue file.

// dataFolder is a data folder with the manager under DATA/sfn, as serve
// lays it out.
func dataFolder(t *testing.T) (data, sfnDir string) {
	data = t.TempDir()
	return data, filepath.Join(data, "sfn")
}

// quarantined returns what the data folder's quarantine holds, which must
// be n records of store.
func quarantined(t *testing.T, data, store string, n int) []quarantine.Item {
	t.Helper()
	items, err := quarantine.List(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != n {
		t.Fatalf("quarantine %+v, want %d record(s) of %s", items, n, store)
	}
	for _, it := range items {
		if it.Store != store {
			t.Fatalf("quarantined %+v, want records of %s", it, store)
		}
	}
	return items
}

// TestDamagedMetadataKeepsTheNameReserved: an execution whose meta.json
// no longer decodes is not forgotten: DescribeExecution names the damage
// (never ExecutionDoesNotExist), its name stays taken, ListExecutions
// lists it as DAMAGED, its task token is refused naming it, and the
// bytes are in the quarantine, moved once however often the server
// starts.
func TestDamagedMetadataKeepsTheNameReserved(t *testing.T) {
	ctx := context.Background()
	data, dir := dataFolder(t)
	f := newFixture()
	m := f.open(t, dir)
	done := f.start(t, m, "Once", checkOnce, "done")
	waitClosed(t, m, done.ARN)
	waiting := f.start(t, m, "Resumable", resumable, "waiting")
	tok := f.token(t)
	m.Close()

	meta := filepath.Join(dir, "executions", "Once", "done", "meta.json")
	if err := os.WriteFile(meta, []byte(`{"executionArn":"`+done.ARN+`","input":{"cv":"María`), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "executions", "Resumable", "waiting", "meta.json")) // gone, its history kept

	for range 2 { // the second start finds the damage recorded, moves nothing more
		m = f.open(t, dir)
		_, err := m.DescribeExecution(ctx, done.ARN)
		var ce *Error
		var de *veredicto.DamagedError
		if !errors.As(err, &ce) || ce.Code != CodeValidation || !strings.Contains(ce.Message, "is damaged") || !errors.As(err, &de) {
			t.Fatalf("DescribeExecution of damaged metadata: %v, want a ValidationException naming the damage", err)
		}
		if strings.Contains(err.Error(), "María") {
			t.Errorf("the error quotes the record: %v", err)
		}
		if _, err := m.StartExecution(ctx, StateMachineARN("Once"), "done", `{"tenant":"acme"}`); !errors.As(err, &ce) || ce.Code != CodeExecutionAlreadyExists {
			t.Errorf("StartExecution with the damaged one's name: %v, want ExecutionAlreadyExists", err)
		}
		list, _, err := m.ListExecutions(ctx, StateMachineARN("Once"), "", "", 10, nil)
		if err != nil || len(list) != 1 || list[0].Status != StatusDamaged || list[0].Tenant != "acme" || list[0].ARN != done.ARN {
			t.Errorf("ListExecutions = %+v, %v; want it listed as DAMAGED for its tenant", list, err)
		}
		if _, err := m.DescribeExecution(ctx, waiting.ARN); !IsDamaged(err) || !strings.Contains(err.Error(), "is missing") {
			t.Errorf("DescribeExecution of missing metadata: %v", err)
		}
		if err := m.SendTaskSuccess(ctx, tok, `{}`); !IsDamaged(err) {
			t.Errorf("SendTaskSuccess to a damaged execution: %v, want the damage named", err)
		}
		if _, _, err := m.History(ctx, done.ARN, "", 100, false); err != nil {
			t.Errorf("the history of a damaged execution: %v", err)
		}
		m.Close()
		items := quarantined(t, data, "sfn", 1)
		if items[0].Path != "executions/Once/done/meta.json" {
			t.Fatalf("quarantine %+v, want the damaged meta.json once", items)
		}
		if b, _ := os.ReadFile(items[0].Quarantined); !strings.Contains(string(b), "María") {
			t.Errorf("quarantined bytes %q", b)
		}
	}
	if found, err := Damaged(dir); err != nil || len(found) != 1 || !strings.Contains(found[0].Reason, "missing") {
		t.Errorf("Damaged = %+v, %v; want the execution whose metadata was missing (nothing was moved)", found, err)
	}
}

// managerTasks delivers confirmations to the manager that runs now, as
// the sfn client delivers them to serve.
type managerTasks struct{ m *atomic.Pointer[Manager] }

func (t managerTasks) SendTaskSuccess(ctx context.Context, in *sfn.SendTaskSuccessInput, _ ...func(*sfn.Options)) (*sfn.SendTaskSuccessOutput, error) {
	return &sfn.SendTaskSuccessOutput{}, t.m.Load().SendTaskSuccess(ctx, *in.TaskToken, *in.Output)
}

func (t managerTasks) SendTaskFailure(ctx context.Context, in *sfn.SendTaskFailureInput, _ ...func(*sfn.Options)) (*sfn.SendTaskFailureOutput, error) {
	return &sfn.SendTaskFailureOutput{}, t.m.Load().SendTaskFailure(ctx, *in.TaskToken, *in.Error, *in.Cause)
}

const asks = `{"StartAt":"Ask","States":{
  "Ask":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken",
         "Parameters":{"FunctionName":"ConfirmFunction","Payload":{"task_token.$":"$$.Task.Token","tenant":"acme","toolName":"send_offer",
           "category":"email_send","sensitivity":"high","undoable":false,"preview":{"to":"candidate"}}},"ResultPath":"$.answer","End":true}}}`

// confirmation waits until the tenant lists a confirmation with status
// other than the one whose id is not.
func confirmation(t *testing.T, svc *confirm.Service, status, not string) confirm.View {
	t.Helper()
	var found confirm.View
	poll.Until(t, 30*time.Second, func() bool {
		list, _, _ := svc.List(context.Background(), "acme")
		for _, v := range list {
			if v.Status == status && v.ID != not {
				found = v
				return true
			}
		}
		return false
	}, "a "+status+" confirmation")
	return found
}

// TestDamagedConfirmationLeavesTheExecutionWaiting: a confirmation record
// damaged while its execution waits is listed as damaged, a decision on
// it is a DamagedError, and the execution still waits (its task token
// still completes it). Damaged across a restart, the resumed Task asks
// again: the question is pending anew and the decision reaches the
// execution.
func TestDamagedConfirmationLeavesTheExecutionWaiting(t *testing.T) {
	ctx := context.Background()
	data, dir := dataFolder(t)
	f := newFixture()
	// The restart replays the waiting Task, which asks again; a Task that
	// had parked would not be replayed at Open, nor its handler invoked
	// again (park.go): it does not park here.
	f.parkAfter = time.Hour
	var current atomic.Pointer[Manager]
	var lastToken atomic.Value
	svc := &confirm.Service{Store: fileconfirm.Local(data), Events: fileeventlog.Local(data), Tasks: managerTasks{&current}}
	f.reg.Register("ConfirmFunction", func(ctx context.Context, in json.RawMessage) (json.RawMessage, error) {
		var req confirm.Request
		if err := json.Unmarshal(in, &req); err != nil {
			return nil, err
		}
		lastToken.Store(req.TaskToken)
		resp, err := svc.Confirm(ctx, req)
		if err != nil {
			return nil, err
		}
		return json.Marshal(resp)
	})
	corrupt := func(id string) {
		t.Helper()
		path := filepath.Join(data, "confirmations", base64.RawURLEncoding.EncodeToString([]byte("acme")), id+".json")
		if err := os.WriteFile(path, []byte(`{"id":"`+id+`","preview":{"to":"Ana`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	m := f.open(t, dir)
	current.Store(m)

	// Damaged while it waits.
	first := f.start(t, m, "Asks", asks, "a1")
	v := confirmation(t, svc, confirm.StatusPending, "")
	corrupt(v.ID)
	if got := confirmation(t, svc, confirm.StatusDamaged, ""); got.ID != v.ID || got.Damage == "" {
		t.Fatalf("listed %+v, want %s as damaged", got, v.ID)
	}
	_, err := svc.Resolve(ctx, "acme", confirm.Resolution{ID: v.ID, Approved: true, By: "ana"})
	if veredicto.Kind(err) != veredicto.NameDamaged {
		t.Fatalf("a decision on the damaged confirmation: %v, want a DamagedError", err)
	}
	if x, _ := m.DescribeExecution(ctx, first.ARN); x.Status != asl.StatusRunning {
		t.Fatalf("the execution is %s, want it still waiting", x.Status)
	}
	if err := m.SendTaskSuccess(ctx, lastToken.Load().(string), `{"approved":true}`); err != nil {
		t.Fatalf("its task token: %v", err)
	}
	if x := waitClosed(t, m, first.ARN); x.Status != asl.StatusSucceeded {
		t.Fatalf("after its token: %s", x.Status)
	}

	// The damaged one stays listed (its execution cannot be read from it)
	// until confirm.Retention has passed.
	if got := confirmation(t, svc, confirm.StatusDamaged, ""); got.ID != v.ID {
		t.Errorf("after its execution ended, %+v is listed, want %s still shown as damaged", got, v.ID)
	}

	// Damaged across a restart.
	second := f.start(t, m, "Asks", asks, "a2")
	v = confirmation(t, svc, confirm.StatusPending, "")
	m.Close()
	corrupt(v.ID)
	m = f.open(t, dir)
	defer m.Close()
	current.Store(m)
	if got := confirmation(t, svc, confirm.StatusPending, ""); got.ID != v.ID {
		t.Fatalf("after the restart %+v, want %s asked again", got, v.ID)
	}
	if _, err := svc.Resolve(ctx, "acme", confirm.Resolution{ID: v.ID, Approved: true, By: "ana"}); err != nil {
		t.Fatalf("decide the question asked again: %v", err)
	}
	if x := waitClosed(t, m, second.ARN); x.Status != asl.StatusSucceeded || !strings.Contains(string(x.Output), `"approved":true`) {
		t.Errorf("after the decision: %s %s", x.Status, x.Output)
	}
	quarantined(t, data, "confirmations", 2)
}

// TestDamagedEventLogLine: a line of an execution's event stream damaged
// while the server was down is read as the error message for its id; the
// resumed execution's events follow with the next ids.
func TestDamagedEventLogLine(t *testing.T) {
	ctx := context.Background()
	data, dir := dataFolder(t)
	f := newFixture()
	open := func() (*Manager, *fileeventlog.Log) {
		log := fileeventlog.Local(data) // a restarted server's log: nothing cached
		m, err := Open(ctx, Config{Dir: dir, Registry: f.reg, OnHistory: func(tenant, arn string, ev asl.Event) {
			e, err := eventlog.New(eventlog.TypeExecutionStep, fmt.Sprintf("h:%d", ev.ID), map[string]any{"state": ev.State, "event": ev.Type})
			if err == nil {
				_, err = log.Append(ctx, tenant, arn, e)
			}
			if err != nil {
				t.Errorf("append: %v", err)
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		return m, log
	}
	m, _ := open()
	x := f.start(t, m, "Resumable", resumable, "e1")
	tok := f.token(t)
	m.Close()

	stream := eventlogtest.StreamFile(t, filepath.Join(data, "events"))
	lines := eventlogtest.CorruptLine(t, stream, 2, strings.Repeat("\x00", 40))
	before := len(lines) - 1

	m, log := open()
	defer m.Close()
	if err := m.SendTaskSuccess(ctx, tok, `{"ok":true}`); err != nil {
		t.Fatal(err)
	}
	if got := waitClosed(t, m, x.ARN); got.Status != asl.StatusSucceeded {
		t.Fatalf("status %s", got.Status)
	}
	evs, err := log.Read(ctx, "acme", x.ARN, 0, 100)
	if err != nil {
		t.Fatalf("read the stream: %v", err)
	}
	for i, ev := range evs {
		if ev.ID != int64(i+1) {
			t.Fatalf("event %d has id %d", i+1, ev.ID)
		}
	}
	if len(evs) <= before || evs[1].Type != eventlog.TypeError || evs[2].Type == eventlog.TypeError {
		t.Errorf("%d events (%d before the restart), the second %q: want the damaged one named and every other event", len(evs), before, evs[1].Type)
	}
	quarantined(t, data, "events", 1)
}

// TestDamagedQueueFile: a queue file damaged, and a foreign one left,
// while the server was down become dead letters naming why when the
// restarted server's consumer meets them; the healthy message starts its
// execution.
func TestDamagedQueueFile(t *testing.T) {
	ctx := context.Background()
	data, dir := dataFolder(t)
	root := filepath.Join(data, "queue", "inputs")
	cfg := queue.Config{Quarantine: quarantine.New(data, "queue/inputs", nil)}
	f := newFixture()
	m := f.open(t, dir)
	if _, err := m.CreateStateMachine(ctx, "Once", checkOnce, "", ""); err != nil {
		t.Fatal(err)
	}
	q, err := queue.Open(root, cfg)
	if err != nil {
		t.Fatal(err)
	}
	bad, _ := q.Send(ctx, "q1")
	if _, err := q.Send(ctx, "q2"); err != nil {
		t.Fatal(err)
	}
	m.Close()
	os.WriteFile(filepath.Join(root, "messages", bad+".json"), []byte(`{"id":"`+bad+`","bo`), 0o600)
	os.WriteFile(filepath.Join(root, "messages", "README"), []byte("notes"), 0o600)

	m = f.open(t, dir)
	defer m.Close()
	q, err = queue.Open(root, cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := &queue.Consumer{Queue: q, Handle: func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		for _, r := range ev.Records {
			if _, err := m.StartExecution(ctx, StateMachineARN("Once"), r.Body, `{"tenant":"acme"}`); err != nil {
				return events.SQSEventResponse{}, err
			}
		}
		return events.SQSEventResponse{}, nil
	}}
	received, deleted, err := c.Once(ctx)
	if err != nil || received != 1 || deleted != 1 {
		t.Fatalf("consumer: %d received, %d deleted, %v; want the healthy message alone", received, deleted, err)
	}
	if x := waitClosed(t, m, ExecutionARN("Once", "q2")); x.Status != asl.StatusSucceeded {
		t.Errorf("q2: %s", x.Status)
	}
	dead, err := q.Dead(ctx, 0)
	if err != nil || len(dead) != 2 || dead[0].Damage == nil || dead[1].Damage == nil {
		t.Fatalf("dead letters %+v, %v; want the two damaged files, each naming why", dead, err)
	}
	quarantined(t, data, "queue/inputs", 2)
}

// TestDamagedHistoryRecordIsKept: a history record damaged while the
// server was down ends the history there: what follows is cut off for
// the execution to resume from a whole prefix, and kept in the quarantine.
func TestDamagedHistoryRecordIsKept(t *testing.T) {
	ctx := context.Background()
	data, dir := dataFolder(t)
	f := newFixture()
	m := f.open(t, dir)
	x := f.start(t, m, "Resumable", resumable, "h1")
	f.token(t)
	m.Close()
	hist := filepath.Join(dir, "executions", "Resumable", "h1", "history.jsonl")
	b, _ := os.ReadFile(hist)
	lines := strings.SplitAfter(string(b), "\n")
	bad := "{\"event\":" + strings.Repeat("\x00", 8)
	os.WriteFile(hist, []byte(strings.Join(append(append(lines[:3:3], bad+"\n"), lines[4:]...), "")), 0o644)

	m = f.open(t, dir)
	defer m.Close()
	tok := f.token(t) // the replay reaches the callback again from the cut
	if err := m.SendTaskSuccess(ctx, tok, `{}`); err != nil {
		t.Fatal(err)
	}
	if got := waitClosed(t, m, x.ARN); got.Status != asl.StatusSucceeded {
		t.Fatalf("status %s (%s)", got.Status, got.Cause)
	}
	items := quarantined(t, data, "sfn", 1)
	if items[0].Path != "executions/Resumable/h1/history.jsonl" || !strings.Contains(items[0].Reason, "cut off") {
		t.Fatalf("quarantine %+v, want the cut records", items)
	}
	if kept, _ := os.ReadFile(items[0].Quarantined); !strings.HasPrefix(string(kept), bad) || !strings.Contains(string(kept), lines[len(lines)-2]) {
		t.Errorf("kept %q, want the damaged record and those after it", kept)
	}
}
