package control

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/veredicto/veredicto/internal/asl"
)

// ValidateDefinition reports what is wrong with a definition, as Step
// Functions' ValidateStateMachineDefinition does (asl.Engine.Diagnose):
// errors for what CreateStateMachine refuses on AWS, warnings for what
// AWS accepts and this server cannot run.
func (m *Manager) ValidateDefinition(_ context.Context, definition, typ string) []asl.Diagnostic {
	return m.eng.Diagnose([]byte(definition), typ == "EXPRESS")
}

// ExecutionMachine is the state machine an execution ran
// (DescribeStateMachineForExecution): its definition is the one the
// execution started with, whatever the machine's is now.
type ExecutionMachine struct {
	StateMachine
	// Updated is when the machine took that definition: its last update
	// before the execution started, else its creation.
	Updated time.Time
	Configuration
}

// StateMachineForExecution returns the state machine an execution ran. A
// machine deleted since is described from the execution's record: the
// local role, and the execution's start as its update.
func (m *Manager) StateMachineForExecution(ctx context.Context, arn string) (ExecutionMachine, error) {
	e, err := m.lookup(arn)
	if err != nil {
		return ExecutionMachine{}, err
	}
	m.mu.Lock()
	dmg := e.damage
	m.mu.Unlock()
	if dmg != nil {
		return ExecutionMachine{}, damagedError(e.arn, dmg)
	}
	var meta execMeta
	if err := m.journal.read(filepath.Join(e.dir, "meta.json"), &meta); err != nil {
		var de *decodeError
		if errors.As(err, &de) {
			return ExecutionMachine{}, damagedError(e.arn, &damage{Reason: "its metadata (meta.json) " + de.reason})
		}
		return ExecutionMachine{}, fmt.Errorf("describe the state machine of %s: %w", arn, err)
	}
	out := ExecutionMachine{StateMachine: StateMachine{ARN: e.smARN, Name: strings.TrimPrefix(e.smARN, arnPrefix+"stateMachine:"),
		Definition: meta.Definition, RoleARN: "arn:aws:iam::" + Account + ":role/local", Type: "STANDARD"}, Updated: e.start}
	if sm, err := m.DescribeStateMachine(ctx, e.smARN); err == nil {
		out.RoleARN, out.Type, out.Created, out.Updated = sm.RoleARN, sm.Type, sm.Created, sm.Created
		a := m.Attributes(e.smARN)
		if !a.Updated.IsZero() && !a.Updated.After(e.start) {
			out.Updated = a.Updated
		}
		out.Configuration = m.Configuration(e.smARN)
	}
	return out, nil
}
