package control

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/veredicto/veredicto/internal/asl"
)

// StateMachine describes a registered state machine.
type StateMachine struct {
	ARN, Name, Definition, RoleARN, Type string
	Created                              time.Time
	// RevisionID is the machine's revision ("" before its first update);
	// Description, a version's.
	RevisionID, Description string
}

func (mc *machine) view() StateMachine {
	return StateMachine{ARN: mc.meta.ARN, Name: mc.meta.Name, Definition: mc.meta.Definition, RoleARN: mc.meta.RoleARN, Type: mc.meta.Type, Created: mc.meta.Created,
		RevisionID: mc.meta.RevisionID}
}

// parseDefinition validates a definition and its Task bindings. The error
// names each state and field at fault.
func (m *Manager) parseDefinition(def string) (*asl.StateMachine, error) {
	sm, err := parseOnly(def)
	if err != nil {
		return nil, err
	}
	if err := m.eng.Check(sm); err != nil {
		return nil, errorf(CodeInvalidDefinition, "Invalid State Machine Definition: '%s'", strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return sm, nil
}

// parseOnly parses and validates a definition, its Task bindings
// unchecked (a TestState mock stands for them).
func parseOnly(def string) (*asl.StateMachine, error) {
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
	if typ == typeExpress {
		if err := checkExpress(definition); err != nil {
			return StateMachine{}, err
		}
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
	if _, _, ok := qualified(arn); ok {
		return time.Time{}, machineDoesNotExist(arn) // a version or an alias: never updated
	}
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
	if old.meta.Type == typeExpress && definition != "" {
		if err := checkExpress(definition); err != nil {
			return time.Time{}, err
		}
	}
	mc := &machine{meta: old.meta, sm: old.sm}
	if sm != nil {
		mc.meta.Definition, mc.sm = definition, sm
	}
	if roleARN != "" {
		mc.meta.RoleARN = roleARN
	}
	if mc.meta.Definition != old.meta.Definition || mc.meta.RoleARN != old.meta.RoleARN {
		mc.meta.RevisionID = newRevision()
	}
	if err := writeAtomic(filepath.Join(m.machinesDir(), mc.meta.Name+".json"), mc.meta); err != nil {
		return time.Time{}, fmt.Errorf("update state machine %s: %w", mc.meta.Name, err)
	}
	m.machines[arn] = mc
	return m.now().UTC(), nil
}

// DescribeStateMachine returns a registered state machine, or the
// version a version ARN names.
func (m *Manager) DescribeStateMachine(_ context.Context, arn string) (StateMachine, error) {
	if _, _, ok := versionNumber(arn); ok {
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.describeVersion(arn)
	}
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
		if err := m.dropVersions(mc); err != nil {
			return err
		}
	}
	delete(m.machines, arn)
	m.dropAttributes(arn) // its tags and configuration go with it
	return nil
}
