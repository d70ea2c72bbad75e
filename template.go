package veredicto

import _ "embed"

// Template is template.yaml, the SAM template the project deploys,
// embedded so that "veredicto serve" registers its state machines from any
// directory and after "go install" (their definitions are embedded in
// package statemachines).
//
//go:embed template.yaml
var Template []byte
