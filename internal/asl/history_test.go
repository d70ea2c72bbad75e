package asl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/veredicto/veredicto/internal/asl/asltest"
)

// The engine keeps its history compact and builds the public events when
// asked: what Result.History returns must be exactly what OnEvent saw as
// the events happened, for every kind of event, including those held whole.
func TestKeptHistoryIsWhatOnEventSaw(t *testing.T) {
	reg := NewRegistry()
	calls := 0
	reg.Register("FlakyFunction", func(_ context.Context, in json.RawMessage) (json.RawMessage, error) {
		calls++
		if calls == 1 {
			return nil, &StatesError{Name: "Custom.Flaky", Cause: "first attempt fails"}
		}
		return in, nil
	})
	reg.Register("BrokenFunction", func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return nil, errors.New("always broken")
	})
	def := `{"StartAt":"T","States":{
	  "T":{"Type":"Task","Resource":"${FlakyFunctionArn}","Parameters":{"n.$":"$.n"},"ResultPath":"$.t",
	       "Retry":[{"ErrorEquals":["Custom.Flaky"],"IntervalSeconds":1,"BackoffRate":1,"MaxAttempts":1,"MaxDelaySeconds":1,"JitterStrategy":"FULL"}],"Next":"V"},
	  "V":{"Type":"Pass","Assign":{"seen.$":"$.n"},"Next":"P"},
	  "P":{"Type":"Parallel","Branches":[
	    {"StartAt":"B","States":{"B":{"Type":"Task","Resource":"${BrokenFunctionArn}","End":true}}}],
	    "Catch":[{"ErrorEquals":["States.ALL"],"ResultPath":"$.err","Next":"M"}],"Next":"M"},
	  "M":{"Type":"Map","ItemsPath":"$.xs","MaxConcurrency":2,
	       "ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Pass","End":true}}},"ResultPath":"$.ys","End":true}}}`
	sm, err := Parse([]byte(def))
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		streamed []Event
	)
	res, err := New(reg).Run(context.Background(), sm, json.RawMessage(`{"n":300,"xs":[1,2,3]}`), StartOptions{OnEvent: func(ev Event) {
		mu.Lock()
		streamed = append(streamed, ev)
		mu.Unlock()
	}})
	if err != nil || res.Status != StatusSucceeded {
		t.Fatalf("run: %v %+v", err, res)
	}
	kept := res.History()
	if !reflect.DeepEqual(kept, streamed) {
		for i := range min(len(kept), len(streamed)) {
			if !reflect.DeepEqual(kept[i], streamed[i]) {
				t.Fatalf("event %d differs:\n kept     %+v\n streamed %+v", i+1, kept[i], streamed[i])
			}
		}
		t.Fatalf("kept %d events, streamed %d", len(kept), len(streamed))
	}
	seen := map[string]bool{}
	for i, ev := range kept {
		seen[ev.Type] = true
		if ev.ID != i+1 || ev.Timestamp.IsZero() || (i > 0 && ev.Timestamp.Before(kept[i-1].Timestamp)) {
			t.Errorf("event %d: id %d, timestamp %v", i+1, ev.ID, ev.Timestamp)
		}
		switch ev.Type {
		case "TaskScheduled":
			// T's Parameters went to the handler as text, written without
			// building the object; the history shows it as a value.
			if ev.State == "T" && (ev.Resource != "${FlakyFunctionArn}" || ev.Attempt < 1 ||
				!reflect.DeepEqual(ev.Input, map[string]any{"n": int64(300)})) {
				t.Errorf("TaskScheduled %+v", ev)
			}
		case "MapIterationStarted", "MapIterationSucceeded":
			if ev.Index == nil || *ev.Index < 0 || *ev.Index > 2 || ev.State != "M" {
				t.Errorf("%s %+v", ev.Type, ev)
			}
		case "TaskSucceeded", "ExecutionSucceeded", "TaskStateExited":
			if ev.Output == nil || ev.Input != nil {
				t.Errorf("%s carries input %v, output %v", ev.Type, ev.Input, ev.Output)
			}
		case "PassStateEntered", "TaskStateEntered", "ExecutionStarted":
			if ev.Input == nil || ev.Output != nil {
				t.Errorf("%s carries input %v, output %v", ev.Type, ev.Input, ev.Output)
			}
			if ev.State == "I" && (len(ev.Scope) != len("M/item[0]") || ev.Scope[:7] != "M/item[") {
				t.Errorf("inner state scope %q", ev.Scope)
			}
		case "PassStateExited":
			if ev.State == "V" && ev.AssignedVariables["seen"] != "300" {
				t.Errorf("V exited with %v", ev.AssignedVariables)
			}
		}
	}
	for _, want := range []string{"TaskFailed", "TaskSucceeded", "ParallelStateStarted", "ParallelStateFailed",
		"MapStateStarted", "MapIterationStarted", "MapIterationSucceeded", "MapStateSucceeded", "ExecutionSucceeded"} {
		if !seen[want] {
			t.Errorf("no %s event in the history", want)
		}
	}
	attempts := 0
	for _, ev := range kept {
		if ev.Type == "TaskScheduled" && ev.State == "T" {
			attempts++
			if ev.Attempt != attempts {
				t.Errorf("attempt %d recorded as %d", attempts, ev.Attempt)
			}
		}
	}
	if attempts != 2 {
		t.Errorf("T scheduled %d times, want 2", attempts)
	}
}

// History may be read while concurrent iterations are recording events
// (the race detector watches): what it returns is a prefix of the final
// history, in id order.
func TestHistoryReadWhileIterationsRecord(t *testing.T) {
	release := make(chan struct{})
	reg := NewRegistry()
	reg.Register("WorkFunction", func(_ context.Context, in json.RawMessage) (json.RawMessage, error) {
		<-release
		return in, nil
	})
	def := `{"StartAt":"M","States":{"M":{"Type":"Map","MaxConcurrency":8,
	  "ItemProcessor":{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"W"},
	    "W":{"Type":"Task","Resource":"${WorkFunctionArn}","Next":"B"},"B":{"Type":"Pass","End":true}}},"End":true}}}`
	items := make([]string, 64)
	for i := range items {
		items[i] = fmt.Sprint(i)
	}
	eng := New(reg)
	x, err := eng.Start(context.Background(), mustParse(t, def), json.RawMessage("["+strings.Join(items, ",")+"]"), StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var snapshots [][]Event
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 200; i++ {
			snapshots = append(snapshots, x.History())
			if i == 20 {
				close(release)
			}
		}
	}()
	<-done
	res, err := x.Wait(context.Background())
	if err != nil || res.Status != StatusSucceeded {
		t.Fatalf("run: %v %+v", err, res)
	}
	final := res.History()
	for _, snap := range snapshots {
		if len(snap) > len(final) {
			t.Fatalf("a snapshot has %d events, the final history %d", len(snap), len(final))
		}
		for i, ev := range snap {
			if ev.ID != i+1 || ev.Type != final[i].Type || ev.Scope != final[i].Scope {
				t.Fatalf("snapshot event %d is %s %s (id %d), final %s %s", i+1, ev.Type, ev.Scope, ev.ID, final[i].Type, final[i].Scope)
			}
		}
	}
}

// Tasks look handlers up without a lock while others are registered.
func TestRegistryLookupWhileRegistering(t *testing.T) {
	reg := NewRegistry()
	reg.Register("A", func(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, nil })
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			reg.Register(fmt.Sprintf("F%d", i), func(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, nil })
		}
	}()
	for range 2000 {
		if _, ok := reg.lookup("A"); !ok {
			t.Fatal("A went missing while others were registered")
		}
	}
	<-done
	if _, ok := reg.lookup("F199"); !ok {
		t.Error("F199 was not registered")
	}
}

// TestHistEventSize: the kept history's record stays at 40 bytes (a Task
// records four), its layout documented on histEvent.
func TestHistEventSize(t *testing.T) {
	if n := unsafe.Sizeof(histEvent{}); n != 40 {
		t.Errorf("histEvent is %d bytes, want 40", n)
	}
}

// TestNestedScopes: events inside nested Map items and Parallel branches
// name their place from the outside in.
func TestNestedScopes(t *testing.T) {
	def := `{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.items","ItemProcessor":{"StartAt":"P","States":{
	  "P":{"Type":"Parallel","Branches":[
	    {"StartAt":"A","States":{"A":{"Type":"Pass","End":true}}},
	    {"StartAt":"B","States":{"B":{"Type":"Pass","End":true}}}],"End":true}}},"End":true}}}`
	res, err := New(NewRegistry()).Run(context.Background(), mustParse(t, def), json.RawMessage(`{"items":[1,2]}`), StartOptions{Name: "scopes"})
	if err != nil || res.Status != StatusSucceeded {
		t.Fatalf("run: %v %+v", err, res)
	}
	got := map[string]string{}
	for _, ev := range res.History() {
		if ev.Type == "PassStateEntered" || ev.Type == "ParallelStateEntered" {
			got[ev.State+fmt.Sprint(len(got))] = ev.Scope
		}
	}
	want := map[string]bool{"M/item[0]": true, "M/item[1]": true, "M/item[0]/P/branch[0]": true, "M/item[0]/P/branch[1]": true,
		"M/item[1]/P/branch[0]": true, "M/item[1]/P/branch[1]": true}
	seen := map[string]bool{}
	for _, s := range got {
		if !want[s] {
			t.Errorf("unexpected scope %q", s)
		}
		seen[s] = true
	}
	if len(seen) != len(want) {
		t.Errorf("scopes %v, want %v", seen, want)
	}
}

// TestMapIterationEvents: a Map iteration's events name the Map's own
// scope and the item's index, at every depth.
func TestMapIterationEvents(t *testing.T) {
	def := `{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.items","ItemProcessor":{"StartAt":"N","States":{
	  "N":{"Type":"Map","ItemProcessor":{"StartAt":"A","States":{"A":{"Type":"Pass","End":true}}},"End":true}}},"End":true}}}`
	res, err := New(NewRegistry()).Run(context.Background(), mustParse(t, def), json.RawMessage(`{"items":[["a","b"],["c"]]}`), StartOptions{Name: "iterations"})
	if err != nil || res.Status != StatusSucceeded {
		t.Fatalf("run: %v %+v", err, res)
	}
	got := map[string]int{}
	for _, ev := range res.History() {
		if ev.Type == "MapIterationStarted" || ev.Type == "MapIterationSucceeded" {
			if ev.Index == nil {
				t.Fatalf("%s without an index: %+v", ev.Type, ev)
			}
			got[fmt.Sprintf("%s %s %q %d", ev.Type, ev.State, ev.Scope, *ev.Index)]++
		}
	}
	want := map[string]int{}
	for _, typ := range []string{"MapIterationStarted", "MapIterationSucceeded"} {
		for _, it := range []string{`M "" 0`, `M "" 1`, `N "M/item[0]" 0`, `N "M/item[0]" 1`, `N "M/item[1]" 0`} {
			want[typ+" "+it] = 1
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("iteration events %v, want %v", got, want)
	}
}

// TestHistoryTimestamps: each event keeps the clock reading it was
// recorded with, counted from the execution's start.
func TestHistoryTimestamps(t *testing.T) {
	reg := NewRegistry()
	const pause = 5 * time.Millisecond
	reg.Register("SlowFunction", func(_ context.Context, in json.RawMessage) (json.RawMessage, error) {
		time.Sleep(pause) // the point: real time passes between the events, read from the real clock
		return in, nil
	})
	def := `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"${SlowFunctionArn}","End":true}}}`
	before := time.Now()
	res, err := New(reg).Run(context.Background(), mustParse(t, def), json.RawMessage(`{}`), StartOptions{})
	after := time.Now()
	if err != nil || res.Status != StatusSucceeded {
		t.Fatalf("run: %v %+v", err, res)
	}
	at := map[string]time.Time{}
	for _, ev := range res.History() {
		if ev.Timestamp.Before(before) || ev.Timestamp.After(after) {
			t.Errorf("%s at %v, outside the run (%v to %v)", ev.Type, ev.Timestamp, before, after)
		}
		at[ev.Type] = ev.Timestamp
	}
	if d := at["TaskSucceeded"].Sub(at["TaskScheduled"]); d < pause {
		t.Errorf("the task ran %v between its events, want at least %v", d, pause)
	}

	// The record holds its reading with its type and flags, both signs.
	for _, ns := range []int64{0, 1, -1, 1234567890123, -int64(time.Hour), maxHistClock} {
		h := newHist(evTaskScheduled, nil, nil, nil)
		h.meta |= histText
		h.setClock(ns)
		if h.clock() != ns || h.typ() != evTaskScheduled || h.meta&histText == 0 {
			t.Errorf("setClock(%d): clock %d, type %v, meta %#x", ns, h.clock(), h.typ(), h.meta)
		}
	}
	h := newHist(evExecutionStarted, nil, nil, nil)
	if h.setClock(maxHistClock + 1); h.clock() != maxHistClock {
		t.Errorf("a reading past the bound is held at %d, want %d", h.clock(), maxHistClock)
	}
}

// TestTaskEventsAsStepFunctions: every Task attempt is scheduled, then
// started, then ends; a .waitForTaskToken Task is also submitted once its
// handler has returned (its output the call's response), before it waits
// for the token. Kept and streamed histories agree.
func TestTaskEventsAsStepFunctions(t *testing.T) {
	reg := NewRegistry()
	calls := 0
	reg.Register("FlakyFunction", func(_ context.Context, in json.RawMessage) (json.RawMessage, error) {
		if calls++; calls == 1 {
			return nil, &StatesError{Name: "Custom.Flaky", Cause: "first attempt fails"}
		}
		return in, nil
	})
	tokens := make(chan string, 1)
	reg.Register("AskFunction", tokenHandler(tokens))
	def := `{"StartAt":"A","States":{
	  "A":{"Type":"Task","Resource":"${FlakyFunctionArn}","Retry":[{"ErrorEquals":["Custom.Flaky"],"IntervalSeconds":1}],"Next":"B"},
	  "B":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"${FlakyFunctionArn}","Payload":{}},"Next":"C"},
	  "C":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken",
	       "Parameters":{"FunctionName":"${AskFunctionArn}","Payload":{"Token.$":"$$.Task.Token"}},"End":true}}}`
	clk := asltest.NewClock(clockStart) // A's retry waits its second on it
	eng := New(reg, WithClock(clk))
	var (
		mu       sync.Mutex
		streamed []Event
	)
	x, err := eng.Start(context.Background(), mustParse(t, def), json.RawMessage(`{}`), StartOptions{OnEvent: func(ev Event) {
		mu.Lock()
		streamed = append(streamed, ev)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	awaitTimers(t, clk, time.Second)
	clk.Advance(time.Second)
	if err := eng.SendTaskSuccess(<-tokens, json.RawMessage(`{"ok":true}`)); err != nil {
		t.Fatal(err)
	}
	res, err := x.Wait(context.Background())
	if err != nil || res.Status != StatusSucceeded {
		t.Fatalf("run: %v %+v", err, res)
	}
	kept := res.History()
	if !reflect.DeepEqual(kept, streamed) {
		t.Fatalf("kept %+v\nstreamed %+v", kept, streamed)
	}
	var got []string
	for _, ev := range kept {
		if !strings.HasPrefix(ev.Type, "Task") || strings.HasPrefix(ev.Type, "TaskState") {
			continue
		}
		got = append(got, ev.State+":"+ev.Type)
		resources := map[string]string{"A": "${FlakyFunctionArn}", "B": "arn:aws:states:::lambda:invoke", "C": "arn:aws:states:::lambda:invoke.waitForTaskToken"}
		if want := resources[ev.State]; (ev.Type == "TaskScheduled" || ev.Type == "TaskStarted" || ev.Type == "TaskSubmitted") && ev.Resource != want {
			t.Errorf("%s %s names resource %q, want %q", ev.State, ev.Type, ev.Resource, want)
		}
		if ev.Type == "TaskSubmitted" {
			want := map[string]any{"ExecutedVersion": "$LATEST", "Payload": "ignored", "StatusCode": int64(200)}
			if !reflect.DeepEqual(ev.Output, want) {
				t.Errorf("TaskSubmitted output %#v, want %#v", ev.Output, want)
			}
		}
	}
	want := []string{"A:TaskScheduled", "A:TaskStarted", "A:TaskFailed", "A:TaskScheduled", "A:TaskStarted", "A:TaskSucceeded",
		"B:TaskScheduled", "B:TaskStarted", "B:TaskSucceeded",
		"C:TaskScheduled", "C:TaskStarted", "C:TaskSubmitted", "C:TaskSucceeded"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("task events\n %v\nwant\n %v", got, want)
	}
}

// TestTaskScheduledAsStepFunctions: TaskScheduled holds a lambda:invoke's
// resolved Parameters (FunctionName and Payload; a function ARN's input
// alone), and the attempt's TimeoutSeconds and HeartbeatSeconds, read from
// the definition or resolved from a …Path.
func TestTaskScheduledAsStepFunctions(t *testing.T) {
	reg := NewRegistry()
	reg.Register("EchoFunction", func(_ context.Context, in json.RawMessage) (json.RawMessage, error) { return in, nil })
	def := `{"StartAt":"A","States":{
	  "A":{"Type":"Task","Resource":"${EchoFunctionArn}","TimeoutSeconds":7,"Parameters":{"x.$":"$.x"},"ResultPath":null,"Next":"B"},
	  "B":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","TimeoutSecondsPath":"$.t",
	       "Parameters":{"FunctionName":"${EchoFunctionArn}","Payload":{"x.$":"$.x"}},"End":true}}}`
	res, err := New(reg).Run(context.Background(), mustParse(t, def), json.RawMessage(`{"x":1,"t":42}`), StartOptions{})
	if err != nil || res.Status != StatusSucceeded {
		t.Fatalf("run: %v %+v", err, res)
	}
	got := map[string]Event{}
	for _, ev := range res.History() {
		if ev.Type == "TaskScheduled" {
			got[ev.State] = ev
		}
	}
	if a := got["A"]; !reflect.DeepEqual(a.Input, map[string]any{"x": int64(1)}) || a.TimeoutSeconds != 7 {
		t.Errorf("A scheduled with input %v, timeout %d", a.Input, a.TimeoutSeconds)
	}
	want := map[string]any{"FunctionName": "${EchoFunctionArn}", "Payload": map[string]any{"x": int64(1)}}
	if b := got["B"]; !reflect.DeepEqual(b.Input, want) || b.TimeoutSeconds != 42 {
		t.Errorf("B scheduled with %#v, timeout %d; want %#v and 42", b.Input, b.TimeoutSeconds, want)
	}
}
