// Command gem3 is the Gem3Function Lambda: GEM3 verdict and 360 references.
// Wiring only: the handler is the same code the local engine calls
// (internal/app, internal/search, internal/intake).
package main

import "github.com/veredicto/veredicto/internal/app"

func main() { app.StartSearch("Gem3Function") }
