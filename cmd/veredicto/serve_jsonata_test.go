package main

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/veredicto/veredicto/internal/poll"
)

// TestServeRunsJSONataFromAWSDocs creates the "Input and Output" example of
// AWS's JSONata page, unchanged, through serve's Step Functions API and runs
// it there.
func TestServeRunsJSONataFromAWSDocs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	data, err := os.ReadFile("../../testdata/conformance/jsonata-input-output.json")
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Definition json.RawMessage `json:"definition"`
		Input      json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	l := startLive(ctx, t)
	client := sfnClient(t, l.base, l.data)
	sm, err := client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("JSONataDocs"), Definition: aws.String(string(c.Definition)), RoleArn: aws.String("arn:aws:iam::000000000000:role/x")})
	if err != nil {
		t.Fatal(err)
	}
	x, err := client.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Name: aws.String("j1"), Input: aws.String(string(c.Input))})
	if err != nil {
		t.Fatal(err)
	}
	var out *sfn.DescribeExecutionOutput
	poll.Until(t, time.Minute, func() bool {
		out, err = client.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: x.ExecutionArn})
		if err != nil {
			t.Fatal(err)
		}
		return out.Status != types.ExecutionStatusRunning
	}, "the execution j1 to finish")
	if out.Status != types.ExecutionStatusSucceeded {
		t.Fatalf("status %s (%s: %s)", out.Status, aws.ToString(out.Error), aws.ToString(out.Cause))
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(aws.ToString(out.Output)), &got); err != nil {
		t.Fatal(err)
	}
	if got["lastName"] != "Last=>Rivera" || got["orderValue"] != 27.91 || len(got) != 2 {
		t.Errorf("output %v, want the page's {lastName: Last=>Rivera, orderValue: 27.91}", got)
	}
}
