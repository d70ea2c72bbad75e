package asl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/asl/asltest"
)

// A .waitForTaskToken task with HeartbeatSeconds times out when its
// worker stays silent longer, recorded as AWS records it (LocalStack
// snapshot timeouts/test_heartbeats.snapshot.json): TaskTimedOut with
// States.Timeout and no cause, caught as {"Error":"States.Timeout",
// "Cause":""} (error_handling/test_task_service_lambda.snapshot.json,
// test_invoke_timeout). It lives on while the worker sends heartbeats,
// however long it works.
func TestHeartbeatSecondsBoundsAWaitingTasksSilence(t *testing.T) {
	t.Parallel()
	def := func(heartbeat string) string {
		return `{"StartAt":"Ask","States":{"Ask":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken",
		  "Parameters":{"FunctionName":"${AskFunctionArn}","Payload":{"Token.$":"$$.Task.Token"}},` + heartbeat + `,"ResultPath":"$.answer",
		  "Catch":[{"ErrorEquals":["States.Timeout"],"ResultPath":"$.lost","Next":"Lost"}],"End":true},
		  "Lost":{"Type":"Pass","End":true}}}`
	}
	// The engine runs on a clock the test moves: a second of silence
	// takes no real time.
	start := func(t *testing.T, definition, input string) (*asltest.Clock, *Engine, *Execution, string) {
		tokens := make(chan string, 1)
		reg := NewRegistry()
		reg.Register("AskFunction", tokenHandler(tokens))
		clk := asltest.NewClock(clockStart)
		eng := New(reg, WithClock(clk))
		x, err := eng.Start(context.Background(), mustParse(t, definition), json.RawMessage(input), StartOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return clk, eng, x, <-tokens
	}
	wait := func(t *testing.T, x *Execution) *Result {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res, err := x.Wait(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	t.Run("silent worker", func(t *testing.T) {
		t.Parallel()
		clk, eng, x, tok := start(t, def(`"HeartbeatSeconds":1`), `{}`)
		awaitTimers(t, clk, time.Second)
		clk.Advance(time.Second)
		res := wait(t, x)
		var out any
		if err := json.Unmarshal(res.Output, &out); err != nil || !reflect.DeepEqual(out, map[string]any{"lost": map[string]any{"Error": "States.Timeout", "Cause": ""}}) {
			t.Fatalf("output %s, want {\"lost\":{\"Error\":\"States.Timeout\",\"Cause\":\"\"}}: the heartbeat timeout caught by States.Timeout", res.Output)
		}
		timedOut := false
		for _, ev := range res.History() {
			if ev.Type == "TaskTimedOut" {
				timedOut = true
				if ev.Error != ErrTimeout || ev.Cause != "" || !ev.Heartbeat {
					t.Errorf("TaskTimedOut %q %q heartbeat %v, want States.Timeout, no cause, heartbeat", ev.Error, ev.Cause, ev.Heartbeat)
				}
			}
		}
		if !timedOut {
			t.Error("no TaskTimedOut event")
		}
		var tt *TaskTimedOut
		if err := eng.SendTaskHeartbeat(tok); !errors.As(err, &tt) {
			t.Errorf("heartbeat after the timeout: %v, want *TaskTimedOut", err)
		}
	})
	t.Run("beating worker", func(t *testing.T) {
		t.Parallel()
		clk, eng, x, tok := start(t, def(`"HeartbeatSecondsPath":"$.beat"`), `{"beat":1}`)
		awaitTimers(t, clk, time.Second)
		for i := range 4 { // 1.6 s of work, never 1 s without a heartbeat
			clk.Advance(400 * time.Millisecond)
			if err := eng.SendTaskHeartbeat(tok); err != nil {
				t.Fatalf("heartbeat: %v", err)
			}
			// The heartbeat restarts the second of silence allowed.
			awaitTimers(t, clk, time.Duration(i+1)*400*time.Millisecond+time.Second)
		}
		if err := eng.SendTaskSuccess(tok, json.RawMessage(`{"ok":true}`)); err != nil {
			t.Fatal(err)
		}
		if res := wait(t, x); string(res.Output) != `{"answer":{"ok":true},"beat":1}` {
			t.Errorf("output %s", res.Output)
		}
	})
}

// TestHeartbeatTimeoutMatching: recorded as States.Timeout, a heartbeat
// timeout is still matched by ErrorEquals ["States.HeartbeatTimeout"], as
// AWS's documentation has it, and by States.Timeout and States.ALL; a
// TimeoutSeconds timeout is not a heartbeat's. In a Catch and a Retry
// alike, run through the engine.
func TestHeartbeatTimeoutMatching(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		equals    string
		heartbeat bool // HeartbeatSeconds runs out, else TimeoutSeconds
		want      bool
	}{
		{ErrHeartbeatTimeout, true, true},
		{ErrTimeout, true, true},
		{ErrAll, true, true},
		{ErrTaskFailed, true, false},
		{ErrHeartbeatTimeout, false, false},
		{ErrTimeout, false, true},
	} {
		limit := `"TimeoutSeconds":1`
		if tc.heartbeat {
			limit = `"HeartbeatSeconds":1`
		}
		for _, how := range []string{"Catch", "Retry"} {
			t.Run(fmt.Sprintf("%s %s %s", how, tc.equals, limit), func(t *testing.T) {
				t.Parallel()
				handlers := `"Catch":[{"ErrorEquals":["` + tc.equals + `"],"ResultPath":"$.lost","Next":"Lost"}]`
				if how == "Retry" {
					handlers = `"Retry":[{"ErrorEquals":["` + tc.equals + `"],"IntervalSeconds":1,"MaxAttempts":1}],
					  "Catch":[{"ErrorEquals":["Never"],"Next":"Lost"}]`
				}
				def := `{"StartAt":"Ask","States":{"Ask":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken",
				  "Parameters":{"FunctionName":"${AskFunctionArn}","Payload":{"Token.$":"$$.Task.Token"}},` + limit + `,` + handlers + `,"End":true},
				  "Lost":{"Type":"Pass","End":true}}}`
				tokens := make(chan string, 2)
				reg := NewRegistry()
				reg.Register("AskFunction", tokenHandler(tokens))
				clk := asltest.NewClock(clockStart)
				x, err := New(reg, WithClock(clk)).Start(context.Background(), mustParse(t, def), json.RawMessage(`{}`), StartOptions{})
				if err != nil {
					t.Fatal(err)
				}
				<-tokens
				awaitTimers(t, clk, time.Second)
				clk.Advance(time.Second)
				attempts := 1
				if how == "Retry" && tc.want { // the retry, after its interval, times out too
					awaitTimers(t, clk, 2*time.Second)
					clk.Advance(time.Second)
					<-tokens
					attempts++
					awaitTimers(t, clk, 3*time.Second)
					clk.Advance(time.Second)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				res, err := x.Wait(ctx)
				if err != nil {
					t.Fatal(err)
				}
				scheduled := 0
				for _, ev := range res.History() {
					if ev.Type == "TaskScheduled" {
						scheduled++
					}
				}
				caught := res.Status == StatusSucceeded
				switch {
				case how == "Catch" && caught != tc.want:
					t.Errorf("caught: %v, want %v (%s %s %q)", caught, tc.want, res.Status, res.Error, res.Cause)
				case how == "Retry" && scheduled != attempts:
					t.Errorf("%d attempts, want %d", scheduled, attempts)
				case !caught && (res.Error != ErrTimeout || res.Cause != ""):
					t.Errorf("failed with %q %q, want States.Timeout without a cause", res.Error, res.Cause)
				}
			})
		}
	}
}

// tokenHandler is a .waitForTaskToken task's handler: it hands the task
// token it is given ({"Token": …}) to tokens, as a worker would receive it.
func tokenHandler(tokens chan<- string) Handler {
	return func(_ context.Context, in json.RawMessage) (json.RawMessage, error) {
		var v struct{ Token string }
		if err := json.Unmarshal(in, &v); err != nil {
			return nil, err
		}
		tokens <- v.Token
		return json.RawMessage(`"ignored"`), nil
	}
}
