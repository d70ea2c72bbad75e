package control

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/veredicto/veredicto/internal/asl"
)

// Express workflows, with Step Functions' semantics: an execution runs at
// once, in memory only, for at most five minutes; it is never listed nor
// described, and has no history in the API (ListExecutions answers
// StateMachineTypeNotSupported; DescribeExecution, GetExecutionHistory and
// StopExecution refuse its ARN as InvalidArn). Its ARN is
// arn:aws:states:…:express:<machine>:<name>:<id>: the same name may run
// twice at once. What it did is in its state machine's log, as on AWS in
// CloudWatch Logs (Config.ExecutionLog, by its loggingConfiguration).
// StartSyncExecution runs one and answers with its outcome; StartExecution
// starts one and answers at once. An execution still running when the
// server stops is lost, as an asynchronous Express execution may be on AWS
// (at-least-once: the caller starts it again).

const typeExpress = "EXPRESS"

// MaxExpressDuration is how long an Express execution may run: past it,
// it is TIMED_OUT.
const MaxExpressDuration = 5 * time.Minute

// Log levels of a loggingConfiguration.
const (
	LogAll   = "ALL"
	LogError = "ERROR"
	LogFatal = "FATAL"
	LogOff   = "OFF"
)

// LoggingConfiguration is where and what a state machine logs.
type LoggingConfiguration struct {
	Level                string            `json:"level,omitempty"`
	IncludeExecutionData bool              `json:"includeExecutionData"`
	Destinations         []json.RawMessage `json:"destinations,omitempty"`
}

// LogEvent is one history event of an execution whose state machine
// logs (a loggingConfiguration level other than OFF), for
// Config.ExecutionLog, which writes those its level keeps.
type LogEvent struct {
	Tenant, StateMachineName, ExecutionARN, RoleARN string
	Logging                                         LoggingConfiguration
	RedriveCount                                    int
	Event                                           HistoryEvent
}

// ExpressExecutionARN is the ARN of an Express execution: its name and a
// unique id, since the same name may run more than once.
func ExpressExecutionARN(machine, name, id string) string {
	return arnPrefix + "express:" + machine + ":" + name + ":" + id
}

// checkExpress refuses what an Express state machine may not hold, as
// Step Functions does: a .waitForTaskToken or .sync integration, or an
// activity.
func checkExpress(definition string) error {
	var def map[string]any
	if err := json.Unmarshal([]byte(definition), &def); err != nil {
		return nil // parseDefinition has refused it already
	}
	if why := expressProblem(def, ""); why != "" {
		return errorf(CodeInvalidDefinition, "Invalid State Machine Definition: 'SCHEMA_VALIDATION_FAILED: %s'", why)
	}
	return nil
}

// expressProblem is the first state under def (a machine, a branch or a
// Map's processor, at path) an Express machine refuses, "" when none is.
func expressProblem(def map[string]any, path string) string {
	states, _ := def["States"].(map[string]any)
	names := make([]string, 0, len(states))
	for name := range states {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		st, _ := states[name].(map[string]any)
		at := path + "/States/" + name
		res, _ := st["Resource"].(string)
		switch {
		case strings.HasSuffix(res, ".waitForTaskToken"):
			return "Express state machine does not support '.waitForTaskToken' service integration  at " + at + "/Resource"
		case strings.Contains(res, ".sync"):
			return "Express state machine does not support '.sync' service integration at " + at + "/Resource"
		case strings.HasPrefix(res, "arn:") && strings.Contains(res, ":states:") && strings.Contains(res, ":activity:"):
			return "Express state machine does not support Activity ARN at " + at + "/Resource"
		}
		branches, _ := st["Branches"].([]any)
		for i, b := range branches {
			if bm, ok := b.(map[string]any); ok {
				if why := expressProblem(bm, fmt.Sprintf("%s/Branches/%d", at, i)); why != "" {
					return why
				}
			}
		}
		for _, field := range []string{"ItemProcessor", "Iterator"} {
			if proc, ok := st[field].(map[string]any); ok {
				if why := expressProblem(proc, at+"/"+field); why != "" {
					return why
				}
			}
		}
	}
	return ""
}

// expressRun is one Express execution under way.
type expressRun struct {
	m      *Manager
	arn    string
	tenant string
	t      target
	start  time.Time

	mu       sync.Mutex
	chain    eventChain
	resource pairs[string]
}

// log passes ev to Config.ExecutionLog when the machine logs: numbered
// and chained as a history would be.
func (r *expressRun) log(ev asl.Event) {
	if !logs(r.m.cfg, r.t.mc) {
		return
	}
	r.mu.Lock()
	nameResource(&r.resource, &ev)
	prev := r.chain.number(&ev)
	r.mu.Unlock()
	r.m.writeLog(r.t.mc, r.tenant, r.arn, 0, HistoryEvent{Event: ev, PreviousID: prev})
}

// logs reports whether mc's executions log.
func logs(cfg Config, mc *machine) bool {
	lc := mc.meta.Logging
	return cfg.ExecutionLog != nil && lc != nil && lc.Level != "" && lc.Level != LogOff
}

func (m *Manager) writeLog(mc *machine, tenant, arn string, redrives int, ev HistoryEvent) {
	m.cfg.ExecutionLog(LogEvent{Tenant: tenant, StateMachineName: mc.meta.Name, ExecutionARN: arn, RoleARN: mc.meta.RoleARN,
		Logging: *mc.meta.Logging, RedriveCount: redrives, Event: ev})
}

// logPersisted passes a Standard execution's event, once persisted, to
// Config.ExecutionLog when its machine logs, as Step Functions logs a
// Standard workflow's history too. Events a restart replays are not
// persisted again, so not logged twice.
func (m *Manager) logPersisted(e *execution, ev HistoryEvent) {
	if m.cfg.ExecutionLog == nil {
		return
	}
	m.mu.Lock()
	mc, redrives := m.machines[e.smARN], e.redriveCount
	m.mu.Unlock()
	if mc != nil && logs(m.cfg, mc) {
		m.writeLog(mc, e.tenant, e.arn, redrives, ev)
	}
}

// runExpress starts an Express execution of t; done is called with its
// result once it ends (or is stopped by Close).
func (m *Manager) runExpress(t target, name, input string, done func(*asl.Result, time.Time)) (Execution, error) {
	if name == "" {
		name = newID()
	}
	tenant := TenantOf([]byte(input))
	arn := ExpressExecutionARN(t.mc.meta.Name, name, newRevision())
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return Execution{}, errorf(CodeServiceUnavailable, "the server is shutting down")
	}
	if m.running >= m.cfg.MaxRunning {
		m.mu.Unlock()
		return Execution{}, errorf(CodeExecutionLimitExceeded, "Execution Limit Exceeded: at most %d executions running", m.cfg.MaxRunning)
	}
	m.running++
	m.wg.Add(1)
	m.mu.Unlock()
	run := &expressRun{m: m, arn: arn, tenant: tenant, t: t, start: m.now().UTC()}
	mock, _ := m.mockOf(t.mc.meta.Name, t.testCase) // the start checked it: the configuration does not change
	_, err := m.eng.Start(m.root, t.sm, json.RawMessage(input), asl.StartOptions{
		Name: name, StateMachineName: t.mc.meta.Name, ExecutionARN: arn, StateMachineARN: t.mc.meta.ARN,
		StartTime: run.start, OnEvent: run.log, DiscardHistory: true, MaxDuration: MaxExpressDuration, Mock: mock,
		OnDone: func(res *asl.Result) {
			defer m.wg.Done()
			m.mu.Lock()
			m.running--
			m.mu.Unlock()
			done(res, m.now().UTC())
		},
	})
	if err != nil {
		m.mu.Lock()
		m.running--
		m.mu.Unlock()
		m.wg.Done()
		return Execution{}, errorf(CodeInvalidExecutionInput, "Invalid State Machine Execution Input: '%v'", err)
	}
	return Execution{ARN: arn, StateMachineARN: t.mc.meta.ARN, Name: name, Tenant: tenant, Status: asl.StatusRunning,
		Input: json.RawMessage(input), Start: run.start, VersionARN: t.versionARN, AliasARN: t.aliasARN}, nil
}

// startExpress is StartExecution of an Express machine: it answers once
// the execution runs.
func (m *Manager) startExpress(ctx context.Context, t target, name, input string) (Execution, error) {
	return m.runExpress(t, name, input, func(res *asl.Result, _ time.Time) {
		if res.Status != asl.StatusSucceeded {
			m.log.DebugContext(ctx, "express execution ended", "state_machine", t.mc.meta.Name, "status", res.Status, "error", res.Error)
		}
	})
}

// StartSyncExecution runs an Express execution and returns its outcome:
// SUCCEEDED with its output, FAILED or TIMED_OUT with its error and cause.
// A Standard machine is refused, as Step Functions refuses it. When ctx
// ends first the execution goes on and ctx's error is returned.
func (m *Manager) StartSyncExecution(ctx context.Context, smARN, name, input string) (Execution, error) {
	startARN := smARN
	smARN, testCase := splitTestCase(smARN)
	x, err := m.checkStart(smARN, name, input)
	if err != nil {
		return Execution{}, err
	}
	m.mu.Lock()
	t, err := m.target(smARN)
	if err == nil {
		err = m.checkTestCase(startARN, t.mc.meta.Name, testCase)
	}
	m.mu.Unlock()
	if err != nil {
		return Execution{}, err
	}
	t.testCase = testCase
	if t.typ != typeExpress {
		return Execution{}, errorf(CodeTypeNotSupported, "This operation is not supported by this type of state machine")
	}
	type end struct {
		res  *asl.Result
		stop time.Time
	}
	ended := make(chan end, 1)
	started, err := m.runExpress(t, x.Name, string(x.Input), func(res *asl.Result, stop time.Time) { ended <- end{res, stop} })
	if err != nil {
		return Execution{}, err
	}
	select {
	case <-ctx.Done():
		return Execution{}, ctx.Err()
	case e := <-ended:
		if e.res.Status == asl.StatusAborted {
			return Execution{}, errorf(CodeServiceUnavailable, "the server stopped while execution '%s' ran", started.ARN)
		}
		out := started
		out.Status, out.Stop, out.Error, out.Cause = e.res.Status, e.stop, e.res.Error, e.res.Cause
		if e.res.Status == asl.StatusSucceeded {
			out.Output = e.res.Output
		}
		return out, nil
	}
}

// CodeInvalidLogging is the error of a loggingConfiguration Step Functions
// refuses.
const CodeInvalidLogging = "InvalidLoggingConfiguration"

// Check refuses a loggingConfiguration Step Functions refuses: a level
// outside ALL, ERROR, FATAL and OFF, or one other than OFF without exactly
// one destination (locally the log is a file under the server's data
// folder, whatever the destination names). An empty level is OFF.
func (lc *LoggingConfiguration) Check() error {
	switch lc.Level {
	case "":
		lc.Level = LogOff
	case LogAll, LogError, LogFatal, LogOff:
	default:
		return errorf(CodeValidation, "1 validation error detected: Value '%s' at 'loggingConfiguration.level' failed to satisfy constraint: Member must satisfy enum value set: [ALL, ERROR, FATAL, OFF]", lc.Level)
	}
	if lc.Level != LogOff && len(lc.Destinations) != 1 || len(lc.Destinations) > 1 {
		return errorf(CodeInvalidLogging, "Invalid Logging Configuration: Must specify exactly one Log Destination.")
	}
	return nil
}

// SetLoggingConfiguration sets what a created machine logs. With revise, a
// change is a new revision of the machine (UpdateStateMachine); without,
// it is part of the machine's creation.
func (m *Manager) SetLoggingConfiguration(_ context.Context, arn string, lc LoggingConfiguration, revise bool) (time.Time, error) {
	if err := lc.Check(); err != nil {
		return time.Time{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	mc, err := m.createdMachine(arn)
	if err != nil {
		return time.Time{}, err
	}
	next := &machine{meta: mc.meta, sm: mc.sm}
	next.meta.Logging = &lc
	old, _ := json.Marshal(mc.meta.Logging)
	if now, _ := json.Marshal(lc); revise && string(old) != string(now) && (mc.meta.Logging != nil || lc.Level != LogOff) {
		next.meta.RevisionID = newRevision()
	}
	if err := writeAtomic(filepath.Join(m.machinesDir(), mc.meta.Name+".json"), next.meta); err != nil {
		return time.Time{}, fmt.Errorf("set the logging of %s: %w", mc.meta.Name, err)
	}
	m.machines[arn] = next
	return m.now().UTC(), nil
}
