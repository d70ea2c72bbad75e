package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/veredicto/veredicto/internal/app"
	"github.com/veredicto/veredicto/internal/asl"
	blob "github.com/veredicto/veredicto/internal/blob/fs"
	"github.com/veredicto/veredicto/internal/catalog"
	"github.com/veredicto/veredicto/internal/search"
	store "github.com/veredicto/veredicto/internal/store/file"
	"github.com/veredicto/veredicto/prompts"
)

const searchUsage = `Usage: veredicto search run DIR [--out OUT] [--llm offline|openai] [--model M] [--concurrency N]

Evaluates every candidate of the search folder DIR with the executive-search
protocol (GEM5 → GEM1 → GEM2 → GEM3 → GEM4) and writes, under OUT:
  <candidate_id>/report.json, <candidate_id>/report.md, summary.json, summary.md

DIR holds jd.md and kickoff.md (required), company.md, culture.md, an optional
search.yaml (search_id, client, role, gates) and candidates/<id>/{cv,interview,
tests,case,references}.md. A missing jd.md or kickoff.md blocks the search
before any agent runs (exit 2). The run exits 0 when every candidate reached a
decision, whatever the decisions are.

The LLM is "openai" when OPENAI_API_KEY is set (OPENAI_BASE_URL and
OPENAI_MODEL configure any OpenAI-compatible endpoint), otherwise the offline
lexical baseline, which needs no network. Stage outputs are kept under
OUT/.veredicto so a re-run reuses finished stages instead of paying again.

Flags:
`

type searchRunConfig struct {
	dir         string
	out         string
	provider    string
	model       string
	concurrency int
}

func (m *Main) runSearch(ctx context.Context, args []string) int {
	if len(args) == 0 || args[0] != "run" {
		fmt.Fprint(m.Stderr, strings.Replace(searchUsage, "\nFlags:\n", "", 1))
		return exitUsage
	}
	cfg, err := parseSearchRun(args[1:], m.Stderr)
	if err != nil {
		if err == flag.ErrHelp {
			return exitOK
		}
		fmt.Fprintf(m.Stderr, "veredicto search run: %v\n", err)
		return exitUsage
	}
	return m.searchRun(ctx, cfg, os.Getenv)
}

func parseSearchRun(args []string, stderr io.Writer) (searchRunConfig, error) {
	var cfg searchRunConfig
	fs := flag.NewFlagSet("search run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, searchUsage)
		fs.PrintDefaults()
	}
	fs.StringVar(&cfg.out, "out", "", "output folder (default: out/<search_id>)")
	fs.StringVar(&cfg.provider, "llm", "", "offline or openai (default: openai when OPENAI_API_KEY is set, else offline)")
	fs.StringVar(&cfg.model, "model", "", "model name for openai (default: $OPENAI_MODEL or gpt-4o-mini)")
	fs.IntVar(&cfg.concurrency, "concurrency", 0, "candidates evaluated at once (default 4)")
	positional, err := parseInterleaved(fs, args)
	if err != nil {
		return cfg, err
	}
	if len(positional) != 1 {
		fs.Usage()
		return cfg, fmt.Errorf("want exactly one search folder, got %d", len(positional))
	}
	cfg.dir = positional[0]
	if cfg.concurrency < 0 {
		return cfg, fmt.Errorf("--concurrency must be positive, got %d", cfg.concurrency)
	}
	switch cfg.provider {
	case "", "offline", "openai":
	default:
		return cfg, fmt.Errorf("--llm must be offline or openai, got %q", cfg.provider)
	}
	return cfg, nil
}

func (m *Main) searchRun(ctx context.Context, cfg searchRunConfig, getenv func(string) string) int {
	fail := func(code int, format string, args ...any) int {
		fmt.Fprintf(m.Stderr, "veredicto search run: "+format+"\n", args...)
		return code
	}
	if st, err := os.Stat(cfg.dir); err != nil || !st.IsDir() {
		return fail(exitUsage, "%s is not a folder", cfg.dir)
	}
	inputs := blob.NewDir(cfg.dir)
	// Validate before anything else: a missing jd.md or kickoff.md blocks
	// the search at once, with no LLM call.
	s, err := search.Load(ctx, inputs, "", filepath.Base(filepath.Clean(cfg.dir)))
	if err != nil {
		var mi *search.MissingInputError
		var ii *search.InvalidInputError
		if errors.As(err, &mi) || errors.As(err, &ii) {
			return fail(exitUsage, "%s: %v", cfg.dir, err)
		}
		return fail(exitFailed, "%v", err)
	}
	for _, w := range s.Warnings {
		fmt.Fprintf(m.Stderr, "warning: %s\n", w)
	}
	analyst, notice, err := app.ChooseAnalyst(cfg.provider, cfg.model, getenv)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	fmt.Fprintln(m.Stderr, notice)
	out := cfg.out
	if out == "" {
		out = filepath.Join("out", s.Docs.SearchID)
	}
	svc := &search.Service{
		Inputs:         inputs,
		Reports:        blob.NewDir(out),
		Store:          store.NewLocal(filepath.Join(out, ".veredicto", "context")),
		Analyst:        analyst,
		PromptVersions: prompts.PromptVersion,
	}
	res, err := catalog.RunSearch(ctx, svc, search.StartInput{SearchID: s.Docs.SearchID, Concurrency: cfg.concurrency}, newProgress(m.Stderr))
	if err != nil {
		return fail(exitFailed, "%v", err)
	}
	if res.Status != asl.StatusSucceeded {
		return fail(exitFailed, "execution %s: %s: %s", res.Status, res.Error, res.Cause)
	}
	var done struct {
		Results []search.CandidateResult `json:"results"`
	}
	if err := json.Unmarshal(res.Output, &done); err != nil {
		return fail(exitFailed, "decode execution output: %v", err)
	}
	fmt.Fprintf(m.Stdout, "Search %s: %d candidates evaluated\n", s.Docs.SearchID, len(done.Results))
	for _, r := range search.Rank(done.Results) {
		fmt.Fprintf(m.Stdout, "  %-12s %-26s %s\n", r.CandidateID, r.Decision, filepath.Join(out, r.CandidateID, "report.md"))
	}
	fmt.Fprintf(m.Stdout, "Summary: %s\n", filepath.Join(out, "summary.md"))
	return exitOK
}

// newProgress prints one line per candidate stage as the workflow moves.
func newProgress(w io.Writer) func(asl.Event) {
	var mu sync.Mutex
	var candidates []string
	return func(ev asl.Event) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case ev.Type == "TaskSucceeded" && ev.State == "Validate":
			if m, ok := ev.Output.(map[string]any); ok {
				if cs, ok := m["candidates"].([]any); ok {
					for _, c := range cs {
						candidates = append(candidates, fmt.Sprint(c))
					}
					fmt.Fprintf(w, "search %v: %d candidates\n", m["search_id"], len(candidates))
				}
			}
		case ev.Type == "TaskScheduled" && ev.State == "Gem5":
			fmt.Fprintln(w, "mandate   gem5")
		case ev.Type == "TaskScheduled" && ev.Scope != "":
			id := candidateOf(ev.Scope, candidates)
			fmt.Fprintf(w, "%-9s %s\n", id, stageLabel(ev.State, ev.Input))
		case ev.Type == "TaskSucceeded" && ev.State == "Report":
			if m, ok := ev.Output.(map[string]any); ok {
				fmt.Fprintf(w, "%-9s → %v (%v)\n", m["candidate_id"], m["decision"], m["reason"])
			}
		case ev.Type == "TaskScheduled" && ev.State == "Summary":
			fmt.Fprintln(w, "summary")
		}
	}
}

// stageLabel names a candidate stage for the progress display, with the
// attempt read from the task's loop counters.
func stageLabel(state string, input any) string {
	label := strings.ToLower(state)
	var qa, gem3 float64
	if m, ok := input.(map[string]any); ok {
		if c, ok := m["counters"].(map[string]any); ok {
			qa, _ = toFloat(c["qa"])
			gem3, _ = toFloat(c["gem3"])
		}
	}
	switch {
	case state == "Gem4" && qa > 0:
		label += fmt.Sprintf(" (re-audit %d)", int(qa))
	case state == "Correction":
		label += fmt.Sprintf(" %d", int(qa))
	case state == "Gem3" && gem3 > 0:
		label += " (re-ask)"
	}
	return label
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	case int:
		return float64(x), true
	}
	return 0, false
}

// candidateOf maps a history scope ("Candidates/item[3]") to its candidate.
func candidateOf(scope string, candidates []string) string {
	var i int
	if _, err := fmt.Sscanf(scope[strings.LastIndex(scope, "[")+1:], "%d]", &i); err == nil && i < len(candidates) {
		return candidates[i]
	}
	return scope
}
