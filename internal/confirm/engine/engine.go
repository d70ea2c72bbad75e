// Package engine delivers confirmations' decisions to tasks waiting in an
// in-process engine (internal/asl): the local composition's and the tests'
// confirm.TaskSender. It is apart from internal/confirm so that the
// Lambdas, which deliver through Step Functions, link no engine.
package engine

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/confirm"
)

// Tasks delivers decisions to tasks waiting in an in-process engine (a
// batch run with no Step Functions API), answering as Step Functions does
// (TaskTimedOut) for a token that no longer waits.
type Tasks struct{ Engine *asl.Engine }

var _ confirm.TaskSender = Tasks{}

// SendTaskSuccess resumes the task with the output.
func (e Tasks) SendTaskSuccess(_ context.Context, in *sfn.SendTaskSuccessInput, _ ...func(*sfn.Options)) (*sfn.SendTaskSuccessOutput, error) {
	out := "null"
	if in.Output != nil {
		out = *in.Output
	}
	return &sfn.SendTaskSuccessOutput{}, engineErr(e.Engine.SendTaskSuccess(aws.ToString(in.TaskToken), json.RawMessage(out)))
}

// SendTaskFailure fails the task with the error name and cause.
func (e Tasks) SendTaskFailure(_ context.Context, in *sfn.SendTaskFailureInput, _ ...func(*sfn.Options)) (*sfn.SendTaskFailureOutput, error) {
	return &sfn.SendTaskFailureOutput{}, engineErr(e.Engine.SendTaskFailure(aws.ToString(in.TaskToken), aws.ToString(in.Error), aws.ToString(in.Cause)))
}

func engineErr(err error) error {
	var tt *asl.TaskTimedOut
	if errors.As(err, &tt) {
		msg := err.Error()
		return &types.TaskTimedOut{Message: &msg}
	}
	return err
}
