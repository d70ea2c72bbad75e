// Package taskinfo is how the local engine (internal/asl) tells a Task's
// handler which attempt it serves: apart from the engine, so that a
// handler that reads it (ConfirmFunction's) links no engine in a Lambda.
package taskinfo

import "context"

// Info describes the Task attempt a handler is serving.
type Info struct {
	ExecutionID string
	State       string
	Resource    string
	Attempt     int    // 1 for the first attempt, 2 for the first retry…
	Token       string // the task token of a .waitForTaskToken task
}

// Key is the context key the engine answers an Info under.
type Key struct{}

// From returns the Task attempt a handler was invoked for by the local
// engine (false under Lambda, where lambdacontext carries the request).
func From(ctx context.Context) (Info, bool) {
	i, ok := ctx.Value(Key{}).(Info)
	return i, ok
}
