package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/veredicto/veredicto/internal/app"
	"github.com/veredicto/veredicto/internal/doctor"
)

const doctorUsage = `Usage:
  veredicto doctor [--data DIR] [--no-call] [--json]

Checks a local installation and says what is wrong with it, for an
operator. The checks, in order:

  data-folder       DIR exists and this user can read and write it
  key-permissions   DIR/auth, the signing and access keys: files 0600, folder 0700
  damaged-records   records the server moved to DIR/quarantine (bytes that no
                    longer decode, files that are not its own), and damaged
                    ones still in place: what, where, why and when
  llm-provider      the provider OPENAI_API_KEY, OPENAI_BASE_URL and OPENAI_MODEL
                    configure answers (within 4 s: a wrong URL is named with
                    the fix), takes the key and lists the model; offline (no
                    key) nothing is reached, and it says so
  llm-call          one tiny structured-output call to the model (a few tokens),
                    unless --no-call or offline
  server            the server recorded as running on DIR (DIR/serve.endpoint)
                    answers there; none running is fine

It only reads, so it can run while "veredicto serve --data DIR" runs.
Quarantined files are kept, never deleted: review them, then delete them.
--json prints one JSON document: {"ok", "checks": [{"name", "status",
"summary", "findings": [{"what", "where", "why", "when"}]}]}.

Exit status: 0 every check passed; 1 a check found a problem; 2 bad usage.

Flags:
`

func (m *Main) runDoctor(ctx context.Context, args []string) int {
	fs := subcommandFlags("doctor", doctorUsage, m.Stderr)
	data := fs.String("data", app.DefaultDataDir, "the data folder to check (as for serve)")
	asJSON := fs.Bool("json", false, "print the report as one JSON document")
	noCall := fs.Bool("no-call", false, "make no call to the model (the provider is still reached)")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(m.Stderr, "veredicto doctor: unexpected argument %q\n\n", fs.Arg(0))
		fs.Usage()
		return exitUsage
	}
	report := doctor.Run(ctx, append(app.DoctorChecks(*data), app.DoctorProviderChecks(os.Getenv, *data, !*noCall)...))
	var err error
	if *asJSON {
		err = report.WriteJSON(m.Stdout)
	} else {
		err = report.WriteText(m.Stdout)
	}
	if err != nil {
		fmt.Fprintf(m.Stderr, "veredicto doctor: %v\n", err)
		return exitFailed
	}
	if !report.OK {
		return exitFailed
	}
	return exitOK
}
