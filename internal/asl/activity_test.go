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

const activityARN = "arn:aws:states:us-east-1:000000000000:activity:resize"

func TestIsActivityARN(t *testing.T) {
	for _, tt := range []struct {
		res  string
		want bool
	}{
		{activityARN, true},
		{"arn:aws-cn:states:cn-north-1:000000000000:activity:a", true},
		{"arn:aws:states:us-east-1:000000000000:stateMachine:a", false},
		{"arn:aws:states:::lambda:invoke", false},
		{"arn:aws:states:us-east-1:000000000000:activity:", false},
		{"${ResizeFunctionArn}", false},
	} {
		if got := IsActivityARN(tt.res); got != tt.want {
			t.Errorf("IsActivityARN(%q) = %v, want %v", tt.res, got, tt.want)
		}
	}
}

// queued is an activity task the engine handed over.
type queued struct {
	info  TaskInfo
	input string
}

// take is the next task handed over.
func take(t *testing.T, tasks chan queued) queued {
	t.Helper()
	select {
	case q := <-tasks:
		return q
	case <-time.After(10 * time.Second):
		t.Fatal("no activity task was handed over")
		return queued{}
	}
}

func activityEngine(clk *asltest.Clock) (*Engine, chan queued) {
	tasks := make(chan queued, 4)
	eng := New(NewRegistry(), WithClock(clk), WithActivities(func(ctx context.Context, in json.RawMessage) (json.RawMessage, error) {
		ti, _ := TaskFromContext(ctx)
		tasks <- queued{ti, string(in)}
		return nil, nil
	}, nil))
	return eng, tasks
}

// startActivity starts def on an engine with activities and returns the
// engine's clock and the task it handed over.
func startActivity(t *testing.T, def, input string) (*asltest.Clock, *Engine, *Execution, queued) {
	t.Helper()
	clk := asltest.NewClock(clockStart)
	eng, tasks := activityEngine(clk)
	x, err := eng.Start(context.Background(), mustParse(t, def), json.RawMessage(input), StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return clk, eng, x, take(t, tasks)
}

const activityDef = `{"StartAt":"Resize","States":{"Resize":{"Type":"Task","Resource":"` + activityARN + `",
  "Parameters":{"size.$":"$.size"},"TimeoutSeconds":100,"HeartbeatSeconds":1,"ResultPath":"$.resized",
  "Catch":[{"ErrorEquals":["States.HeartbeatTimeout"],"ResultPath":"$.lost","Next":"Lost"}],"End":true},
  "Lost":{"Type":"Pass","End":true}}}`

// An activity Task hands its input and token to the activities handler
// and waits for the token's outcome: its TimeoutSeconds counts from the
// scheduling, its HeartbeatSeconds only from the first heartbeat (the
// worker taking it), and it records neither TaskStarted nor TaskSubmitted.
func TestActivityTaskWaitsForItsWorker(t *testing.T) {
	t.Parallel()
	wait := func(t *testing.T, x *Execution) *Result {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res, err := x.Wait(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	types := func(res *Result) string {
		var out []string
		for _, ev := range res.History() {
			out = append(out, ev.Type)
		}
		return strings.Join(out, " ")
	}

	t.Run("answered", func(t *testing.T) {
		t.Parallel()
		clk, eng, x, task := startActivity(t, activityDef, `{"size":3}`)
		if task.info.Resource != activityARN || task.info.Token == "" || task.input != `{"size":3}` {
			t.Fatalf("handed over %+v", task)
		}
		awaitTimers(t, clk, 100*time.Second) // the timeout only: no heartbeat before a worker
		if err := eng.SendTaskHeartbeat(task.info.Token); err != nil {
			t.Fatal(err)
		}
		awaitTimers(t, clk, time.Second, 100*time.Second)
		if err := eng.SendTaskSuccess(task.info.Token, json.RawMessage(`{"w":1}`)); err != nil {
			t.Fatal(err)
		}
		res := wait(t, x)
		if res.Status != StatusSucceeded || string(res.Output) != `{"resized":{"w":1},"size":3}` {
			t.Fatalf("%s %s %s", res.Status, res.Output, res.Cause)
		}
		want := "ExecutionStarted TaskStateEntered TaskScheduled TaskSucceeded TaskStateExited ExecutionSucceeded"
		if got := types(res); got != want {
			t.Errorf("history\n got %s\nwant %s", got, want)
		}
		for _, ev := range res.History() {
			if ev.Type == "TaskScheduled" && (ev.Resource != activityARN || ev.TimeoutSeconds != 100 || ev.HeartbeatSeconds != 1) {
				t.Errorf("TaskScheduled %+v", ev)
			}
		}
	})

	t.Run("worker gone silent", func(t *testing.T) {
		t.Parallel()
		clk, eng, x, task := startActivity(t, activityDef, `{"size":3}`)
		if err := eng.SendTaskHeartbeat(task.info.Token); err != nil {
			t.Fatal(err)
		}
		awaitTimers(t, clk, time.Second, 100*time.Second)
		clk.Advance(time.Second)
		res := wait(t, x)
		// caught by States.HeartbeatTimeout, recorded as States.Timeout
		if !strings.Contains(string(res.Output), `"Error":"States.Timeout"`) {
			t.Errorf("output %s, want the heartbeat timeout caught", res.Output)
		}
		if got := types(res); !strings.Contains(got, "TaskScheduled TaskTimedOut") {
			t.Errorf("history %s", got)
		}
	})

	t.Run("no worker", func(t *testing.T) {
		t.Parallel()
		clk, _, x, _ := startActivity(t, strings.Replace(activityDef, `"HeartbeatSeconds":1,`, "", 1), `{"size":1}`)
		awaitTimers(t, clk, 100*time.Second)
		clk.Advance(100 * time.Second)
		res := wait(t, x)
		if res.Status != StatusFailed || res.Error != ErrTimeout {
			t.Errorf("%s %s, want failed with States.Timeout", res.Status, res.Error)
		}
	})
}

// A Task whose activity does not exist when it runs fails the execution
// with States.Runtime, neither retried nor caught (States.ALL excludes
// it), as recorded on AWS (LocalStack snapshot
// activities/test_activities.snapshot.json, test_activity_task_on_deleted).
// Missing at the lookup, nothing is scheduled; deleted after it (the
// handler answers MissingActivity), the scheduling stays and no event of
// the task's own follows.
func TestActivityMissingWhenItRuns(t *testing.T) {
	t.Parallel()
	def := `{"StartAt":"ActivityTask","States":{"ActivityTask":{"Type":"Task","Resource":"` + activityARN + `",
	  "Retry":[{"ErrorEquals":["States.ALL"],"MaxAttempts":3}],
	  "Catch":[{"ErrorEquals":["States.ALL"],"Next":"Caught"}],"End":true},
	  "Caught":{"Type":"Pass","End":true}}}`
	wantCause := "An error occurred while executing the state 'ActivityTask' (entered at the event id #2). The activity " + activityARN + " does not exist."
	for _, tt := range []struct {
		name    string
		exists  bool
		history string
	}{
		{"missing at the lookup", false, "ExecutionStarted TaskStateEntered ExecutionFailed"},
		{"deleted after the lookup", true, "ExecutionStarted TaskStateEntered TaskScheduled ExecutionFailed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			handled := 0
			eng := New(NewRegistry(), WithActivities(func(ctx context.Context, in json.RawMessage) (json.RawMessage, error) {
				handled++
				ti, _ := TaskFromContext(ctx)
				return nil, MissingActivity(ti.Resource)
			}, func(_, arn string) bool { return tt.exists }))
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			res, err := eng.Run(ctx, mustParse(t, def), json.RawMessage(`{"Value1":"HelloWorld"}`), StartOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != StatusFailed || res.Error != ErrRuntime || res.Cause != wantCause {
				t.Errorf("%s %s %q\nwant FAILED States.Runtime %q", res.Status, res.Error, res.Cause, wantCause)
			}
			var got []string
			for _, ev := range res.History() {
				got = append(got, ev.Type)
			}
			if g := strings.Join(got, " "); g != tt.history {
				t.Errorf("history\n got %s\nwant %s", g, tt.history)
			}
			if want := map[bool]int{false: 0, true: 1}[tt.exists]; handled != want {
				t.Errorf("the handler ran %d times, want %d", handled, want)
			}
		})
	}
}

// Without WithActivities an activity ARN is a resource no handler serves.
func TestActivityUnboundWithoutActivities(t *testing.T) {
	sm := mustParse(t, activityDef)
	var ub *UnboundError
	if err := New(NewRegistry()).Check(sm); !errors.As(err, &ub) || ub.Resource != activityARN {
		t.Errorf("Check without activities: %v", err)
	}
	eng, _ := activityEngine(asltest.NewClock(clockStart))
	if err := eng.Check(mustParse(t, activityDef)); err != nil {
		t.Errorf("Check with activities: %v", err)
	}
}
