// Command gem2 is the Gem2Function Lambda: GEM2 business assessment.
// Wiring only: the handler is the same code the local engine calls
// (internal/app, internal/search, internal/intake).
package main

import "github.com/veredicto/veredicto/internal/app"

func main() { app.StartSearch("Gem2Function") }
