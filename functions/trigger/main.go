// Command trigger is the TriggerFunction Lambda: starts one evaluation per searches/<id>/READY upload.
// Wiring only: the handler is the same code the local engine calls
// (internal/app, internal/search, internal/intake).
package main

import "github.com/veredicto/veredicto/internal/app"

func main() { app.StartIntake("TriggerFunction") }
