// Package engine records the in-process engine's history (internal/asl)
// on the event stream, as the local server does: it is apart from
// internal/stream so that the Lambdas, which read Step Functions' history,
// link no engine.
package engine

import (
	"log/slog"

	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/stream"
)

// Event is the stream's view of an engine history event.
func Event(ev asl.Event) stream.Event {
	return stream.Event{ID: ev.ID, Timestamp: ev.Timestamp, Type: ev.Type, State: ev.State, Scope: ev.Scope, Resource: ev.Resource,
		Index: ev.Index, Attempt: ev.Attempt, Input: ev.Input, Output: ev.Output, Error: ev.Error, Cause: ev.Cause}
}

// Hook is r's Hook for the engine's history hook.
func Hook(r *stream.Recorder, logger *slog.Logger) func(tenant, executionARN string, ev asl.Event) {
	return Adapt(r.Hook(logger))
}

// Adapt makes a hook of the stream's (Recorder.Hook, Spool.Hook) the
// engine's history hook.
func Adapt(hook func(tenant, executionARN string, ev stream.Event)) func(tenant, executionARN string, ev asl.Event) {
	return func(tenant, executionARN string, ev asl.Event) { hook(tenant, executionARN, Event(ev)) }
}
