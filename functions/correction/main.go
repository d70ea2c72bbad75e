// Command correction is the CorrectionFunction Lambda: the correction step after a blocking QA audit.
// Wiring only: the handler is the same code the local engine calls
// (internal/app, internal/search, internal/intake).
package main

import "github.com/veredicto/veredicto/internal/app"

func main() { app.StartSearch("CorrectionFunction") }
