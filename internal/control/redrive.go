package control

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/veredicto/veredicto/internal/asl"
)

// RedriveExecution, as Step Functions has it: a Standard execution that
// ended FAILED, TIMED_OUT or ABORTED within the last 14 days runs again
// from where it failed, with the same input, definition and ARN. The
// states that completed are not run again: their recorded results are
// replayed, as a restart replays a running execution (recorder.go); the
// states that did not complete run anew, their retries counted afresh —
// in a Map or Parallel state only the iterations and branches that failed
// or were aborted. The history goes on after an ExecutionRedriven event,
// and the machine's TimeoutSeconds counts again from the redrive.
//
// What "did not complete" means, read from the history: a state entered
// and never exited (its StateEntered stays: the state is resumed, as Step
// Functions reschedules it; what happened in it after is run again), a Map
// iteration that did not succeed, and the execution's end. A Task whose
// last attempt had succeeded when the execution stopped keeps its result.
//
// Durability: the redrive is recorded in meta.json (RUNNING, the redrive
// count) before the ExecutionRedriven event is appended; a restart between
// the two appends the event (see Manager.replay), so a redrive is never
// lost nor made twice.

// Redrive is what DescribeExecution reports of an execution's redrives.
type Redrive struct {
	Count int
	Date  time.Time // the last redrive's (zero: never redriven)
	// Status is REDRIVABLE or NOT_REDRIVABLE, Reason why not.
	Status, Reason string
}

// Redrive statuses and bounds.
const (
	Redrivable    = "REDRIVABLE"
	NotRedrivable = "NOT_REDRIVABLE"

	redrivePeriod   = 14 * 24 * time.Hour
	maxOpenTime     = 365 * 24 * time.Hour
	redriveMaxEvent = MaxHistoryEvents - 1 // room for ExecutionRedriven and one more event
	tokenLifetime   = 15 * time.Minute
	tokensKept      = 10
)

// redriveCall is a redrive a clientToken made, kept for idempotency.
type redriveCall struct {
	Token string    `json:"token"`
	At    time.Time `json:"at"`
}

// occurrences tracks, while a history is read, what had not completed:
// the state occurrences entered and not exited and the Map iterations
// started and not succeeded (each with what the replay indexes hold of
// it), and the execution's end. At an ExecutionRedriven event they are
// taken out of the replay (redriven), so the redriven run does them again.
type occurrences struct {
	open    map[string]*occurrence // scope|state → entered, not exited
	iters   map[string]*occurrence // scope|state|index → started, not succeeded
	closing []string               // the end's event keys
	count   int                    // ExecutionRedriven events read
}

// occurrence is a state entered (or a Map iteration started) and not left.
type occurrence struct {
	keys                 []string // its events' keys but its StateEntered's
	tasks, waits, tokens int      // its records in the replay indexes
	succeeded            bool     // its last Task attempt succeeded
}

func (o *occurrences) init() {
	if o.open == nil {
		o.open, o.iters = map[string]*occurrence{}, map[string]*occurrence{}
	}
}

// track notes a recorded event; the replay indexes already hold it.
func (r *recorder) track(ev *asl.Event) {
	o := &r.rp.occ
	o.init()
	k, key := stateKey(ev.Scope, ev.State), eventKey(ev)
	switch t := ev.Type; {
	case t == "ExecutionRedriven":
		r.redriven()
	case t == "ExecutionStarted":
	case strings.HasPrefix(t, "Execution"):
		o.closing = append(o.closing, key)
	case strings.HasPrefix(t, "MapIteration") && ev.Index != nil:
		switch ik := k + "|" + strconv.Itoa(*ev.Index); t {
		case "MapIterationStarted":
			o.iters[ik] = &occurrence{keys: []string{key}}
		case "MapIterationSucceeded":
			delete(o.iters, ik)
		default:
			if it := o.iters[ik]; it != nil {
				it.keys = append(it.keys, key)
			}
		}
	case strings.HasSuffix(t, "StateEntered"):
		occ := &occurrence{}
		if t == "WaitStateEntered" {
			occ.waits = 1
		}
		o.open[k] = occ
	case strings.HasSuffix(t, "StateExited"):
		delete(o.open, k)
	default:
		if occ := o.open[k]; occ != nil {
			occ.keys = append(occ.keys, key)
			switch t {
			case "TaskScheduled":
				occ.tasks++
				occ.succeeded = false
			case "TaskSucceeded":
				occ.succeeded = true
			}
		}
	}
}

// trackToken notes a recorded task token of the state at k.
func (r *recorder) trackToken(k string) {
	r.rp.occ.init()
	if occ := r.rp.occ.open[k]; occ != nil {
		occ.tokens++
	}
}

// redriven takes what had not completed out of the replay: the redriven
// run does it again, and persists its events anew.
func (r *recorder) redriven() {
	rp, o := r.rp, &r.rp.occ
	uncount := func(keys []string) {
		for _, key := range keys {
			rp.recorded[key]--
		}
	}
	for k, occ := range o.open {
		if occ.succeeded && occ.waits == 0 {
			continue // its Task's result stands: the state exits with it
		}
		uncount(occ.keys)
		rp.tasks[k] = rp.tasks[k][:len(rp.tasks[k])-occ.tasks]
		rp.waits[k] = rp.waits[k][:len(rp.waits[k])-occ.waits]
		rp.tokensRec[k] = rp.tokensRec[k][:len(rp.tokensRec[k])-occ.tokens]
		rp.waiting.del(k)
	}
	for _, it := range o.iters {
		uncount(it.keys)
	}
	uncount(o.closing)
	*o = occurrences{count: o.count + 1}
	r.end = nil
}

// persistRedriven appends the ExecutionRedriven event of redrive number
// count and takes what had not completed out of the replay.
func (r *recorder) persistRedriven(at time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.persist(asl.Event{Type: "ExecutionRedriven", Timestamp: at}); err != nil {
		return err
	}
	r.redriven()
	return nil
}

// hasMachine reports whether e's state machine still exists (a map run
// child's: its parent's). The caller holds m.mu.
func (m *Manager) hasMachine(e *execution) bool {
	arn := e.smARN
	if e.run != nil {
		arn = e.run.meta.ParentMachineARN
	}
	_, ok := m.machines[arn]
	return ok
}

// redrives is how many ExecutionRedriven events the loaded history holds.
func (r *recorder) redrives() int { return r.rp.occ.count }

// redriveOf is what DescribeExecution reports of e's redrives. The caller
// holds no lock; status and stop are e's.
func (m *Manager) redriveOf(e *execution, status string, stop time.Time) Redrive {
	m.mu.Lock()
	rd := Redrive{Count: e.redriveCount, Date: e.redriveDate}
	machine := m.hasMachine(e)
	m.mu.Unlock()
	rd.Reason = m.notRedrivable(e, status, stop, machine)
	rd.Status = Redrivable
	switch {
	case rd.Reason != "":
		rd.Status = NotRedrivable
	case e.run != nil:
		rd.Status = RedrivableByMapRun // with its parent, never on its own
	}
	return rd
}

// notRedrivable is why e cannot be redriven ("" when it can): Step
// Functions' redriveStatusReason where a recording shows it (RUNNING and
// SUCCEEDED, recorded on AWS: LocalStack snapshot base/test_base.snapshot.json),
// otherwise our wording of AWS's documented reasons. RedriveExecution's
// ExecutionNotRedrivable reuses it as its message, which no recording
// verifies.
func (m *Manager) notRedrivable(e *execution, status string, stop time.Time, machine bool) string {
	now := m.now()
	switch {
	case status == asl.StatusRunning || status == asl.StatusSucceeded:
		return "Execution is " + status + " and cannot be redriven"
	case status == StatusDamaged:
		return "Execution is " + status + " and cannot be redriven"
	case !machine:
		return "State machine is in DELETING status"
	case now.Sub(e.start) > maxOpenTime:
		return "Execution has exceeded the max execution time"
	case now.Sub(stop) > redrivePeriod:
		return "Execution redrivable period exceeded"
	}
	events := 0
	if err := readLines(filepath.Join(e.dir, "history.jsonl"), nil, func(l line) error {
		if l.Event != nil {
			events++
		}
		return nil
	}); err != nil || events >= redriveMaxEvent {
		return "Execution history event limit exceeded"
	}
	return ""
}

// RedriveExecution runs a FAILED, TIMED_OUT or ABORTED execution again
// from where it failed (see the top of this file) and returns the
// redrive's date. A clientToken used for one of the execution's last ten
// redrives within fifteen minutes answers with that redrive again.
func (m *Manager) RedriveExecution(ctx context.Context, arn, clientToken string) (time.Time, error) {
	if len(clientToken) > 64 || strings.IndexFunc(clientToken, func(r rune) bool { return r < '!' || r > '~' }) >= 0 {
		return time.Time{}, errorf(CodeValidation, "1 validation error detected: Value '%s' at 'clientToken' failed to satisfy constraint: Member must satisfy regular expression pattern: [!-~]+", clientToken)
	}
	e, err := m.lookup(arn)
	if err != nil {
		return time.Time{}, err
	}
	if e.run != nil {
		return time.Time{}, errorf(CodeExecutionNotRedrivable, "Execution is a child of the Map Run '%s' and is redriven with it: redrive its parent execution", e.run.meta.ARN)
	}
	return m.redrive(ctx, e, clientToken)
}

// redrive is RedriveExecution of e (a map run's child too: its run
// redrives it).
func (m *Manager) redrive(ctx context.Context, e *execution, clientToken string) (time.Time, error) {
	arn := e.arn
	m.redriving.Lock() // one redrive at a time: the check and the claim are one step
	defer m.redriving.Unlock()
	m.mu.Lock()
	status, stop, dmg := e.status, e.stop, e.damage
	m.mu.Unlock()
	if dmg != nil {
		return time.Time{}, damagedError(arn, dmg)
	}
	path := filepath.Join(e.dir, "meta.json")
	var meta execMeta
	if err := m.journal.read(path, &meta); err != nil {
		var de *decodeError
		if errors.As(err, &de) {
			return time.Time{}, damagedError(arn, m.markDamaged(e, "its metadata (meta.json) "+de.reason))
		}
		return time.Time{}, fmt.Errorf("redrive %s: %w", arn, err)
	}
	now := m.now().UTC()
	for _, c := range meta.Redrives {
		if clientToken != "" && c.Token == clientToken && now.Sub(c.At) < tokenLifetime {
			return c.At, nil
		}
	}
	m.mu.Lock()
	machine := m.hasMachine(e)
	m.mu.Unlock()
	if why := m.notRedrivable(e, status, stop, machine); why != "" {
		return time.Time{}, errorf(CodeExecutionNotRedrivable, "%s", why)
	}

	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return time.Time{}, errorf(CodeServiceUnavailable, "the server is shutting down")
	}
	if m.running >= m.cfg.MaxRunning {
		m.mu.Unlock()
		return time.Time{}, errorf(CodeExecutionLimitExceeded, "Execution Limit Exceeded: at most %d executions running", m.cfg.MaxRunning)
	}
	e.status, e.stop, e.stopErr, e.stopWhy = asl.StatusRunning, time.Time{}, "", ""
	e.redriveCount, e.redriveDate = meta.RedriveCount+1, now
	m.running++
	m.mu.Unlock()

	meta.Status, meta.Output, meta.Error, meta.Cause, meta.Stop = asl.StatusRunning, nil, "", "", time.Time{}
	meta.RedriveCount, meta.RedriveDate = e.redriveCount, now
	if clientToken != "" {
		meta.Redrives = append(meta.Redrives, redriveCall{Token: clientToken, At: now})
		meta.Redrives = meta.Redrives[max(0, len(meta.Redrives)-tokensKept):]
	}
	if err := m.put(path, meta); err != nil {
		m.mu.Lock()
		e.status, e.stop, e.redriveCount, e.redriveDate = status, stop, meta.RedriveCount-1, time.Time{}
		m.running--
		m.mu.Unlock()
		return time.Time{}, fmt.Errorf("redrive %s: %w", arn, err)
	}
	m.log.InfoContext(ctx, "redriving execution", "execution", arn, "redrive_count", e.redriveCount)
	if err := m.replay(ctx, e, meta, false); err != nil {
		return time.Time{}, err
	}
	return now, nil
}
