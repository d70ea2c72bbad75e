package asl

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/asl/asltest"
)

// A .waitForTaskToken task with HeartbeatSeconds fails with
// States.HeartbeatTimeout (which States.Timeout also catches) when its
// worker stays silent longer, and lives on while the worker sends
// heartbeats, however long it works.
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
		if !strings.Contains(string(res.Output), `"Error":"States.HeartbeatTimeout"`) {
			t.Fatalf("output %s, want the heartbeat timeout caught by States.Timeout", res.Output)
		}
		timedOut := false
		for _, ev := range res.History() {
			timedOut = timedOut || (ev.Type == "TaskTimedOut" && ev.Error == ErrHeartbeatTimeout)
		}
		if !timedOut {
			t.Error("no TaskTimedOut event with States.HeartbeatTimeout")
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

func TestHeartbeatTimeoutMatching(t *testing.T) {
	for _, tc := range []struct {
		equals []string
		want   bool
	}{
		{[]string{ErrHeartbeatTimeout}, true},
		{[]string{ErrTimeout}, true},
		{[]string{ErrAll}, true},
		{[]string{ErrTaskFailed}, false},
	} {
		if got := errorMatches(tc.equals, ErrHeartbeatTimeout); got != tc.want {
			t.Errorf("%v matches States.HeartbeatTimeout: %v, want %v", tc.equals, got, tc.want)
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
