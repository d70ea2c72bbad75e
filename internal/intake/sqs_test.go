package intake_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/app"
	fileblob "github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/intake"
	"github.com/veredicto/veredicto/internal/starter"
	filestore "github.com/veredicto/veredicto/internal/store/file"
)

// flakyStarter records starts by name; the first failures[name] calls for
// a name fail with a TransientError, as a throttled Step Functions would.
type flakyStarter struct {
	mu       sync.Mutex
	failures map[string]int
	started  map[string]int // executions really started, per name
	calls    int
}

func (f *flakyStarter) Start(_ context.Context, name string, _ []byte) (starter.Execution, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.failures[name] > 0 {
		f.failures[name]--
		return starter.Execution{}, &veredicto.TransientError{Op: "start execution " + name, Err: errors.New("ThrottlingException")}
	}
	if f.started[name] > 0 {
		return starter.Execution{Name: name, Started: false}, nil // ExecutionAlreadyExists, same input
	}
	f.started[name]++
	return starter.Execution{Name: name, Started: true}, nil
}

func (f *flakyStarter) Describe(_ context.Context, name string) (starter.Status, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.started[name] == 0 {
		return starter.Status{}, &veredicto.NotFoundError{What: "execution " + name}
	}
	return starter.Status{Name: name, Status: "RUNNING"}, nil
}

// notification is an S3 event notification body for keys.
func notification(t *testing.T, keys ...string) string {
	t.Helper()
	b, err := json.Marshal(s3Event(keys...))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const testEventBody = `{"Service":"Amazon S3","Event":"s3:TestEvent","Time":"2026-11-22T09:58:12.000Z","Bucket":"veredicto-inputs","RequestId":"5582815E1AEA5ADF","HostId":"x"}`

func sqsBatch(bodies ...string) events.SQSEvent {
	var ev events.SQSEvent
	for i, b := range bodies {
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: string(rune('a' + i)), Body: b, EventSource: "aws:sqs",
			Attributes: map[string]string{"ApproximateReceiveCount": "1"}})
	}
	return ev
}

func failedIDs(r events.SQSEventResponse) []string {
	ids := []string{}
	for _, f := range r.BatchItemFailures {
		ids = append(ids, f.ItemIdentifier)
	}
	return ids
}

// TestHandleSQS runs batches through the queue consumer; each case delivers
// its batches in order and checks which messages were reported for
// redelivery and which executions were really started.
func TestHandleSQS(t *testing.T) {
	data := t.TempDir()
	for _, id := range []string{"s1", "s2", "s3"} {
		copyExample(t, data, "acme", id)
	}
	inputs, _, _ := app.LocalLayout(data)
	for _, id := range []string{"s1", "s2", "s3"} { // its search_id is the example's
		if err := os.Remove(filepath.Join(inputs, "searches", "acme", id, "search.yaml")); err != nil {
			t.Fatal(err)
		}
	}
	for _, rel := range []string{"acme/s1", "acme/s2", "acme/s3", "acme/spoof", "acme/half"} {
		body := ""
		if rel == "acme/spoof" {
			body = "tenant: globex\n"
		}
		p := filepath.Join(inputs, "searches", filepath.FromSlash(rel), "READY")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(inputs, "searches", "acme", "half", "jd.md"), []byte("# JD\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s1, s2, s3 := "searches/acme/s1/READY", "searches/acme/s2/READY", "searches/acme/s3/READY"
	name := func(id string) string { return starter.ExecutionName("acme", id) }

	type delivery struct {
		batch      events.SQSEvent
		wantFailed []string
	}
	cases := []struct {
		name        string
		failures    map[string]int
		deliveries  []delivery
		wantStarted map[string]int
	}{
		{"all good", nil, []delivery{{sqsBatch(notification(t, s1), notification(t, s2), notification(t, s3)), []string{}}},
			map[string]int{name("s1"): 1, name("s2"): 1, name("s3"): 1}},
		{"one malformed among good ones", nil, []delivery{{sqsBatch(notification(t, s1), `{"Records":[{"s3":`, notification(t, s2)), []string{"b"}}},
			map[string]int{name("s1"): 1, name("s2"): 1}},
		{"not a notification", nil, []delivery{{sqsBatch(`{"hello":"world"}`, `[]`, `{"Records":[]}{}`), []string{"a", "b", "c"}}},
			map[string]int{}},
		{"s3:TestEvent acknowledged and ignored", nil, []delivery{{sqsBatch(testEventBody), []string{}}}, map[string]int{}},
		{"duplicate delivery starts nothing new", nil, []delivery{
			{sqsBatch(notification(t, s1)), []string{}},
			{sqsBatch(notification(t, s1), notification(t, s1)), []string{}}},
			map[string]int{name("s1"): 1}},
		{"unknown key layout is received again", nil, []delivery{{sqsBatch(notification(t, "searches/old-layout/READY"), notification(t, "searches/a%20b/x/READY"), notification(t, s3)), []string{"a", "b"}}},
			map[string]int{name("s3"): 1}},
		{"other keys are acknowledged", nil, []delivery{{sqsBatch(notification(t, "searches/acme/s1/jd.md")), []string{}}}, map[string]int{}},
		{"transient failure reported, then succeeds on redelivery", map[string]int{name("s2"): 1}, []delivery{
			{sqsBatch(notification(t, s1), notification(t, s2)), []string{"b"}},
			{sqsBatch(notification(t, s2)), []string{}}},
			map[string]int{name("s1"): 1, name("s2"): 1}},
		{"documents missing: received again until they arrive", nil, []delivery{{sqsBatch(notification(t, "searches/acme/half/READY")), []string{"a"}}},
			map[string]int{}},
		{"READY naming another tenant can never start: acknowledged", nil, []delivery{{sqsBatch(notification(t, "searches/acme/spoof/READY")), []string{}}},
			map[string]int{}},
		{"READY deleted: nothing to start, acknowledged", nil, []delivery{{sqsBatch(notification(t, "searches/acme/gone/READY")), []string{}}},
			map[string]int{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			failures := map[string]int{}
			for k, v := range c.failures {
				failures[k] = v
			}
			st := &flakyStarter{failures: failures, started: map[string]int{}}
			svc := &intake.Service{Inputs: fileblob.NewDir(inputs), Reports: fileblob.NewDir(t.TempDir()), Records: filestore.NewMemory(), Starter: st}
			for i, d := range c.deliveries {
				resp, err := svc.HandleSQS(context.Background(), d.batch)
				if err != nil {
					t.Fatalf("delivery %d: %v (a batch error would replay every message)", i+1, err)
				}
				if got := failedIDs(resp); !slices.Equal(got, d.wantFailed) {
					t.Errorf("delivery %d: batchItemFailures %q, want %q", i+1, got, d.wantFailed)
				}
			}
			if len(st.started) != len(c.wantStarted) {
				t.Errorf("started %v, want %v", st.started, c.wantStarted)
			}
			for k, want := range c.wantStarted {
				if got := st.started[k]; got != want {
					t.Errorf("execution %s started %d times, want %d", k, got, want)
				}
			}
		})
	}
}

// TestSampleBatch: events/trigger-sqs-batch.json, as `veredicto lambda
// invoke` would pass it, reports only its malformed body.
func TestSampleBatch(t *testing.T) {
	b, err := os.ReadFile("../../events/trigger-sqs-batch.json")
	if err != nil {
		t.Fatal(err)
	}
	var ev events.SQSEvent
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	copyExample(t, data, "default", "demo-cfo-andina")
	inputs, _, _ := app.LocalLayout(data)
	if err := os.WriteFile(filepath.Join(inputs, "searches", "default", "demo-cfo-andina", "READY"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	st := &flakyStarter{failures: map[string]int{}, started: map[string]int{}}
	svc := &intake.Service{Inputs: fileblob.NewDir(inputs), Reports: fileblob.NewDir(t.TempDir()), Records: filestore.NewMemory(), Starter: st}
	resp, err := svc.HandleSQS(context.Background(), ev)
	if got, want := failedIDs(resp), []string{ev.Records[2].MessageId}; err != nil || !slices.Equal(got, want) {
		t.Errorf("failures %q (err %v), want %q", got, err, want)
	}
	if got := st.started[starter.ExecutionName("default", "demo-cfo-andina")]; got != 1 {
		t.Errorf("demo-cfo-andina started %d times, want 1", got)
	}
}
