// Command gem1 is the Gem1Function Lambda: GEM1 trajectory and achievements.
// Wiring only: the handler is the same code the local engine calls
// (internal/app, internal/search, internal/intake).
package main

import "github.com/veredicto/veredicto/internal/app"

func main() { app.StartSearch("Gem1Function") }
