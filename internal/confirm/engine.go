package confirm

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/veredicto/veredicto/internal/asl"
)

// EngineTasks delivers decisions to tasks waiting in an in-process engine
// (a batch run with no Step Functions API), answering as Step Functions
// does (TaskTimedOut) for a token that no longer waits.
type EngineTasks struct{ Engine *asl.Engine }

var _ TaskSender = EngineTasks{}

// SendTaskSuccess resumes the task with the output.
func (e EngineTasks) SendTaskSuccess(_ context.Context, in *sfn.SendTaskSuccessInput, _ ...func(*sfn.Options)) (*sfn.SendTaskSuccessOutput, error) {
	out := "null"
	if in.Output != nil {
		out = *in.Output
	}
	return &sfn.SendTaskSuccessOutput{}, engineErr(e.Engine.SendTaskSuccess(deref(in.TaskToken), json.RawMessage(out)))
}

// SendTaskFailure fails the task with the error name and cause.
func (e EngineTasks) SendTaskFailure(_ context.Context, in *sfn.SendTaskFailureInput, _ ...func(*sfn.Options)) (*sfn.SendTaskFailureOutput, error) {
	return &sfn.SendTaskFailureOutput{}, engineErr(e.Engine.SendTaskFailure(deref(in.TaskToken), deref(in.Error), deref(in.Cause)))
}

func engineErr(err error) error {
	var tt *asl.TaskTimedOut
	if errors.As(err, &tt) {
		return &types.TaskTimedOut{Message: ptr(err.Error())}
	}
	return err
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
