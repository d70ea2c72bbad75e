package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/veredicto/veredicto/internal/console"
)

const consoleUsage = `Usage: veredicto console export --api URL --events URL --out DIR

Writes the web console as a static site under DIR: index.html, assets/ and
config.js naming the HTTP API (the stack's HttpApiUrl output) and the event
stream (its EventStreamUrl output). Upload DIR to the stack's console bucket
(ConsoleBucketName) and open ConsoleUrl; see docs/CONSOLE.md. Locally,
"veredicto serve" already serves the console at /.

Flags:
`

type consoleConfig struct {
	api, events, out string
}

func parseConsole(args []string, m *Main) (consoleConfig, error) {
	var cfg consoleConfig
	fs := subcommandFlags("console", consoleUsage, m.Stderr)
	fs.StringVar(&cfg.api, "api", "", "base URL of the HTTP API (required)")
	fs.StringVar(&cfg.events, "events", "", "URL of the event stream (required)")
	fs.StringVar(&cfg.out, "out", "", "folder to write the site to (required)")
	if len(args) == 0 || args[0] != "export" {
		fs.Usage()
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return cfg, flag.ErrHelp
		}
		return cfg, fmt.Errorf("the subcommand is export")
	}
	positional, err := parseInterleaved(fs, args[1:])
	if err != nil {
		return cfg, err
	}
	switch {
	case len(positional) > 0:
		return cfg, fmt.Errorf("unexpected argument %q", positional[0])
	case cfg.out == "":
		return cfg, fmt.Errorf("--out is required")
	}
	return cfg, nil
}

func (m *Main) runConsole(_ context.Context, args []string) int {
	cfg, err := parseConsole(args, m)
	if err == flag.ErrHelp {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(m.Stderr, "veredicto console: %v\n", err)
		return exitUsage
	}
	if err := console.Export(cfg.out, console.Config{API: cfg.api, Events: cfg.events}); err != nil {
		fmt.Fprintf(m.Stderr, "veredicto console: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(m.Stdout, "console written to %s\n", cfg.out)
	return exitOK
}
