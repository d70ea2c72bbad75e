package sfnapi_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/veredicto/veredicto/internal/asl/asltest"
	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/control"
	"github.com/veredicto/veredicto/internal/httpapi/apitest"
	"github.com/veredicto/veredicto/internal/poll"
	"github.com/veredicto/veredicto/internal/sfnapi"
)

// activityDef runs one activity Task, with extra fields (a heartbeat) and
// a Catch of States.Timeout.
func activityDef(arn, extra string) string {
	return `{"StartAt":"Work","States":{
	  "Work":{"Type":"Task","Resource":"` + arn + `",` + extra + `"Parameters":{"job.$":"$.job"},"ResultPath":"$.result",
	          "Catch":[{"ErrorEquals":["States.Timeout"],"ResultPath":"$.lost","Next":"Lost"}],"Next":"Done"},
	  "Lost":{"Type":"Pass","Result":"lost","ResultPath":"$.path","End":true},
	  "Done":{"Type":"Pass","Result":"done","ResultPath":"$.path","End":true}}}`
}

func (p *peer) activity(t *testing.T, c *sfn.Client, name string) string {
	t.Helper()
	out, err := c.CreateActivity(context.Background(), &sfn.CreateActivityInput{Name: aws.String(name)})
	if err != nil {
		t.Fatalf("CreateActivity %s: %v", name, err)
	}
	return aws.ToString(out.ActivityArn)
}

// A worker written against the Go SDK (GetActivityTask, then
// SendTaskSuccess) finishes an execution, and the history tells the
// activity's story as Step Functions does.
func TestActivityWorkerLoop(t *testing.T) {
	p := newPeer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	actARN := p.activity(t, p.client, "resize")
	smARN := p.create(t, "Resizer", activityDef(actARN, `"TimeoutSeconds":300,"HeartbeatSeconds":60,`))

	// the worker: poll, work, answer, until told to stop
	worked := make(chan string, 4)
	go func() {
		for ctx.Err() == nil {
			task, err := p.client.GetActivityTask(ctx, &sfn.GetActivityTaskInput{ActivityArn: aws.String(actARN), WorkerName: aws.String("resizer-1")})
			if err != nil || task.TaskToken == nil {
				continue
			}
			if _, err := p.client.SendTaskHeartbeat(ctx, &sfn.SendTaskHeartbeatInput{TaskToken: task.TaskToken}); err != nil {
				worked <- "heartbeat: " + err.Error()
				continue
			}
			_, err = p.client.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: task.TaskToken, Output: aws.String(`{"resized":` + aws.ToString(task.Input) + `}`)})
			if err != nil {
				worked <- "success: " + err.Error()
				continue
			}
			worked <- aws.ToString(task.Input)
		}
	}()
	arns := []string{p.start(t, smARN, "one", `{"job":1}`), p.start(t, smARN, "two", `{"job":2}`)}
	for _, arn := range arns {
		out := closed(t, p.client, arn)
		if out.Status != types.ExecutionStatusSucceeded || !strings.Contains(aws.ToString(out.Output), `"path":"done"`) {
			t.Errorf("%s: %s %s", arn, out.Status, aws.ToString(out.Output))
		}
	}
	for range arns {
		if w := <-worked; w != `{"job":1}` && w != `{"job":2}` {
			t.Errorf("the worker: %s", w)
		}
	}

	events := history(t, p.client, arns[0])
	var seen []string
	for _, ev := range events {
		seen = append(seen, string(ev.Type))
		switch ev.Type {
		case types.HistoryEventTypeActivityScheduled:
			d := ev.ActivityScheduledEventDetails
			if d == nil || aws.ToString(d.Resource) != actARN || aws.ToString(d.Input) != `{"job":1}` ||
				aws.ToInt64(d.TimeoutInSeconds) != 300 || aws.ToInt64(d.HeartbeatInSeconds) != 60 {
				t.Errorf("ActivityScheduled %+v", d)
			}
		case types.HistoryEventTypeActivityStarted:
			if d := ev.ActivityStartedEventDetails; d == nil || aws.ToString(d.WorkerName) != "resizer-1" {
				t.Errorf("ActivityStarted %+v", d)
			}
		case types.HistoryEventTypeActivitySucceeded:
			if d := ev.ActivitySucceededEventDetails; d == nil || aws.ToString(d.Output) != `{"resized":{"job":1}}` {
				t.Errorf("ActivitySucceeded %+v", d)
			}
		}
	}
	want := "ExecutionStarted TaskStateEntered ActivityScheduled ActivityStarted ActivitySucceeded TaskStateExited PassStateEntered PassStateExited ExecutionSucceeded"
	if got := strings.Join(seen, " "); got != want {
		t.Errorf("history\n got %s\nwant %s", got, want)
	}
}

// A worker that takes a task and goes silent is timed out after
// HeartbeatSeconds (ActivityTimedOut, States.Timeout as AWS records every
// timeout: TestTimeoutHistories); a task no worker has taken waits without
// a heartbeat.
func TestActivityHeartbeatTimeout(t *testing.T) {
	clock := asltest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	p := newPeerWith(t, control.Config{Clock: clock})
	ctx := context.Background()
	actARN := p.activity(t, p.client, "silent")
	arn := p.start(t, p.create(t, "Silent", activityDef(actARN, `"HeartbeatSeconds":5,`)), "s1", `{"job":1}`)
	poll.Until(t, 10*time.Second, func() bool {
		for _, ev := range history(t, p.client, arn) {
			if ev.Type == types.HistoryEventTypeActivityScheduled {
				return true
			}
		}
		return false
	}, "the activity to be scheduled")
	if n := len(clock.Pending()); n != 0 {
		t.Errorf("%d timers armed before a worker took the task, want none", n)
	}
	task, err := p.client.GetActivityTask(ctx, &sfn.GetActivityTaskInput{ActivityArn: aws.String(actARN)})
	if err != nil || task.TaskToken == nil {
		t.Fatalf("GetActivityTask: %+v %v", task, err)
	}
	fireTimer(t, clock, 5*time.Second, 1, "the heartbeat timer")
	out := closed(t, p.client, arn)
	if !strings.Contains(aws.ToString(out.Output), `"path":"lost"`) || !strings.Contains(aws.ToString(out.Output), `"Error":"States.Timeout"`) {
		t.Errorf("%s %s, want the heartbeat timeout caught", out.Status, aws.ToString(out.Output))
	}
	timedOut := false
	for _, ev := range history(t, p.client, arn) {
		if d := ev.ActivityTimedOutEventDetails; ev.Type == types.HistoryEventTypeActivityTimedOut && d != nil && aws.ToString(d.Error) == "States.Timeout" {
			timedOut = true
		}
	}
	if !timedOut {
		t.Error("no ActivityTimedOut with States.Timeout in the history")
	}
	_, err = p.client.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: task.TaskToken, Output: aws.String(`{}`)})
	var late *types.TaskTimedOut
	if !errors.As(err, &late) {
		t.Errorf("the late worker's answer: %v, want TaskTimedOut", err)
	}
}

// Tenants: a task goes only to a worker of its execution's tenant (or an
// operator's); a tenant's own activity is, to another tenant, exactly a
// missing one.
func TestActivityTenants(t *testing.T) {
	ctx := context.Background()
	clock := asltest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	mgr, err := control.Open(ctx, control.Config{Dir: t.TempDir(), Registry: registry(make(chan string, 1)), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer mgr.Close()
	srv := apitest.Serve(t, sfnapi.New(mgr, sfnapi.Options{}), nil)
	op, acme, bravo := srv.SFN(srv.Operator(t)), srv.SFN(srv.Tenant(t, "acme")), srv.SFN(srv.Tenant(t, "bravo"))
	p := &peer{client: op, mgr: mgr}
	shared := p.activity(t, op, "shared")
	smARN := p.create(t, "Shared", activityDef(shared, ""))
	x, err := acme.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smARN), Name: aws.String("a1"), Input: aws.String(`{"job":7}`)})
	if err != nil {
		t.Fatal(err)
	}

	// bravo's worker waits out its poll and gets nothing
	got := make(chan *sfn.GetActivityTaskOutput, 1)
	go func() {
		out, err := bravo.GetActivityTask(ctx, &sfn.GetActivityTaskInput{ActivityArn: aws.String(shared), WorkerName: aws.String("bravo-w")})
		if err != nil {
			t.Errorf("bravo polls: %v", err)
		}
		got <- out
	}()
	poll.Until(t, 10*time.Second, func() bool { return len(clock.Pending()) == 1 }, "bravo's poll to wait")
	clock.Advance(control.ActivityPollTimeout)
	if out := <-got; out == nil || out.TaskToken != nil {
		t.Errorf("bravo's worker got %+v, want no task", out)
	}
	task, err := acme.GetActivityTask(ctx, &sfn.GetActivityTaskInput{ActivityArn: aws.String(shared), WorkerName: aws.String("acme-w")})
	if err != nil || task.TaskToken == nil || !strings.Contains(aws.ToString(task.Input), `"job":7`) {
		t.Fatalf("acme's worker: %+v %v", task, err)
	}
	if _, err := bravo.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: task.TaskToken, Output: aws.String(`{}`)}); code(err) != control.CodeTaskDoesNotExist {
		t.Errorf("bravo answers acme's activity task: %v", err)
	}
	if _, err := acme.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: task.TaskToken, Output: aws.String(`{"ok":true}`)}); err != nil {
		t.Fatal(err)
	}
	if out := closed(t, acme, aws.ToString(x.ExecutionArn)); out.Status != types.ExecutionStatusSucceeded {
		t.Errorf("acme's execution %s", out.Status)
	}

	// acme's own activity is, to bravo, a missing one
	own := p.activity(t, acme, "acme-only")
	missing := strings.Replace(own, "acme-only", "nobody", 1)
	same := func(what string, other, none error) {
		t.Helper()
		if other == nil || none == nil || strings.ReplaceAll(other.Error(), "acme-only", "nobody") != none.Error() {
			t.Errorf("%s: another tenant's %v; a missing one %v", what, other, none)
		}
	}
	describe := func(arn string) error {
		_, err := bravo.DescribeActivity(ctx, &sfn.DescribeActivityInput{ActivityArn: aws.String(arn)})
		return err
	}
	same("DescribeActivity", describe(own), describe(missing))
	getTask := func(arn string) error {
		_, err := bravo.GetActivityTask(ctx, &sfn.GetActivityTaskInput{ActivityArn: aws.String(arn)})
		return err
	}
	same("GetActivityTask", getTask(own), getTask(missing))
	listTags := func(arn string) error {
		_, err := bravo.ListTagsForResource(ctx, &sfn.ListTagsForResourceInput{ResourceArn: aws.String(arn)})
		return err
	}
	same("ListTagsForResource", listTags(own), listTags(missing))
	if _, err := bravo.DeleteActivity(ctx, &sfn.DeleteActivityInput{ActivityArn: aws.String(own)}); err != nil {
		t.Errorf("bravo deletes acme's activity: %v, want the success of deleting a missing one", err)
	}
	if _, err := acme.DescribeActivity(ctx, &sfn.DescribeActivityInput{ActivityArn: aws.String(own)}); err != nil {
		t.Errorf("acme's activity after bravo's delete: %v", err)
	}
	list, err := bravo.ListActivities(ctx, &sfn.ListActivitiesInput{})
	if err != nil || len(list.Activities) != 1 || aws.ToString(list.Activities[0].ActivityArn) != shared {
		t.Errorf("bravo lists %+v %v, want the shared activity only", list, err)
	}
	// Paged one at a time, bravo's pages and their tokens name nothing of
	// acme's (the filter used to follow the paging: an empty page whose
	// token was acme's activity).
	var seen []string
	for in := (&sfn.ListActivitiesInput{MaxResults: 1}); ; {
		page, err := bravo.ListActivities(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range page.Activities {
			seen = append(seen, aws.ToString(a.Name))
		}
		if page.NextToken == nil {
			break
		}
		seen = append(seen, "token "+aws.ToString(page.NextToken))
		in.NextToken = page.NextToken
	}
	if strings.Contains(strings.Join(seen, " "), "acme-only") {
		t.Errorf("bravo's paged listing: %q names acme's activity", seen)
	}
	if _, err := acme.DeleteActivity(ctx, &sfn.DeleteActivityInput{ActivityArn: aws.String(shared)}); code(err) != auth.CodeAccessDenied {
		t.Errorf("a tenant deletes the shared activity: %v", err)
	}
	if _, err := acme.TagResource(ctx, &sfn.TagResourceInput{ResourceArn: aws.String(smARN), Tags: []types.Tag{{Key: aws.String("k")}}}); code(err) != auth.CodeAccessDenied {
		t.Errorf("a tenant tags a state machine: %v", err)
	}
	if _, err := acme.TagResource(ctx, &sfn.TagResourceInput{ResourceArn: aws.String(own), Tags: []types.Tag{{Key: aws.String("k"), Value: aws.String("v")}}}); err != nil {
		t.Errorf("a tenant tags its activity: %v", err)
	}
	if _, err := acme.DeleteActivity(ctx, &sfn.DeleteActivityInput{ActivityArn: aws.String(own)}); err != nil {
		t.Errorf("a tenant deletes its activity: %v", err)
	}
}

// A Task whose activity does not exist when the state runs fails the
// execution at once, as recorded on AWS (LocalStack snapshot
// tests/aws/services/stepfunctions/v2/activities/test_activities.snapshot.json,
// test_activity_task_on_deleted): TaskStateEntered, then ExecutionFailed
// with States.Runtime, no ActivityScheduled and no ActivityScheduleFailed.
// States.Runtime is neither retried nor caught, not even by States.ALL.
func TestActivityDeletedBeforeItRuns(t *testing.T) {
	p := newPeer(t)
	ctx := context.Background()
	actARN := p.activity(t, p.client, "gone")
	if _, err := p.client.DeleteActivity(ctx, &sfn.DeleteActivityInput{ActivityArn: aws.String(actARN)}); err != nil {
		t.Fatal(err)
	}
	def := `{"StartAt":"ActivityTask","States":{
	  "ActivityTask":{"Type":"Task","Resource":"` + actARN + `",
	    "Retry":[{"ErrorEquals":["States.ALL"],"IntervalSeconds":1,"MaxAttempts":3}],
	    "Catch":[{"ErrorEquals":["States.ALL"],"Next":"Caught"}],"End":true},
	  "Caught":{"Type":"Pass","End":true}}}`
	arn := p.start(t, p.create(t, "Deleted", def), "d1", `{"Value1":"HelloWorld"}`)
	out := closed(t, p.client, arn)
	wantCause := "An error occurred while executing the state 'ActivityTask' (entered at the event id #2). The activity " + actARN + " does not exist."
	if out.Status != types.ExecutionStatusFailed || aws.ToString(out.Error) != "States.Runtime" || aws.ToString(out.Cause) != wantCause {
		t.Errorf("execution: %s %q %q\nwant FAILED States.Runtime %q", out.Status, aws.ToString(out.Error), aws.ToString(out.Cause), wantCause)
	}
	var seen []string
	for _, ev := range history(t, p.client, arn) {
		seen = append(seen, string(ev.Type))
		if d := ev.ExecutionFailedEventDetails; d != nil && (aws.ToString(d.Error) != "States.Runtime" || aws.ToString(d.Cause) != wantCause) {
			t.Errorf("ExecutionFailed: %q %q, want States.Runtime %q", aws.ToString(d.Error), aws.ToString(d.Cause), wantCause)
		}
	}
	if got, want := strings.Join(seen, " "), "ExecutionStarted TaskStateEntered ExecutionFailed"; got != want {
		t.Errorf("history\n got %s\nwant %s", got, want)
	}
}
