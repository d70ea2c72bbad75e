package asl

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"
)

// TestDurableReplay resumes an execution whose first Task had completed, whose
// Wait had begun long ago and whose callback Task was waiting on a token: the
// completed Task is not invoked, the Wait does not sleep again, and the
// recorded token is the one the engine waits on.
func TestDurableReplay(t *testing.T) {
	def := []byte(`{"StartAt":"First","States":{
	  "First":{"Type":"Task","Resource":"Count","ResultPath":"$.first","Next":"Pause"},
	  "Pause":{"Type":"Wait","Seconds":3600,"Next":"Ask"},
	  "Ask":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken",
	         "Parameters":{"FunctionName":"Notify","Payload":{"token.$":"$$.Task.Token"}},"ResultPath":"$.answer","End":true}}}`)
	sm, err := Parse(def)
	if err != nil {
		t.Fatal(err)
	}
	var counted, notified atomic.Int32
	reg := NewRegistry()
	reg.Register("Count", func(context.Context, json.RawMessage) (json.RawMessage, error) {
		counted.Add(1)
		return json.RawMessage(`"live"`), nil
	})
	tokens := make(chan string, 1)
	reg.Register("Notify", func(_ context.Context, in json.RawMessage) (json.RawMessage, error) {
		notified.Add(1)
		var p struct{ Token string }
		json.Unmarshal(in, &p)
		tokens <- p.Token
		return nil, nil
	})
	var calls []Call
	d := &Durable{
		Token: func(c Call) string { return "recorded-token" },
		Task: func(c Call) TaskReplay {
			calls = append(calls, c)
			if c.State == "First" {
				return TaskReplay{Done: true, Output: "recorded"}
			}
			return TaskReplay{}
		},
		WaitStart: func(c Call) (time.Time, bool) { return time.Now().Add(-2 * time.Hour), true },
	}
	eng := New(reg)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	x, err := eng.Start(ctx, sm, json.RawMessage(`{}`), StartOptions{Durable: d, DiscardHistory: true,
		ExecutionARN: "arn:aws:states:us-east-1:000000000000:execution:M:e1"})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-tokens:
		if got != "recorded-token" {
			t.Fatalf("handler got token %q, want the recorded one", got)
		}
	case <-x.Done():
		res, _ := x.Wait(ctx)
		t.Fatalf("execution ended before its callback Task ran: %s %s: %s", res.Status, res.Error, res.Cause)
	}
	if err := eng.SendTaskSuccess("recorded-token", json.RawMessage(`{"ok":true}`)); err != nil {
		t.Fatalf("SendTaskSuccess: %v", err)
	}
	res, err := x.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusSucceeded {
		t.Fatalf("status %s (%s: %s), want SUCCEEDED", res.Status, res.Error, res.Cause)
	}
	if got, want := string(res.Output), `{"answer":{"ok":true},"first":"recorded"}`; got != want {
		t.Errorf("output %s, want %s", got, want)
	}
	if n := counted.Load(); n != 0 {
		t.Errorf("the completed Task was invoked %d times, want 0", n)
	}
	if n := notified.Load(); n != 1 {
		t.Errorf("the callback handler was invoked %d times, want 1", n)
	}
	if res.History() != nil {
		t.Errorf("DiscardHistory kept %d events", len(res.History()))
	}
	if res.Transitions != 3 {
		t.Errorf("transitions %d, want 3", res.Transitions)
	}
	want := []Call{{State: "First", Attempt: 1}, {State: "Ask", Attempt: 1}}
	if len(calls) != len(want) || calls[0] != want[0] || calls[1] != want[1] {
		t.Errorf("Task hook calls %+v, want %+v", calls, want)
	}
}

// TestDurableReplayFailure replays a recorded failure into the state's Catch
// and a recorded timeout as TaskTimedOut.
func TestDurableReplayFailure(t *testing.T) {
	def := []byte(`{"StartAt":"A","States":{
	  "A":{"Type":"Task","Resource":"Never","Catch":[{"ErrorEquals":["Boom"],"ResultPath":"$.err","Next":"B"}],"Next":"B"},
	  "B":{"Type":"Task","Resource":"Never","TimeoutSeconds":5,"Catch":[{"ErrorEquals":["States.Timeout"],"ResultPath":"$.late","Next":"Done"}],"Next":"Done"},
	  "Done":{"Type":"Succeed"}}}`)
	sm, err := Parse(def)
	if err != nil {
		t.Fatal(err)
	}
	reg := NewRegistry()
	reg.Register("Never", func(context.Context, json.RawMessage) (json.RawMessage, error) {
		t.Error("a recorded Task was invoked")
		return nil, nil
	})
	d := &Durable{Task: func(c Call) TaskReplay {
		if c.State == "A" {
			return TaskReplay{Done: true, Err: &StatesError{Name: "Boom", Cause: "recorded"}}
		}
		return TaskReplay{Done: true, TimedOut: true, Err: &StatesError{Name: ErrTimeout, Cause: "late"}}
	}}
	var types []string
	res, err := New(reg).Run(context.Background(), sm, nil, StartOptions{Durable: d, OnEvent: func(e Event) {
		if e.State != "" && e.Type[0] == 'T' && e.Type != "TaskStateEntered" && e.Type != "TaskStateExited" {
			types = append(types, e.State+":"+e.Type)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(res.Output), `{"err":{"Cause":"recorded","Error":"Boom"},"late":{"Cause":"late","Error":"States.Timeout"}}`; got != want {
		t.Errorf("output %s, want %s", got, want)
	}
	want := []string{"A:TaskScheduled", "A:TaskStarted", "A:TaskFailed", "B:TaskScheduled", "B:TaskStarted", "B:TaskTimedOut"}
	if len(types) != len(want) {
		t.Fatalf("task events %v, want %v", types, want)
	}
	for i := range want {
		if types[i] != want[i] {
			t.Errorf("task event %d: %s, want %s", i, types[i], want[i])
		}
	}
}
