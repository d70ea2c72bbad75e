// Package sfn is the AWS Step Functions client of the Lambda bootstraps:
// starting executions (internal/starter), resuming waiting Tasks
// (internal/confirm), reading executions and their history
// (internal/stream, internal/httpapi/searchapi.SFNRuns), with the SDK's input, output
// and error types mapped to the AWS JSON 1.0 protocol as the SDK's
// generated code maps them (see internal/awsclient).
package sfn

import (
	"context"
	"io"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssfn "github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/smithy-go"

	"github.com/veredicto/veredicto/internal/awsclient"
)

// Service is Step Functions as the SDK names it.
var Service = awsclient.Service{ID: awssfn.ServiceID, SigningName: "states", EndpointPrefix: "states"}

// Client calls Step Functions. It is safe for concurrent use.
type Client struct{ c *awsclient.Client }

// New returns a client configured from ac (see awsclient.New).
func New(ac aws.Config) (*Client, error) {
	c, err := awsclient.New(ac, Service)
	if err != nil {
		return nil, err
	}
	return &Client{c}, nil
}

// call sends op with in, encoded with Step Functions' member names, and
// decodes the answer into out.
func call[O any](ctx context.Context, c *Client, op string, in any) (*O, error) {
	body, err := awsclient.MarshalJSONShape(in, lowerFirst)
	if err != nil {
		return nil, &smithy.OperationError{ServiceID: Service.ID, OperationName: op, Err: &smithy.SerializationError{Err: err}}
	}
	r := &awsclient.Request{Method: http.MethodPost, URL: c.c.Endpoint(), Body: body, Header: http.Header{
		"Content-Type": {"application/x-amz-json-1.0"}, "X-Amz-Target": {"AWSStepFunctions." + op}}}
	resp, err := c.c.Do(ctx, op, r, decodeError)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, &smithy.OperationError{ServiceID: Service.ID, OperationName: op, Err: &smithy.DeserializationError{Err: err}}
	}
	out := new(O)
	if err := awsclient.UnmarshalJSONShape(b, out); err != nil {
		return nil, &smithy.OperationError{ServiceID: Service.ID, OperationName: op, Err: &smithy.DeserializationError{Err: err, Snapshot: b}}
	}
	return out, nil
}

// lowerFirst is a Step Functions member name of a field name:
// StateMachineArn → stateMachineArn.
func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToLower(r)) + s[n:]
}

// decodeError is the modelled error of the code, its members decoded, else
// a smithy.GenericAPIError with the code and message.
func decodeError(resp *http.Response, body []byte) error {
	code, message, err := awsclient.JSONErrorCode(resp, body)
	if err != nil {
		return err
	}
	modelled := modelledError(code)
	if modelled == nil {
		return &smithy.GenericAPIError{Code: code, Message: message}
	}
	if err := awsclient.UnmarshalJSONShape(body, modelled); err != nil {
		return &smithy.DeserializationError{Err: err, Snapshot: body}
	}
	return modelled
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
	return call[awssfn.StartExecutionOutput](ctx, c, "StartExecution", in)
}

// DescribeExecution describes an execution.
func (c *Client) DescribeExecution(ctx context.Context, in *awssfn.DescribeExecutionInput, _ ...func(*awssfn.Options)) (*awssfn.DescribeExecutionOutput, error) {
	return call[awssfn.DescribeExecutionOutput](ctx, c, "DescribeExecution", in)
}

// GetExecutionHistory reads a page of an execution's history.
func (c *Client) GetExecutionHistory(ctx context.Context, in *awssfn.GetExecutionHistoryInput, _ ...func(*awssfn.Options)) (*awssfn.GetExecutionHistoryOutput, error) {
	return call[awssfn.GetExecutionHistoryOutput](ctx, c, "GetExecutionHistory", in)
}

// ListExecutions lists a page of a state machine's executions.
func (c *Client) ListExecutions(ctx context.Context, in *awssfn.ListExecutionsInput, _ ...func(*awssfn.Options)) (*awssfn.ListExecutionsOutput, error) {
	return call[awssfn.ListExecutionsOutput](ctx, c, "ListExecutions", in)
}

// SendTaskSuccess resumes a waiting Task with its output.
func (c *Client) SendTaskSuccess(ctx context.Context, in *awssfn.SendTaskSuccessInput, _ ...func(*awssfn.Options)) (*awssfn.SendTaskSuccessOutput, error) {
	return call[awssfn.SendTaskSuccessOutput](ctx, c, "SendTaskSuccess", in)
}

// SendTaskFailure fails a waiting Task.
func (c *Client) SendTaskFailure(ctx context.Context, in *awssfn.SendTaskFailureInput, _ ...func(*awssfn.Options)) (*awssfn.SendTaskFailureOutput, error) {
	return call[awssfn.SendTaskFailureOutput](ctx, c, "SendTaskFailure", in)
}
