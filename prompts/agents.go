package prompts

import _ "embed"

// AgentsYAML is the chat's default agents registry (prompts/agents.yaml):
// the specialists the supervisor may delegate to, with their weighted
// keywords (see internal/chat).
//
//go:embed agents.yaml
var AgentsYAML []byte

// AgentsFile names AgentsYAML in error messages.
const AgentsFile = "prompts/agents.yaml"
