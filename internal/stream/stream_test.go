package stream

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	fileeventlog "github.com/veredicto/veredicto/internal/eventlog/file"
)

func TestFromHistory(t *testing.T) {
	idx := 2
	tests := []struct {
		name    string
		ev      Event
		want    *Step // nil: not a step
		noWords []string
	}{
		{"execution started", Event{ID: 1, Type: "ExecutionStarted", Input: map[string]any{"cv": "Jane Doe, 42, lives at…"}},
			&Step{ID: "h1", Agent: "execution", Action: "started", Content: "Ejecución inicia"}, []string{"Jane"}},
		{"task state entered", Event{ID: 2, Type: "TaskStateEntered", State: "GEM1", Input: map[string]any{"text": "secret cv"}},
			&Step{ID: "h2", Agent: "GEM1", Action: "started", Content: "GEM1 inicia"}, []string{"secret"}},
		{"first schedule is implied", Event{ID: 3, Type: "TaskScheduled", State: "GEM1", Resource: "${Gem1FunctionArn}", Attempt: 1}, nil, nil},
		{"retry", Event{ID: 4, Type: "TaskScheduled", State: "GEM1", Resource: "${Gem1FunctionArn}", Attempt: 2},
			&Step{ID: "h4", Agent: "Gem1Function", Action: "retried", Content: "Gem1Function reintenta (intento 2)"}, nil},
		{"task failed names the error only", Event{ID: 5, Type: "TaskFailed", State: "GEM1", Error: "TransientError", Cause: "the CV of Jane says…"},
			&Step{ID: "h5", Agent: "GEM1", Action: "failed", Content: "GEM1 falla: TransientError"}, []string{"Jane"}},
		{"task succeeded keeps decision fields", Event{ID: 6, Type: "TaskSucceeded", State: "GEM1",
			Output: map[string]any{"candidate_id": "c-001", "score": 82.0, "passed": true, "summary": "Jane is great", "evidence": []any{"quote"}, "gem1": map[string]any{"decision": "SI", "notes": "long text"}}},
			&Step{ID: "h6", Agent: "GEM1", Action: "finished", Content: "GEM1 termina"}, []string{"Jane", "quote", "long text"}},
		{"task state exited is implied", Event{ID: 7, Type: "TaskStateExited", State: "GEM1"}, nil, nil},
		{"choice exited", Event{ID: 8, Type: "ChoiceStateExited", State: "Gate1"},
			&Step{ID: "h8", Agent: "Gate1", Action: "finished", Content: "Umbral GEM1 termina"}, nil},
		{"map iteration", Event{ID: 9, Type: "MapIterationStarted", State: "Each", Index: &idx},
			&Step{ID: "h9", Agent: "Each", Action: "iteration-started", Content: "Each inicia un elemento (n.º 2)"}, nil},
		{"map started is implied", Event{ID: 10, Type: "MapStateStarted", State: "Each"}, nil, nil},
		{"wait started is implied", Event{ID: 11, Type: "WaitStateStarted", State: "W"}, nil, nil},
		{"timeout", Event{ID: 12, Type: "TaskTimedOut", State: "Ask", Resource: "", Error: "States.Timeout"},
			&Step{ID: "h12", Agent: "Ask", Action: "timed-out", Content: "Ask agota su tiempo: States.Timeout"}, nil},
		{"lambda arn", Event{ID: 13, Type: "TaskScheduled", State: "G", Resource: "arn:aws:lambda:us-east-1:1:function:veredicto-Gem2Function-AbC:live", Attempt: 3},
			&Step{ID: "h13", Agent: "veredicto-Gem2Function-AbC", Action: "retried", Content: "veredicto-Gem2Function-AbC reintenta (intento 3)"}, nil},
		{"task started is implied", Event{ID: 15, Type: "TaskStarted", State: "GEM1", Resource: "${Gem1FunctionArn}"}, nil, nil},
		{"aborted by a sibling", Event{ID: 16, Type: "TaskStateAborted", State: "GEM2", Scope: "Each/item[1]"},
			&Step{ID: "h16", Agent: "GEM2", Action: "aborted", Content: "GEM2 se detiene"}, nil},
		{"map iteration aborted", Event{ID: 17, Type: "MapIterationAborted", State: "Each", Index: &idx},
			&Step{ID: "h17", Agent: "Each", Action: "iteration-aborted", Content: "Each se detiene en un elemento (n.º 2)"}, nil},
		{"execution failed", Event{ID: 14, Type: "ExecutionFailed", Error: "States.TaskFailed", Cause: "Jane"},
			&Step{ID: "h14", Agent: "execution", Action: "failed", Content: "Ejecución falla: States.TaskFailed"}, []string{"Jane"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := FromHistory(tt.ev)
			if tt.want == nil {
				if ok {
					t.Fatalf("got step %+v, want none", got)
				}
				return
			}
			if !ok {
				t.Fatal("got no step")
			}
			if got.ID != tt.want.ID || got.Agent != tt.want.Agent || got.Action != tt.want.Action || got.Content != tt.want.Content {
				t.Errorf("got %+v, want %+v", got, *tt.want)
			}
			b, _ := json.Marshal(got)
			for _, w := range tt.noWords {
				if strings.Contains(string(b), w) {
					t.Errorf("step %s carries document text %q", b, w)
				}
			}
		})
	}
	st, _ := FromHistory(tests[5].ev)
	for k, want := range map[string]any{"candidate_id": "c-001", "score": 82.0, "passed": true, "gem1.decision": "SI"} {
		if st.Metadata[k] != want {
			t.Errorf("metadata[%s] = %v, want %v", k, st.Metadata[k], want)
		}
	}
}

func TestAgentsOf(t *testing.T) {
	def := `{"StartAt":"A","States":{
	  "A":{"Type":"Task","Resource":"${ValidateFunctionArn}","Next":"M"},
	  "M":{"Type":"Map","ItemProcessor":{"StartAt":"G","States":{"G":{"Type":"Task","Resource":"${Gem1FunctionArn}","End":true}}},"Next":"Ask"},
	  "Ask":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken","Parameters":{"FunctionName":"${ConfirmFunctionArn}","Payload":{}},"Next":"P"},
	  "P":{"Type":"Parallel","Branches":[{"StartAt":"X","States":{"X":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"SummaryFunction"},"End":true}}}],"End":true}}}`
	got, err := AgentsOf([]byte(def))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"A": "ValidateFunction", "G": "Gem1Function", "Ask": "ConfirmFunction", "X": "SummaryFunction"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("AgentsOf = %v, want %v", got, want)
	}
}

func TestRecorderReplayAppendsOnce(t *testing.T) {
	ctx := t.Context()
	log := fileeventlog.New(t.TempDir())
	rec := &Recorder{Log: log, AgentsFor: func(string) map[string]string { return map[string]string{"GEM1": "Gem1Function"} }}
	history := []Event{
		{ID: 1, Type: "ExecutionStarted"},
		{ID: 2, Type: "TaskStateEntered", State: "GEM1"},
		{ID: 3, Type: "TaskScheduled", State: "GEM1", Attempt: 1},
		{ID: 4, Type: "TaskSucceeded", State: "GEM1"},
		{ID: 5, Type: "TaskStateExited", State: "GEM1"},
		{ID: 6, Type: "ExecutionSucceeded"},
	}
	for _, ev := range history {
		if err := rec.Record(ctx, "acme", "arn:x", ev); err != nil {
			t.Fatal(err)
		}
	}
	hook := rec.Hook(slog.New(slog.DiscardHandler))
	for _, ev := range history { // a restart calls the hook again
		hook("acme", "arn:x", ev)
	}
	evs, err := log.Read(ctx, "acme", "arn:x", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		var d struct {
			Step   Step   `json:"step"`
			Status string `json:"status"`
		}
		json.Unmarshal(e.Data, &d)
		got = append(got, e.Type+":"+d.Step.Agent+d.Status)
	}
	want := "[execution-step:execution execution-step:Gem1Function execution-step:Gem1Function execution-step:execution finish:SUCCEEDED]"
	if fmt.Sprint(got) != want {
		t.Errorf("stream = %v\nwant     %s", got, want)
	}
}

// TestSpoolWritesInOrder: events queued through the Spool's hook reach
// their streams in order, once, and Close writes what is still queued.
func TestSpoolWritesInOrder(t *testing.T) {
	ctx := t.Context()
	log := fileeventlog.New(t.TempDir())
	s := &Spool{Recorder: &Recorder{Log: log}, Log: log, Logger: slog.New(slog.DiscardHandler)}
	hook := s.Hook()
	for _, arn := range []string{"arn:a", "arn:b"} {
		for _, ev := range []Event{{ID: 1, Type: "ExecutionStarted"}, {ID: 2, Type: "PassStateEntered", State: "P"},
			{ID: 3, Type: "PassStateExited", State: "P"}, {ID: 4, Type: "ExecutionSucceeded"}} {
			hook("acme", arn, ev)
			hook("acme", arn, ev) // passed twice: recorded once
		}
	}
	s.Close()
	for _, arn := range []string{"arn:a", "arn:b"} {
		evs, err := log.Read(ctx, "acme", arn, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range evs {
			got = append(got, e.Key)
		}
		if want := "[h:1 h:2 h:3 h:4 finish]"; fmt.Sprint(got) != want {
			t.Errorf("%s stream %v, want %s", arn, got, want)
		}
	}
}

// TestSpoolConcurrentHooks: executions hooking at once, the writer
// between rounds and idle in turn, lose and reorder nothing (run with
// -race: the queue's array changes hands at every round).
func TestSpoolConcurrentHooks(t *testing.T) {
	ctx := t.Context()
	log := fileeventlog.New(t.TempDir())
	s := &Spool{Recorder: &Recorder{Log: log}, Log: log, Logger: slog.New(slog.DiscardHandler)}
	hook := s.Hook()
	const executions, events = 8, 60
	var wg sync.WaitGroup
	for x := range executions {
		wg.Go(func() {
			for i := 1; i <= events; i++ {
				hook("acme", fmt.Sprintf("arn:%d", x), Event{ID: i, Type: "PassStateEntered", State: "P"})
				if i%20 == 0 {
					time.Sleep(time.Millisecond) // let the writer go idle
				}
			}
		})
	}
	wg.Wait()
	s.Close()
	for x := range executions {
		evs, err := log.Read(ctx, "acme", fmt.Sprintf("arn:%d", x), 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != events {
			t.Fatalf("execution %d: %d messages, want %d", x, len(evs), events)
		}
		for i, e := range evs {
			if want := fmt.Sprintf("h:%d", i+1); e.Key != want {
				t.Fatalf("execution %d: message %d is %s, want %s", x, i+1, e.Key, want)
			}
		}
	}
}
