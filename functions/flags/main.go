// Command flags is the FlagsFunction Lambda: POST /flags classifies
// interview answers with the Flags schema v1.1 (seed 002).
// Wiring only: the handler is the same code the CLI calls (internal/flags).
package main

import "github.com/veredicto/veredicto/internal/app"

func main() { app.StartFlags() }
