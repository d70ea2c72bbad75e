package sfnapi_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/smithy-go"
)

// TestInvalidArnWords: an ARN that is not of the kind an operation takes
// is InvalidArn, in AWS's words. Recorded on AWS (LocalStack snapshots
// test_sfn_api.snapshot.json, test_sfn_api_activities.snapshot.json,
// test_sfn_api_versioning.snapshot.json): a string that is not an ARN is
// "Invalid ARN prefix: <it>", whatever the operation. Recorded on AWS
// (LocalStack snapshot test_sfn_api_express.snapshot.json): an ARN of
// another resource type names that type, not the ARN ("Resource type not
// valid in this context: express"); the other types follow that one
// recording.
func TestInvalidArnWords(t *testing.T) {
	p := newPeer(t)
	ctx := context.Background()
	c := p.client
	smARN := p.create(t, "Words", `{"StartAt":"A","States":{"A":{"Type":"Pass","End":true}}}`)
	actARN := p.activity(t, c, "words")
	const (
		prefix = "Invalid Arn: 'Invalid ARN prefix: "
		typ    = "Invalid Arn: 'Resource type not valid in this context: "
	)
	for _, tt := range []struct {
		name string
		call func() error
		want string
	}{
		// recorded
		{"DescribeStateMachine", func() error {
			_, err := c.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String("not_a_valid_arn")})
			return err
		}, prefix + "not_a_valid_arn'"},
		{"ListExecutions", func() error {
			_, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String("invalid_state_machine_arn")})
			return err
		}, prefix + "invalid_state_machine_arn'"},
		{"GetExecutionHistory", func() error {
			_, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String("invalid_state_machine_arn")})
			return err
		}, prefix + "invalid_state_machine_arn'"},
		{"DescribeExecution", func() error {
			_, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String("invalid_state_machine_arn")})
			return err
		}, prefix + "invalid_state_machine_arn'"},
		{"DescribeActivity", func() error {
			_, err := c.DescribeActivity(ctx, &sfn.DescribeActivityInput{ActivityArn: aws.String("no_an_activity_arn")})
			return err
		}, prefix + "no_an_activity_arn'"},
		{"GetActivityTask", func() error {
			_, err := c.GetActivityTask(ctx, &sfn.GetActivityTaskInput{ActivityArn: aws.String("no_an_activity_arn")})
			return err
		}, prefix + "no_an_activity_arn'"},
		{"PublishStateMachineVersion", func() error {
			_, err := c.PublishStateMachineVersion(ctx, &sfn.PublishStateMachineVersionInput{StateMachineArn: aws.String("invalid_arn")})
			return err
		}, prefix + "invalid_arn'"},
		// the same rule in the operations no recording shows
		{"StartExecution", func() error {
			_, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String("nope")})
			return err
		}, prefix + "nope'"},
		{"StopExecution", func() error {
			_, err := c.StopExecution(ctx, &sfn.StopExecutionInput{ExecutionArn: aws.String("nope")})
			return err
		}, prefix + "nope'"},
		{"DeleteActivity", func() error {
			_, err := c.DeleteActivity(ctx, &sfn.DeleteActivityInput{ActivityArn: aws.String("nope")})
			return err
		}, prefix + "nope'"},
		{"ListTagsForResource", func() error {
			_, err := c.ListTagsForResource(ctx, &sfn.ListTagsForResourceInput{ResourceArn: aws.String("nope")})
			return err
		}, prefix + "nope'"},
		{"DescribeMapRun", func() error {
			_, err := c.DescribeMapRun(ctx, &sfn.DescribeMapRunInput{MapRunArn: aws.String("nope")})
			return err
		}, prefix + "nope'"},
		{"DeleteStateMachineVersion", func() error {
			_, err := c.DeleteStateMachineVersion(ctx, &sfn.DeleteStateMachineVersionInput{StateMachineVersionArn: aws.String("nope")})
			return err
		}, prefix + "nope'"},
		// another resource type: the type
		{"DescribeExecution of a machine", func() error {
			_, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(smARN)})
			return err
		}, typ + "stateMachine'"},
		{"DescribeActivity of a machine", func() error {
			_, err := c.DescribeActivity(ctx, &sfn.DescribeActivityInput{ActivityArn: aws.String(smARN)})
			return err
		}, typ + "stateMachine'"},
		{"DescribeStateMachine of an activity", func() error {
			_, err := c.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(actARN)})
			return err
		}, typ + "activity'"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var ae smithy.APIError
			if err := tt.call(); !errors.As(err, &ae) || ae.ErrorCode() != "InvalidArn" || ae.ErrorMessage() != tt.want {
				t.Errorf("%v\nwant InvalidArn %q", err, tt.want)
			}
		})
	}
}
