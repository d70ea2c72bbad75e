package asl

import "strings"

// Activities. A Task state whose Resource is an activity ARN
// (arn:aws:states:REGION:ACCOUNT:activity:NAME) is served by a worker
// that polls for it (the Step Functions API's GetActivityTask) and answers
// with SendTaskSuccess or SendTaskFailure on the task's token, as a
// .waitForTaskToken Task is answered. The engine does not poll: it hands
// the task to the handler given with WithActivities, which queues it for
// the workers, and then waits on the token.

// IsActivityARN reports whether resource names an activity:
// arn:PARTITION:states:REGION:ACCOUNT:activity:NAME.
func IsActivityARN(resource string) bool {
	parts := strings.Split(resource, ":")
	return len(parts) == 7 && parts[0] == "arn" && strings.HasPrefix(parts[1], "aws") && parts[2] == "states" &&
		parts[3] != "" && parts[4] != "" && parts[5] == "activity" && parts[6] != ""
}

// WithActivities makes the engine run Task states whose Resource is an
// activity ARN; without it they are unbound (Check refuses them). For each
// attempt h is called with the task's effective input and a context that
// carries its TaskInfo (TaskFromContext: the activity ARN as Resource, the
// task token as Token); it should queue the task for a worker and return
// at once. An error it returns fails the attempt without a worker. The
// Task then waits for SendTaskSuccess or SendTaskFailure on the token, and
// its events are those of a callback Task without TaskStarted and
// TaskSubmitted: the caller records when a worker takes the task (Step
// Functions' ActivityStarted).
//
// TimeoutSeconds counts from the scheduling, waiting for a worker
// included (no recording shows where Step Functions starts it);
// HeartbeatSeconds counts from the first SendTaskHeartbeat,
// which the caller sends when a worker takes the task, so a task waits for
// its worker without a heartbeat.
//
// exists (nil: every activity exists) is asked before an attempt is
// scheduled. Step Functions checks the activity when the state runs, not
// when the machine is created: a Task whose activity does not exist then
// records no ActivityScheduled and fails the execution with States.Runtime
// (MissingActivity), which no Retry or Catch handles. h may return
// MissingActivity too, for an activity deleted between the two.
//
// exists is asked with the execution's id: an activity that execution may
// not use (another tenant's, under serve) is as missing.
func WithActivities(h Handler, exists func(execution, arn string) bool) Option {
	return func(e *Engine) { e.activities, e.activityExists = h, exists }
}

// MissingActivity is the error of a Task whose activity arn does not exist
// when it runs, in Step Functions' words (recorded on AWS: LocalStack
// snapshot activities/test_activities.snapshot.json,
// test_activity_task_on_deleted); the engine prefixes the failing state.
func MissingActivity(arn string) *StatesError {
	return newError(ErrRuntime, "The activity %s does not exist.", arn)
}

// activity reports whether the engine serves st as an activity task.
func (e *Engine) activity(st *State) bool {
	return e.activities != nil && IsActivityARN(st.Resource)
}

// activityMissing reports whether the activity arn is known not to exist
// for the execution.
func (e *Engine) activityMissing(execution, arn string) bool {
	return e.activityExists != nil && !e.activityExists(execution, arn)
}
