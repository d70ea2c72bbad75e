package control

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/veredicto/veredicto/internal/asl"
)

// recorder persists one execution's history as the engine emits it and,
// for a resumed execution, answers the engine's replay hooks from the
// recorded history.
//
// Replay is deterministic: the engine re-runs the definition from the
// recorded input, emitting the same events in the same order within each
// scope. An event is identified by its type, scope, state and Map index
// plus how many times that combination occurred before; the first n
// occurrences of a combination that the history holds n times were already
// persisted and are not persisted (nor passed to OnHistory) again.
type recorder struct {
	m    *Manager
	e    *execution
	path string

	mu sync.Mutex
	eventChain
	end *asl.Result  // the closing event in the history (recorded, or persisted by this run)
	rp  *replayState // nil for an execution with nothing recorded
	// lost holds the first persistence failure: from then on nothing is
	// persisted (the history stays a whole prefix a restart resumes from)
	// and the engine is stopped (historyLost). Atomic: launch reads it
	// under Manager.mu, which onEvent takes under mu.
	lost atomic.Pointer[error]
	// parked is set once the run parked (park.go): its engine waits on
	// nothing more, an answer goes to the parked record. from is the
	// parked record a run resuming from one started from.
	parked bool
	from   *parked

	// size is where the next line goes: the history's length once every
	// line journaled is written. owner makes the journal refuse the lines
	// after one that failed. pending holds the events journaled but not
	// yet known durable: they reach OnHistory once a later line is (see
	// persistWorker).
	size    int64
	owner   journalOwner
	pending []pendingEvent

	// Entries for the Tasks in flight only (a handful at once): small
	// association lists cost far less than maps across many executions.
	resource pairs[string]      // scope|state → resource of the scheduled attempt
	open     pairs[string]      // scope|state → token of a callback attempt awaiting its outcome
	resolved pairs[*resolution] // token → accepted SendTask*
	hookRan  pairs[bool]        // token → Task hook ran without an outcome: the engine waits on it
	states   pairs[string]      // token → the state that handed it out
}

// replayState is what a resumed execution replays from; a fresh execution
// has none, which keeps many waiting executions small.
type replayState struct {
	recorded map[string]int // event key → occurrences persisted before this run
	seen     map[string]int // event key → occurrences emitted in this run

	// keyed by scope|state, in execution order
	tasks      map[string][]*taskRecord
	taskCalls  map[string]int
	waits      map[string][]time.Time
	waitCalls  map[string]int
	tokensRec  map[string][]string
	tokenCalls map[string]int

	// tokens handed out whose Task has no recorded outcome: accepted by
	// SendTask* from the moment the server is back, before the replay
	// reaches them
	waiting pairs[string]

	occ occurrences // what had not completed, for a redrive (redrive.go)
	// tokens of activity tasks a worker took (ActivityStarted): not
	// handed out again (activitytasks.go)
	taken pairs[bool]
}

// pendingEvent is an event journaled without waiting for its batch.
type pendingEvent struct {
	ev     asl.Event
	prev   int
	worker string
	rec    *record
}

type taskRecord struct {
	scheduled time.Time
	submitted bool // its handler answered (TaskSubmitted): its token is out
	done      bool
	output    any
	err       *asl.StatesError
	timedOut  bool
}

func newRecorder(m *Manager, e *execution) *recorder {
	return &recorder{m: m, e: e, path: filepath.Join(e.dir, "history.jsonl")}
}

// nameResource gives a Task's outcome event the resource its attempt was
// scheduled with, as Step Functions' outcome events name theirs; resource
// holds the attempts under way, by scope and state. It reports whether ev
// is an outcome.
func nameResource(resource *pairs[string], ev *asl.Event) bool {
	k := stateKey(ev.Scope, ev.State)
	switch ev.Type {
	case "TaskScheduled":
		resource.set(k, ev.Resource)
	case "TaskSucceeded", "TaskFailed", "TaskTimedOut":
		ev.Resource, _ = resource.get(k)
		resource.del(k)
		return true
	}
	return false
}

// pairs is a small association list.
type pairs[V any] []pair[V]

type pair[V any] struct {
	k string
	v V
}

func (p pairs[V]) get(k string) (V, bool) {
	for _, e := range p {
		if e.k == k {
			return e.v, true
		}
	}
	var zero V
	return zero, false
}

func (p *pairs[V]) set(k string, v V) {
	for i := range *p {
		if (*p)[i].k == k {
			(*p)[i].v = v
			return
		}
	}
	*p = append(*p, pair[V]{k, v})
}

func (p *pairs[V]) del(k string) {
	for i, e := range *p {
		if e.k == k {
			*p = append((*p)[:i], (*p)[i+1:]...)
			return
		}
	}
}

// eventChain numbers a history's events and says which event each one
// follows (its previousEventId), as Step Functions chains them.
type eventChain struct {
	nextID      int            // id of the last event numbered
	lastRoot    int            // last event id of the root scope
	lastByScope map[string]int // … of each nested scope (allocated on first use)
}

// number gives ev its id and returns the id of the event it follows.
func (r *eventChain) number(ev *asl.Event) int {
	prev := r.previousOf(ev)
	ev.ID = r.nextID + 1
	r.nextID = ev.ID
	r.setLast(ev.Scope, ev.ID)
	r.startScopes(ev)
	return prev
}

// setLast records the last event of a scope.
func (r *eventChain) setLast(scope string, id int) {
	if scope == "" {
		r.lastRoot = id
		return
	}
	if r.lastByScope == nil {
		r.lastByScope = map[string]int{}
	}
	r.lastByScope[scope] = id
}

// startScopes makes the event that starts a Map iteration or the branches
// of a Parallel state the one the first event inside them follows, as Step
// Functions chains them: MapIterationStarted for the iteration's states,
// ParallelStateStarted for each branch's.
func (r *eventChain) startScopes(ev *asl.Event) {
	switch {
	case ev.Type == "MapIterationStarted" && ev.Index != nil:
		r.setLast(childScope(ev, "item", *ev.Index), ev.ID)
	case ev.Type == "ParallelStateStarted" && ev.Length != nil:
		for i := range min(*ev.Length, maxBranches) {
			r.setLast(childScope(ev, "branch", i), ev.ID)
		}
	}
}

// childScope is the scope of item or branch i of ev's Map or Parallel
// state, written as the engine writes Event.Scope ("Each/item[3]").
func childScope(ev *asl.Event, kind string, i int) string {
	s := ev.State + "/" + kind + "[" + strconv.Itoa(i) + "]"
	if ev.Scope != "" {
		s = ev.Scope + "/" + s
	}
	return s
}

// maxBranches bounds the branch scopes one Parallel state's start notes.
const maxBranches = 1000

// previousOf is the event ev follows: a Map iteration's end follows the
// iteration's last event; a Map or Parallel state's failure, and a stopped
// execution's end, follow the last event recorded (the failure, or where
// the run was cut); any other event, previous's.
func (r *eventChain) previousOf(ev *asl.Event) int {
	switch ev.Type {
	case "MapIterationSucceeded", "MapIterationFailed", "MapIterationAborted":
		if ev.Index != nil {
			if id, ok := r.lastByScope[childScope(ev, "item", *ev.Index)]; ok {
				return id
			}
		}
	case "MapStateFailed", "ParallelStateFailed", "ExecutionAborted":
		return r.nextID
	}
	return r.previous(ev.Scope)
}

// previous is the id Step Functions' previousEventId points at: the last
// event of the same scope (or the event that started it), else the last
// event.
func (r *eventChain) previous(scope string) int {
	if scope == "" && r.lastRoot > 0 {
		return r.lastRoot
	}
	if id, ok := r.lastByScope[scope]; ok && scope != "" {
		return id
	}
	return r.nextID
}

func eventKey(ev *asl.Event) string {
	k := ev.Type + "|" + ev.Scope + "|" + ev.State
	if ev.Index != nil {
		k += "|" + strconv.Itoa(*ev.Index)
	}
	return k
}

func stateKey(scope, state string) string { return scope + "|" + state }

// load reads the recorded history (cutting off a record a crash left
// unfinished) and builds the replay indexes.
func (r *recorder) load() error {
	rp := &replayState{recorded: map[string]int{}, seen: map[string]int{}, tasks: map[string][]*taskRecord{}, taskCalls: map[string]int{},
		waits: map[string][]time.Time{}, waitCalls: map[string]int{}, tokensRec: map[string][]string{}, tokenCalls: map[string]int{}}
	r.rp = rp
	defer func() { r.size = fileSize(r.path) }()
	return readLines(r.path, r.m.quarantine, func(l line) error {
		switch {
		case l.Event != nil:
			ev := l.Event
			rp.recorded[eventKey(ev)]++
			r.nextID = ev.ID
			r.setLast(ev.Scope, ev.ID)
			r.startScopes(ev)
			k := stateKey(ev.Scope, ev.State)
			switch ev.Type {
			case "TaskScheduled":
				rp.tasks[k] = append(rp.tasks[k], &taskRecord{scheduled: ev.Timestamp})
			case "TaskSucceeded", "TaskFailed", "TaskTimedOut":
				rp.waiting.del(k)
				if list := rp.tasks[k]; len(list) > 0 {
					t := list[len(list)-1]
					t.done = true
					switch ev.Type {
					case "TaskSucceeded":
						t.output = ev.Output
					case "TaskTimedOut":
						t.timedOut = true
						t.err = &asl.StatesError{Name: ev.Error, Cause: ev.Cause, Heartbeat: ev.Heartbeat}
					default:
						t.err = &asl.StatesError{Name: ev.Error, Cause: ev.Cause}
					}
				}
			case "TaskSubmitted":
				if list := rp.tasks[k]; len(list) > 0 {
					list[len(list)-1].submitted = true
				}
			case "WaitStateEntered":
				rp.waits[k] = append(rp.waits[k], ev.Timestamp)
			case "ActivityStarted":
				if tok, ok := rp.waiting.get(k); ok {
					rp.taken.set(tok, true)
				}
			}
			r.track(ev)
			if end, err := endOf(ev); err != nil || end != nil {
				r.end = end
				return err
			}
		case l.Token != nil:
			k := stateKey(l.Token.Scope, l.Token.State)
			rp.tokensRec[k] = append(rp.tokensRec[k], l.Token.Token)
			rp.waiting.set(k, l.Token.Token)
			r.trackToken(k)
			r.states.set(l.Token.Token, l.Token.State)
		case l.Resolved != nil:
			r.resolved.set(l.Resolved.Token, l.Resolved)
		}
		return nil
	})
}

func (r *recorder) ended() *asl.Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.end
}

// closing names the history event that closes an execution with status.
var closing = map[string]string{asl.StatusSucceeded: "ExecutionSucceeded", asl.StatusFailed: "ExecutionFailed",
	asl.StatusTimedOut: "ExecutionTimedOut", asl.StatusAborted: "ExecutionAborted"}

// endOf is the result a closing event records (nil for any other event).
func endOf(ev *asl.Event) (*asl.Result, error) {
	for status, typ := range closing {
		if ev.Type != typ {
			continue
		}
		res := &asl.Result{Status: status, Error: ev.Error, Cause: ev.Cause}
		if status == asl.StatusSucceeded {
			out, err := json.Marshal(ev.Output)
			if err != nil {
				return nil, err
			}
			res.Output, res.Error, res.Cause = out, "", ""
		}
		return res, nil
	}
	return nil, nil
}

// onEvent is the engine's OnEvent.
func (r *recorder) onEvent(ev asl.Event) {
	if r.m.isClosed() || r.lost.Load() != nil {
		return // Close, or a lost event: the execution stays where its history says
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.parked {
		return // never: a parked run records nothing more
	}
	if nameResource(&r.resource, &ev) {
		k := stateKey(ev.Scope, ev.State)
		if tok, ok := r.open.get(k); ok {
			r.open.del(k)
			r.resolved.del(tok)
			r.hookRan.del(tok)
			r.m.dropToken(tok)
		}
	}
	if rp := r.rp; rp != nil {
		key := eventKey(&ev)
		rp.seen[key]++
		if rp.seen[key] <= rp.recorded[key] {
			return // persisted before the restart
		}
	}
	if ev.Type == "ExecutionAborted" {
		r.m.mu.Lock()
		ev.Error, ev.Cause = r.e.stopErr, r.e.stopWhy
		r.m.mu.Unlock()
	}
	if err := r.persist(ev); err != nil {
		r.m.log.Error("persist history event", "execution", r.e.arn, "event", ev.Type, "error", err)
		r.historyLost(err)
	}
}

// persist appends ev to the history with its id and the id of the event
// it follows, then passes it to OnHistory; a closing event becomes the
// recorder's end. The caller holds mu. Past MaxHistoryEvents only the
// closing event is persisted.
func (r *recorder) persist(ev asl.Event) error { return r.persistWorker(ev, "") }

// maxPending bounds the events journaled and not yet waited for.
const maxPending = 64

// persistWorker is persist with, for an ActivityStarted event, the name
// of the worker that took the task.
//
// An event that a restart's replay would emit again by itself (replayable:
// a Pass state's, a Choice's, the start) is journaled without waiting for
// the disk, and the engine goes on: if a crash loses it, it loses every
// later line of the history too (the journal is written in order), and
// the replay makes it again. Any other event (a Task's schedule and
// outcome, a Wait's start, the end…) waits until its batch is durable,
// and so do the replayable ones before it; then they all reach OnHistory,
// in order. So OnHistory still hears of an event only once it is
// durable, never twice.
func (r *recorder) persistWorker(ev asl.Event, worker string) error {
	end, err := endOf(&ev)
	if err != nil {
		return err
	}
	if r.nextID >= MaxHistoryEvents && end == nil {
		if r.nextID == MaxHistoryEvents {
			r.m.log.Error("execution history is full; later events are not recorded", "execution", r.e.arn, "limit", MaxHistoryEvents)
		}
		r.nextID++
		return nil
	}
	prev := r.previousOf(&ev)
	ev.ID = r.nextID + 1
	l := line{Event: &ev, Prev: prev, Worker: worker}
	rec, err := r.journalLine(&l)
	if err != nil {
		return err
	}
	r.nextID = ev.ID
	r.setLast(ev.Scope, ev.ID)
	r.startScopes(&ev)
	if r.pending == nil {
		r.pending = make([]pendingEvent, 0, 4) // most flushes carry one to three
	}
	r.pending = append(r.pending, pendingEvent{ev: ev, prev: prev, worker: worker, rec: rec})
	if end == nil && replayable(ev.Type) && len(r.pending) < maxPending {
		return nil
	}
	if err := r.flush(rec); err != nil {
		return err
	}
	if end != nil {
		r.end = end
	}
	return nil
}

// replayable says whether a restart's replay emits an event of this type
// again by itself, before anything it cannot recompute, so that it need
// not be durable before the engine goes on. A Wait's start (its timestamp
// is the wait's) and a Task's schedule (the engine then waits on the
// Task, and OnHistory should hear of it) are not.
func replayable(typ string) bool {
	switch typ {
	case "ExecutionStarted", "MapStateStarted", "MapIterationStarted", "MapIterationSucceeded",
		"ParallelStateStarted", "ParallelStateSucceeded", "MapStateSucceeded":
		return true
	case "WaitStateEntered":
		return false
	}
	return strings.HasSuffix(typ, "StateEntered") || strings.HasSuffix(typ, "StateExited")
}

// journalLine journals one history line at the end of the history,
// without waiting. The caller holds mu.
func (r *recorder) journalLine(l *line) (*record, error) {
	b, err := json.Marshal(l)
	if err != nil {
		return nil, fmt.Errorf("encode history record: %w", err)
	}
	b = append(b, '\n')
	rec := &record{kind: kindWrite, path: r.path, off: r.size, data: b, owner: &r.owner}
	if r.m.disk.refuse != nil {
		rec.refused = r.m.disk.refuse(r.path, l)
	}
	r.size += int64(len(b))
	r.m.journal.add(rec)
	return rec, nil
}

// flush waits for last, the history's latest line, and passes the events
// it made durable to OnHistory. When it failed, the events before it
// that are durable still pass (every line of a history is written in
// order, and none after one that failed), and the recorder's count of
// events and bytes is read back from the file. The caller holds mu.
func (r *recorder) flush(last *record) error {
	err := last.wait()
	n := len(r.pending)
	if err != nil {
		n = 0
		for n < len(r.pending) && r.pending[n].rec.err == nil {
			n++
		}
	}
	for _, p := range r.pending[:n] {
		if r.m.cfg.OnHistory != nil {
			r.m.cfg.OnHistory(r.e.tenant, r.e.arn, p.ev)
		}
		r.m.logPersisted(r.e, HistoryEvent{Event: p.ev, PreviousID: p.prev, WorkerName: p.worker})
	}
	r.pending = nil // not kept: an execution that now waits holds nothing (272 bytes an event)
	if err != nil {
		r.rechain()
	}
	return err
}

// flushPending passes the events journaled without waiting to OnHistory
// once they are durable: for an execution Close stopped between two
// events that wait for the disk.
func (r *recorder) flushPending() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.pending); n > 0 {
		_ = r.flush(r.pending[n-1].rec) // a failure leaves it where its history ends, as any
	}
}

// rechain reads the ids and the length of the history back from its
// file, after lines that failed were counted.
func (r *recorder) rechain() {
	r.eventChain = eventChain{}
	_ = readLines(r.path, nil, func(l line) error {
		if ev := l.Event; ev != nil {
			r.nextID = ev.ID
			r.setLast(ev.Scope, ev.ID)
			r.startScopes(ev)
		}
		return nil
	})
	r.size = fileSize(r.path)
}

// retry lets a halted history take lines again (StopExecution of a
// stalled execution), unless a line it journaled could not be written to
// its file: then only a restart, which writes it, can.
func (r *recorder) retry() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.owner.sticky {
		return r.owner.failed
	}
	r.owner.failed = nil
	r.lost.Store(nil)
	return nil
}

func fileSize(path string) int64 {
	info, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return info.Size()
}

// persistEnd makes res the execution's end in its history: the closing
// event the engine emitted if it was persisted, else one written now (a
// run that failed before the engine could record it, a stalled execution
// being stopped). It fails while a persistence failure stands.
func (r *recorder) persistEnd(res *asl.Result, at time.Time) error {
	if p := r.lost.Load(); p != nil {
		return *p
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.end != nil {
		return nil
	}
	ev := asl.Event{Type: closing[res.Status], Timestamp: at, Error: res.Error, Cause: res.Cause}
	if res.Status == asl.StatusSucceeded {
		ev.Error, ev.Cause = "", ""
		if err := json.Unmarshal(res.Output, &ev.Output); err != nil {
			return fmt.Errorf("the output to record is not JSON: %w", err)
		}
	}
	return r.persist(ev)
}

// historyLost halts an execution whose history can no longer be
// persisted, once: going on would pass a history with holes off as whole,
// and a restart could not resume it. Nothing more is persisted; the
// engine is stopped; the execution stays RUNNING (its end is never
// recorded on top of the hole) and the next start resumes it from the
// history it has, so no Task whose completion was persisted runs again.
func (r *recorder) historyLost(err error) {
	if !r.lost.CompareAndSwap(nil, &err) {
		return
	}
	r.m.log.Error("execution history can no longer be persisted: the execution is halted and stays RUNNING until a restart resumes it",
		"execution", r.e.arn, "error", err)
	r.m.mu.Lock()
	x := r.e.x
	r.m.mu.Unlock()
	if x != nil {
		x.Stop() // else launch stops it as soon as it is attached
	}
}

func (r *recorder) durable() *asl.Durable {
	return &asl.Durable{Token: r.token, Task: r.task, WaitStart: r.waitStart, Park: r.park, ParkAfter: r.m.parkAfter()}
}

// token returns the recorded token of a callback attempt or persists a new
// one before the handler can hand it out.
func (r *recorder) token(c asl.Call) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := stateKey(c.Scope, c.State)
	var tok string
	if rp := r.rp; rp != nil {
		i := rp.tokenCalls[k]
		rp.tokenCalls[k]++
		if i < len(rp.tokensRec[k]) {
			tok = rp.tokensRec[k][i]
		}
	}
	if tok == "" {
		tok = newTaskToken(r.e.arn)
		rec, err := r.journalLine(&line{Token: &tokenLine{Token: tok, Scope: c.Scope, State: c.State}})
		if err == nil {
			err = r.flush(rec)
		}
		if err != nil {
			// a token a restart would not know: halt before it is relied on
			r.m.log.Error("persist task token", "execution", r.e.arn, "state", c.State, "error", err)
			r.historyLost(err)
		}
	}
	r.open.set(k, tok)
	r.states.set(tok, c.State)
	r.m.addToken(tok, r)
	return tok
}

// task answers the engine's Task hook.
func (r *recorder) task(c asl.Call) asl.TaskReplay {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := stateKey(c.Scope, c.State)
	var rep asl.TaskReplay
	if rp := r.rp; rp != nil {
		i := rp.taskCalls[k]
		rp.taskCalls[k]++
		if i < len(rp.tasks[k]) {
			t := rp.tasks[k][i]
			if t.done {
				return asl.TaskReplay{Done: true, Output: t.output, Err: t.err, TimedOut: t.timedOut}
			}
			// A restart invokes a waiting callback's handler again (the
			// confirmations ask again: a damaged question is repaired);
			// resuming a parked execution does not (park.go).
			rep.Scheduled, rep.Submitted = t.scheduled, t.submitted && r.from != nil
		}
	}
	if tok, ok := r.open.get(k); ok {
		if res, _ := r.resolved.get(tok); res != nil {
			// accepted before the restart, its outcome not yet recorded
			return res.replay()
		}
		r.hookRan.set(tok, true)
		// A parked Task's heartbeats count on from its record; an activity
		// task a worker had taken before a restart counts from the restart.
		if rep.Beat = r.beatOf(tok); rep.Beat.IsZero() && r.rp != nil {
			if _, taken := r.rp.taken.get(tok); taken {
				rep.Beat = r.m.now()
			}
		}
	}
	return rep
}

func (res *resolution) replay() asl.TaskReplay {
	if res.Failed {
		return asl.TaskReplay{Done: true, Err: &asl.StatesError{Name: res.Error, Cause: res.Cause}}
	}
	var v any
	if err := json.Unmarshal(res.Output, &v); err != nil {
		return asl.TaskReplay{Done: true, Err: &asl.StatesError{Name: asl.ErrRuntime, Cause: "recorded task output is not JSON: " + err.Error()}}
	}
	return asl.TaskReplay{Done: true, Output: v}
}

func (r *recorder) waitStart(c asl.Call) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rp := r.rp
	if rp == nil {
		return time.Time{}, false
	}
	k := stateKey(c.Scope, c.State)
	i := rp.waitCalls[k]
	rp.waitCalls[k]++
	if i < len(rp.waits[k]) {
		return rp.waits[k][i], true
	}
	return time.Time{}, false
}

// resolve persists an accepted SendTask* and delivers it to the engine if
// the engine waits on the token; otherwise the Task hook picks it up.
func (r *recorder) resolve(tok string, res resolution) error {
	r.mu.Lock()
	if r.parked {
		r.mu.Unlock()
		return errMoved // to the parked record
	}
	if res, _ := r.resolved.get(tok); res != nil {
		r.mu.Unlock()
		return errorf(CodeTaskTimedOut, "Task Timed Out: 'Provided task does not exist anymore'")
	}
	before := make([]*record, len(r.pending))
	for i, p := range r.pending {
		before[i] = p.rec
	}
	rec, err := r.journalLine(&line{Resolved: &res})
	if err == nil {
		err = r.flush(rec)
	}
	if err != nil {
		// Failed alone, the result is as if never sent and the history
		// takes lines again; if events journaled before it failed too,
		// the history lost them: the execution halts.
		lostEvents := slices.ContainsFunc(before, func(p *record) bool { return p.err != nil })
		if !lostEvents && !r.owner.sticky {
			r.owner.failed = nil
		}
		r.mu.Unlock()
		if lostEvents {
			r.historyLost(err)
		}
		return errorf(CodeServiceUnavailable, "could not record the task result: %v", err)
	}
	r.resolved.set(tok, &res)
	deliver, _ := r.hookRan.get(tok)
	r.mu.Unlock()
	if !deliver {
		return nil
	}
	if res.Failed {
		err = r.m.eng.SendTaskFailure(tok, res.Error, res.Cause)
	} else {
		err = r.m.eng.SendTaskSuccess(tok, res.Output)
	}
	var gone *asl.TaskTimedOut
	if errors.As(err, &gone) {
		return errorf(CodeTaskTimedOut, "Task Timed Out: 'Provided task does not exist anymore'")
	}
	return err
}

// close forgets the execution's open tokens once the engine no longer
// runs it (it ended, or stalled).
func (r *recorder) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.open {
		r.m.dropToken(e.v)
	}
	r.open = nil
	r.rp = nil
	r.resolved, r.hookRan, r.resource = nil, nil, nil
}

func (m *Manager) addToken(tok string, r *recorder) {
	m.mu.Lock()
	m.tokens[tok] = r
	m.mu.Unlock()
}

func (m *Manager) dropToken(tok string) {
	m.mu.Lock()
	delete(m.tokens, tok)
	m.mu.Unlock()
	m.acts.forget(tok) // an activity task no worker took
}
