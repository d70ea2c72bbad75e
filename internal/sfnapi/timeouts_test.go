package sfnapi_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/veredicto/veredicto/internal/asl/asltest"
	"github.com/veredicto/veredicto/internal/control"
	"github.com/veredicto/veredicto/internal/poll"
)

// TestTimeoutHistories: a Task that times out, by its TimeoutSeconds or
// by its HeartbeatSeconds, records its timed-out event with the error
// States.Timeout and no cause, and the execution fails with States.Timeout
// and no cause, as recorded on AWS (LocalStack snapshots
// timeouts/test_timeouts.snapshot.json: test_fixed_timeout_lambda,
// test_fixed_timeout_service_lambda; timeouts/test_heartbeats.snapshot.json:
// test_heartbeat_timeout; callback/test_callback.snapshot.json:
// test_sqs_wait_for_task_token_timeout; activities/test_activities.snapshot.json:
// test_activity_task_start_timeout). An activity whose worker goes silent
// past HeartbeatSeconds is not recorded; it follows the callback's.
func TestTimeoutHistories(t *testing.T) {
	tests := []struct {
		name, task string
		activity   bool // the Task is an activity's, whose worker takes it
		history    string
		timedOut   map[string]string // the timed-out event's details
	}{
		{"lambda function", `"Resource":"HangFunction","TimeoutSeconds":5`, false,
			"ExecutionStarted TaskStateEntered LambdaFunctionScheduled LambdaFunctionStarted LambdaFunctionTimedOut ExecutionFailed",
			map[string]string{"error": "States.Timeout"}},
		{"lambda service integration", `"Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"HangFunction","Payload":null},"TimeoutSeconds":5`, false,
			"ExecutionStarted TaskStateEntered TaskScheduled TaskStarted TaskTimedOut ExecutionFailed",
			map[string]string{"error": "States.Timeout", "resource": "invoke", "resourceType": "lambda"}},
		{"callback heartbeat", `"Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken","Parameters":{"FunctionName":"NotifyFunction","Payload":{"token.$":"$$.Task.Token"}},"HeartbeatSeconds":5`, false,
			"ExecutionStarted TaskStateEntered TaskScheduled TaskStarted TaskSubmitted TaskTimedOut ExecutionFailed",
			map[string]string{"error": "States.Timeout", "resource": "invoke.waitForTaskToken", "resourceType": "lambda"}},
		{"activity timeout", `"Resource":"ACTIVITY","TimeoutSeconds":5`, true,
			"ExecutionStarted TaskStateEntered ActivityScheduled ActivityStarted ActivityTimedOut ExecutionFailed",
			map[string]string{"error": "States.Timeout"}},
		{"activity heartbeat", `"Resource":"ACTIVITY","HeartbeatSeconds":5`, true,
			"ExecutionStarted TaskStateEntered ActivityScheduled ActivityStarted ActivityTimedOut ExecutionFailed",
			map[string]string{"error": "States.Timeout"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := asltest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			p := newPeerWith(t, control.Config{Clock: clock})
			ctx := context.Background()
			task, actARN := tt.task, ""
			if tt.activity {
				actARN = p.activity(t, p.client, "slow")
				task = strings.Replace(task, "ACTIVITY", actARN, 1)
			}
			arn := p.start(t, p.create(t, "Slow", `{"StartAt":"Start","States":{"Start":{"Type":"Task",`+task+`,"End":true}}}`), "x", `{}`)
			if tt.activity {
				if got, err := p.client.GetActivityTask(ctx, &sfn.GetActivityTaskInput{ActivityArn: aws.String(actARN)}); err != nil || got.TaskToken == nil {
					t.Fatalf("GetActivityTask: %+v %v", got, err)
				}
			}
			fireTimer(t, clock, 5*time.Second, 1, "the Task's timer")
			out := closed(t, p.client, arn)
			if out.Status != types.ExecutionStatusFailed || aws.ToString(out.Error) != "States.Timeout" || out.Cause != nil {
				t.Errorf("DescribeExecution: %s %q cause %v, want FAILED States.Timeout without a cause", out.Status, aws.ToString(out.Error), aws.ToString(out.Cause))
			}
			var seen []string
			for _, ev := range history(t, p.client, arn) {
				seen = append(seen, string(ev.Type))
				var d any
				switch {
				case ev.LambdaFunctionTimedOutEventDetails != nil:
					d = ev.LambdaFunctionTimedOutEventDetails
				case ev.TaskTimedOutEventDetails != nil:
					d = ev.TaskTimedOutEventDetails
				case ev.ActivityTimedOutEventDetails != nil:
					d = ev.ActivityTimedOutEventDetails
				case ev.ExecutionFailedEventDetails != nil:
					if got := fields(t, ev.ExecutionFailedEventDetails); !reflect.DeepEqual(got, map[string]string{"error": "States.Timeout"}) {
						t.Errorf("ExecutionFailed details %v, want only the error States.Timeout", got)
					}
					continue
				default:
					continue
				}
				if got := fields(t, d); !reflect.DeepEqual(got, tt.timedOut) {
					t.Errorf("%s details %v, want %v", ev.Type, got, tt.timedOut)
				}
			}
			if got := strings.Join(seen, " "); got != tt.history {
				t.Errorf("history\n got %s\nwant %s", got, tt.history)
			}
		})
	}
}

// fields is an event's details as their JSON names and texts, without the
// members the SDK leaves nil.
func fields(t *testing.T, d any) map[string]string {
	t.Helper()
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]*string
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for k, v := range m {
		if v != nil {
			out[strings.ToLower(k[:1])+k[1:]] = *v
		}
	}
	return out
}

// TestTimedOutExecutionDescribed: an execution past its own TimeoutSeconds
// is described TIMED_OUT without an error or a cause, as recorded on AWS
// (LocalStack snapshot timeouts/test_timeouts.snapshot.json,
// test_global_timeout).
func TestTimedOutExecutionDescribed(t *testing.T) {
	clock := asltest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	p := newPeerWith(t, control.Config{Clock: clock})
	arn := p.start(t, p.create(t, "Global", `{"TimeoutSeconds":5,"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":60,"End":true}}}`), "g", `{}`)
	fireTimer(t, clock, 5*time.Second, 0, "the execution's timer")
	out := closed(t, p.client, arn)
	if out.Status != types.ExecutionStatusTimedOut || out.Error != nil || out.Cause != nil {
		t.Errorf("DescribeExecution: %s error %v cause %v, want TIMED_OUT without either", out.Status, aws.ToString(out.Error), aws.ToString(out.Cause))
	}
}

// fireTimer waits until the engine's earliest timer is due d from now,
// with timers armed in all (0: any number), then moves the clock to it.
func fireTimer(t *testing.T, clock *asltest.Clock, d time.Duration, timers int, what string) {
	t.Helper()
	poll.Until(t, 10*time.Second, func() bool {
		ps := clock.Pending()
		return len(ps) > 0 && (timers == 0 || len(ps) == timers) && ps[0].Equal(clock.Now().Add(d))
	}, what)
	clock.Advance(d)
}
