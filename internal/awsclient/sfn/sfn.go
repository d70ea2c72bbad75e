// Package sfn is the AWS Step Functions client of the Lambda bootstraps:
// starting executions (internal/starter), resuming waiting Tasks
// (internal/confirm), reading executions and their history
// (internal/stream, internal/httpapi/searchapi.SFNRuns), with the SDK's input, output
// and error types mapped to the AWS JSON 1.0 protocol as the SDK's
// generated code maps them (see internal/awsclient).
package sfn

import (
	"context"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssfn "github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/veredicto/veredicto/internal/awsclient"
)

// Service is Step Functions as the SDK names it.
var Service = awsclient.Service{ID: awssfn.ServiceID, SigningName: "states", EndpointPrefix: "states"}

// Client calls Step Functions. It is safe for concurrent use.
type Client awsclient.Client

// New returns a client configured from ac (see awsclient.New).
func New(ac aws.Config) (*Client, error) {
	c, err := awsclient.New(ac, Service)
	return (*Client)(c), err
}

// protocol is Step Functions' AWS JSON 1.0: members in lowerCamelCase.
var protocol = awsclient.JSONProtocol{Version: "1.0", Target: "AWSStepFunctions",
	Shapes: awsclient.JSONShapes{Name: lowerFirst}, Modelled: modelledError}

// lowerFirst is a Step Functions member name of a field name:
// StateMachineArn → stateMachineArn.
func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToLower(r)) + s[n:]
}

// modelledError is a new value of the modelled error with the code.
func modelledError(code string) error {
	switch {
	case strings.EqualFold(code, "ActivityAlreadyExists"):
		return &types.ActivityAlreadyExists{}
	case strings.EqualFold(code, "ActivityDoesNotExist"):
		return &types.ActivityDoesNotExist{}
	case strings.EqualFold(code, "ActivityLimitExceeded"):
		return &types.ActivityLimitExceeded{}
	case strings.EqualFold(code, "ActivityWorkerLimitExceeded"):
		return &types.ActivityWorkerLimitExceeded{}
	case strings.EqualFold(code, "ConflictException"):
		return &types.ConflictException{}
	case strings.EqualFold(code, "ExecutionAlreadyExists"):
		return &types.ExecutionAlreadyExists{}
	case strings.EqualFold(code, "ExecutionDoesNotExist"):
		return &types.ExecutionDoesNotExist{}
	case strings.EqualFold(code, "ExecutionLimitExceeded"):
		return &types.ExecutionLimitExceeded{}
	case strings.EqualFold(code, "ExecutionNotRedrivable"):
		return &types.ExecutionNotRedrivable{}
	case strings.EqualFold(code, "InvalidArn"):
		return &types.InvalidArn{}
	case strings.EqualFold(code, "InvalidDefinition"):
		return &types.InvalidDefinition{}
	case strings.EqualFold(code, "InvalidEncryptionConfiguration"):
		return &types.InvalidEncryptionConfiguration{}
	case strings.EqualFold(code, "InvalidExecutionInput"):
		return &types.InvalidExecutionInput{}
	case strings.EqualFold(code, "InvalidLoggingConfiguration"):
		return &types.InvalidLoggingConfiguration{}
	case strings.EqualFold(code, "InvalidName"):
		return &types.InvalidName{}
	case strings.EqualFold(code, "InvalidOutput"):
		return &types.InvalidOutput{}
	case strings.EqualFold(code, "InvalidToken"):
		return &types.InvalidToken{}
	case strings.EqualFold(code, "InvalidTracingConfiguration"):
		return &types.InvalidTracingConfiguration{}
	case strings.EqualFold(code, "KmsAccessDeniedException"):
		return &types.KmsAccessDeniedException{}
	case strings.EqualFold(code, "KmsInvalidStateException"):
		return &types.KmsInvalidStateException{}
	case strings.EqualFold(code, "KmsThrottlingException"):
		return &types.KmsThrottlingException{}
	case strings.EqualFold(code, "MissingRequiredParameter"):
		return &types.MissingRequiredParameter{}
	case strings.EqualFold(code, "ResourceNotFound"):
		return &types.ResourceNotFound{}
	case strings.EqualFold(code, "ServiceQuotaExceededException"):
		return &types.ServiceQuotaExceededException{}
	case strings.EqualFold(code, "StateMachineAlreadyExists"):
		return &types.StateMachineAlreadyExists{}
	case strings.EqualFold(code, "StateMachineDeleting"):
		return &types.StateMachineDeleting{}
	case strings.EqualFold(code, "StateMachineDoesNotExist"):
		return &types.StateMachineDoesNotExist{}
	case strings.EqualFold(code, "StateMachineLimitExceeded"):
		return &types.StateMachineLimitExceeded{}
	case strings.EqualFold(code, "StateMachineTypeNotSupported"):
		return &types.StateMachineTypeNotSupported{}
	case strings.EqualFold(code, "TaskDoesNotExist"):
		return &types.TaskDoesNotExist{}
	case strings.EqualFold(code, "TaskTimedOut"):
		return &types.TaskTimedOut{}
	case strings.EqualFold(code, "TooManyTags"):
		return &types.TooManyTags{}
	case strings.EqualFold(code, "ValidationException"):
		return &types.ValidationException{}
	}
	return nil
}

// StartExecution starts an execution.
func (c *Client) StartExecution(ctx context.Context, in *awssfn.StartExecutionInput, _ ...func(*awssfn.Options)) (*awssfn.StartExecutionOutput, error) {
	return awsclient.CallJSON[awssfn.StartExecutionOutput](ctx, (*awsclient.Client)(c), protocol, "StartExecution", in)
}

// DescribeExecution describes an execution.
func (c *Client) DescribeExecution(ctx context.Context, in *awssfn.DescribeExecutionInput, _ ...func(*awssfn.Options)) (*awssfn.DescribeExecutionOutput, error) {
	return awsclient.CallJSON[awssfn.DescribeExecutionOutput](ctx, (*awsclient.Client)(c), protocol, "DescribeExecution", in)
}

// GetExecutionHistory reads a page of an execution's history.
func (c *Client) GetExecutionHistory(ctx context.Context, in *awssfn.GetExecutionHistoryInput, _ ...func(*awssfn.Options)) (*awssfn.GetExecutionHistoryOutput, error) {
	return awsclient.CallJSON[awssfn.GetExecutionHistoryOutput](ctx, (*awsclient.Client)(c), protocol, "GetExecutionHistory", in)
}

// ListExecutions lists a page of a state machine's executions.
func (c *Client) ListExecutions(ctx context.Context, in *awssfn.ListExecutionsInput, _ ...func(*awssfn.Options)) (*awssfn.ListExecutionsOutput, error) {
	return awsclient.CallJSON[awssfn.ListExecutionsOutput](ctx, (*awsclient.Client)(c), protocol, "ListExecutions", in)
}

// SendTaskSuccess resumes a waiting Task with its output.
func (c *Client) SendTaskSuccess(ctx context.Context, in *awssfn.SendTaskSuccessInput, _ ...func(*awssfn.Options)) (*awssfn.SendTaskSuccessOutput, error) {
	return awsclient.CallJSON[awssfn.SendTaskSuccessOutput](ctx, (*awsclient.Client)(c), protocol, "SendTaskSuccess", in)
}

// SendTaskFailure fails a waiting Task.
func (c *Client) SendTaskFailure(ctx context.Context, in *awssfn.SendTaskFailureInput, _ ...func(*awssfn.Options)) (*awssfn.SendTaskFailureOutput, error) {
	return awsclient.CallJSON[awssfn.SendTaskFailureOutput](ctx, (*awsclient.Client)(c), protocol, "SendTaskFailure", in)
}
