package infra

import (
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"
)

// num reads a template number, written as a number or a string.
func num(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case string:
		f, err := strconv.ParseFloat(x, 64)
		return f, err == nil
	}
	return 0, false
}

// TestInputsQueue: uploads reach TriggerFunction through InputsQueue
// (issue 19): S3 notifies the queue of READY markers, the function consumes
// it reporting partial batch failures, what cannot be processed ends in a
// dead-letter queue watched by an alarm, and no S3 event invokes a
// function directly.
func TestInputsQueue(t *testing.T) {
	tpl := loadTemplate(t, filepath.Join(root, "template.yaml"))
	q, dlq := tpl.Resources["InputsQueue"], tpl.Resources["InputsDeadLetterQueue"]
	if q.Type != "AWS::SQS::Queue" || dlq.Type != "AWS::SQS::Queue" {
		t.Fatalf("InputsQueue is %q, InputsDeadLetterQueue is %q; want two AWS::SQS::Queue", q.Type, dlq.Type)
	}
	rp := asMap(q.Properties["RedrivePolicy"])
	if res, attr, _ := getAtt(rp["deadLetterTargetArn"]); res != "InputsDeadLetterQueue" || attr != "Arn" {
		t.Errorf("InputsQueue.RedrivePolicy.deadLetterTargetArn = %v, want !GetAtt InputsDeadLetterQueue.Arn", rp["deadLetterTargetArn"])
	}
	if n, ok := num(rp["maxReceiveCount"]); !ok || n < 3 || n > 10 {
		t.Errorf("maxReceiveCount = %v, want 3–10 (enough to ride out a throttle, few enough to surface a bad message)", rp["maxReceiveCount"])
	}
	if n, _ := num(dlq.Properties["MessageRetentionPeriod"]); n < 14*24*3600 {
		t.Errorf("dead-letter retention %v s, want 14 days (time for a person to inspect)", dlq.Properties["MessageRetentionPeriod"])
	}
	if qn, _ := num(q.Properties["MessageRetentionPeriod"]); qn == 0 || qn >= 14*24*3600 {
		t.Errorf("InputsQueue retention %v s, want set and shorter than the dead-letter queue's (a moved message keeps its age)", q.Properties["MessageRetentionPeriod"])
	}

	// The consumer: TriggerFunction alone, through an SQS event.
	var consumers []string
	for _, id := range tpl.resourcesOfType("AWS::Serverless::Function") {
		props := tpl.functionProperties(id)
		for name, ev := range asMap(props["Events"]) {
			ev := asMap(ev)
			p := asMap(ev["Properties"])
			switch ev["Type"] {
			case "S3":
				t.Errorf("%s: event %s invokes the function from S3 directly; uploads go through InputsQueue", id, name)
			case "SQS":
				if res, _, _ := getAtt(p["Queue"]); res == "ChatTurnsQueue" {
					continue // the chat's own queue: TestChatTurnsQueue
				}
				consumers = append(consumers, id)
				if res, attr, _ := getAtt(p["Queue"]); res != "InputsQueue" || attr != "Arn" {
					t.Errorf("%s: SQS event %s reads %v, want !GetAtt InputsQueue.Arn", id, name, p["Queue"])
				}
				if !slices.Contains(stringsOf(p["FunctionResponseTypes"]), "ReportBatchItemFailures") {
					t.Errorf("%s: SQS event %s without FunctionResponseTypes [ReportBatchItemFailures]: one bad message would replay the batch", id, name)
				}
				if n, ok := num(p["BatchSize"]); !ok || n < 1 || n > 10 {
					t.Errorf("%s: BatchSize %v, want 1–10", id, p["BatchSize"])
				}
				if _, ok := num(p["MaximumBatchingWindowInSeconds"]); !ok {
					t.Errorf("%s: no MaximumBatchingWindowInSeconds", id)
				}
				timeout, ok := num(props["Timeout"])
				if !ok {
					timeout = 3 // Lambda's default
				}
				if vis, _ := num(q.Properties["VisibilityTimeout"]); vis < 6*timeout {
					t.Errorf("InputsQueue.VisibilityTimeout %v s < 6 × %s's timeout %v s (AWS's rule for SQS event sources)", vis, id, timeout)
				}
			}
		}
	}
	if !reflect.DeepEqual(consumers, []string{"TriggerFunction"}) {
		t.Errorf("SQS consumers %v, want [TriggerFunction]", consumers)
	}

	// The bucket notifies the queue of READY markers, once S3 may send.
	b := tpl.Resources["InputsBucket"]
	qcs := asList(asMap(b.Properties["NotificationConfiguration"])["QueueConfigurations"])
	if len(qcs) != 1 {
		t.Fatalf("InputsBucket has %d queue notifications, want 1", len(qcs))
	}
	qc := asMap(qcs[0])
	if res, _, _ := getAtt(qc["Queue"]); res != "InputsQueue" || qc["Event"] != "s3:ObjectCreated:*" {
		t.Errorf("InputsBucket notifies %v of %v, want InputsQueue of s3:ObjectCreated:*", qc["Queue"], qc["Event"])
	}
	rules := asList(asMap(asMap(qc["Filter"])["S3Key"])["Rules"])
	if len(rules) != 1 || asMap(rules[0])["Name"] != "suffix" || asMap(rules[0])["Value"] != "READY" {
		t.Errorf("notification filter %v, want suffix READY", rules)
	}
	if !slices.Contains(stringsOf(b.DependsOn), "InputsQueuePolicy") {
		t.Errorf("InputsBucket DependsOn %v: it must wait for InputsQueuePolicy (S3 checks it may send when the notification is created)", b.DependsOn)
	}
	pol := tpl.Resources["InputsQueuePolicy"]
	if r, _ := refTo(asList(pol.Properties["Queues"])); pol.Type != "AWS::SQS::QueuePolicy" || len(asList(pol.Properties["Queues"])) != 1 {
		t.Errorf("InputsQueuePolicy %q Queues %v (%s)", pol.Type, pol.Properties["Queues"], r)
	} else if r, _ := refTo(asList(pol.Properties["Queues"])[0]); r != "InputsQueue" {
		t.Errorf("InputsQueuePolicy applies to %v, want InputsQueue", pol.Properties["Queues"])
	}
	st := asList(asMap(pol.Properties["PolicyDocument"])["Statement"])
	found := false
	for _, s := range st {
		s := asMap(s)
		if s["Effect"] == "Allow" && asMap(s["Principal"])["Service"] == "s3.amazonaws.com" && s["Action"] == "sqs:SendMessage" {
			found = true
			src := asMap(asMap(s["Condition"])["ArnLike"])["aws:SourceArn"]
			sub := asList(asMap(src)["Fn::Sub"])
			name := asList(asMap(b.Properties["BucketName"])["Fn::Sub"])
			if len(sub) != 2 || len(name) != 2 || sub[0] != "arn:${AWS::Partition}:s3:::"+asString(name[0]) || !reflect.DeepEqual(sub[1], name[1]) {
				t.Errorf("queue policy aws:SourceArn %v is not the inputs bucket %v", src, b.Properties["BucketName"])
			}
		}
	}
	if !found {
		t.Error("InputsQueuePolicy does not let s3.amazonaws.com sqs:SendMessage")
	}

	// An alarm on the dead-letter queue's depth.
	alarmed := false
	for _, id := range tpl.resourcesOfType("AWS::CloudWatch::Alarm") {
		p := tpl.Resources[id].Properties
		for _, d := range asList(p["Dimensions"]) {
			if res, attr, _ := getAtt(asMap(d)["Value"]); res == "InputsDeadLetterQueue" && attr == "QueueName" &&
				p["MetricName"] == "ApproximateNumberOfMessagesVisible" && p["Namespace"] == "AWS/SQS" {
				alarmed = true
			}
		}
	}
	if !alarmed {
		t.Error("no AWS::CloudWatch::Alarm on InputsDeadLetterQueue's ApproximateNumberOfMessagesVisible")
	}
}

// TestStatefulResourcesAreRetained: deleting or replacing the stack must
// not destroy uploads, paid stage outputs or unprocessed messages.
func TestStatefulResourcesAreRetained(t *testing.T) {
	tpl := loadTemplate(t, filepath.Join(root, "template.yaml"))
	var ids []string
	for _, typ := range []string{"AWS::DynamoDB::Table", "AWS::S3::Bucket", "AWS::SQS::Queue"} {
		ids = append(ids, tpl.resourcesOfType(typ)...)
	}
	if len(ids) < 5 {
		t.Fatalf("stateful resources %v, want at least the context table, two buckets and two queues", ids)
	}
	for _, id := range ids {
		r := tpl.Resources[id]
		if r.DeletionPolicy != "Retain" || r.UpdateReplacePolicy != "Retain" {
			t.Errorf("%s: DeletionPolicy %q, UpdateReplacePolicy %q; want Retain, Retain", id, r.DeletionPolicy, r.UpdateReplacePolicy)
		}
	}
}
