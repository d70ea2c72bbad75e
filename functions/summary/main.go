// Command summary is the SummaryFunction Lambda: the search summary and protocol metrics.
// Wiring only: the handler is the same code the local engine calls
// (internal/app, internal/search, internal/intake).
package main

import "github.com/veredicto/veredicto/internal/app"

func main() { app.StartSearch("SummaryFunction") }
