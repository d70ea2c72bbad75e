// Command veredicto runs the project's workflows on one machine.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	m := NewMain()
	os.Exit(m.Run(ctx, os.Args[1:]))
}

// Exit codes.
const (
	exitOK     = 0
	exitFailed = 1 // the work ran and failed (e.g. a failed execution)
	exitUsage  = 2 // bad invocation or bad input: nothing ran

	exitInterrupted = 130 // interrupted (Ctrl-C, SIGINT): 128 + the signal number
)

// Main holds the program's streams so tests can run commands in-process.
type Main struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// NewMain returns a Main wired to the process's standard streams.
func NewMain() *Main {
	return &Main{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
}

const usage = `veredicto runs Veredicto's hiring workflows on one machine.

Usage:
  veredicto search run DIR [--out OUT] [--llm offline|openai] [--model M] [--concurrency N] [--review]
      Evaluate the candidates of an executive search (seed 000); --review waits
      for the senior consultant's decision on escalated candidates.
  veredicto flags --questions Q.yaml --transcript T.yaml [--transcript T2.yaml] [--context C.yaml]
      Classify interview answers with the Flags schema v1.1 (seed 002).
  veredicto debate run QUESTION.yaml --out DIR [--knowledge DIR] [--llm offline|openai] [--no-optional-council]
      Debate one hiring question in a committee of role agents (seed 003).
  veredicto search debate OUT/CANDIDATE [--search DIR] [--question Q.yaml] [--out DIR]
      Debate an escalated candidate with the search and its report as knowledge.
  veredicto lambda invoke LOGICAL_ID --event FILE [--data DIR]
      Run a function of template.yaml in-process, like "sam local invoke".
  veredicto states run DEF.asl.json [--input IN.json] [--history FILE]
      Run an Amazon States Language definition in-process.
  veredicto states validate DEF.asl.json...
      Check definitions (JSONPath or JSONata) as the engine loads them.
  veredicto serve [--addr 127.0.0.1:8080] [--data DIR]
      Serve the Step Functions API with durable executions, the HTTP API,
      confirmations and the event stream (local control plane).
  veredicto token --tenant T [--data DIR] [--ttl D]
      Print a token the local server accepts.
  veredicto credentials (--tenant T | --operator) [--name NAME] [--data DIR]
      Print an access key for the local server's (signed) Step Functions API.
  veredicto confirm list|approve ID|reject ID [--comment C] [--data DIR] [--endpoint URL]
      List and resolve the confirmations workflows wait for.
  veredicto queue send KEY | dlq list | dlq redrive [ID…] [--data DIR]
      The local inputs queue "serve" consumes: queue a READY upload, list
      and redrive its dead letters.
  veredicto chat [--endpoint URL] [--chat ID] [--token TOK | --tenant T --data DIR]
      Talk to the delegation chat of a running server.
  veredicto chat evaluate --corpus FILE [--agents FILE] [--model FILE] [--threshold T]
      Measure delegation intent on a labelled corpus (one JSON document).
  veredicto chat learn --corpus FILE [--corpus FILE…] --out FILE
      Fit a delegation-intent model on labelled requests.
  veredicto chat recalibrate --tenant T [--data DIR]
      Refit a tenant's model with its feedback; promote it only without an F1 loss.
  veredicto doctor [--data DIR] [--json]
      Check the data folder: its permissions, and every damaged or
      quarantined record (exit 1 when something is wrong).
  veredicto console export --api URL --events URL --out DIR
      Write the web console as a static site (for the stack's console bucket).
  veredicto audit verify PATH [--data DIR] [--json]
      Check an execution's hash-chained audit record and its reports (exit 1
      naming the first bad entry).
  veredicto audit purge --tenant T [--search ID] --by WHO --reason WHY --yes [--data DIR]
      Erase a tenant's or a search's documents, reports and records (right to
      erasure); each audit record becomes a tombstone of hashes.
  veredicto replay PATH --out DIR
      Re-run a recorded execution with no provider: the same reports, byte
      for byte, or the agent and candidate where it diverged.
  veredicto companion run --jd JD.md --profile profile.yaml --out DIR [--mode screening|full|onboarding] | continue --out DIR --proceed|--stop
      The candidate's career companion (seed 001): fit, scores and CV content.

Run "veredicto COMMAND -h" for a command's flags.
`

// Run dispatches args to a command and returns the exit code.
func (m *Main) Run(ctx context.Context, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(m.Stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "flags":
		return m.runFlags(ctx, args[1:])
	case "debate":
		return m.runDebate(ctx, args[1:])
	case "lambda":
		return m.runLambda(ctx, args[1:])
	case "states":
		return m.runStates(ctx, args[1:])
	case "search":
		return m.runSearch(ctx, args[1:])
	case "serve":
		return m.runServe(ctx, args[1:])
	case "token":
		return m.runToken(ctx, args[1:])
	case "credentials":
		return m.runCredentials(ctx, args[1:])
	case "confirm":
		return m.runConfirm(ctx, args[1:])
	case "queue":
		return m.runQueue(ctx, args[1:])
	case "chat":
		return m.runChat(ctx, args[1:])
	case "console":
		return m.runConsole(ctx, args[1:])
	case "doctor":
		return m.runDoctor(ctx, args[1:])
	case "companion":
		return m.runCompanion(ctx, args[1:])
	case "audit":
		return m.runAudit(ctx, args[1:])
	case "replay":
		return m.runReplay(ctx, args[1:])
	case "-h", "--help", "help":
		fmt.Fprint(m.Stdout, usage)
		return exitOK
	default:
		fmt.Fprintf(m.Stderr, "veredicto: unknown command %q\n\n%s", args[0], usage)
		return exitUsage
	}
}

// subcommandFlags is a subcommand's flag set: parse errors go to stderr,
// and -h prints usage, then the flags.
func subcommandFlags(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	return fs
}

// runSubcommand runs `veredicto <name> run ARGS`: anything but "run" gets
// usage (without its flags) and exit 2; the flags are parsed by parse, whose
// -h exits 0 and whose errors print as "veredicto <name> run: …" (exit 2).
func runSubcommand[C any](m *Main, name, usage string, args []string, parse func([]string, io.Writer) (C, error), run func(C) int) int {
	if len(args) == 0 || args[0] != "run" {
		fmt.Fprint(m.Stderr, strings.Replace(usage, "\nFlags:\n", "", 1))
		return exitUsage
	}
	cfg, err := parse(args[1:], m.Stderr)
	if err != nil {
		if err == flag.ErrHelp {
			return exitOK
		}
		fmt.Fprintf(m.Stderr, "veredicto %s run: %v\n", name, err)
		return exitUsage
	}
	return run(cfg)
}

// checkProvider checks an --llm flag: offline, openai, or empty (openai when
// OPENAI_API_KEY is set, else offline).
func checkProvider(p string) error {
	switch p {
	case "", "offline", "openai":
		return nil
	}
	return fmt.Errorf("--llm must be offline or openai, got %q", p)
}

// parseInterleaved parses fs's flags wherever they appear among the
// positional arguments ("run DEF --input F" and "run --input F DEF"), and
// returns the positional arguments in order.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) > 0 {
			positional = append(positional, args[0])
			args = args[1:]
		}
	}
	return positional, nil
}
