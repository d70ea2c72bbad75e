package sfn_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awssfn "github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/smithy-go"

	"github.com/veredicto/veredicto/internal/awsclient/awsclienttest"
	"github.com/veredicto/veredicto/internal/awsclient/sfn"
	"github.com/veredicto/veredicto/internal/confirm"
	"github.com/veredicto/veredicto/internal/httpapi/searchapi"
	"github.com/veredicto/veredicto/internal/moto"
	"github.com/veredicto/veredicto/internal/starter"
	"github.com/veredicto/veredicto/internal/stream"
)

// API is every operation the Lambdas call.
type API interface {
	starter.SFNAPI
	confirm.TaskSender
	stream.ExecutionsAPI
	searchapi.RunsAPI
}

var (
	_ API = (*sfn.Client)(nil)
	_ API = (*awssfn.Client)(nil)
)

func answer(status int, body string) awsclienttest.Answer {
	return awsclienttest.Answer{Status: status, Header: http.Header{"Content-Type": {"application/x-amz-json-1.0"}, "X-Amzn-Requestid": {"R4"}}, Body: body}
}

const (
	machine   = "arn:aws:states:eu-west-1:123:stateMachine:search"
	execution = "arn:aws:states:eu-west-1:123:execution:search:acme-1"
)

func TestSameAsTheSDK(t *testing.T) {
	s := awsclienttest.Start(t)
	ac := s.Config("")
	ours, err := sfn.New(ac)
	if err != nil {
		t.Fatal(err)
	}
	start := func(ctx context.Context, c API) (any, error) {
		return c.StartExecution(ctx, &awssfn.StartExecutionInput{StateMachineArn: aws.String(machine), Name: aws.String("acme-1"), Input: aws.String(`{"tenant":"acme"}`)})
	}
	succeed := func(ctx context.Context, c API) (any, error) {
		return c.SendTaskSuccess(ctx, &awssfn.SendTaskSuccessInput{TaskToken: aws.String("tok"), Output: aws.String(`{"ok":true}`)})
	}
	awsclienttest.Compare(t, s, API(awssfn.NewFromConfig(ac)), API(ours), []string{"Content-Type", "X-Amz-Target"}, []awsclienttest.Case[API]{
		{Name: "StartExecution", Answer: answer(200, `{"executionArn":"`+execution+`","startDate":1.764253800123E9}`), Call: start},
		{Name: "StartExecution exists", Answer: answer(400, `{"__type":"com.amazonaws.swf.service.v2.model#ExecutionAlreadyExists","message":"Execution Already Exists: 'x'"}`), Call: start},
		{Name: "StartExecution no machine", Answer: answer(400, `{"__type":"StateMachineDoesNotExist","message":"State Machine Does Not Exist"}`), Call: start},
		{Name: "StartExecution throttled", Answer: answer(400, `{"__type":"ThrottlingException","message":"Rate exceeded"}`), Call: start},
		{Name: "StartExecution 500", Answer: answer(500, `{"__type":"InternalFailure"}`), Call: start},
		{Name: "DescribeExecution", Answer: answer(200, `{"executionArn":"`+execution+`","stateMachineArn":"`+machine+`","name":"acme-1","status":"FAILED",
			"startDate":1764253800.5,"stopDate":1764253900,"input":"{}","inputDetails":{"included":true},"error":"States.TaskFailed","cause":"boom","redriveCount":2,"redriveStatus":"REDRIVABLE"}`),
			Call: func(ctx context.Context, c API) (any, error) {
				return c.DescribeExecution(ctx, &awssfn.DescribeExecutionInput{ExecutionArn: aws.String(execution), IncludedData: types.IncludedDataMetadataOnly})
			}},
		{Name: "DescribeExecution missing", Answer: answer(400, `{"__type":"ExecutionDoesNotExist","message":"Execution Does Not Exist"}`),
			Call: func(ctx context.Context, c API) (any, error) {
				return c.DescribeExecution(ctx, &awssfn.DescribeExecutionInput{ExecutionArn: aws.String(execution)})
			}},
		{Name: "GetExecutionHistory", Answer: answer(200, `{"events":[
			{"id":1,"previousEventId":0,"timestamp":1764253800.001,"type":"ExecutionStarted","executionStartedEventDetails":{"input":"{}","inputDetails":{"truncated":false},"roleArn":"r"}},
			{"id":2,"previousEventId":1,"timestamp":1764253800.002,"type":"TaskStateEntered","stateEnteredEventDetails":{"name":"Gem1","input":"{}"}},
			{"id":3,"previousEventId":2,"timestamp":1764253800.003,"type":"TaskScheduled","taskScheduledEventDetails":{"resource":"invoke","resourceType":"lambda","region":"eu-west-1","parameters":"{\"FunctionName\":\"f\"}","timeoutInSeconds":900}},
			{"id":4,"previousEventId":3,"timestamp":1764253800.004,"type":"TaskFailed","taskFailedEventDetails":{"resource":"invoke","resourceType":"lambda","error":"TransientError","cause":"x"}},
			{"id":5,"previousEventId":4,"timestamp":1764253800.005,"type":"LambdaFunctionSucceeded","lambdaFunctionSucceededEventDetails":{"output":"{}","outputDetails":{"truncated":true}}}
			],"nextToken":"n2"}`),
			Call: func(ctx context.Context, c API) (any, error) {
				return c.GetExecutionHistory(ctx, &awssfn.GetExecutionHistoryInput{ExecutionArn: aws.String(execution), MaxResults: 1000, NextToken: aws.String("n1"), ReverseOrder: true, IncludeExecutionData: aws.Bool(true)})
			}},
		{Name: "ListExecutions", Answer: answer(200, `{"executions":[{"executionArn":"`+execution+`","stateMachineArn":"`+machine+`","name":"acme-1","status":"RUNNING","startDate":1764253800,"itemCount":3}]}`),
			Call: func(ctx context.Context, c API) (any, error) {
				return c.ListExecutions(ctx, &awssfn.ListExecutionsInput{StateMachineArn: aws.String(machine), MaxResults: 100, StatusFilter: types.ExecutionStatusRunning})
			}},
		{Name: "SendTaskSuccess", Answer: answer(200, `{}`), Call: succeed},
		{Name: "SendTaskSuccess timed out", Answer: answer(400, `{"__type":"com.amazonaws.swf.base.model#TaskTimedOut","message":"Task Timed Out: 'x'"}`), Call: succeed},
		{Name: "SendTaskSuccess invalid token", Answer: answer(400, `{"__type":"InvalidToken","message":"Invalid Token"}`), Call: succeed},
		{Name: "SendTaskFailure", Answer: answer(200, `{}`), Call: func(ctx context.Context, c API) (any, error) {
			return c.SendTaskFailure(ctx, &awssfn.SendTaskFailureInput{TaskToken: aws.String("tok"), Error: aws.String("Rejected"), Cause: aws.String("no")})
		}},
	})
}

// TestOnMoto: an execution started, described, listed and read through this
// client on moto, and the start of a missing state machine refused with the
// SDK's client's error.
func TestOnMoto(t *testing.T) {
	ctx := t.Context()
	ac := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""), BaseEndpoint: aws.String(moto.Start(t))}
	sdk := awssfn.NewFromConfig(ac)
	sm, err := sdk.CreateStateMachine(ctx, &awssfn.CreateStateMachineInput{Name: aws.String("search"), RoleArn: aws.String("arn:aws:iam::123456789012:role/sfn"),
		Definition: aws.String(`{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	ours, err := sfn.New(ac)
	if err != nil {
		t.Fatal(err)
	}
	in := &awssfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Name: aws.String("acme-1"), Input: aws.String(`{"tenant":"acme"}`)}
	started, err := ours.StartExecution(ctx, in)
	if err != nil || started.ExecutionArn == nil || started.StartDate == nil {
		t.Fatalf("start: %+v %v", started, err)
	}
	d, err := ours.DescribeExecution(ctx, &awssfn.DescribeExecutionInput{ExecutionArn: started.ExecutionArn})
	if err != nil || aws.ToString(d.Input) != `{"tenant":"acme"}` || aws.ToString(d.Name) != "acme-1" {
		t.Fatalf("describe: %+v %v", d, err)
	}
	list, err := ours.ListExecutions(ctx, &awssfn.ListExecutionsInput{StateMachineArn: sm.StateMachineArn})
	if err != nil || len(list.Executions) != 1 || aws.ToString(list.Executions[0].ExecutionArn) != aws.ToString(started.ExecutionArn) {
		t.Fatalf("list: %+v %v", list, err)
	}
	history, err := ours.GetExecutionHistory(ctx, &awssfn.GetExecutionHistoryInput{ExecutionArn: started.ExecutionArn})
	want, werr := sdk.GetExecutionHistory(ctx, &awssfn.GetExecutionHistoryInput{ExecutionArn: started.ExecutionArn})
	if err != nil || werr != nil || len(history.Events) == 0 || len(history.Events) != len(want.Events) {
		t.Fatalf("history: %d events %v; the SDK's client read %d (%v)", len(history.Events), err, len(want.Events), werr)
	}
	gone := &awssfn.StartExecutionInput{StateMachineArn: aws.String(aws.ToString(sm.StateMachineArn) + "-gone"), Name: aws.String("x")}
	_, err = ours.StartExecution(ctx, gone)
	_, werr = sdk.StartExecution(ctx, gone)
	if !sameCode(err, werr) {
		t.Errorf("a missing state machine: %v; the SDK's client: %v", err, werr)
	}
}

func sameCode(a, b error) bool {
	var ea, eb smithy.APIError
	return errors.As(a, &ea) && errors.As(b, &eb) && ea.ErrorCode() == eb.ErrorCode() && fmt.Sprintf("%T", ea) == fmt.Sprintf("%T", eb)
}
