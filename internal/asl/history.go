package asl

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"time"
)

// Event is one entry of an execution's history, in the order it happened.
// Types follow Step Functions' history event names: ExecutionStarted,
// <Type>StateEntered / <Type>StateExited, TaskScheduled, TaskStarted,
// TaskSubmitted (a .waitForTaskToken Task's handler has returned: the task
// waits for its token), TaskSucceeded, TaskFailed, TaskTimedOut,
// MapStateStarted, MapIterationStarted, MapIterationSucceeded,
// MapIterationFailed, MapIterationAborted, MapRunStarted, MapRunSucceeded,
// MapRunFailed (a Distributed Map's map run) and <Type>StateAborted (a Map
// iteration, or a Task, Wait, Map or Parallel state, under way when a
// sibling iteration or branch failed), MapStateSucceeded, MapStateFailed,
// ParallelStateStarted, ParallelStateSucceeded, ParallelStateFailed,
// EvaluationFailed (a JSONata state's expression failed), ExecutionSucceeded,
// ExecutionFailed, ExecutionTimedOut, ExecutionAborted.
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
	// TimeoutSeconds and HeartbeatSeconds, on a TaskScheduled event, are
	// the attempt's resolved TimeoutSeconds and HeartbeatSeconds (0: none).
	TimeoutSeconds   int64 `json:"timeoutSeconds,omitempty"`
	HeartbeatSeconds int64 `json:"heartbeatSeconds,omitempty"`
	// Heartbeat, on a TaskTimedOut event, reports that the Task's
	// HeartbeatSeconds ran out (StatesError.Heartbeat), not its
	// TimeoutSeconds: a replay catches it as the first run did.
	Heartbeat bool `json:"heartbeat,omitempty"`
	// Location, on an EvaluationFailed event, names the field whose JSONata
	// expression failed ("Output/error", "Items", "Arguments/FunctionName").
	Location string `json:"location,omitempty"`
	// MapRunARN, on a MapRunStarted event, is the Distributed Map's map
	// run.
	MapRunARN string `json:"mapRunArn,omitempty"`
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
// 40 bytes, a fifth of an Event's size, so that a long history costs little
// memory and garbage. The common events (a state entered or exited, a Task
// scheduled for its first attempt, started, submitted or succeeded, a Map
// iteration's start
// and success, the execution's start and success) are held in its own
// fields; any other event keeps its whole Event in data. Event builds the
// public form.
type histEvent struct {
	st *State // the state the event belongs to (nil for the execution's)
	// fr is the state's frame (nil for the execution's); a Map iteration's
	// events hold the iteration's own frame, which gives their scope (its
	// parent's) and index.
	fr   *frame
	data any // Input, or Output for the types that carry one; the whole *Event with evOther
	// meta holds the type (bits 0-4), histText (bit 5) and, from bit 6, the
	// event's clock: nanoseconds since the execution's start, signed
	// (±4.5 years; a later reading is held at the bound).
	meta uint64
}

// histEvent's meta layout.
const (
	histTypeMask   = 1<<5 - 1
	histText       = 1 << 5 // data is the Input's JSON text (*json.RawMessage)
	histClockShift = 6
	maxHistClock   = 1<<(63-histClockShift) - 1
)

// newHist returns the event of type typ.
func newHist(typ evType, st *State, fr *frame, data any) histEvent {
	return histEvent{st: st, fr: fr, data: data, meta: uint64(typ)}
}

func (h *histEvent) typ() evType { return evType(h.meta & histTypeMask) }

// setClock records the event's clock reading, ns nanoseconds since the
// execution's start.
func (h *histEvent) setClock(ns int64) {
	ns = min(max(ns, -maxHistClock), maxHistClock)
	h.meta = h.meta&(1<<histClockShift-1) | uint64(ns)<<histClockShift
}

func (h *histEvent) clock() int64 { return int64(h.meta) >> histClockShift }

// evType numbers the event types the compact history holds in its fields;
// any other is evOther, its whole Event in data.
type evType uint8

const (
	evOther evType = iota
	evExecutionStarted
	evExecutionSucceeded
	evTaskScheduled
	evTaskSucceeded
	evTaskStarted
	evTaskSubmitted
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
	copy(names[:], []string{"", "ExecutionStarted", "ExecutionSucceeded", "TaskScheduled", "TaskSucceeded", "TaskStarted", "TaskSubmitted", "MapIterationStarted", "MapIterationSucceeded"})
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

// carriesOutput reports whether an event of type t holds an Output
// (otherwise an Input, or nothing).
func (t evType) carriesOutput() bool {
	return t == evExecutionSucceeded || t == evTaskSucceeded || t == evTaskSubmitted || t >= evExited
}

// event returns the public form of the event numbered id; start is the
// execution's start (Unix nanoseconds), which its clock counts from.
func (h *histEvent) event(id int, start int64) Event {
	var ev Event
	if typ := h.typ(); typ == evOther {
		ev = *h.data.(*Event)
		ev.Input, ev.Output = deepResolve(ev.Input), deepResolve(ev.Output)
	} else {
		ev.Type = typ.String()
		fr := h.fr
		switch typ {
		case evTaskScheduled: // a first attempt with static timeouts (others are evOther)
			ev.Attempt = 1
			ev.Resource = h.st.Resource
			ev.TimeoutSeconds = h.st.TimeoutSeconds
			if strings.HasSuffix(h.st.Resource, waitForTaskToken) || IsActivityARN(h.st.Resource) { // a heartbeat bounds only a callback's or an activity's wait
				ev.HeartbeatSeconds = h.st.HeartbeatSeconds
			}
		case evTaskStarted, evTaskSubmitted:
			ev.Resource = h.st.Resource
		case evMapIterationStarted, evMapIterationSucceeded:
			ev.Index = intPtr(fr.index)
			fr = fr.parent
		}
		if h.st != nil {
			ev.State = h.st.Name
		}
		if fr != nil {
			ev.Scope = fr.scope()
		}
		switch {
		case typ.carriesOutput():
			ev.Output = deepResolve(h.data)
		case h.meta&histText != 0:
			v, err := parseJSON(*h.data.(*json.RawMessage))
			if err != nil { // never: the engine wrote the text
				panic(fmt.Sprintf("asl: the recorded input of %s is not JSON: %v", typ, err))
			}
			ev.Input = v
		default:
			ev.Input = deepResolve(h.data)
		}
	}
	ev.ID = id
	ev.Timestamp = time.Unix(0, start+h.clock())
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
	start  int64                       // the execution's start, Unix nanoseconds: events' clocks count from it
}

func newHistory(start int64) history {
	return history{blocks: make([]atomic.Pointer[histBlock], (MaxHistoryEvents+histChunk-1)/histChunk), start: start}
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
		ev := b.events[slot%histChunk].event(id, h.start)
		if ev.Timestamp.Before(last) {
			ev.Timestamp = last
		}
		last = ev.Timestamp
		out = append(out, ev)
	}
	return out
}
