package asl

import "time"

// Event is one entry of an execution's history, in the order it happened.
// Types follow Step Functions' history event names: ExecutionStarted,
// <Type>StateEntered / <Type>StateExited, TaskScheduled, TaskSucceeded,
// TaskFailed, TaskTimedOut, MapStateStarted, MapIterationStarted,
// MapIterationSucceeded, MapIterationFailed, MapStateSucceeded,
// MapStateFailed, ParallelStateStarted, ParallelStateSucceeded,
// ParallelStateFailed, WaitStateStarted, ExecutionSucceeded, ExecutionFailed,
// ExecutionTimedOut, ExecutionAborted.
type Event struct {
	ID        int       `json:"id"`
	Timestamp time.Time `json:"timestamp"`
	Type      string    `json:"type"`
	// State is the state the event belongs to; Scope locates states inside
	// Parallel branches and Map iterations ("Fan/branch[1]", "Each/item[3]").
	State    string `json:"state,omitempty"`
	Scope    string `json:"scope,omitempty"`
	Resource string `json:"resource,omitempty"`
	Index    *int   `json:"index,omitempty"`
	Length   *int   `json:"length,omitempty"`
	Attempt  int    `json:"attempt,omitempty"`
	Input    any    `json:"input,omitempty"`
	Output   any    `json:"output,omitempty"`
	Error    string `json:"error,omitempty"`
	Cause    string `json:"cause,omitempty"`
	// AssignedVariables, on a StateExited event, holds the variables the
	// state assigned, each value as JSON text (Step Functions'
	// assignedVariables).
	AssignedVariables map[string]string `json:"assignedVariables,omitempty"`
}

// Transitions counts the state transitions of a history: one per state
// entered, which is what Step Functions (Standard) bills.
func Transitions(events []Event) int {
	n := 0
	for _, e := range events {
		if len(e.Type) > len("StateEntered") && e.Type[len(e.Type)-len("StateEntered"):] == "StateEntered" {
			n++
		}
	}
	return n
}

func intPtr(i int) *int { return &i }
