// Command gem4 is the Gem4Function Lambda: GEM4 QA audit.
// Wiring only: the handler is the same code the local engine calls
// (internal/app, internal/search, internal/intake).
package main

import "github.com/veredicto/veredicto/internal/app"

func main() { app.StartSearch("Gem4Function") }
