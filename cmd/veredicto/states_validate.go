package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/veredicto/veredicto/internal/asl"
)

const statesValidateUsage = `Usage: veredicto states validate DEF.asl.json...

Loads each Amazon States Language definition the way the engine does before
running it (both query languages, JSONPath and JSONata) and reports every
problem, each naming its state and field. Prints "FILE: valid" for a good
definition; a valid definition that uses something this engine cannot run
(an ItemReader of S3 inventory manifests or Parquet files) is valid too,
with a warning on stderr naming what.

Exit codes:
  0    every definition is valid (warnings, if any, on stderr)
  1    at least one definition is invalid (its problems on stderr)
  2    no file given, or a file cannot be read
`

// statesValidate checks every file and reports all of them, not only the
// first that fails.
func (m *Main) statesValidate(args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		fmt.Fprint(m.Stderr, statesValidateUsage)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	code := exitOK
	for _, file := range args {
		data, err := os.ReadFile(file)
		if err != nil {
			fmt.Fprintf(m.Stderr, "veredicto states validate: %v\n", err)
			code = exitUsage
			continue
		}
		sm, err := asl.Parse(data)
		var de *asl.DefinitionError
		switch {
		case err == nil:
			fmt.Fprintf(m.Stdout, "%s: valid\n", file)
			for _, u := range sm.Unsupported() {
				fmt.Fprintf(m.Stderr, "%s: warning: valid, but this engine cannot run it: %s\n", file, u)
			}
		case errors.As(err, &de):
			fmt.Fprintf(m.Stderr, "%s: invalid state machine definition:\n", file)
			for _, p := range de.Problems {
				fmt.Fprintf(m.Stderr, "  - %s\n", p)
			}
			if code == exitOK {
				code = exitFailed
			}
		default:
			fmt.Fprintf(m.Stderr, "%s: %v\n", file, err)
			if code == exitOK {
				code = exitFailed
			}
		}
	}
	return code
}
