package infra

import (
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/veredicto/veredicto/internal/chat"
)

// TestChatTurnsQueue: POST /api/chat on the HTTP API (JWT authorizer)
// queues turns for ChatTurnFunction alone, one per invocation with partial
// failures reported, a dead-letter queue after a few receives, and a
// visibility timeout of at least six times the worker's timeout.
func TestChatTurnsQueue(t *testing.T) {
	tpl := loadTemplate(t, filepath.Join(root, "template.yaml"))
	q, dlq := tpl.Resources["ChatTurnsQueue"], tpl.Resources["ChatTurnsDeadLetterQueue"]
	if q.Type != "AWS::SQS::Queue" || dlq.Type != "AWS::SQS::Queue" {
		t.Fatalf("ChatTurnsQueue is %q, ChatTurnsDeadLetterQueue %q; want two AWS::SQS::Queue", q.Type, dlq.Type)
	}
	rp := asMap(q.Properties["RedrivePolicy"])
	if res, attr, _ := getAtt(rp["deadLetterTargetArn"]); res != "ChatTurnsDeadLetterQueue" || attr != "Arn" {
		t.Errorf("dead-letter target %v", rp["deadLetterTargetArn"])
	}
	if n, ok := num(rp["maxReceiveCount"]); !ok || n < 2 || n > 5 {
		t.Errorf("maxReceiveCount %v, want 2–5", rp["maxReceiveCount"])
	}
	var consumers []string
	for _, id := range tpl.resourcesOfType("AWS::Serverless::Function") {
		props := tpl.functionProperties(id)
		for name, ev := range asMap(props["Events"]) {
			ev := asMap(ev)
			p := asMap(ev["Properties"])
			if res, _, _ := getAtt(p["Queue"]); ev["Type"] != "SQS" || res != "ChatTurnsQueue" {
				continue
			}
			consumers = append(consumers, id)
			if n, _ := num(p["BatchSize"]); n != 1 {
				t.Errorf("%s: %s BatchSize %v, want 1 (a turn may take the whole timeout)", id, name, p["BatchSize"])
			}
			if !slices.Contains(stringsOf(p["FunctionResponseTypes"]), "ReportBatchItemFailures") {
				t.Errorf("%s: %s without ReportBatchItemFailures", id, name)
			}
			timeout, _ := num(props["Timeout"])
			if vis, _ := num(q.Properties["VisibilityTimeout"]); timeout == 0 || vis < 6*timeout {
				t.Errorf("ChatTurnsQueue.VisibilityTimeout %v s < 6 × %s's timeout %v s", vis, id, timeout)
			}
		}
	}
	if !slices.Equal(consumers, []string{"ChatTurnFunction"}) {
		t.Errorf("consumers of ChatTurnsQueue %v, want [ChatTurnFunction]", consumers)
	}

	api := tpl.functionProperties("ChatFunction")
	env := asMap(asMap(api["Environment"])["Variables"])
	if r, ok := refTo(env["CHAT_TURNS_QUEUE_URL"]); !ok || r != "ChatTurnsQueue" {
		t.Errorf("ChatFunction CHAT_TURNS_QUEUE_URL = %v, want !Ref ChatTurnsQueue", env["CHAT_TURNS_QUEUE_URL"])
	}
	if _, ok := env["LLM_SECRET_ARN"]; ok {
		t.Error("ChatFunction sees LLM_SECRET_ARN: only the turn worker calls the model")
	}
	routes := map[string]bool{}
	for _, ev := range asMap(api["Events"]) {
		ev := asMap(ev)
		p := asMap(ev["Properties"])
		if ev["Type"] == "HttpApi" {
			if r, _ := refTo(p["ApiId"]); r != "HttpApi" {
				t.Errorf("ChatFunction route on %v, want the JWT-authorized HttpApi", p["ApiId"])
			}
			if _, ok := p["Auth"]; ok {
				t.Errorf("ChatFunction route %v %v overrides the JWT authorizer", p["Method"], p["Path"])
			}
			routes[asString(p["Method"])+" "+asString(p["Path"])] = true
		}
	}
	for _, want := range []string{"POST /api/chat", "GET /api/chat/metrics"} {
		if !routes[want] {
			t.Errorf("ChatFunction has no route %s (has %v)", want, routes)
		}
	}
}

// TestChatLinkRule: the status changes of every state machine the chat
// starts (ChatTurnFunction's *_STATE_MACHINE_ARN) reach ChatLinkFunction
// through an EventBridge rule on "Step Functions Execution Status Change"
// — the start and every end —, an event that keeps failing waits in a
// retained dead-letter queue, and the function touches the two tables
// and describes those machines' executions (a status change EventBridge
// sent without its input or output) — no bucket, no other Step Functions
// action, no secret.
func TestChatLinkRule(t *testing.T) {
	tpl := loadTemplate(t, filepath.Join(root, "template.yaml"))
	var started []string
	for name, v := range asMap(asMap(tpl.functionProperties("ChatTurnFunction")["Environment"])["Variables"]) {
		if strings.HasSuffix(name, "STATE_MACHINE_ARN") {
			r, ok := refTo(v)
			if !ok || tpl.Resources[r].Type != "AWS::Serverless::StateMachine" {
				t.Errorf("ChatTurnFunction %s = %v, want !Ref of a state machine", name, v)
			}
			started = append(started, r)
		}
	}
	sort.Strings(started)
	if len(started) != 3 {
		t.Errorf("the chat starts %v; want the search, the companion and the debate", started)
	}

	fn := tpl.functionProperties("ChatLinkFunction")
	var rules int
	for name, ev := range asMap(fn["Events"]) {
		ev := asMap(ev)
		if ev["Type"] != "EventBridgeRule" {
			t.Errorf("ChatLinkFunction event %s is %v, want EventBridgeRule", name, ev["Type"])
			continue
		}
		rules++
		p := asMap(asMap(ev["Properties"])["Pattern"])
		if !slices.Equal(stringsOf(p["source"]), []string{"aws.states"}) || !slices.Equal(stringsOf(p["detail-type"]), []string{chat.StatusChangeDetailType}) {
			t.Errorf("%s matches source %v, detail-type %v", name, p["source"], p["detail-type"])
		}
		detail := asMap(p["detail"])
		var machines []string
		for _, v := range asList(detail["stateMachineArn"]) {
			r, _ := refTo(v)
			machines = append(machines, r)
		}
		sort.Strings(machines)
		if !slices.Equal(machines, started) {
			t.Errorf("%s matches the executions of %v; the chat starts %v", name, machines, started)
		}
		statuses := stringsOf(detail["status"])
		for _, want := range []string{"RUNNING", "SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED"} {
			if !slices.Contains(statuses, want) {
				t.Errorf("%s does not match status %s (matches %v)", name, want, statuses)
			}
		}
	}
	if rules != 1 {
		t.Errorf("ChatLinkFunction has %d EventBridge rules, want 1", rules)
	}
	eic := asMap(fn["EventInvokeConfig"])
	if n, ok := num(eic["MaximumRetryAttempts"]); !ok || n > 2 {
		t.Errorf("EventInvokeConfig.MaximumRetryAttempts %v", eic["MaximumRetryAttempts"])
	}
	onFailure := asMap(asMap(eic["DestinationConfig"])["OnFailure"])
	if q, attr, _ := getAtt(onFailure["Destination"]); onFailure["Type"] != "SQS" || q != "ChatLinkDeadLetterQueue" || attr != "Arn" {
		t.Errorf("an event that keeps failing goes to %v, want ChatLinkDeadLetterQueue", onFailure)
	}
	if r := tpl.Resources["ChatLinkDeadLetterQueue"]; r.Type != "AWS::SQS::Queue" {
		t.Errorf("ChatLinkDeadLetterQueue is %q", r.Type)
	}
	env := asMap(asMap(fn["Environment"])["Variables"])
	if r, _ := refTo(env["EVENTS_TABLE"]); r != "EventsTable" {
		t.Errorf("EVENTS_TABLE = %v, want !Ref EventsTable", env["EVENTS_TABLE"])
	}
	if _, ok := env["LLM_SECRET_ARN"]; ok {
		t.Error("ChatLinkFunction sees LLM_SECRET_ARN")
	}
	for _, st := range statements(map[string]cfnResource{"ChatLinkFunction": tpl.Resources["ChatLinkFunction"]}) {
		for _, a := range stringsOf(st.stmt["Action"]) {
			if !strings.HasPrefix(a, "dynamodb:") && a != "states:DescribeExecution" {
				t.Errorf("%s: allows %s; the function needs the two tables and DescribeExecution only", st.where, a)
			}
		}
	}
	if described := sortedKeys(describableMachines(fn)); !slices.Equal(described, started) {
		t.Errorf("ChatLinkFunction may describe the executions of %v; want those of %v", described, started)
	}
	for i, p := range asList(fn["Policies"]) {
		if asMap(p)["Statement"] == nil {
			t.Errorf("ChatLinkFunction.Policies[%d] is a template (%v): name the few DynamoDB actions it needs", i, sortedKeys(asMap(p)))
		}
	}
}

// TestFunctionsMayStartTheMachinesTheyAreGiven: a function whose
// environment names a state machine of the template (STATE_MACHINE_ARN,
// DEBATE_STATE_MACHINE_ARN…) starts it, so its policies give it
// StartExecution on that machine; and ChatTurnFunction may describe the
// executions of every machine it starts (it says at once the end of one
// that ended before its conversation linked it). The chat once had the
// companion's and the debate's ARNs and could start neither.
func TestFunctionsMayStartTheMachinesTheyAreGiven(t *testing.T) {
	tpl := loadTemplate(t, filepath.Join(root, "template.yaml"))
	for _, id := range tpl.resourcesOfType("AWS::Serverless::Function") {
		props := tpl.functionProperties(id)
		startable := map[string]bool{}
		describable := describableMachines(props)
		for _, pol := range asList(props["Policies"]) {
			if res, attr, ok := getAtt(asMap(asMap(pol)["StepFunctionsExecutionPolicy"])["StateMachineName"]); ok && attr == "Name" {
				startable[res] = true
			}
		}
		env := asMap(asMap(props["Environment"])["Variables"])
		for _, name := range sortedKeys(env) {
			m, ok := refTo(env[name])
			if !ok || tpl.Resources[m].Type != "AWS::Serverless::StateMachine" || !strings.HasSuffix(name, "STATE_MACHINE_ARN") {
				continue
			}
			if !startable[m] {
				t.Errorf("%s: %s names %s, which its policies do not let it start (a StepFunctionsExecutionPolicy of %s.Name)", id, name, m, m)
			}
			if id == "ChatTurnFunction" && !describable[m] {
				t.Errorf("%s: may not DescribeExecution the executions of %s, which it starts and links to conversations", id, m)
			}
		}
	}
}

// describableMachines are the state machines whose executions a
// function's inline statements let it DescribeExecution.
func describableMachines(props map[string]any) map[string]bool {
	describable := map[string]bool{}
	for _, pol := range asList(props["Policies"]) {
		for _, st := range asList(asMap(pol)["Statement"]) {
			if !slices.Contains(stringsOf(asMap(st)["Action"]), "states:DescribeExecution") {
				continue
			}
			res := asMap(st)["Resource"]
			if asMap(res)["Fn::Sub"] != nil {
				res = []any{res}
			}
			for _, r := range asList(res) {
				sub := asList(asMap(r)["Fn::Sub"])
				if len(sub) == 2 && strings.Contains(asString(sub[0]), ":execution:${StateMachineName}:*") {
					if m, attr, ok := getAtt(asMap(sub[1])["StateMachineName"]); ok && attr == "Name" {
						describable[m] = true
					}
				}
			}
		}
	}
	return describable
}
