package catalog

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/catalog/function"
	"github.com/veredicto/veredicto/internal/confirm"
	"github.com/veredicto/veredicto/internal/debate"
	"github.com/veredicto/veredicto/internal/starter"
	"github.com/veredicto/veredicto/statemachines"
)

// DebateRegistry is the registry of the debate workflow's functions bound
// to steps, with the human decision recorded by decisions.
func DebateRegistry(steps *debate.Steps, decisions *confirm.Service) *asl.Registry {
	return Registry(&Services{Debate: steps, Confirm: decisions}, InvokedBy(function.Debate))
}

// DebateExecutionName is the execution name of a debate: scoped by tenant
// (the same rule as a search's, starter.ExecutionName).
func DebateExecutionName(tenant, debateID string) string {
	return starter.ExecutionName(tenant, debateID)
}

// StartDebate starts statemachines/debate.asl.json (DebateStateMachine) on
// eng, whose registry is a DebateRegistry.
func StartDebate(ctx context.Context, eng *asl.Engine, in debate.StartInput, onEvent func(asl.Event)) (*asl.Execution, error) {
	sm, err := asl.Parse(statemachines.Debate)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", function.Debate, err)
	}
	input, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("%s input: %w", function.Debate, err)
	}
	return eng.Start(ctx, sm, input, asl.StartOptions{Name: DebateExecutionName(in.Tenant, in.DebateID), StateMachineName: "debate", OnEvent: onEvent})
}
