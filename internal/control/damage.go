package control

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/quarantine"
)

// StatusDamaged is the status ListExecutions gives an execution whose
// metadata (meta.json) could not be read. It is none of Step Functions'
// statuses because none of them is known to be true of it: it may have
// been running, or have ended either way. It keeps the name reserved
// (StartExecution with it is ExecutionAlreadyExists), DescribeExecution
// and StopExecution answer a ValidationException naming the damage, and
// the execution is not resumed. Its history stays where it was.
const StatusDamaged = "DAMAGED"

// damagedError is the refusal for a damaged execution: a
// ValidationException (no client retries it: a retry cannot help) whose
// message names the damage, wrapping a *veredicto.DamagedError.
func damagedError(arn string, d *damage) error {
	de := &veredicto.DamagedError{What: "execution " + arn, Reason: d.Reason, Quarantined: d.Quarantined}
	msg := fmt.Sprintf("Execution '%s' is damaged: %s", arn, d.Reason)
	if d.Quarantined != "" {
		msg += "; it was moved to quarantine"
	}
	return &Error{Code: CodeValidation, Message: msg + "; the name stays reserved (veredicto doctor lists it)", Err: de}
}

// IsDamaged reports whether err refuses a damaged record.
func IsDamaged(err error) bool {
	var de *veredicto.DamagedError
	return errors.As(err, &de)
}

// markDamaged quarantines the meta.json of e, which no longer decodes,
// and writes in its place one that names the damage and keeps the name
// reserved; e is damaged from then on. If the file cannot be moved it
// stays (the quarantine logged why) and e is damaged in memory.
func (m *Manager) markDamaged(e *execution, reason string) *damage {
	m.damaging.Lock()
	defer m.damaging.Unlock()
	m.mu.Lock()
	d := e.damage
	m.mu.Unlock()
	if d != nil {
		return d // another caller got there first
	}
	d = m.writeDamage(e, reason, true)
	m.mu.Lock()
	if e.status == asl.StatusRunning {
		m.running--
	}
	e.status, e.damage, e.x = StatusDamaged, d, nil
	m.mu.Unlock()
	return d
}

// writeDamage records on disk that e's metadata is damaged: the damaged
// meta.json moved to the quarantine (move) or, when there is none, one
// line in the log; then a meta.json naming the damage.
func (m *Manager) writeDamage(e *execution, reason string, move bool) *damage {
	d := &damage{Reason: reason, At: m.now().UTC()}
	path := filepath.Join(e.dir, "meta.json")
	marker := execMeta{ARN: e.arn, StateMachineARN: e.smARN, Name: e.name, Tenant: e.tenant, Status: StatusDamaged, Start: e.start, Damage: d}
	if move {
		if _, err := m.quarantine.Replace(path, reason, func(it quarantine.Item) error {
			d.Quarantined = it.Quarantined
			return m.put(path, marker)
		}); err != nil {
			d.Quarantined = "" // left in place
		}
		return d
	}
	err := m.put(path, marker)
	args := []any{"execution", e.arn, "path", path, "reason", reason}
	if err != nil {
		args = append(args, "error", err.Error())
	}
	m.log.Error("damaged execution: its name stays reserved", args...)
	return d
}

// loadDamaged is an execution folder whose metadata cannot be used, as
// Open finds it: nil for a folder that is no execution of this manager
// (no valid names, or neither metadata nor history: a start that never
// completed). Its tenant and start are recovered from its history when
// it has one.
func (m *Manager) loadDamaged(machineName, name, dir string, meta *execMeta, reason string, move bool) *execution {
	if !ValidName(machineName) || !ValidName(name) {
		return nil
	}
	e := &execution{arn: ExecutionARN(machineName, name), smARN: StateMachineARN(machineName), name: name, dir: dir, status: StatusDamaged}
	if meta != nil && meta.Damage != nil { // damaged at an earlier start
		e.tenant, e.start, e.damage = meta.Tenant, meta.Start, meta.Damage
		return e
	}
	tenant, start, ok := recoverStart(dir)
	if !ok && !move {
		return nil // neither metadata nor history
	}
	e.tenant, e.start = tenant, start
	if e.start.IsZero() {
		e.start = m.now().UTC() // unknown: listed from when the damage was found
	}
	e.damage = m.writeDamage(e, reason, move)
	return e
}

// errStop ends a readLines early.
var errStop = errors.New("stop")

// recoverStart reads an execution's tenant and start from its history's
// ExecutionStarted event; ok is false without a readable one.
func recoverStart(dir string) (tenant string, start time.Time, ok bool) {
	_ = readLines(filepath.Join(dir, "history.jsonl"), nil, func(l line) error {
		if l.Event == nil {
			return nil
		}
		if l.Event.Type == "ExecutionStarted" {
			in, _ := json.Marshal(l.Event.Input)
			tenant, start, ok = TenantOf(in), l.Event.Timestamp, true
		}
		return errStop
	})
	return tenant, start, ok
}

// Damaged lists, reading only ("veredicto doctor"), the damage under a
// manager's folder dir that is still in place: state machines and
// execution metadata that do not decode, executions whose metadata is
// missing, and damaged executions whose metadata could not be moved to
// the quarantine. What was moved is quarantine.List's. Metadata the
// journal a crash left will write again at the next start is not damage.
func Damaged(dir string) ([]quarantine.Item, error) {
	box := quarantine.Beside(dir, nil)
	out := []quarantine.Item{}
	rewritten, err := journaledPaths(dir)
	if err != nil {
		return out, err
	}
	machines, err := os.ReadDir(filepath.Join(dir, "statemachines"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return out, err
	}
	for _, e := range machines {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		path := filepath.Join(dir, "statemachines", e.Name())
		var de *decodeError
		if err := readJSON(path, &machineMeta{}); errors.As(err, &de) {
			out = append(out, box.Found(path, "the state machine "+de.reason))
		}
	}
	execs := filepath.Join(dir, "executions")
	byMachine, err := os.ReadDir(execs)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return out, err
	}
	for _, md := range byMachine {
		if !md.IsDir() {
			continue
		}
		names, err := os.ReadDir(filepath.Join(execs, md.Name()))
		if err != nil {
			return out, err
		}
		for _, nd := range names {
			path := filepath.Join(execs, md.Name(), nd.Name(), "meta.json")
			if rewritten[path] {
				continue
			}
			var meta execMeta
			err := readJSON(path, &meta)
			var de *decodeError
			switch {
			case errors.As(err, &de):
				out = append(out, box.Found(path, "its metadata (meta.json) "+de.reason))
			case errors.Is(err, fs.ErrNotExist):
				if _, _, ok := recoverStart(filepath.Dir(path)); ok {
					out = append(out, box.Found(path, "its metadata (meta.json) is missing"))
				}
			case err == nil && meta.Damage != nil && meta.Damage.Quarantined == "":
				it := box.Found(path, meta.Damage.Reason)
				it.At = meta.Damage.At
				out = append(out, it)
			}
		}
	}
	return out, nil
}
