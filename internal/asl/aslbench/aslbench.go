// Package aslbench holds the workloads of the cross-engine benchmark
// (make bench-compare): the same four definitions run by the project's
// engine and by the npm engine aws-local-stepfunctions, so that their
// throughput can be compared on equal terms.
//
// Each workload is a definition, an input and the Task handlers it needs.
// The Node side (scripts/bench-compare.mjs) reads the definition and input
// from the files Write produces and binds the same handlers by state name.
package aslbench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/veredicto/veredicto/internal/asl"
)

// Workload is one benchmark definition.
type Workload struct {
	// Name is the workload's id (also its file name under Write's dir).
	Name string
	// Definition is the ASL definition.
	Definition string
	// Input is the execution input.
	Input string
	// Identity names the logical id bound to an identity handler (the Task
	// chain); empty when the workload has no Task.
	Identity string
}

// Registry binds the workload's Task resources.
func (w Workload) Registry() *asl.Registry {
	reg := asl.NewRegistry()
	if w.Identity != "" {
		reg.Register(w.Identity, func(_ context.Context, in json.RawMessage) (json.RawMessage, error) {
			return in, nil
		})
	}
	return reg
}

// Sizes of the workloads, as issue 15 fixes them.
const (
	PassStates  = 1000
	MapItems    = 1000
	ChoiceLimit = 5000
	TaskStates  = 500
)

// All returns the four workloads: a Pass chain, an inline Map, a Choice
// loop and a Task chain.
func All() []Workload {
	return []Workload{PassChain(PassStates), InlineMap(MapItems), ChoiceLoop(ChoiceLimit), TaskChain(TaskStates)}
}

// chain writes n states named S0…S(n-1) in a row; state(i) returns the
// body of state i without its Next/End.
func chain(n int, state func(i int) string) string {
	var b strings.Builder
	b.WriteString(`{"StartAt":"S0","States":{`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		next := fmt.Sprintf(`"Next":"S%d"`, i+1)
		if i == n-1 {
			next = `"End":true`
		}
		fmt.Fprintf(&b, `"S%d":{%s,%s}`, i, state(i), next)
	}
	b.WriteString(`}}`)
	return b.String()
}

// PassChain is n Pass states in a row, each with Parameters (a path and a
// constant) and a ResultPath.
func PassChain(n int) Workload {
	return Workload{
		Name: "pass-chain",
		Definition: chain(n, func(i int) string {
			return fmt.Sprintf(`"Type":"Pass","Parameters":{"v.$":"$.v","step":%d},"ResultPath":"$.last"`, i)
		}),
		Input: `{"v":{"name":"c-001","score":7}}`,
	}
}

// InlineMap is an inline Map over n items, each processed by two Pass
// states, with MaxConcurrency 0 (no limit).
func InlineMap(n int) Workload {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf(`{"id":"c-%04d","score":%d}`, i, i%10)
	}
	return Workload{
		Name: "inline-map",
		Definition: `{"StartAt":"M","States":{"M":{"Type":"Map","MaxConcurrency":0,"ItemsPath":"$.items",` +
			`"ItemSelector":{"item.$":"$$.Map.Item.Value","i.$":"$$.Map.Item.Index"},` +
			`"ItemProcessor":{"ProcessorConfig":{"Mode":"INLINE"},"StartAt":"A","States":{` +
			`"A":{"Type":"Pass","Parameters":{"id.$":"$.item.id","i.$":"$.i"},"ResultPath":"$.r","Next":"B"},` +
			`"B":{"Type":"Pass","OutputPath":"$.r","End":true}}},"End":true}}}`,
		Input: `{"items":[` + strings.Join(items, ",") + `]}`,
	}
}

// ChoiceLoop counts from 0 to limit with a Choice and States.MathAdd.
func ChoiceLoop(limit int) Workload {
	return Workload{
		Name: "choice-loop",
		Definition: fmt.Sprintf(`{"StartAt":"Loop","States":{`+
			`"Loop":{"Type":"Choice","Choices":[{"Variable":"$.i","NumericGreaterThanEquals":%d,"Next":"Done"}],"Default":"Inc"},`+
			`"Inc":{"Type":"Pass","Parameters":{"i.$":"States.MathAdd($.i, 1)"},"Next":"Loop"},`+
			`"Done":{"Type":"Succeed"}}}`, limit),
		Input: `{"i":0}`,
	}
}

// TaskChain is n Task states in a row, each bound to an identity handler,
// with Parameters and a ResultPath like the project's workflows.
func TaskChain(n int) Workload {
	return Workload{
		Name: "task-chain",
		Definition: chain(n, func(i int) string {
			return fmt.Sprintf(`"Type":"Task","Resource":"${IdentityFunctionArn}","Parameters":{"v.$":"$.v","step":%d},"ResultPath":"$.last"`, i)
		}),
		Input:    `{"v":{"name":"c-001","score":7}}`,
		Identity: "IdentityFunction",
	}
}

// Write stores each workload as dir/<name>.json: {"definition", "input",
// "identity"} for the Node side.
func Write(dir string, ws []Workload) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, w := range ws {
		doc, err := json.Marshal(map[string]any{
			"definition": json.RawMessage(w.Definition),
			"input":      json.RawMessage(w.Input),
			"identity":   w.Identity,
		})
		if err != nil {
			return fmt.Errorf("%s: %w", w.Name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, w.Name+".json"), doc, 0o644); err != nil {
			return err
		}
	}
	return nil
}
