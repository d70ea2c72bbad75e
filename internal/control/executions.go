package control

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/veredicto/veredicto/internal/asl"
)

// Execution describes an execution (DescribeExecution).
type Execution struct {
	ARN, StateMachineARN, Name, Tenant, Status string
	Input, Output                              json.RawMessage
	Error, Cause                               string
	Start, Stop                                time.Time
	// VersionARN and AliasARN are the version the execution ran and the
	// alias that chose it, when it was started through one.
	VersionARN, AliasARN string
	// Redrive is how often it was redriven and whether it may be again.
	Redrive Redrive
	// MapRunARN is the map run of a child execution.
	MapRunARN string
}

// ExecutionSummary is one item of ListExecutions.
type ExecutionSummary struct {
	ARN, StateMachineARN, Name, Tenant, Status string
	Start, Stop                                time.Time
	VersionARN, AliasARN                       string
	RedriveCount                               int
	RedriveDate                                time.Time
	MapRunARN                                  string // a map run's child's (ListExecutions with mapRunArn)
}

// TenantOf is the tenant an execution input belongs to: its "tenant"
// string field, else "default".
func TenantOf(input []byte) string {
	var in struct {
		Tenant any `json:"tenant"`
	}
	if json.Unmarshal(input, &in) == nil {
		if s, ok := in.Tenant.(string); ok && s != "" {
			return s
		}
	}
	return "default"
}

// StartExecution starts an execution of the state machine. A name already
// used by a RUNNING execution with the same input returns that execution
// (Step Functions' idempotency for Standard workflows); with another input,
// or once that execution has closed, ExecutionAlreadyExists.
//
// smARN may name a version, or an alias that picks one: the execution runs
// that version's definition. An Express machine's execution runs apart
// (see express.go).
func (m *Manager) StartExecution(ctx context.Context, smARN, name, input string) (Execution, error) {
	startARN := smARN
	smARN, testCase := splitTestCase(smARN)
	x, err := m.checkStart(smARN, name, input)
	if err != nil {
		return Execution{}, err
	}
	name, input = x.Name, string(x.Input)
	sum := sha256.Sum256([]byte(input))

	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return Execution{}, errorf(CodeServiceUnavailable, "the server is shutting down")
	}
	t, err := m.target(smARN)
	if err == nil {
		err = m.checkTestCase(startARN, t.mc.meta.Name, testCase)
	}
	if err != nil {
		m.mu.Unlock()
		return Execution{}, err
	}
	t.testCase = testCase
	if t.typ == typeExpress {
		m.mu.Unlock()
		return m.startExpress(ctx, t, name, input)
	}
	mc, smARN := t.mc, t.mc.meta.ARN
	arn := ExecutionARN(mc.meta.Name, name)
	if e, ok := m.execs[arn]; ok {
		same := e.inputSum == sum && e.status == asl.StatusRunning
		view := Execution{ARN: e.arn, StateMachineARN: e.smARN, Name: e.name, Tenant: e.tenant, Status: e.status, Start: e.start}
		starting := e.starting
		m.mu.Unlock()
		if !same {
			return Execution{}, errorf(CodeExecutionAlreadyExists, "Execution Already Exists: '%s'", arn)
		}
		if starting != nil { // the same start, sent again before the first was durable
			<-starting
			m.mu.Lock()
			err := e.startErr
			m.mu.Unlock()
			if err != nil {
				return Execution{}, fmt.Errorf("start execution %s: %w", arn, err)
			}
		}
		return view, nil
	}
	if len(m.execs) >= m.cfg.MaxExecutions || m.running >= m.cfg.MaxRunning {
		m.mu.Unlock()
		return Execution{}, errorf(CodeExecutionLimitExceeded, "Execution Limit Exceeded: at most %d executions kept and %d running", m.cfg.MaxExecutions, m.cfg.MaxRunning)
	}
	e := &execution{arn: arn, smARN: smARN, name: name, tenant: TenantOf([]byte(input)), inputSum: sum,
		start: m.now().UTC(), dir: filepath.Join(m.executionsDir(), mc.meta.Name, name), status: asl.StatusRunning,
		versionARN: t.versionARN, aliasARN: t.aliasARN, testCase: testCase}
	starting := make(chan struct{})
	e.starting = starting
	m.execs[arn] = e
	m.byMachine[smARN] = append(m.byMachine[smARN], e)
	m.running++
	m.mu.Unlock()

	// The start is acknowledged once its metadata is durable in the
	// journal, with the other writes of its batch (journal.go).
	meta := execMeta{ARN: arn, StateMachineARN: smARN, Name: name, Tenant: e.tenant, Status: asl.StatusRunning,
		Definition: t.definition, Input: json.RawMessage(input), Start: e.start, VersionARN: t.versionARN, AliasARN: t.aliasARN, TestCase: testCase}
	err = m.put(filepath.Join(e.dir, "meta.json"), meta)
	m.mu.Lock()
	e.starting, e.startErr = nil, err
	if err != nil {
		delete(m.execs, arn)
		m.byMachine[smARN] = slicesWithout(m.byMachine[smARN], e)
		m.running--
	}
	m.mu.Unlock()
	close(starting)
	if err != nil {
		return Execution{}, fmt.Errorf("start execution %s: %w", arn, err)
	}
	rec := newRecorder(m, e)
	m.launch(ctx, e, t.sm, json.RawMessage(input), rec, false)
	return Execution{ARN: arn, StateMachineARN: smARN, Name: name, Tenant: e.tenant, Status: asl.StatusRunning, Input: json.RawMessage(input), Start: e.start,
		VersionARN: t.versionARN, AliasARN: t.aliasARN}, nil
}

// checkStart validates a start's ARN, name and input as Step Functions
// does; the Execution it returns holds the name (a new one when none was
// given) and the input ("{}" when none was).
func (m *Manager) checkStart(smARN, name, input string) (Execution, error) {
	if _, _, ok := qualified(smARN); !ok {
		if err := checkMachineARN(smARN); err != nil {
			return Execution{}, err
		}
	}
	if name == "" {
		name = newID()
	}
	if !ValidName(name) {
		return Execution{}, errorf(CodeInvalidName, "Invalid Name: '%s'", name)
	}
	if input == "" {
		input = "{}"
	}
	if len(input) > asl.MaxPayloadBytes {
		return Execution{}, errorf(CodeValidation, "1 validation error detected: Value at 'input' failed to satisfy constraint: Member must have length less than or equal to %d", asl.MaxPayloadBytes)
	}
	if err := asl.CheckJSON([]byte(input)); err != nil {
		return Execution{}, errorf(CodeInvalidExecutionInput, "Invalid State Machine Execution Input: 'the input is not valid JSON: %v'", err)
	}
	return Execution{Name: name, Input: json.RawMessage(input)}, nil
}

func slicesWithout(list []*execution, e *execution) []*execution {
	out := make([]*execution, 0, len(list))
	for _, x := range list {
		if x != e {
			out = append(out, x)
		}
	}
	return out
}

// launch runs e on the engine with rec persisting its history.
func (m *Manager) launch(ctx context.Context, e *execution, sm *asl.StateMachine, input json.RawMessage, rec *recorder, resumed bool) {
	machineName := strings.TrimPrefix(e.smARN, arnPrefix+"stateMachine:")
	mock, lost := m.mockOf(machineName, e.testCase)
	if lost != nil {
		m.log.ErrorContext(ctx, "execution could not start", "execution", e.arn, "error", lost)
		m.finish(e, rec, &asl.Result{Status: asl.StatusFailed, Error: lost.Name, Cause: lost.Cause})
		return
	}
	// The execution is attached (e.x) before its first event can need it,
	// and OnDone may run before Start returns: both go through started.
	started := make(chan struct{})
	over := false // the run parked before it was attached (under m.mu)
	// Counted before Close can wait (an answer or a start that passed its
	// checks just before Close began): once Close has begun, the execution
	// is left RUNNING on disk, as Close leaves the others, and the next
	// start resumes it.
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.wg.Add(1)
	m.mu.Unlock()
	var x *asl.Execution
	var err error
	x, err = m.eng.Start(m.root, sm, input, asl.StartOptions{
		Name: e.name, StateMachineName: machineName, ExecutionARN: e.arn, StateMachineARN: e.smARN,
		StartTime: e.start, TimeoutFrom: e.redriveDate, OnEvent: rec.onEvent, Durable: rec.durable(), DiscardHistory: true, Mock: mock,
		Buckets: m.bucketsFor(e.tenant), MapRuns: mapRunner{m: m, parent: e},
		OnDone: func(res *asl.Result) {
			defer m.wg.Done()
			if res.Parked != nil { // its record took over (recorder.park)
				m.mu.Lock()
				over = true
				m.mu.Unlock()
				<-started
				m.mu.Lock()
				if e.x == x {
					e.x = nil
				}
				m.mu.Unlock()
				return
			}
			<-started
			if m.isClosed() {
				rec.flushPending() // what it journaled reaches OnHistory before Close returns
				return             // stopped by Close: it stays RUNNING on disk and resumes
			}
			m.finish(e, rec, res)
		},
	})
	if err != nil {
		m.wg.Done()
		m.log.ErrorContext(ctx, "execution could not start", "execution", e.arn, "error", err)
		m.finish(e, rec, &asl.Result{Status: asl.StatusFailed, Error: asl.ErrRuntime, Cause: err.Error()})
		return
	}
	if m.afterStart != nil {
		m.afterStart(e.arn)
	}
	m.mu.Lock()
	// A run that parked before it was attached is over: an answer may have
	// resumed the execution and attached the new run already, whose handle
	// (StopExecution's) the parked one must not replace.
	if !over {
		e.x = x
	}
	m.mu.Unlock()
	if rec.lost.Load() != nil {
		x.Stop() // its history failed before it was attached (historyLost)
	}
	if rec.from == nil {
		m.notify(Status{Tenant: e.tenant, ExecutionARN: e.arn, StateMachineARN: e.smARN, Name: e.name, Status: asl.StatusRunning, Resumed: resumed})
	}
	close(started)
}

func (m *Manager) notify(s Status) {
	if m.cfg.OnStatus != nil {
		m.cfg.OnStatus(s)
	}
}

// finish records an execution's end: its closing event in the history,
// then meta.json, each durable before the status changes in memory and
// OnStatus hears of it. If either cannot be persisted (a full disk) the
// execution stalls instead: still RUNNING, the failure named.
func (m *Manager) finish(e *execution, rec *recorder, res *asl.Result) {
	m.mu.Lock()
	if res.Status == asl.StatusAborted && e.stopErr+e.stopWhy != "" {
		res.Error, res.Cause = e.stopErr, e.stopWhy
	} else if res.Status == asl.StatusAborted {
		res.Error, res.Cause = "", ""
	}
	m.mu.Unlock()
	stop := m.now().UTC()
	rec.close()
	if err := m.persistEnd(e, rec, res, stop); err != nil {
		m.stallOn(e, rec, res, err)
		return
	}
	m.settle(e, res, stop)
}

// persistEnd writes an execution's end to its history and its meta.json.
// A meta.json that no longer decodes is quarantined and the execution
// marked damaged; its end stays in the history.
func (m *Manager) persistEnd(e *execution, rec *recorder, res *asl.Result, stop time.Time) error {
	if err := rec.persistEnd(res, stop); err != nil {
		return fmt.Errorf("record the end of %s in its history: %w", e.arn, err)
	}
	var meta execMeta
	path := filepath.Join(e.dir, "meta.json")
	if err := m.journal.read(path, &meta); err != nil {
		var de *decodeError
		if errors.As(err, &de) {
			m.markDamaged(e, "its metadata (meta.json) "+de.reason)
			return nil
		}
		return fmt.Errorf("read the metadata of %s: %w", e.arn, err)
	}
	meta.Status, meta.Output, meta.Error, meta.Cause, meta.Stop = res.Status, res.Output, res.Error, res.Cause, stop
	if err := m.put(path, meta); err != nil {
		return fmt.Errorf("record the end of %s in its metadata: %w", e.arn, err)
	}
	return nil
}

// settle sets a persisted end in memory and tells OnStatus. An execution
// whose metadata was found damaged on the way keeps its damaged status;
// OnStatus still hears of the end its history records.
func (m *Manager) settle(e *execution, res *asl.Result, stop time.Time) {
	m.mu.Lock()
	if e.status == asl.StatusRunning {
		e.status, e.stop = res.Status, stop
		m.running--
	}
	m.unwake(e)
	e.x, e.stalled, e.park = nil, nil, nil
	e.releaseWaiters()
	m.mu.Unlock()
	m.notify(Status{Tenant: e.tenant, ExecutionARN: e.arn, StateMachineARN: e.smARN, Name: e.name, Status: res.Status,
		Output: res.Output, Error: res.Error, Cause: res.Cause})
}

// stallOn leaves an execution whose end could not be persisted RUNNING,
// the failure named in DescribeExecution's cause and in the log: the
// engine no longer runs it, its tokens are refused as unavailable, and
// the next start resumes it from its history. StopExecution closes it
// once the disk takes writes again.
func (m *Manager) stallOn(e *execution, rec *recorder, res *asl.Result, err error) {
	if p := rec.lost.Load(); p != nil {
		err = *p
	}
	rec.lost.CompareAndSwap(nil, &err)
	end := res
	if rec.ended() == nil {
		end = nil // the engine's end never reached the history
	}
	m.log.Error("the end of an execution could not be persisted: it stays RUNNING and resumes from its history at the next start",
		"execution", e.arn, "status", res.Status, "error", err)
	m.mu.Lock()
	m.unwake(e)
	e.x, e.park = nil, nil
	e.stalled = &stall{err: err.Error(), res: end, rec: rec}
	m.mu.Unlock()
}

// closeStalled closes a stalled execution for StopExecution: the end it
// reached if that is in its history, else aborted with errName and cause.
func (m *Manager) closeStalled(e *execution, errName, cause string) (time.Time, error) {
	m.mu.Lock()
	st := e.stalled
	if st != nil && st.rec == nil {
		m.mu.Unlock()
		return time.Time{}, errorf(CodeServiceUnavailable, "execution '%s' cannot be stopped: %s", e.arn, st.err)
	}
	if st == nil || st.closing {
		stop := e.stop
		m.mu.Unlock()
		if st != nil {
			return time.Time{}, errorf(CodeServiceUnavailable, "execution '%s' is being closed; retry shortly", e.arn)
		}
		return stop, nil
	}
	st.closing = true
	m.mu.Unlock()
	res := st.res
	if res == nil {
		res = &asl.Result{Status: asl.StatusAborted, Error: errName, Cause: cause}
	}
	stop := m.now().UTC()
	if err := st.rec.retry(); err != nil { // the history is a whole prefix: try again
		m.mu.Lock()
		st.closing = false
		m.mu.Unlock()
		return time.Time{}, errorf(CodeServiceUnavailable, "execution '%s' cannot be stopped until the server restarts: %v", e.arn, err)
	}
	if err := m.persistEnd(e, st.rec, res, stop); err != nil {
		st.rec.lost.CompareAndSwap(nil, &err)
		m.log.Error("a stalled execution could not be closed", "execution", e.arn, "error", err)
		m.mu.Lock()
		st.closing, st.err = false, err.Error()
		m.mu.Unlock()
		return time.Time{}, errorf(CodeServiceUnavailable, "execution '%s' could not record its end: %v", e.arn, err)
	}
	m.settle(e, res, stop)
	return stop, nil
}

// ExecutionTenant is the tenant of the execution arn, from memory alone:
// a caller's right to an execution is decided before anything of it is
// read from the disk (no slower answer for another tenant's execution
// than for a missing one).
func (m *Manager) ExecutionTenant(_ context.Context, arn string) (string, error) {
	e, err := m.lookup(arn)
	if err != nil {
		return "", err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return e.tenant, nil
}

func (m *Manager) lookup(arn string) (*execution, error) {
	if err := checkExecutionARN(arn); err != nil {
		return nil, err
	}
	m.mu.Lock()
	e, ok := m.execs[arn]
	var starting chan struct{}
	if ok {
		starting = e.starting
	}
	m.mu.Unlock()
	if starting != nil { // its metadata on its way to the disk: not there until it is
		<-starting
		m.mu.Lock()
		ok = e.startErr == nil
		m.mu.Unlock()
	}
	if !ok {
		return nil, errorf(CodeExecutionDoesNotExist, "Execution Does Not Exist: '%s'", arn)
	}
	return e, nil
}

// DescribeExecution returns an execution with its input and, once closed,
// its output or error. A stalled execution (its end could not be
// persisted) is RUNNING with the failure in Cause. A damaged one (its
// metadata could not be read) is a ValidationException naming the damage
// (see damagedError), with what is known of it beside the error.
func (m *Manager) DescribeExecution(_ context.Context, arn string) (Execution, error) {
	e, err := m.lookup(arn)
	if err != nil {
		return Execution{}, err
	}
	// Status first, then meta.json: finish writes meta.json before it sets
	// the status, so a closed status read here always finds its output.
	m.mu.Lock()
	status, stop, stalled, dmg := e.status, e.stop, e.stalled, e.damage
	m.mu.Unlock()
	known := Execution{ARN: e.arn, StateMachineARN: e.smARN, Name: e.name, Tenant: e.tenant, Status: status, Start: e.start, Stop: stop,
		VersionARN: e.versionARN, AliasARN: e.aliasARN}
	if dmg != nil {
		return known, damagedError(e.arn, dmg)
	}
	var meta execMeta
	if err := m.journal.read(filepath.Join(e.dir, "meta.json"), &meta); err != nil {
		var de *decodeError
		if errors.As(err, &de) {
			dmg := &damage{Reason: "its metadata (meta.json) " + de.reason}
			if status != asl.StatusRunning { // a running one is marked when it ends
				dmg = m.markDamaged(e, dmg.Reason)
			}
			return known, damagedError(e.arn, dmg)
		}
		return Execution{}, fmt.Errorf("describe execution %s: %w", arn, err)
	}
	out := known
	out.Input = meta.Input
	if status != asl.StatusRunning && meta.Status == status {
		out.Output, out.Error, out.Cause = meta.Output, meta.Error, meta.Cause
	}
	if status == asl.StatusRunning && stalled != nil {
		out.Cause = "the execution's history could not be persisted (" + stalled.err + "): it stays RUNNING until the server restarts with room on disk, then resumes from its last persisted event"
	}
	out.Redrive = m.redriveOf(e, status, stop)
	if e.run != nil {
		out.MapRunARN = e.run.meta.ARN
	}
	return out, nil
}

// ListExecutions lists a machine's executions, newest first, optionally
// only those with status, at most max per page. next is the token a
// previous page returned ("" for the first). smARN may name a version or
// an alias: then only the executions started through it are listed.
//
// visible (nil: every execution) chooses the executions the caller may
// see, before the paging: a page, its token and a deleted machine's
// answer are made of those only.
func (m *Manager) ListExecutions(_ context.Context, smARN, status, next string, max int, visible func(ExecutionSummary) bool) ([]ExecutionSummary, string, error) {
	through := ""
	if machineARN, _, ok := qualified(smARN); ok {
		smARN, through = machineARN, smARN
	}
	if err := checkMachineARN(smARN); err != nil {
		return nil, "", err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if mc, ok := m.machines[smARN]; ok && mc.meta.Type == typeExpress {
		return nil, "", errorf(CodeTypeNotSupported, "This operation is not supported by this type of state machine")
	}
	list, known := m.byMachine[smARN]
	summary := func(e *execution) ExecutionSummary {
		return ExecutionSummary{ARN: e.arn, StateMachineARN: e.smARN, Name: e.name, Tenant: e.tenant, Status: e.status, Start: e.start, Stop: e.stop,
			VersionARN: e.versionARN, AliasARN: e.aliasARN, RedriveCount: e.redriveCount, RedriveDate: e.redriveDate}
	}
	if _, ok := m.machines[smARN]; !ok {
		// A deleted machine is known by its executions: those the caller
		// sees (looked for only here, not on every page of a live one).
		if visible != nil {
			known = slices.ContainsFunc(list, func(e *execution) bool { return visible(summary(e)) })
		}
		if !known {
			return nil, "", errorf(CodeStateMachineDoesNotExist, "State Machine Does Not Exist: '%s'", smARN)
		}
	}
	i := len(list) - 1
	if next != "" {
		n, err := strconv.Atoi(next)
		if err != nil || n < 0 || n >= len(list) || visible != nil && !visible(summary(list[n])) {
			return nil, "", errorf("InvalidToken", "Invalid Token: '%s'", next)
		}
		i = n
	}
	var out []ExecutionSummary
	for ; i >= 0; i-- {
		e := list[i]
		if status != "" && e.status != status || through != "" && e.versionARN != through && e.aliasARN != through {
			continue
		}
		x := summary(e)
		if visible != nil && !visible(x) {
			continue
		}
		if len(out) == max {
			return out, strconv.Itoa(i), nil
		}
		out = append(out, x)
	}
	return out, "", nil
}

// stopWait bounds how long StopExecution waits for the end to be recorded.
const stopWait = 10 * time.Second

// StopExecution aborts a running execution with an optional error and
// cause and waits (within ctx) until its end is recorded.
func (m *Manager) StopExecution(ctx context.Context, arn, errName, cause string) (time.Time, error) {
	if err := checkErrorCause(errName, cause); err != nil {
		return time.Time{}, err
	}
	e, err := m.lookup(arn)
	if err != nil {
		return time.Time{}, err
	}
	// A handler that ignores its context can hold the end back: answer
	// within a bound either way (the end is recorded when it comes).
	ctx, cancel := context.WithTimeout(ctx, stopWait)
	defer cancel()
	var x *asl.Execution
	for x == nil {
		m.mu.Lock()
		var parked bool
		x, parked = e.x, e.park != nil
		if parked { // its record, even while its run's goroutine returns
			m.mu.Unlock()
			if stop, err := m.stopParked(e, errName, cause); !errors.Is(err, errMoved) {
				return stop, err
			}
			continue // resumed meanwhile
		}
		if x != nil {
			e.stopErr, e.stopWhy = errName, cause
			m.mu.Unlock()
			break
		}
		stop, stalled, dmg, running := e.stop, e.stalled != nil, e.damage, e.status == asl.StatusRunning
		m.mu.Unlock()
		switch {
		case dmg != nil:
			return time.Time{}, damagedError(e.arn, dmg)
		case stalled:
			return m.closeStalled(e, errName, cause)
		case !running:
			return stop, nil
		}
		select { // being started or resumed: its run is attached in a moment
		case <-ctx.Done():
			return m.now().UTC(), nil
		case <-time.After(time.Millisecond):
		}
	}
	x.Stop()
	for {
		m.mu.Lock()
		st, stop, parked := e.status, e.stop, e.park != nil
		m.mu.Unlock()
		if st != asl.StatusRunning {
			return stop, nil
		}
		if parked { // it parked as it was stopped
			stop, err := m.stopParked(e, errName, cause)
			if errors.Is(err, errMoved) { // and resumed since: stop that run
				return m.StopExecution(ctx, arn, errName, cause)
			}
			return stop, err
		}
		select {
		case <-ctx.Done():
			return m.now().UTC(), nil
		case <-time.After(5 * time.Millisecond):
		}
	}
}
