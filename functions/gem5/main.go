// Command gem5 is the Gem5Function Lambda: GEM5 mandate analysis, once per search.
// Wiring only: the handler is the same code the local engine calls
// (internal/app, internal/search, internal/intake).
package main

import "github.com/veredicto/veredicto/internal/app"

func main() { app.StartSearch("Gem5Function") }
