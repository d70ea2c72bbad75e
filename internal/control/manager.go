// Package control is the local Step Functions control plane behind
// `veredicto serve`: state machines, durable executions and task tokens.
// Executions run on the project's engine (internal/asl); their metadata,
// history and task tokens are persisted under a folder, and after a restart
// (even a kill -9) every RUNNING execution resumes by deterministic replay
// of its recorded history: a Task that had completed is not invoked again,
// a Wait keeps its remaining time, and a task token still waits and is still
// accepted. The Task that was in flight at the crash is invoked again, so
// handlers must be safe to retry (they are: see STYLE.md).
//
// Hooks for the rest of the server (the event stream, confirmations) are
// Config.OnHistory and Config.OnStatus. Task tokens are resolved through
// SendTaskSuccess / SendTaskFailure, which the sfnapi package serves as the
// Step Functions API, so the sfn client has one code path on AWS and here.
package control

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/veredicto/veredicto/internal/asl"
)

// The account and region of every local ARN.
const (
	Region  = "us-east-1"
	Account = "000000000000"

	arnPrefix = "arn:aws:states:" + Region + ":" + Account + ":"
)

// Defaults for Config's bounds.
const (
	DefaultMaxExecutions = 100_000
	DefaultMaxRunning    = 20_000
	// MaxHistoryEvents is Step Functions' limit on one execution's history.
	MaxHistoryEvents = 25_000
)

// StateMachineARN is the local ARN of the state machine name.
func StateMachineARN(name string) string { return arnPrefix + "stateMachine:" + name }

// ExecutionARN is the local ARN of the execution name of machine.
func ExecutionARN(machine, name string) string {
	return arnPrefix + "execution:" + machine + ":" + name
}

// Config configures a Manager.
type Config struct {
	// Dir holds the persisted state machines and executions.
	Dir string
	// Registry binds Task resources to handlers, as for `states run`.
	Registry *asl.Registry
	Logger   *slog.Logger
	Now      func() time.Time
	// MaxExecutions bounds the executions kept (started ones, any status);
	// MaxRunning bounds those running at once. Beyond either,
	// StartExecution fails with ExecutionLimitExceeded.
	MaxExecutions int
	MaxRunning    int

	// OnHistory is called with every history event once it is persisted,
	// in order, with the execution's tenant and ARN; ev.ID is the event's
	// id in GetExecutionHistory, stable across restarts, and an event is
	// never passed twice (not even when a restart replays it). It is
	// called from the execution's goroutines and must not block for long.
	// The event stream (GET /api/events) is fed from it.
	OnHistory func(tenant, executionARN string, ev asl.Event)
	// OnStatus is called when an execution starts running (also when it
	// resumes after a restart) and when it closes, with its new status.
	OnStatus func(Status)
}

// Status is an execution's status change, for Config.OnStatus.
type Status struct {
	Tenant          string
	ExecutionARN    string
	StateMachineARN string
	Name            string
	Status          string // RUNNING, SUCCEEDED, FAILED, TIMED_OUT, ABORTED
	Resumed         bool   // RUNNING again after a restart
	Output          json.RawMessage
	Error, Cause    string
}

// Manager runs durable executions. It is safe for concurrent use.
type Manager struct {
	cfg  Config
	log  *slog.Logger
	eng  *asl.Engine
	now  func() time.Time
	root context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup

	mu        sync.Mutex
	closed    bool
	machines  map[string]*machine   // by ARN
	execs     map[string]*execution // by ARN
	byMachine map[string][]*execution
	running   int
	tokens    map[string]*recorder // task tokens awaiting SendTask*
}

type machine struct {
	meta     machineMeta
	sm       *asl.StateMachine
	template bool // registered at start, not persisted
}

// execution is the in-memory index entry of one execution: what listing,
// idempotent starts and routing need. Input, output and history stay on
// disk.
type execution struct {
	arn, smARN, name, tenant string
	inputSum                 [32]byte
	start                    time.Time
	dir                      string

	// guarded by Manager.mu
	status           string
	stop             time.Time
	x                *asl.Execution
	stopErr, stopWhy string
}

// Open loads the state machines and executions persisted under cfg.Dir and
// resumes every RUNNING execution. Close stops them without recording them
// as stopped, so the next Open resumes them again.
func Open(ctx context.Context, cfg Config) (*Manager, error) {
	if cfg.Dir == "" {
		return nil, errors.New("control: Config.Dir is empty")
	}
	if cfg.Registry == nil {
		cfg.Registry = asl.NewRegistry()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxExecutions <= 0 {
		cfg.MaxExecutions = DefaultMaxExecutions
	}
	if cfg.MaxRunning <= 0 {
		cfg.MaxRunning = DefaultMaxRunning
	}
	root, stop := context.WithCancel(context.WithoutCancel(ctx))
	m := &Manager{
		cfg: cfg, log: cfg.Logger, now: cfg.Now, root: root, stop: stop,
		eng:      asl.New(cfg.Registry, asl.WithLogger(cfg.Logger)),
		machines: map[string]*machine{}, execs: map[string]*execution{}, byMachine: map[string][]*execution{},
		tokens: map[string]*recorder{},
	}
	for _, d := range []string{m.machinesDir(), m.executionsDir()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			stop()
			return nil, fmt.Errorf("control: %w", err)
		}
	}
	if err := m.loadMachines(); err != nil {
		stop()
		return nil, err
	}
	if err := m.loadExecutions(ctx); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

// Close stops every running execution where it is, leaving it RUNNING on
// disk, and waits for their goroutines.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	m.stop()
	m.wg.Wait()
}

func (m *Manager) isClosed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
}

func (m *Manager) machinesDir() string   { return filepath.Join(m.cfg.Dir, "statemachines") }
func (m *Manager) executionsDir() string { return filepath.Join(m.cfg.Dir, "executions") }

// Names.

// ValidName reports whether s is a valid state machine or execution name
// for Step Functions: 1 to 80 characters, no whitespace, brackets,
// wildcards, the characters " # % \ ^ | ~ ` $ & , ; : / or control
// characters. "." and ".." are refused too (they would name folders).
func ValidName(s string) bool {
	if s == "" || len([]rune(s)) > 80 || s == "." || s == ".." {
		return false
	}
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) || strings.ContainsRune("<>{}[]?*\"#%\\^|~`$&,;:/", r) {
			return false
		}
	}
	return true
}

// parseARN splits a local state machine or execution ARN. kind is
// "stateMachine" or "execution"; rest is the name (or "machine:name").
func parseARN(arn string) (kind, rest string, ok bool) {
	parts := strings.SplitN(arn, ":", 7)
	if len(parts) != 7 || parts[0] != "arn" || parts[2] != "states" || parts[1] == "" || parts[6] == "" {
		return "", "", false
	}
	return parts[5], parts[6], true
}

func checkMachineARN(arn string) error {
	kind, rest, ok := parseARN(arn)
	if !ok || kind != "stateMachine" || strings.Contains(rest, ":") {
		return errorf(CodeInvalidArn, "Invalid Arn: 'Resource type not valid in this context: %s'", arn)
	}
	return nil
}

func checkExecutionARN(arn string) error {
	kind, rest, ok := parseARN(arn)
	if !ok || kind != "execution" || strings.Count(rest, ":") != 1 {
		return errorf(CodeInvalidArn, "Invalid Arn: 'Resource type not valid in this context: %s'", arn)
	}
	return nil
}

// State machines.

// StateMachine describes a registered state machine.
type StateMachine struct {
	ARN, Name, Definition, RoleARN, Type string
	Created                              time.Time
}

func (mc *machine) view() StateMachine {
	return StateMachine{ARN: mc.meta.ARN, Name: mc.meta.Name, Definition: mc.meta.Definition, RoleARN: mc.meta.RoleARN, Type: mc.meta.Type, Created: mc.meta.Created}
}

// parseDefinition validates a definition and its Task bindings. The error
// names each state and field at fault.
func (m *Manager) parseDefinition(def string) (*asl.StateMachine, error) {
	if len(def) > 1024*1024 {
		return nil, errorf(CodeValidation, "1 validation error detected: Value at 'definition' failed to satisfy constraint: Member must have length less than or equal to 1048576")
	}
	sm, err := asl.Parse([]byte(def))
	if err != nil {
		var de *asl.DefinitionError
		if errors.As(err, &de) {
			return nil, errorf(CodeInvalidDefinition, "Invalid State Machine Definition: '%s'", strings.Join(de.Problems, "; "))
		}
		return nil, errorf(CodeInvalidDefinition, "Invalid State Machine Definition: '%v'", err)
	}
	if err := m.eng.Check(sm); err != nil {
		return nil, errorf(CodeInvalidDefinition, "Invalid State Machine Definition: '%s'", strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return sm, nil
}

// RegisterStateMachine registers (or replaces) a state machine that is not
// persisted: the server registers template.yaml's machines at every start.
func (m *Manager) RegisterStateMachine(name, definition string) (StateMachine, error) {
	if !ValidName(name) {
		return StateMachine{}, errorf(CodeInvalidName, "Invalid Name: '%s'", name)
	}
	sm, err := m.parseDefinition(definition)
	if err != nil {
		return StateMachine{}, fmt.Errorf("state machine %s: %w", name, err)
	}
	mc := &machine{meta: machineMeta{ARN: StateMachineARN(name), Name: name, Definition: definition, Type: "STANDARD",
		RoleARN: "arn:aws:iam::" + Account + ":role/local", Created: m.now().UTC()}, sm: sm, template: true}
	m.mu.Lock()
	m.machines[mc.meta.ARN] = mc
	m.mu.Unlock()
	return mc.view(), nil
}

// CreateStateMachine validates and persists a state machine. Creating the
// same name again with the same definition returns the existing one; with
// another, StateMachineAlreadyExists.
func (m *Manager) CreateStateMachine(_ context.Context, name, definition, roleARN, typ string) (StateMachine, error) {
	if !ValidName(name) {
		return StateMachine{}, errorf(CodeInvalidName, "Invalid Name: '%s'", name)
	}
	switch typ {
	case "":
		typ = "STANDARD"
	case "STANDARD", "EXPRESS":
	default:
		return StateMachine{}, errorf(CodeValidation, "1 validation error detected: Value '%s' at 'type' failed to satisfy constraint: Member must satisfy enum value set: [STANDARD, EXPRESS]", typ)
	}
	sm, err := m.parseDefinition(definition)
	if err != nil {
		return StateMachine{}, err
	}
	mc := &machine{meta: machineMeta{ARN: StateMachineARN(name), Name: name, Definition: definition, RoleARN: roleARN, Type: typ, Created: m.now().UTC()}, sm: sm}
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.machines[mc.meta.ARN]; ok {
		if old.meta.Definition == definition && old.meta.RoleARN == roleARN && old.meta.Type == typ {
			return old.view(), nil
		}
		return StateMachine{}, errorf(CodeStateMachineExists, "State Machine Already Exists: '%s'", mc.meta.ARN)
	}
	if err := writeAtomic(filepath.Join(m.machinesDir(), name+".json"), mc.meta); err != nil {
		return StateMachine{}, fmt.Errorf("create state machine %s: %w", name, err)
	}
	m.machines[mc.meta.ARN] = mc
	return mc.view(), nil
}

// UpdateStateMachine replaces a created state machine's definition, role
// or both (an empty one is kept). Executions already started go on with the
// definition they started with; the next ones take the new one. A machine
// of template.yaml is refused: the server registers it again from the
// template at every start, so the update would be lost.
func (m *Manager) UpdateStateMachine(_ context.Context, arn, definition, roleARN string) (time.Time, error) {
	if err := checkMachineARN(arn); err != nil {
		return time.Time{}, err
	}
	if definition == "" && roleARN == "" {
		return time.Time{}, errorf(CodeMissingParameter, "Either the definition or the role ARN must be specified")
	}
	var sm *asl.StateMachine
	if definition != "" {
		var err error
		if sm, err = m.parseDefinition(definition); err != nil {
			return time.Time{}, err
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	old, ok := m.machines[arn]
	if !ok {
		return time.Time{}, errorf(CodeStateMachineDoesNotExist, "State Machine Does Not Exist: '%s'", arn)
	}
	if old.template {
		return time.Time{}, errorf(CodeValidation, "state machine %s is registered from the template at every start of the server: edit its definition file and restart the server", old.meta.Name)
	}
	mc := &machine{meta: old.meta, sm: old.sm}
	if sm != nil {
		mc.meta.Definition, mc.sm = definition, sm
	}
	if roleARN != "" {
		mc.meta.RoleARN = roleARN
	}
	if err := writeAtomic(filepath.Join(m.machinesDir(), mc.meta.Name+".json"), mc.meta); err != nil {
		return time.Time{}, fmt.Errorf("update state machine %s: %w", mc.meta.Name, err)
	}
	m.machines[arn] = mc
	return m.now().UTC(), nil
}

// DescribeStateMachine returns a registered state machine.
func (m *Manager) DescribeStateMachine(_ context.Context, arn string) (StateMachine, error) {
	if err := checkMachineARN(arn); err != nil {
		return StateMachine{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	mc, ok := m.machines[arn]
	if !ok {
		return StateMachine{}, errorf(CodeStateMachineDoesNotExist, "State Machine Does Not Exist: '%s'", arn)
	}
	return mc.view(), nil
}

// ListStateMachines lists the state machines by name, after the name in
// next (empty for the first page), at most max of them; the returned next
// is empty on the last page.
func (m *Manager) ListStateMachines(_ context.Context, after string, max int) ([]StateMachine, string) {
	m.mu.Lock()
	all := make([]StateMachine, 0, len(m.machines))
	for _, mc := range m.machines {
		all = append(all, mc.view())
	}
	m.mu.Unlock()
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	i := sort.Search(len(all), func(i int) bool { return all[i].Name > after })
	if after == "" {
		i = 0
	}
	page := all[i:]
	if len(page) > max {
		return page[:max], page[max-1].Name
	}
	return page, ""
}

// DeleteStateMachine removes a state machine; its running executions carry
// on with the definition they started with.
func (m *Manager) DeleteStateMachine(_ context.Context, arn string) error {
	if err := checkMachineARN(arn); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	mc, ok := m.machines[arn]
	if !ok {
		return nil // Step Functions: deleting a missing machine succeeds
	}
	if !mc.template {
		if err := os.Remove(filepath.Join(m.machinesDir(), mc.meta.Name+".json")); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("delete state machine %s: %w", mc.meta.Name, err)
		}
	}
	delete(m.machines, arn)
	return nil
}

func (m *Manager) loadMachines() error {
	entries, err := os.ReadDir(m.machinesDir())
	if err != nil {
		return fmt.Errorf("control: %w", err)
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		var meta machineMeta
		if err := readJSON(filepath.Join(m.machinesDir(), e.Name()), &meta); err != nil {
			return fmt.Errorf("control: %w", err)
		}
		sm, err := m.parseDefinition(meta.Definition)
		if err != nil {
			m.log.Warn("a persisted state machine no longer validates; skipped", "state_machine", meta.Name, "error", err)
			continue
		}
		m.machines[meta.ARN] = &machine{meta: meta, sm: sm}
	}
	return nil
}

// Executions.

// Execution describes an execution (DescribeExecution).
type Execution struct {
	ARN, StateMachineARN, Name, Tenant, Status string
	Input, Output                              json.RawMessage
	Error, Cause                               string
	Start, Stop                                time.Time
}

// ExecutionSummary is one item of ListExecutions.
type ExecutionSummary struct {
	ARN, StateMachineARN, Name, Status string
	Start, Stop                        time.Time
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
func (m *Manager) StartExecution(ctx context.Context, smARN, name, input string) (Execution, error) {
	if err := checkMachineARN(smARN); err != nil {
		return Execution{}, err
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
	sum := sha256.Sum256([]byte(input))

	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return Execution{}, errorf(CodeServiceUnavailable, "the server is shutting down")
	}
	mc, ok := m.machines[smARN]
	if !ok {
		m.mu.Unlock()
		return Execution{}, errorf(CodeStateMachineDoesNotExist, "State Machine Does Not Exist: '%s'", smARN)
	}
	arn := ExecutionARN(mc.meta.Name, name)
	if e, ok := m.execs[arn]; ok {
		same := e.inputSum == sum && e.status == asl.StatusRunning
		view := Execution{ARN: e.arn, StateMachineARN: e.smARN, Name: e.name, Tenant: e.tenant, Status: e.status, Start: e.start}
		m.mu.Unlock()
		if same {
			return view, nil
		}
		return Execution{}, errorf(CodeExecutionAlreadyExists, "Execution Already Exists: '%s'", arn)
	}
	if len(m.execs) >= m.cfg.MaxExecutions || m.running >= m.cfg.MaxRunning {
		m.mu.Unlock()
		return Execution{}, errorf(CodeExecutionLimitExceeded, "Execution Limit Exceeded: at most %d executions kept and %d running", m.cfg.MaxExecutions, m.cfg.MaxRunning)
	}
	e := &execution{arn: arn, smARN: smARN, name: name, tenant: TenantOf([]byte(input)), inputSum: sum,
		start: m.now().UTC(), dir: filepath.Join(m.executionsDir(), mc.meta.Name, name), status: asl.StatusRunning}
	m.execs[arn] = e
	m.byMachine[smARN] = append(m.byMachine[smARN], e)
	m.running++
	m.mu.Unlock()

	meta := execMeta{ARN: arn, StateMachineARN: smARN, Name: name, Tenant: e.tenant, Status: asl.StatusRunning,
		Definition: mc.meta.Definition, Input: json.RawMessage(input), Start: e.start}
	if err := writeAtomic(filepath.Join(e.dir, "meta.json"), meta); err != nil {
		m.mu.Lock()
		delete(m.execs, arn)
		m.byMachine[smARN] = slicesWithout(m.byMachine[smARN], e)
		m.running--
		m.mu.Unlock()
		return Execution{}, fmt.Errorf("start execution %s: %w", arn, err)
	}
	rec := newRecorder(m, e)
	m.launch(ctx, e, mc.sm, json.RawMessage(input), rec, false)
	return Execution{ARN: arn, StateMachineARN: smARN, Name: name, Tenant: e.tenant, Status: asl.StatusRunning, Input: json.RawMessage(input), Start: e.start}, nil
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
	// The execution is attached (e.x) before its first event can need it,
	// and OnDone may run before Start returns: both go through started.
	started := make(chan struct{})
	m.wg.Add(1)
	x, err := m.eng.Start(m.root, sm, input, asl.StartOptions{
		Name: e.name, StateMachineName: machineName, ExecutionARN: e.arn, StateMachineARN: e.smARN,
		StartTime: e.start, OnEvent: rec.onEvent, Durable: rec.durable(), DiscardHistory: true,
		OnDone: func(res *asl.Result) {
			defer m.wg.Done()
			<-started
			if m.isClosed() {
				return // stopped by Close: it stays RUNNING on disk and resumes
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
	m.mu.Lock()
	e.x = x
	m.mu.Unlock()
	m.notify(Status{Tenant: e.tenant, ExecutionARN: e.arn, StateMachineARN: e.smARN, Name: e.name, Status: asl.StatusRunning, Resumed: resumed})
	close(started)
}

func (m *Manager) notify(s Status) {
	if m.cfg.OnStatus != nil {
		m.cfg.OnStatus(s)
	}
}

// finish records an execution's end in meta.json and in memory.
func (m *Manager) finish(e *execution, rec *recorder, res *asl.Result) {
	stop := m.now().UTC()
	var meta execMeta
	path := filepath.Join(e.dir, "meta.json")
	if err := readJSON(path, &meta); err != nil {
		m.log.Error("read execution metadata", "execution", e.arn, "error", err)
	}
	m.mu.Lock()
	if res.Status == asl.StatusAborted && e.stopErr+e.stopWhy != "" {
		res.Error, res.Cause = e.stopErr, e.stopWhy
	} else if res.Status == asl.StatusAborted {
		res.Error, res.Cause = "", ""
	}
	m.mu.Unlock()
	meta.Status, meta.Output, meta.Error, meta.Cause, meta.Stop = res.Status, res.Output, res.Error, res.Cause, stop
	if err := writeAtomic(path, meta); err != nil {
		m.log.Error("record the end of an execution", "execution", e.arn, "error", err)
	}
	rec.close()
	m.mu.Lock()
	e.status, e.stop, e.x = res.Status, stop, nil
	m.running--
	m.mu.Unlock()
	m.notify(Status{Tenant: e.tenant, ExecutionARN: e.arn, StateMachineARN: e.smARN, Name: e.name, Status: res.Status,
		Output: res.Output, Error: res.Error, Cause: res.Cause})
}

func (m *Manager) lookup(arn string) (*execution, error) {
	if err := checkExecutionARN(arn); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.execs[arn]
	if !ok {
		return nil, errorf(CodeExecutionDoesNotExist, "Execution Does Not Exist: '%s'", arn)
	}
	return e, nil
}

// DescribeExecution returns an execution with its input and, once closed,
// its output or error.
func (m *Manager) DescribeExecution(_ context.Context, arn string) (Execution, error) {
	e, err := m.lookup(arn)
	if err != nil {
		return Execution{}, err
	}
	// Status first, then meta.json: finish writes meta.json before it sets
	// the status, so a closed status read here always finds its output.
	m.mu.Lock()
	status, stop := e.status, e.stop
	m.mu.Unlock()
	var meta execMeta
	if err := readJSON(filepath.Join(e.dir, "meta.json"), &meta); err != nil {
		return Execution{}, fmt.Errorf("describe execution %s: %w", arn, err)
	}
	out := Execution{ARN: e.arn, StateMachineARN: e.smARN, Name: e.name, Tenant: e.tenant, Status: status, Input: meta.Input, Start: e.start, Stop: stop}
	if status != asl.StatusRunning && meta.Status == status {
		out.Output, out.Error, out.Cause = meta.Output, meta.Error, meta.Cause
	}
	return out, nil
}

// ListExecutions lists a machine's executions, newest first, optionally
// only those with status, at most max per page. next is the token a
// previous page returned ("" for the first).
func (m *Manager) ListExecutions(_ context.Context, smARN, status, next string, max int) ([]ExecutionSummary, string, error) {
	if err := checkMachineARN(smARN); err != nil {
		return nil, "", err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	list, known := m.byMachine[smARN]
	if _, ok := m.machines[smARN]; !ok && !known {
		return nil, "", errorf(CodeStateMachineDoesNotExist, "State Machine Does Not Exist: '%s'", smARN)
	}
	i := len(list) - 1
	if next != "" {
		n, err := strconv.Atoi(next)
		if err != nil || n < 0 || n >= len(list) {
			return nil, "", errorf("InvalidToken", "Invalid Token: '%s'", next)
		}
		i = n
	}
	var out []ExecutionSummary
	for ; i >= 0; i-- {
		e := list[i]
		if status != "" && e.status != status {
			continue
		}
		if len(out) == max {
			return out, strconv.Itoa(i), nil
		}
		out = append(out, ExecutionSummary{ARN: e.arn, StateMachineARN: e.smARN, Name: e.name, Status: e.status, Start: e.start, Stop: e.stop})
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
	m.mu.Lock()
	x := e.x
	if x == nil {
		stop := e.stop
		m.mu.Unlock()
		return stop, nil
	}
	e.stopErr, e.stopWhy = errName, cause
	m.mu.Unlock()
	x.Stop()
	// A handler that ignores its context can hold the end back: answer
	// within a bound either way (the end is recorded when it comes).
	ctx, cancel := context.WithTimeout(ctx, stopWait)
	defer cancel()
	for {
		m.mu.Lock()
		st, stop := e.status, e.stop
		m.mu.Unlock()
		if st != asl.StatusRunning {
			return stop, nil
		}
		select {
		case <-ctx.Done():
			return m.now().UTC(), nil
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// HistoryEvent is one persisted history event with the id of the event
// before it.
type HistoryEvent struct {
	asl.Event
	PreviousID int
}

// History returns a page of an execution's history: at most max events
// from position next (a token a previous page returned, "" for the
// first), oldest first or, with reverse, newest first.
func (m *Manager) History(_ context.Context, arn, next string, max int, reverse bool) ([]HistoryEvent, string, error) {
	e, err := m.lookup(arn)
	if err != nil {
		return nil, "", err
	}
	path := filepath.Join(e.dir, "history.jsonl")
	total := 0
	if err := readLines(path, false, func(l line) error {
		if l.Event != nil {
			total++
		}
		return nil
	}); err != nil {
		return nil, "", fmt.Errorf("history of %s: %w", arn, err)
	}
	// A token is the absolute position the next page starts from, marked
	// by direction: "f<i>" returns events i, i+1, …; "r<i>" events i-1,
	// i-2, … — so a running execution's new events never shift a reverse
	// page, and a token serves only the direction that made it.
	lo, hi := 0, min(max, total)
	if reverse {
		lo, hi = total-min(max, total), total
	}
	if next != "" {
		dir, num := next[:1], next[1:]
		n, err := strconv.Atoi(num)
		if err != nil || n < 0 || n > total || (dir == "r") != reverse || (dir != "r" && dir != "f") {
			return nil, "", errorf("InvalidToken", "Invalid Token: '%s'", next)
		}
		if reverse {
			lo, hi = n-min(max, n), n
		} else {
			lo, hi = n, min(n+max, total)
		}
	}
	var out []HistoryEvent
	i := 0
	err = readLines(path, false, func(l line) error {
		if l.Event == nil {
			return nil
		}
		if i >= lo && i < hi {
			out = append(out, HistoryEvent{Event: *l.Event, PreviousID: l.Prev})
		}
		i++
		return nil
	})
	if err != nil {
		return nil, "", fmt.Errorf("history of %s: %w", arn, err)
	}
	if reverse {
		for a, b := 0, len(out)-1; a < b; a, b = a+1, b-1 {
			out[a], out[b] = out[b], out[a]
		}
	}
	switch {
	case reverse && lo > 0:
		return out, "r" + strconv.Itoa(lo), nil
	case !reverse && hi < total:
		return out, "f" + strconv.Itoa(hi), nil
	}
	return out, "", nil
}

// Task tokens.

// newTaskToken makes a token that names its execution, so a token whose task
// has ended can be told from one that never existed.
func newTaskToken(executionARN string) string {
	return "v1." + base64.RawURLEncoding.EncodeToString([]byte(executionARN)) + "." + newID()
}

func tokenExecution(token string) (string, bool) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 || parts[0] != "v1" || len(parts[2]) != 32 {
		return "", false
	}
	arn, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil || checkExecutionARN(string(arn)) != nil {
		return "", false
	}
	return string(arn), true
}

func newID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err)) // never happens on supported platforms
	}
	return hex.EncodeToString(b[:])
}

// waiting finds the recorder a token belongs to, or the API error for a
// token that is malformed, unknown or no longer waiting.
func (m *Manager) waiting(token string) (*recorder, error) {
	if len(token) == 0 || len(token) > 2048 {
		return nil, errorf(CodeValidation, "1 validation error detected: Value at 'taskToken' failed to satisfy constraint: Member must have length between 1 and 2048")
	}
	arn, ok := tokenExecution(token)
	if !ok {
		return nil, errorf(CodeInvalidToken, "Invalid Token: 'Invalid token'")
	}
	m.mu.Lock()
	rec, waiting := m.tokens[token]
	_, known := m.execs[arn]
	m.mu.Unlock()
	switch {
	case waiting:
		return rec, nil
	case known:
		return nil, errorf(CodeTaskTimedOut, "Task Timed Out: 'Provided task does not exist anymore'")
	default:
		return nil, errorf(CodeTaskDoesNotExist, "Task Does Not Exist: 'Provided task does not exist'")
	}
}

// checkErrorCause bounds an error name and cause as Step Functions does
// (StopExecution, SendTaskFailure).
func checkErrorCause(errName, cause string) error {
	if len(errName) > 256 {
		return errorf(CodeValidation, "1 validation error detected: Value at 'error' failed to satisfy constraint: Member must have length less than or equal to 256")
	}
	if len(cause) > 32768 {
		return errorf(CodeValidation, "1 validation error detected: Value at 'cause' failed to satisfy constraint: Member must have length less than or equal to 32768")
	}
	return nil
}

// SendTaskSuccess completes the task waiting on token with output (JSON).
func (m *Manager) SendTaskSuccess(_ context.Context, token, output string) error {
	rec, err := m.waiting(token)
	if err != nil {
		return err
	}
	if len(output) > asl.MaxPayloadBytes {
		return errorf(CodeValidation, "1 validation error detected: Value at 'output' failed to satisfy constraint: Member must have length less than or equal to %d", asl.MaxPayloadBytes)
	}
	if err := asl.CheckJSON([]byte(output)); err != nil {
		return errorf(CodeInvalidOutput, "Invalid Output: 'the output is not valid JSON: %v'", err)
	}
	return rec.resolve(token, resolution{Token: token, Output: json.RawMessage(output)})
}

// SendTaskFailure fails the task waiting on token with an error name and
// cause (States.TaskFailed when errName is empty).
func (m *Manager) SendTaskFailure(_ context.Context, token, errName, cause string) error {
	rec, err := m.waiting(token)
	if err != nil {
		return err
	}
	if err := checkErrorCause(errName, cause); err != nil {
		return err
	}
	if errName == "" {
		errName = asl.ErrTaskFailed
	}
	return rec.resolve(token, resolution{Token: token, Error: errName, Cause: cause, Failed: true})
}

// SendTaskHeartbeat reports that the task waiting on token is alive: its
// HeartbeatSeconds count again from now. A task recorded as waiting that
// the engine is not waiting for yet (its execution is being resumed) starts
// its count when it waits again.
func (m *Manager) SendTaskHeartbeat(_ context.Context, token string) error {
	if _, err := m.waiting(token); err != nil {
		return err
	}
	var notYet *asl.TaskTimedOut
	if err := m.eng.SendTaskHeartbeat(token); err != nil && !errors.As(err, &notYet) {
		return err
	}
	return nil
}

// Loading.

func (m *Manager) loadExecutions(ctx context.Context) error {
	machines, err := os.ReadDir(m.executionsDir())
	if err != nil {
		return fmt.Errorf("control: %w", err)
	}
	var resume []*execution
	var metas []execMeta
	for _, md := range machines {
		if !md.IsDir() {
			continue
		}
		names, err := os.ReadDir(filepath.Join(m.executionsDir(), md.Name()))
		if err != nil {
			return fmt.Errorf("control: %w", err)
		}
		for _, nd := range names {
			dir := filepath.Join(m.executionsDir(), md.Name(), nd.Name())
			var meta execMeta
			if err := readJSON(filepath.Join(dir, "meta.json"), &meta); err != nil {
				m.log.Warn("skipping an execution folder without readable metadata", "folder", dir, "error", err)
				continue
			}
			e := &execution{arn: meta.ARN, smARN: meta.StateMachineARN, name: meta.Name, tenant: meta.Tenant,
				inputSum: sha256.Sum256(meta.Input), start: meta.Start, dir: dir, status: meta.Status, stop: meta.Stop}
			m.execs[e.arn] = e
			m.byMachine[e.smARN] = append(m.byMachine[e.smARN], e)
			if e.status == asl.StatusRunning {
				m.running++
				resume = append(resume, e)
				metas = append(metas, meta)
			}
		}
	}
	for _, list := range m.byMachine {
		sort.SliceStable(list, func(i, j int) bool { return list[i].start.Before(list[j].start) })
	}
	for i, e := range resume {
		if err := m.resume(ctx, e, metas[i]); err != nil {
			return err
		}
	}
	return nil
}

// resume replays a RUNNING execution from its history.
func (m *Manager) resume(ctx context.Context, e *execution, meta execMeta) error {
	rec := newRecorder(m, e)
	if err := rec.load(); err != nil {
		return fmt.Errorf("control: resume %s: %w", e.arn, err)
	}
	if res := rec.ended(); res != nil {
		// it ended just before the crash: record what the history says
		m.finish(e, rec, res)
		return nil
	}
	sm, err := asl.Parse([]byte(meta.Definition))
	if err != nil {
		m.finish(e, rec, &asl.Result{Status: asl.StatusFailed, Error: asl.ErrRuntime, Cause: "the recorded definition no longer parses: " + err.Error()})
		return nil
	}
	m.log.InfoContext(ctx, "resuming execution", "execution", e.arn, "events", rec.nextID)
	for _, w := range rec.rp.waiting {
		m.addToken(w.v, rec)
	}
	m.launch(ctx, e, sm, meta.Input, rec, true)
	return nil
}
