package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/veredicto/veredicto/internal/app"
	"github.com/veredicto/veredicto/internal/asl"
	blob "github.com/veredicto/veredicto/internal/blob/fs"
	"github.com/veredicto/veredicto/internal/catalog"
	"github.com/veredicto/veredicto/internal/search"
	store "github.com/veredicto/veredicto/internal/store/file"
	"github.com/veredicto/veredicto/prompts"
)

const statesUsage = `Usage: veredicto states run DEF.asl.json [--input IN.json] [--history FILE]

Runs the state machine in-process and prints the execution output JSON on
stdout. A failed execution prints its Error and Cause on stderr and exits 1;
a bad definition, input or binding exits 2. Task resources must be bound in
the project's function catalog ("${Gem1FunctionArn}" → Gem1Function).

Flags:
`

func (m *Main) runStates(ctx context.Context, args []string) int {
	if len(args) == 0 || args[0] != "run" {
		fmt.Fprint(m.Stderr, strings.Replace(statesUsage, "\nFlags:\n", "", 1))
		return exitUsage
	}
	cfg, err := parseStatesRun(args[1:], m.Stderr)
	if err != nil {
		if err == flag.ErrHelp {
			return exitOK
		}
		fmt.Fprintf(m.Stderr, "veredicto states run: %v\n", err)
		return exitUsage
	}
	reg, err := projectRegistry(os.Getenv)
	if err != nil {
		fmt.Fprintf(m.Stderr, "veredicto states run: %v\n", err)
		return exitUsage
	}
	return m.statesRun(ctx, cfg, reg)
}

// projectRegistry binds every Task handler of the project, with local
// adapters: documents are read and reports written relative to the current
// folder (input_prefix and report_prefix in the execution input), stage
// records kept under .veredicto-local/context.
func projectRegistry(getenv func(string) string) (*asl.Registry, error) {
	analyst, _, err := app.ChooseAnalyst("", "", getenv)
	if err != nil {
		return nil, err
	}
	svc := &search.Service{Inputs: blob.NewDir("."), Reports: blob.NewDir("."), Store: store.NewLocal(filepath.Join(".veredicto-local", "context")),
		Analyst: analyst, PromptVersions: prompts.PromptVersion}
	return catalog.Registry(catalog.Search(svc)), nil
}

type statesRunConfig struct {
	definition string
	input      string
	history    string
}

func parseStatesRun(args []string, stderr io.Writer) (statesRunConfig, error) {
	var cfg statesRunConfig
	fs := flag.NewFlagSet("states run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, statesUsage)
		fs.PrintDefaults()
	}
	fs.StringVar(&cfg.input, "input", "", "execution input JSON file (\"-\" for stdin; default {})")
	fs.StringVar(&cfg.history, "history", "", "write the execution history to this file as JSON lines")
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
	eng := asl.New(reg)
	name := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(cfg.definition), ".json"), ".asl")
	res, err := eng.Run(ctx, sm, input, asl.StartOptions{StateMachineName: name})
	if err != nil {
		fmt.Fprintf(m.Stderr, "veredicto states run: %s: %v\n", cfg.definition, err)
		return exitUsage
	}
	if cfg.history != "" {
		if err := writeHistory(cfg.history, res.History); err != nil {
			fmt.Fprintf(m.Stderr, "veredicto states run: write history: %v\n", err)
			return exitFailed
		}
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

// writeHistory writes events as JSON lines to a temporary file renamed into
// place, so a reader never sees half a history.
func writeHistory(path string, events []asl.Event) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".history-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriter(tmp)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, ev := range events {
		if err := enc.Encode(ev); err != nil {
			tmp.Close()
			return fmt.Errorf("event %d: %w", ev.ID, err)
		}
	}
	if err := w.Flush(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
