// Command api is the ApiFunction Lambda: the HTTP API (start searches, read state and reports).
// Wiring only: the handler is the same code the local engine calls
// (internal/app, internal/search, internal/intake).
package main

import "github.com/veredicto/veredicto/internal/app"

func main() { app.StartIntake("ApiFunction") }
