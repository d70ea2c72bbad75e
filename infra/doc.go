// Package infra holds the checks of the deployment: template.yaml (the SAM
// template) cross-checked against build.mk, functions/, events/ and the ASL
// files in statemachines/, so that a renamed folder, a new placeholder or a
// widened policy fails `go test` instead of a deployment.
package infra
