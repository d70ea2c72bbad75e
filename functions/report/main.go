// Command report is the ReportFunction Lambda: a candidate's decision and reports.
// Wiring only: the handler is the same code the local engine calls
// (internal/app, internal/search, internal/intake).
package main

import "github.com/veredicto/veredicto/internal/app"

func main() { app.StartSearch("ReportFunction") }
