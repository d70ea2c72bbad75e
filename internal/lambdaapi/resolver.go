package lambdaapi

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/veredicto/veredicto/internal/asl"
)

// lambdaInvoke is the optimized integration that invokes a function.
const lambdaInvoke = "arn:aws:states:::lambda:invoke"

// Resolver serves, for the local engine, the Tasks no registered handler
// serves (asl.External): a Lambda function, named by its ARN or by
// lambda:invoke's FunctionName, is one of the project's functions when its
// name is one and its ARN (if any) is this server's region and account,
// else a function on the Lambda endpoint; any other service integration
// (DynamoDB, SQS, SNS, EventBridge, states:startExecution…) is served only
// as a mock configuration's test case mocks it.
//
// Without an endpoint or a mock configuration, such a Task is refused
// when its state machine is created (the error says what to give); with a
// mock configuration, it is accepted, since a test case may mock it, and a
// run that reaches it unmocked fails with States.Runtime saying the same.
type Resolver struct {
	// Local is the handler of one of the project's functions by name.
	Local func(name string) (asl.Handler, bool)
	// Remote, when set, invokes the other functions (--lambda-endpoint).
	Remote *Remote
	// Mocking is set when a mock configuration is loaded (--mock-config).
	Mocking bool
	// Region and Account are this server's, in its ARNs.
	Region, Account string
}

// NoLambdaEndpointError is a Task's Lambda function that is not one of
// the project's, on a server given no endpoint to call it on.
type NoLambdaEndpointError struct {
	Function string // its ARN, or its name as the Task gives it
}

func (e *NoLambdaEndpointError) Error() string {
	return fmt.Sprintf("the Lambda function %s is not one of this server's functions, and the server has no endpoint to call it on: "+
		"start veredicto serve with --lambda-endpoint URL (sam local start-lambda's, for example), "+
		"or run the state machine on a test case of --mock-config FILE that mocks this state", e.Function)
}

// UnservedIntegrationError is a Task of a service integration this server
// does not call (only a mock configuration's test case can answer it).
type UnservedIntegrationError struct {
	Resource string
}

func (e *UnservedIntegrationError) Error() string {
	return fmt.Sprintf("%s is a service integration this server does not call: "+
		"start veredicto serve with --mock-config FILE and run the state machine on a test case (StartExecution on ARN#TestCase) that mocks this state", e.Resource)
}

// External is the asl.External of the server (asl.Registry.SetExternal).
func (r *Resolver) External(resource, binding string) (asl.Handler, error) {
	switch {
	case resource == lambdaInvoke || (resource == binding && IsFunctionARN(resource)):
		f, ok := ParseFunction(binding)
		if !ok {
			return nil, nil // ${XxxArn} left unbound, or not a function name: unbound
		}
		return r.function(binding, f)
	case isIntegration(resource) && resource == binding:
		if r.Mocking {
			return failing(&UnservedIntegrationError{Resource: resource}), nil
		}
		return nil, &UnservedIntegrationError{Resource: resource}
	}
	return nil, nil
}

func (r *Resolver) function(named string, f Function) (asl.Handler, error) {
	local := (f.Region == "" || f.Region == r.Region) && (f.Account == "" || f.Account == r.Account) &&
		(f.Qualifier == "" || f.Qualifier == "$LATEST")
	if h, ok := r.Local(f.Name); ok && local {
		return h, nil
	}
	if r.Remote != nil {
		return r.Remote.Handler(f), nil
	}
	if strings.HasPrefix(named, "arn:") {
		named = f.ARN(r.Region, r.Account)
	}
	err := &NoLambdaEndpointError{Function: named}
	if r.Mocking {
		return failing(err), nil
	}
	return nil, err
}

// failing is a handler that ends the execution with States.Runtime: the
// server cannot run the Task, whatever the state's Retry and Catch say.
func failing(err error) asl.Handler {
	cause := err.Error()
	cause = strings.ToUpper(cause[:1]) + cause[1:] // a sentence of its own in the cause
	return func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return nil, &asl.StatesError{Name: asl.ErrRuntime, Cause: cause}
	}
}

// isIntegration reports whether a resource is a Step Functions service
// integration ("arn:aws:states:::sqs:sendMessage", "…:::aws-sdk:s3:getObject").
func isIntegration(resource string) bool {
	partition, rest, ok := strings.Cut(strings.TrimPrefix(resource, "arn:"), ":states:::")
	return ok && strings.HasPrefix(resource, "arn:") && strings.HasPrefix(partition, "aws") && !strings.Contains(partition, ":") && rest != ""
}
