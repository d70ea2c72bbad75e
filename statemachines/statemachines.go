// Package statemachines embeds the project's ASL definitions, so the CLI and
// the tests run exactly the files that Step Functions deploys.
package statemachines

import _ "embed"

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
