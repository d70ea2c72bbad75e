package chatapp

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/veredicto/veredicto/internal/app/chatlinkapp"
	"github.com/veredicto/veredicto/internal/app/lambdaenv/lambdaenvtest"
	s3blob "github.com/veredicto/veredicto/internal/blob/s3"
	"github.com/veredicto/veredicto/internal/catalog/chatlinkfn"
	"github.com/veredicto/veredicto/internal/chat"
	"github.com/veredicto/veredicto/internal/eventlog"
	dynamoeventlog "github.com/veredicto/veredicto/internal/eventlog/dynamo"
	"github.com/veredicto/veredicto/internal/search"
	"github.com/veredicto/veredicto/internal/search/searchtest"
	"github.com/veredicto/veredicto/internal/store/dynamo"
)

// TestWorkflowsStartedFromTheChatReportBackOnAWS is issue 32 on AWS,
// against moto (S3, DynamoDB, Step Functions): ChatTurnFunction's chat,
// built as its bootstrap builds it, starts a debate in one conversation
// and a search in another through Step Functions and keeps their links in
// the context table; then each execution's status changes, delivered as
// EventBridge delivers "Step Functions Execution Status Change" (the
// execution's own input read back from Step Functions), go through
// ChatLinkFunction's handler as the Lambda runtime invokes it, and each
// conversation's stream in the events table shows the start and, once
// however often it is delivered, the end in Spanish. Another tenant's
// execution of the same name says nothing there.
func TestWorkflowsStartedFromTheChatReportBackOnAWS(t *testing.T) {
	ctx := t.Context()
	cfg, ac := lambdaenvtest.Stack(t)
	cfg.EventsTable = "events"
	ddb := dynamodb.NewFromConfig(ac)
	if err := dynamo.EnsureTable(ctx, ddb, cfg.ContextTable); err != nil {
		t.Fatal(err)
	}
	if _, err := ddb.CreateTable(ctx, dynamoeventlog.TableSchema(cfg.EventsTable)); err != nil {
		t.Fatal(err)
	}
	sfnc := sfn.NewFromConfig(ac)
	machine := func(name string) string {
		out, err := sfnc.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String(name),
			Definition: aws.String(`{"StartAt":"Wait","States":{"Wait":{"Type":"Pass","End":true}}}`),
			RoleArn:    aws.String("arn:aws:iam::123456789012:role/veredicto-states")})
		if err != nil {
			t.Fatal(err)
		}
		return aws.ToString(out.StateMachineArn)
	}
	cfg.StateMachineARN = machine("veredicto-executive-search")
	cc := chatConfig{EventsTable: cfg.EventsTable, DebateARN: machine("veredicto-debate"), CompanionARN: machine("veredicto-career-companion")}
	inputs := s3blob.New(awss3.NewFromConfig(ac), cfg.InputsBucket, "")
	searchtest.Upload(t, inputs, "../../../examples/search-demo", search.InputPrefix("acme", "demo-cfo-andina"), nil)

	svc, err := chatService(ctx, cfg, cc, ac)
	if err != nil {
		t.Fatal(err)
	}
	turn := func(chatID, message string) chat.Link {
		t.Helper()
		n, err := svc.Claim(ctx, "acme", chatID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Turn(ctx, "acme", chatID, n, message); err != nil {
			t.Fatal(err)
		}
		open, err := svc.Links.Open(ctx, "acme", chatID)
		if err != nil || len(open) != 1 {
			t.Fatalf("%s: links %+v %v; want the workflow the turn started", chatID, open, err)
		}
		return open[0]
	}
	debate := turn("c1", "Abre un debate sobre c-005 en la búsqueda demo-cfo-andina")
	if debate.Kind != chat.KindDebate || !strings.HasPrefix(debate.Execution, strings.Replace(cc.DebateARN, ":stateMachine:", ":execution:", 1)+":") {
		t.Fatalf("the debate's link %+v", debate)
	}
	searchLink := turn("c2", "Lanza la evaluación de la búsqueda demo-cfo-andina")
	if searchLink.Kind != chat.KindSearch || searchLink.Subject != "demo-cfo-andina" {
		t.Fatalf("the search's link %+v", searchLink)
	}
	// Another conversation asks for the same search: it is not started
	// again, and that conversation follows it too, by its ARN.
	sameSearch := turn("c3", "Lanza la evaluación de la búsqueda demo-cfo-andina")
	if sameSearch.Execution != searchLink.Execution {
		t.Fatalf("the search found already started is linked as %q, want its ARN %q", sameSearch.Execution, searchLink.Execution)
	}

	built, err := chatlinkapp.Services(cfg, ac)
	if err != nil {
		t.Fatal(err)
	}
	fn := chatlinkfn.Functions()[0]
	h, err := fn.Lambda(built)
	if err != nil {
		t.Fatal(err)
	}
	handler := lambda.NewHandler(h)
	deliver := func(id string, lk chat.Link, status, output, errName string, edit func(map[string]any)) chat.StatusChangeResult {
		t.Helper()
		payload := statusChange(t, sfnc, id, lk.Execution, status, output, errName, edit)
		lctx := lambdacontext.NewContext(ctx, &lambdacontext.LambdaContext{AwsRequestID: "req-" + id})
		out, err := handler.Invoke(lctx, payload)
		if err != nil {
			t.Fatalf("%s %s: %v", id, status, err)
		}
		var res chat.StatusChangeResult
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatalf("%s: %s", id, out)
		}
		return res
	}
	// EventBridge says RUNNING, then the end twice (at least once).
	for _, d := range []struct {
		id, status, output, errName string
		lk                          chat.Link
		chats                       int
	}{
		{"d-1", "RUNNING", "", "", debate, 1},
		{"s-1", "RUNNING", "", "", searchLink, 2},
		{"d-2", "SUCCEEDED", `{"tenant":"acme","escalado_para":"NENHUM","decision":"avanzar"}`, "", debate, 1},
		{"d-2", "SUCCEEDED", `{"tenant":"acme","escalado_para":"NENHUM","decision":"avanzar"}`, "", debate, 1},
		{"s-2", "FAILED", "", "States.TaskFailed", searchLink, 2},
		{"s-2", "FAILED", "", "States.TaskFailed", searchLink, 2},
	} {
		if res := deliver(d.id, d.lk, d.status, d.output, d.errName, nil); res.Linked != d.chats {
			t.Errorf("%s %s: %+v; want its %d conversations", d.id, d.status, res, d.chats)
		}
	}
	// The same execution name under another tenant's input: nobody's here.
	if res := deliver("z-1", searchLink, "SUCCEEDED", "{}", "", func(d map[string]any) {
		d["input"] = `{"tenant":"zeta","search_id":"demo-cfo-andina"}`
	}); res.Linked != 0 || res.Said != 0 {
		t.Errorf("another tenant's execution: %+v; want nothing linked", res)
	}

	log := dynamoeventlog.New(ddb, cfg.EventsTable)
	for _, c := range []struct {
		chatID, message string
	}{
		{"c1", fmt.Sprintf("Debate %s (desde el turno 1): terminó (decisión: avanzar). Informe: /debates/%s/report", debate.Subject, debate.Subject)},
		{"c2", "Búsqueda demo-cfo-andina (desde el turno 1): falló (error: States.TaskFailed). Estado: /searches/demo-cfo-andina"},
		{"c3", "Búsqueda demo-cfo-andina (desde el turno 1): falló (error: States.TaskFailed). Estado: /searches/demo-cfo-andina"},
	} {
		evs, err := log.Read(ctx, "acme", chat.StreamName(c.chatID), 0, eventlog.MaxReadLimit)
		if err != nil {
			t.Fatal(err)
		}
		var starts, ends []string
		for _, ev := range evs {
			var m struct {
				Linked  map[string]any `json:"linked"`
				Message string         `json:"message"`
				Step    struct {
					Agent, Action string
				} `json:"step"`
			}
			if json.Unmarshal(ev.Data, &m) != nil || m.Linked == nil {
				continue
			}
			switch ev.Type {
			case eventlog.TypeExecutionStep:
				starts = append(starts, m.Step.Agent+" "+m.Step.Action)
			case chat.TypeLinkedFinished:
				ends = append(ends, m.Message)
			}
		}
		if len(starts) != 1 || starts[0] != "execution started" {
			t.Errorf("%s: linked steps %q; want the execution's start once", c.chatID, starts)
		}
		if len(ends) != 1 || ends[0] != c.message {
			t.Errorf("%s: ends %q\nwant once %q", c.chatID, ends, c.message)
		}
	}
	for _, chatID := range []string{"c1", "c2", "c3"} {
		if open, err := svc.Links.Open(ctx, "acme", chatID); err != nil || len(open) != 0 {
			t.Errorf("%s: %+v %v; want its link ended", chatID, open, err)
		}
	}
}

// statusChange is the event EventBridge delivers when Step Functions
// changes the status of execution arn (the AWS documentation's shape),
// with the execution's name, machine and input as Step Functions
// describes them; edit, when set, changes the detail.
func statusChange(t *testing.T, client *sfn.Client, id, arn, status, output, errName string, edit func(map[string]any)) []byte {
	t.Helper()
	ex, err := client.DescribeExecution(t.Context(), &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
	if err != nil {
		t.Fatal(err)
	}
	start := aws.ToTime(ex.StartDate)
	detail := map[string]any{
		"executionArn": arn, "stateMachineArn": aws.ToString(ex.StateMachineArn), "name": aws.ToString(ex.Name),
		"status": status, "startDate": start.UnixMilli(), "stopDate": nil,
		"input": aws.ToString(ex.Input), "inputDetails": map[string]bool{"included": true},
		"output": nil, "outputDetails": nil, "redriveCount": 0,
		"redriveStatus": "NOT_REDRIVABLE", "redriveStatusReason": "Execution is RUNNING and cannot be redriven",
	}
	if status != "RUNNING" {
		detail["stopDate"] = start.Add(time.Minute).UnixMilli()
		detail["error"], detail["cause"] = nil, nil
		detail["redriveStatusReason"] = "Execution is " + status + " and cannot be redriven"
	}
	if output != "" {
		detail["output"], detail["outputDetails"] = output, map[string]bool{"included": true}
	}
	if errName != "" {
		detail["error"], detail["cause"] = errName, "a failure's text, which may quote a document"
	}
	if edit != nil {
		edit(detail)
	}
	b, err := json.Marshal(map[string]any{
		"version": "0", "id": id, "detail-type": chat.StatusChangeDetailType, "source": "aws.states",
		"account": "123456789012", "time": start.UTC().Format(time.RFC3339), "region": "us-east-1",
		"resources": []string{arn}, "detail": detail,
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}
