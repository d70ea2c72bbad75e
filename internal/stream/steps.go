// Package stream serves one execution's events as Server-Sent Events
// (seed 004 §4): execution-step messages derived from the execution's
// history, pending-confirmation and confirmation-resolved from the
// confirmations, and a final finish. Messages come from the durable event
// log, so a client that reconnects with Last-Event-ID receives exactly the
// events it missed, in order, and a finished execution replays and closes.
package stream

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/veredicto/veredicto/internal/eventlog"
	"github.com/veredicto/veredicto/internal/labels"
)

// Step is the step of an execution-step message: which state (agent)
// started, finished, was retried or failed. Content is a short sentence
// made of names only; Metadata holds the state, status, error name and the
// decision or score fields of a result when there are any. Neither ever
// carries document text: a history's input and output may hold CVs and
// interviews.
type Step struct {
	ID       string         `json:"id"`
	Agent    string         `json:"agent"`
	Action   string         `json:"action"`
	Content  string         `json:"content"`
	Metadata map[string]any `json:"metadata"`
}

// Event is one event of an execution's history, as FromHistory reads it:
// the local engine's (internal/asl's, through internal/stream/engine) or
// Step Functions' (FromSFN). Input, Output and Cause may hold document
// text: a step never carries them.
type Event struct {
	ID        int
	Timestamp time.Time
	Type      string
	// State is the state the event belongs to; Scope locates states inside
	// Parallel branches and Map iterations ("Fan/branch[1]", "Each/item[3]").
	State, Scope string
	// Resource is the Task's function or resource.
	Resource string
	// Index is a Map iteration's; Attempt, a TaskScheduled's (1 for the
	// first).
	Index         *int
	Attempt       int
	Input, Output any
	Error, Cause  string
}

// FromHistory maps one history event to a step. Events that repeat what
// another already says (a Task's StateExited after TaskSucceeded, a first
// TaskScheduled after TaskStateEntered…) give ok false.
func FromHistory(ev Event) (Step, bool) {
	agent := ev.State
	if a := agentOf(ev.Resource); a != "" {
		agent = a
	}
	if agent == "" {
		agent = "execution"
	}
	st := Step{ID: "h" + strconv.Itoa(ev.ID), Agent: agent, Metadata: map[string]any{"history_id": ev.ID, "event": ev.Type}}
	if ev.State != "" {
		st.Metadata["state"] = ev.State
	}
	if ev.Scope != "" {
		st.Metadata["scope"] = ev.Scope
	}
	if ev.Error != "" {
		st.Metadata["error"] = ev.Error
	}
	kind, isStateEvent := strings.CutSuffix(ev.Type, "StateEntered")
	switch {
	case ev.Type == "ExecutionStarted":
		st.Action = "started"
	case ev.Type == "ExecutionSucceeded":
		st.Action = "succeeded"
		summarise(st.Metadata, ev.Output)
	case ev.Type == "ExecutionFailed", ev.Type == "ExecutionTimedOut", ev.Type == "ExecutionAborted":
		st.Action = map[string]string{"ExecutionFailed": "failed", "ExecutionTimedOut": "timed-out", "ExecutionAborted": "aborted"}[ev.Type]
	case isStateEvent:
		st.Action = "started"
		st.Metadata["state_type"] = kind
	case strings.HasSuffix(ev.Type, "StateExited"):
		kind := strings.TrimSuffix(ev.Type, "StateExited")
		if kind == "Task" || kind == "Map" || kind == "Parallel" {
			return Step{}, false // TaskSucceeded / …StateSucceeded said it
		}
		st.Action = "finished"
		st.Metadata["state_type"] = kind
	case ev.Type == "TaskScheduled":
		if ev.Attempt <= 1 {
			return Step{}, false
		}
		st.Action = "retried"
		st.Metadata["attempt"] = ev.Attempt
	case ev.Type == "TaskSucceeded", ev.Type == "MapStateSucceeded", ev.Type == "ParallelStateSucceeded":
		st.Action = "finished"
		summarise(st.Metadata, ev.Output)
	case ev.Type == "TaskFailed", ev.Type == "MapStateFailed", ev.Type == "ParallelStateFailed":
		st.Action = "failed"
	case ev.Type == "TaskTimedOut":
		st.Action = "timed-out"
	case strings.HasSuffix(ev.Type, "StateAborted"): // a sibling iteration or branch failed
		st.Action = "aborted"
		st.Metadata["state_type"] = strings.TrimSuffix(ev.Type, "StateAborted")
	case ev.Type == "MapIterationStarted", ev.Type == "MapIterationSucceeded", ev.Type == "MapIterationFailed", ev.Type == "MapIterationAborted":
		st.Action = "iteration-" + strings.ToLower(strings.TrimPrefix(ev.Type, "MapIteration"))
		if ev.Index != nil {
			st.Metadata["index"] = *ev.Index
		}
	default: // MapStateStarted, ParallelStateStarted, WaitStateStarted…
		return Step{}, false
	}
	st.Content = content(st)
	return st, true
}

// content describes a step in Spanish, for people: the state in words
// (labels.State) or else the agent, what it did, the attempt or item,
// the error's name.
func content(st Step) string {
	name := st.Agent
	if state, _ := st.Metadata["state"].(string); state != "" {
		if l, ok := labels.Lookup(labels.State, state); ok {
			name = l
		}
	} else if name == "execution" {
		name = "Ejecución"
	}
	s := name + " " + labels.Of(labels.StepAction, st.Action)
	switch {
	case st.Metadata["attempt"] != nil:
		s += fmt.Sprintf(" (intento %v)", st.Metadata["attempt"])
	case st.Metadata["index"] != nil:
		s += fmt.Sprintf(" (n.º %v)", st.Metadata["index"])
	}
	if e, ok := st.Metadata["error"].(string); ok {
		s += ": " + e
	}
	return s
}

// agentOf names the function a Task resource stands for: the logical id in
// "${Gem1FunctionArn}", the function name in a Lambda ARN; "" otherwise.
func agentOf(resource string) string {
	res := strings.TrimSuffix(resource, ".waitForTaskToken")
	if inner, ok := strings.CutPrefix(res, "${"); ok {
		return strings.TrimSuffix(strings.TrimSuffix(inner, "}"), "Arn")
	}
	if _, fn, ok := strings.Cut(res, ":function:"); ok {
		name, _, _ := strings.Cut(fn, ":")
		return name
	}
	return ""
}

// summaryKeys are the result fields a step may show: decisions, scores and
// statuses, never free text.
var summaryKeys = map[string]bool{
	"decision": true, "status": true, "score": true, "passed": true, "approved": true,
	"recommendation": true, "gate": true, "verdict": true, "total": true, "attempt": true,
	"blocked": true, "escalated": true, "level": true,
}

// summarise copies summaryKeys and *_id fields with scalar values from v
// (down to three levels, e.g. "Payload.gem1.score") into m.
func summarise(m map[string]any, v any) {
	var walk func(prefix string, v any, depth int)
	walk = func(prefix string, v any, depth int) {
		obj, ok := v.(map[string]any)
		if !ok || depth > 3 {
			return
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			val := obj[k]
			if _, nested := val.(map[string]any); nested {
				walk(prefix+k+".", val, depth+1)
				continue
			}
			if !summaryKeys[k] && !strings.HasSuffix(k, "_id") {
				continue
			}
			switch x := val.(type) {
			case bool, float64, int, int64, json.Number:
				m[prefix+k] = x
			case string:
				if len(x) <= 64 && !strings.ContainsAny(x, "\n") {
					m[prefix+k] = x
				}
			}
		}
	}
	walk("", v, 1)
}

// Appender appends to the event log.
type Appender interface {
	Append(ctx context.Context, tenant, stream string, ev eventlog.Event) (eventlog.Event, error)
}

// Recorder turns an execution's history into its stream: serve calls
// Record with every persisted history event. Each append is keyed by the
// history event id, so replaying history after a restart appends nothing
// twice.
type Recorder struct {
	Log Appender
	// AgentsFor, when set, names the agent of each state of an execution
	// (see AgentsOf), so every step of a Task carries its function's
	// logical id, not only the one that names the resource.
	AgentsFor func(executionARN string) map[string]string
}

// Finish is the data of a finish message.
type Finish struct {
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
}

// Record appends the step ev maps to (if any) and, for the event that ends
// the execution, a finish message.
func (r *Recorder) Record(ctx context.Context, tenant, executionARN string, ev Event) error {
	msgs, err := r.messages(executionARN, ev)
	if err != nil {
		return err
	}
	for _, msg := range msgs {
		if _, err := r.Log.Append(ctx, tenant, executionARN, msg); err != nil {
			return fmt.Errorf("record %s of %s: %w", ev.Type, executionARN, err)
		}
	}
	return nil
}

// messages are what ev adds to its execution's stream: the step it maps
// to (if any) and, for the event that ends the execution, a finish
// message.
func (r *Recorder) messages(executionARN string, ev Event) ([]eventlog.Event, error) {
	var out []eventlog.Event
	if st, ok := FromHistory(ev); ok {
		if r.AgentsFor != nil && ev.State != "" {
			if a := r.AgentsFor(executionARN)[ev.State]; a != "" {
				st.Agent = a
				st.Content = content(st)
			}
		}
		msg, err := eventlog.New(eventlog.TypeExecutionStep, "h:"+strconv.Itoa(ev.ID), map[string]any{"step": st})
		if err != nil {
			return nil, err
		}
		out = append(out, msg)
	}
	status, final := map[string]string{"ExecutionSucceeded": "SUCCEEDED", "ExecutionFailed": "FAILED",
		"ExecutionTimedOut": "TIMED_OUT", "ExecutionAborted": "ABORTED"}[ev.Type]
	if !final {
		return out, nil
	}
	msg, err := eventlog.New(eventlog.TypeFinish, "finish", Finish{Status: status, Error: ev.Error})
	if err != nil {
		return nil, err
	}
	return append(out, msg), nil
}

// Hook adapts Record to serve's history hook, called with every persisted
// history event: a failed append is logged (with ids only), never fatal to
// the execution. Calling it again for events already recorded (after a
// restart, for the tail of a history) appends nothing twice.
func (r *Recorder) Hook(logger *slog.Logger) func(tenant, executionARN string, ev Event) {
	if logger == nil {
		logger = slog.Default()
	}
	return func(tenant, executionARN string, ev Event) {
		if err := r.Record(context.Background(), tenant, executionARN, ev); err != nil {
			logger.Error("cannot record a history event on the event stream", "tenant", tenant,
				"execution", executionARN, "history_id", ev.ID, "error", err)
		}
	}
}

// AgentsOf maps every state of an ASL definition (Parallel branches and Map
// processors included) that runs a function to the function's name: the
// logical id of "${Gem1FunctionArn}", or the FunctionName of a
// lambda:invoke Task. States that run nothing are absent.
func AgentsOf(definition []byte) (map[string]string, error) {
	var sm machine
	if err := json.Unmarshal(definition, &sm); err != nil {
		return nil, fmt.Errorf("agents of definition: %w", err)
	}
	out := map[string]string{}
	sm.walk(out)
	return out, nil
}

type machine struct {
	States map[string]struct {
		Resource   string          `json:"Resource"`
		Parameters json.RawMessage `json:"Parameters"`
		Branches   []machine       `json:"Branches"`
		Processor  *machine        `json:"ItemProcessor"`
		Iterator   *machine        `json:"Iterator"`
	} `json:"States"`
}

func (m machine) walk(out map[string]string) {
	for name, st := range m.States {
		agent := agentOf(st.Resource)
		if agent == "" && strings.HasPrefix(st.Resource, "arn:aws:states:::lambda:invoke") {
			var p struct {
				FunctionName string `json:"FunctionName"`
			}
			if json.Unmarshal(st.Parameters, &p) == nil && p.FunctionName != "" {
				agent = p.FunctionName
				if a := agentOf(p.FunctionName); a != "" {
					agent = a
				}
			}
		}
		if agent != "" {
			out[name] = agent
		}
		for _, b := range st.Branches {
			b.walk(out)
		}
		for _, p := range []*machine{st.Processor, st.Iterator} {
			if p != nil {
				p.walk(out)
			}
		}
	}
}
