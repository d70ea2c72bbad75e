package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/app"
	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/poll"
)

// TestServeAWSCLIActivities drives activities, tags, validation and
// DescribeStateMachineForExecution through the AWS CLI, as a user's own
// worker script would: the CLI takes the activity task and answers it.
func TestServeAWSCLIActivities(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: a Python AWS CLI process per call (about 1 s each); make test-long runs it")
	}
	// Its own server and folder: it runs beside the other AWS CLI tests.
	t.Parallel()
	cli := findAWSCLI(t)
	ctx := context.Background()
	data := t.TempDir()
	cli.endpoint = serveInProcess(ctx, t, app.ServerConfig{Data: data}).base
	op := keyFor(t, data, auth.KeySpec{Name: "ana", Operator: true})
	must := func(args ...string) map[string]any {
		t.Helper()
		out, err := cli.run(op, args...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	refused := func(code string, args ...string) {
		t.Helper()
		if _, err := cli.run(op, args...); err == nil || !strings.Contains(err.Error(), "("+code+")") {
			t.Errorf("aws %s: %v, want (%s)", args[0], err, code)
		}
	}

	act := must("create-activity", "--name", "cli-work", "--tags", "key=team,value=ops")
	actARN, _ := act["activityArn"].(string)
	def := `{"StartAt":"Work","States":{"Work":{"Type":"Task","Resource":"` + actARN + `","HeartbeatSeconds":30,"End":true}}}`
	sm := must("create-state-machine", "--name", "CliWork", "--definition", def, "--role-arn", "arn:aws:iam::000000000000:role/x",
		"--tracing-configuration", "enabled=true", "--tags", "key=owner,value=cli")
	smARN, _ := sm["stateMachineArn"].(string)
	x := must("start-execution", "--state-machine-arn", smARN, "--name", "w1", "--input", `{"tenant":"t1","job":7}`)
	arn, _ := x["executionArn"].(string)

	task := must("get-activity-task", "--activity-arn", actARN, "--worker-name", "cli-worker")
	token, _ := task["taskToken"].(string)
	if token == "" || !strings.Contains(task["input"].(string), `"job":7`) {
		t.Fatalf("get-activity-task: %v", task)
	}
	must("send-task-heartbeat", "--task-token", token)
	must("send-task-success", "--task-token", token, "--task-output", `{"done":true}`)
	var d map[string]any
	poll.Until(t, 30*time.Second, func() bool {
		d = must("describe-execution", "--execution-arn", arn)
		return d["status"] != "RUNNING"
	}, "the execution to end")
	if d["status"] != "SUCCEEDED" || d["output"] != `{"done":true}` {
		t.Errorf("describe-execution: %v", d)
	}
	h := must("get-execution-history", "--execution-arn", arn)
	var types []string
	for _, e := range h["events"].([]any) {
		ev := e.(map[string]any)
		types = append(types, ev["type"].(string))
		if ev["type"] == "ActivityStarted" && ev["activityStartedEventDetails"].(map[string]any)["workerName"] != "cli-worker" {
			t.Errorf("ActivityStarted: %v", ev)
		}
	}
	if got, want := strings.Join(types, " "), "ExecutionStarted TaskStateEntered ActivityScheduled ActivityStarted ActivitySucceeded TaskStateExited ExecutionSucceeded"; got != want {
		t.Errorf("get-execution-history:\n %s\nwant\n %s", got, want)
	}

	if f := must("describe-state-machine-for-execution", "--execution-arn", arn); f["definition"] != def || f["tracingConfiguration"].(map[string]any)["enabled"] != true {
		t.Errorf("describe-state-machine-for-execution: %v", f)
	}
	if tags := must("list-tags-for-resource", "--resource-arn", smARN); len(tags["tags"].([]any)) != 1 {
		t.Errorf("list-tags-for-resource: %v", tags)
	}
	must("tag-resource", "--resource-arn", actARN, "--tags", "key=env,value=local")
	must("untag-resource", "--resource-arn", actARN, "--tag-keys", "team")
	if tags := must("list-tags-for-resource", "--resource-arn", actARN); len(tags["tags"].([]any)) != 1 {
		t.Errorf("activity tags: %v", tags)
	}
	v := must("validate-state-machine-definition", "--definition", `{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"B"}}}`)
	if diags, _ := v["diagnostics"].([]any); v["result"] != "FAIL" || len(diags) != 1 || diags[0].(map[string]any)["code"] != "MISSING_TRANSITION_TARGET" {
		t.Errorf("validate-state-machine-definition: %v", v)
	}
	if l := must("list-activities"); len(l["activities"].([]any)) != 1 {
		t.Errorf("list-activities: %v", l)
	}
	must("delete-activity", "--activity-arn", actARN)
	refused("ActivityDoesNotExist", "describe-activity", "--activity-arn", actARN)
	refused("ResourceNotFound", "list-tags-for-resource", "--resource-arn", actARN)
	refused("InvalidArn", "get-activity-task", "--activity-arn", smARN)
}
