package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/veredicto/veredicto/internal/app"
	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/confirm"
	fileconfirm "github.com/veredicto/veredicto/internal/confirm/file"
	"github.com/veredicto/veredicto/internal/control"
	fileeventlog "github.com/veredicto/veredicto/internal/eventlog/file"
)

const statesUsage = `Usage: veredicto states run DEF.asl.json [--input IN.json] [--history FILE] [--data DIR]
       veredicto states validate DEF.asl.json...

Runs the state machine in-process and prints the execution output JSON on
stdout. Task resources must be bound in the project's function catalog
("${Gem1FunctionArn}" → Gem1Function). --history FILE receives one JSON line
per history event as it happens, so an interrupted run keeps its history.
--data DIR lets a Distributed Map's ItemReader and ResultWriter reach the
local buckets under DIR, as "veredicto serve --data DIR" does (the
execution's tenant is its input's "tenant", else "default"); its children
run in-process, unrecorded.

Exit codes:
  0    the execution succeeded
  1    the execution failed or timed out (its Error and Cause on stderr)
  2    bad definition, input, binding or flags: nothing ran
  130  interrupted (Ctrl-C): the execution was aborted

Flags:
`

func (m *Main) runStates(ctx context.Context, args []string) int {
	if len(args) > 0 && args[0] == "validate" {
		return m.statesValidate(args[1:])
	}
	return runSubcommand(m, "states", statesUsage, args, parseStatesRun, func(cfg statesRunConfig) int {
		reg, err := projectRegistry(os.Getenv)
		if err != nil {
			fmt.Fprintf(m.Stderr, "veredicto states run: %v\n", err)
			return exitUsage
		}
		return m.statesRun(ctx, cfg, reg)
	})
}

// projectRegistry binds every Task handler of the project with the
// analyst the environment chooses (app.ProjectRegistry).
func projectRegistry(getenv func(string) string) (*asl.Registry, error) {
	analyst, _, err := app.ChooseAnalyst("", "", getenv)
	if err != nil {
		return nil, err
	}
	return app.ProjectRegistry(analyst), nil
}

type statesRunConfig struct {
	definition string
	input      string
	history    string
	data       string
}

func parseStatesRun(args []string, stderr io.Writer) (statesRunConfig, error) {
	var cfg statesRunConfig
	fs := subcommandFlags("states run", statesUsage, stderr)
	fs.StringVar(&cfg.input, "input", "", "execution input JSON file (\"-\" for stdin; default {})")
	fs.StringVar(&cfg.history, "history", "", "write the execution history to this file as JSON lines")
	fs.StringVar(&cfg.data, "data", "", "the folder whose local buckets a Distributed Map reads and writes (none by default)")
	positional, err := parseInterleaved(fs, args)
	if err != nil {
		return cfg, err
	}
	if len(positional) != 1 {
		fs.Usage()
		return cfg, fmt.Errorf("want exactly one definition file, got %d", len(positional))
	}
	cfg.definition = positional[0]
	return cfg, nil
}

func (m *Main) statesRun(ctx context.Context, cfg statesRunConfig, reg *asl.Registry) int {
	def, err := os.ReadFile(cfg.definition)
	if err != nil {
		fmt.Fprintf(m.Stderr, "veredicto states run: %v\n", err)
		return exitUsage
	}
	sm, err := asl.Parse(def)
	if err != nil {
		fmt.Fprintf(m.Stderr, "veredicto states run: %s: %v\n", cfg.definition, err)
		return exitUsage
	}
	input := []byte("{}")
	switch cfg.input {
	case "":
	case "-":
		if input, err = io.ReadAll(m.Stdin); err != nil {
			fmt.Fprintf(m.Stderr, "veredicto states run: read stdin: %v\n", err)
			return exitUsage
		}
	default:
		if input, err = os.ReadFile(cfg.input); err != nil {
			fmt.Fprintf(m.Stderr, "veredicto states run: %v\n", err)
			return exitUsage
		}
	}
	if !json.Valid(input) {
		fmt.Fprintf(m.Stderr, "veredicto states run: input %s is not valid JSON\n", inputName(cfg.input))
		return exitUsage
	}
	var hist *historyWriter
	if cfg.history != "" {
		if hist, err = createHistory(cfg.history); err != nil {
			fmt.Fprintf(m.Stderr, "veredicto states run: --history: %v\n", err)
			return exitUsage
		}
		defer hist.Close()
	}
	eng := asl.New(reg)
	name := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(cfg.definition), ".json"), ".asl")
	opts := asl.StartOptions{StateMachineName: name, OnEvent: hist.write}
	if cfg.data != "" {
		opts.Buckets = control.LocalBuckets{Data: cfg.data, Tenant: control.TenantOf(input)}
	}
	x, err := eng.Start(ctx, sm, input, opts)
	if err != nil {
		hist.discard()
		fmt.Fprintf(m.Stderr, "veredicto states run: %s: %v\n", cfg.definition, err)
		return exitUsage
	}
	// Cancelling ctx (Ctrl-C) aborts the execution; wait for it to record
	// ExecutionAborted so the history ends where the run did.
	res, err := x.Wait(context.WithoutCancel(ctx))
	if err != nil {
		fmt.Fprintf(m.Stderr, "veredicto states run: %v\n", err)
		return exitFailed
	}
	// A question a Task of this execution waited on can no longer be
	// answered: it expires with the execution, as under serve.
	reviews := &confirm.Service{Store: fileconfirm.Local(app.DefaultDataDir), Events: fileeventlog.Local(app.DefaultDataDir)}
	if _, err := reviews.ExpireExecution(context.WithoutCancel(ctx), control.TenantOf(input), x.ID); err != nil {
		fmt.Fprintf(m.Stderr, "veredicto states run: expire the confirmations of execution %s: %v\n", x.Name, err)
	}
	if err := hist.Close(); err != nil {
		fmt.Fprintf(m.Stderr, "veredicto states run: write history %s: %v\n", cfg.history, err)
		return exitFailed
	}
	if res.Status == asl.StatusAborted && ctx.Err() != nil {
		fmt.Fprintf(m.Stderr, "veredicto states run: interrupted: execution %s aborted\n", x.Name)
		return exitInterrupted
	}
	if res.Status != asl.StatusSucceeded {
		fmt.Fprintf(m.Stderr, "Execution %s\nError: %s\nCause: %s\n", res.Status, res.Error, res.Cause)
		return exitFailed
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, res.Output, "", "  "); err != nil {
		pretty.Reset()
		pretty.Write(res.Output)
	}
	fmt.Fprintf(m.Stdout, "%s\n", pretty.Bytes())
	return exitOK
}

func inputName(s string) string {
	if s == "-" {
		return "(stdin)"
	}
	return s
}

// historyWriter streams history events to a file as JSON lines, one write
// per event with no buffering in the process, so the events written survive
// an interrupt or a kill. A nil *historyWriter writes nothing.
type historyWriter struct {
	mu  sync.Mutex
	f   *os.File
	err error // the first write error
}

func createHistory(path string) (*historyWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &historyWriter{f: f}, nil
}

// write is an asl.StartOptions.OnEvent callback; Map iterations and
// Parallel branches call it concurrently.
func (h *historyWriter) write(ev asl.Event) {
	if h == nil {
		return
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(ev)
	if err != nil {
		err = fmt.Errorf("event %d: %w", ev.ID, err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil {
		return
	}
	if err == nil {
		_, err = h.f.Write(buf.Bytes())
	}
	h.err = err
}

// Close closes the file and returns the first write or close error.
func (h *historyWriter) Close() error {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.f == nil {
		return h.err
	}
	if err := h.f.Close(); err != nil && h.err == nil {
		h.err = err
	}
	h.f = nil
	return h.err
}

// discard closes and removes the file of a run that never started.
func (h *historyWriter) discard() {
	if h == nil {
		return
	}
	name := h.f.Name()
	h.Close()
	os.Remove(name)
}
