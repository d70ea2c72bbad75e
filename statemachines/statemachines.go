// Package statemachines embeds the project's ASL definitions, so the CLI and
// the tests run exactly the files that Step Functions deploys.
package statemachines

import (
	_ "embed"
	"strings"
)

// ExecutiveSearch is executive_search.asl.json (seed 000).
//
//go:embed executive_search.asl.json
var ExecutiveSearch []byte

// GatesDemo is gates_demo.asl.json, the engine demo.
//
//go:embed gates_demo.asl.json
var GatesDemo []byte

// Debate is debate.asl.json (seed 003): DebateStateMachine.
//
//go:embed debate.asl.json
var Debate []byte

// CareerCompanion is career_companion.asl.json (seed 001).
//
//go:embed career_companion.asl.json
var CareerCompanion []byte

// File returns the definition file of statemachines/ named name (as
// template.yaml's DefinitionUri names it, "statemachines/x.asl.json" or
// "x.asl.json"); ok is false for any other name.
func File(name string) (def []byte, ok bool) {
	switch strings.TrimPrefix(name, "statemachines/") {
	case "executive_search.asl.json":
		return ExecutiveSearch, true
	case "gates_demo.asl.json":
		return GatesDemo, true
	case "debate.asl.json":
		return Debate, true
	case "career_companion.asl.json":
		return CareerCompanion, true
	}
	return nil, false
}
