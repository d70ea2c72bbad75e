package asl

import (
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"
)

// Event is one entry of an execution's history, in the order it happened.
// Types follow Step Functions' history event names: ExecutionStarted,
// <Type>StateEntered / <Type>StateExited, TaskScheduled, TaskSucceeded,
// TaskFailed, TaskTimedOut, MapStateStarted, MapIterationStarted,
// MapIterationSucceeded, MapIterationFailed, MapStateSucceeded,
// MapStateFailed, ParallelStateStarted, ParallelStateSucceeded,
// ParallelStateFailed, WaitStateStarted, EvaluationFailed (a JSONata state's
// expression failed), ExecutionSucceeded, ExecutionFailed, ExecutionTimedOut,
// ExecutionAborted.
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
	// Location, on an EvaluationFailed event, names the field whose JSONata
	// expression failed ("Output/error", "Items", "Arguments/FunctionName").
	Location string `json:"location,omitempty"`
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

// histEvent is the compact form in which an execution keeps its history:
// a third of an Event's size, so that a long history costs little memory
// and garbage. The common events (a state entered or exited, a Task
// scheduled or succeeded, a Map iteration's start and success, the
// execution's start and success) are held in its own fields; any other
// event keeps its whole Event in data. Event builds the public form.
type histEvent struct {
	ts    int64  // wall clock, Unix nanoseconds (0 when not read)
	st    *State // the state the event belongs to (nil for the execution's)
	fr    *frame // the state's frame (nil for the execution's)
	data  any    // Input, or Output with histOutput; the whole *Event with evOther
	num   int32  // Attempt with histAttempt, Index with histIndex
	flags uint8
	typ   evType // the event's type (evOther: data is the *Event)
}

// evType numbers the event types the compact history holds in its fields;
// any other is evOther, its whole Event in data.
type evType uint8

const (
	evOther evType = iota
	evExecutionStarted
	evExecutionSucceeded
	evTaskScheduled
	evTaskSucceeded
	evMapIterationStarted
	evMapIterationSucceeded
	evEntered // evEntered+k: the StateEntered of stateKinds[k]
	evExited  = evEntered + evType(len(stateKinds))
)

// stateKinds are the state types, in the order of their evEntered and
// evExited numbers.
var stateKinds = [...]string{"Task", "Pass", "Choice", "Map", "Parallel", "Wait", "Succeed", "Fail"}

// eventTypes names each evType.
var eventTypes = func() (names [evExited + evType(len(stateKinds))]string) {
	copy(names[:], []string{"", "ExecutionStarted", "ExecutionSucceeded", "TaskScheduled", "TaskSucceeded", "MapIterationStarted", "MapIterationSucceeded"})
	for k, kind := range stateKinds {
		names[evEntered+evType(k)] = kind + "StateEntered"
		names[evExited+evType(k)] = kind + "StateExited"
	}
	return names
}()

func (t evType) String() string { return eventTypes[t] }

// stateEvents returns the evType of the StateEntered and StateExited events
// of a state of type typ (false for a type the validator would not load).
func stateEvents(typ string) (entered, exited evType, ok bool) {
	for k, kind := range stateKinds {
		if kind == typ {
			return evEntered + evType(k), evExited + evType(k), true
		}
	}
	return evOther, evOther, false
}

// histEvent flags.
const (
	histOutput  = 1 << iota // data is the Output (otherwise the Input)
	histAttempt             // num is the Task's attempt; Resource is st's
	histIndex               // num is the Map iteration's index
	histText                // data is the Input's JSON text (*json.RawMessage)
)

// event returns the public form of the event numbered id.
func (h *histEvent) event(id int) Event {
	var ev Event
	if h.typ == evOther {
		ev = *h.data.(*Event)
		ev.Input, ev.Output = deepResolve(ev.Input), deepResolve(ev.Output)
	} else {
		ev.Type = h.typ.String()
		if h.st != nil {
			ev.State = h.st.Name
		}
		if h.fr != nil {
			ev.Scope = h.fr.scope()
		}
		switch {
		case h.flags&histOutput != 0:
			ev.Output = deepResolve(h.data)
		case h.flags&histText != 0:
			v, err := parseJSON(*h.data.(*json.RawMessage))
			if err != nil { // never: the engine wrote the text
				panic(fmt.Sprintf("asl: the recorded input of %s is not JSON: %v", h.typ, err))
			}
			ev.Input = v
		default:
			ev.Input = deepResolve(h.data)
		}
		switch {
		case h.flags&histAttempt != 0:
			ev.Attempt = int(h.num)
			ev.Resource = h.st.Resource
		case h.flags&histIndex != 0:
			ev.Index = intPtr(int(h.num))
		}
	}
	ev.ID = id
	if h.ts != 0 {
		ev.Timestamp = time.Unix(0, h.ts)
	}
	return ev
}

// histChunk is how many events a history holds per block: a history grows
// by small blocks, never copied, rather than by one large array, whose pages
// the runtime would return to the system and fault in again at every
// execution.
const histChunk = 128

// histBlock is one block of a history. ready marks the slots written, so
// that a reader during the run (Execution.History) takes only events whose
// writing is complete.
type histBlock struct {
	events [histChunk]histEvent
	ready  [histChunk]atomic.Bool
}

// history is a kept history, written without a lock: each event's id,
// handed out by the execution, is its slot, so concurrent Map iterations and
// Parallel branches write different slots and never wait on each other.
type history struct {
	blocks []atomic.Pointer[histBlock] // ceil(MaxHistoryEvents/histChunk)
}

func newHistory() history {
	return history{blocks: make([]atomic.Pointer[histBlock], (MaxHistoryEvents+histChunk-1)/histChunk)}
}

// put stores the event numbered id.
func (h *history) put(id int, ev histEvent) {
	slot := id - 1
	ref := &h.blocks[slot/histChunk]
	b := ref.Load()
	if b == nil {
		b = new(histBlock)
		if !ref.CompareAndSwap(nil, b) {
			b = ref.Load() // another event made the block first
		}
	}
	b.events[slot%histChunk] = ev
	b.ready[slot%histChunk].Store(true)
}

// events returns the public form of the first n events (ids count from 1),
// stopping at the first one not written yet. Concurrent events may have
// been numbered in another order than they read the clock: a timestamp is
// never earlier than the one before it.
func (h *history) events(n int) []Event {
	if h.blocks == nil {
		return nil
	}
	out := make([]Event, 0, n)
	var last time.Time
	for id := 1; id <= n; id++ {
		slot := id - 1
		b := h.blocks[slot/histChunk].Load()
		if b == nil || !b.ready[slot%histChunk].Load() {
			break
		}
		ev := b.events[slot%histChunk].event(id)
		if ev.Timestamp.Before(last) {
			ev.Timestamp = last
		}
		last = ev.Timestamp
		out = append(out, ev)
	}
	return out
}
