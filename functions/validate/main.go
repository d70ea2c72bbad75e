// Command validate is the ValidateFunction Lambda: validates a search's inputs and plans the evaluation.
// Wiring only: the handler is the same code the local engine calls
// (internal/app, internal/search, internal/intake).
package main

import "github.com/veredicto/veredicto/internal/app"

func main() { app.StartSearch("ValidateFunction") }
