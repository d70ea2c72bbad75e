package infra

import (
	"path/filepath"
	"slices"
	"testing"
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
