package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/app"
	"github.com/veredicto/veredicto/internal/companion"
	"github.com/veredicto/veredicto/internal/companion/agents"
)

// exitPaused: the work stopped at a confirmation the user must answer.
const exitPaused = 3

const companionUsage = `Usage:
  veredicto companion run --jd JD.md --profile profile.yaml --out DIR [--mode screening|full|onboarding]
      [--company NAME] [--platform NAME] [--llm offline|openai] [--model M] [--small-model M]
      [--cache DIR] [--refresh] [--scoring FILE]
  veredicto companion continue --out DIR --proceed|--stop [--llm offline|openai] [--model M]

The career companion of seed 001: should you apply, how well do you fit,
what do you say. "run" checks the profile (an incomplete one exits 2 with
what to add, before any model call), rejects input that is not a job
description or that hides instructions for the model (exit 2), then runs
phase 1 (culture radar), phase 2 (requirements classified A-D and matched,
SAS, and every score computed by code) and, in full mode, phase 3 (killer
summary, impact bullets from verified achievements, skills matrix).
Progress goes to stderr ("[Fase n/7] ..."). DIR/context.json (the
AgentContext) and DIR/report.md (Spanish) are saved after every phase; a
crashed run started again with the same inputs resumes from the last
completed phase without paying again.

With two or more obligatory (A/B) requirements not met, a full run pauses
(exit 3) with the anti-impostor confirmation; answer with
"veredicto companion continue --out DIR --proceed" or "--stop".

Classifications are cached by input hash (JD + profile + prompt version +
model) under --cache (default: the user cache dir); a re-run reuses them.
--refresh classifies again and records a drift alert when the final score
moves more than 5 points. --scoring replaces the scoring defaults (the
embedded scoring.yaml; see the README).

The LLM is "openai" (the default when OPENAI_API_KEY is set;
OPENAI_BASE_URL, OPENAI_MODEL and OPENAI_SMALL_MODEL for the intent check)
or the offline baseline, deterministic and labelled as such.
`

type companionConfig struct {
	jd, profile, out, mode, company, platform string
	provider, model, smallModel               string
	cache, scoring                            string
	refresh                                   bool
	proceed, stop                             bool
}

func (m *Main) runCompanion(ctx context.Context, args []string) int {
	return m.companion(ctx, args, os.Getenv)
}

func (m *Main) companion(ctx context.Context, args []string, getenv func(string) string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(m.Stderr, companionUsage)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	cfg, err := parseCompanionArgs(args[0], args[1:], m.Stderr)
	if err != nil {
		if err == flag.ErrHelp {
			return exitOK
		}
		fmt.Fprintf(m.Stderr, "veredicto companion %s: %v\n", args[0], err)
		return exitUsage
	}
	switch args[0] {
	case "run":
		return m.companionRun(ctx, cfg, getenv)
	default:
		return m.companionContinue(ctx, cfg, getenv)
	}
}

func parseCompanionArgs(sub string, args []string, stderr io.Writer) (companionConfig, error) {
	var cfg companionConfig
	fs := flag.NewFlagSet("companion "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, companionUsage+"\nFlags:\n"); fs.PrintDefaults() }
	fs.StringVar(&cfg.out, "out", "", "output folder: context.json and report.md (required)")
	fs.StringVar(&cfg.provider, "llm", "", "offline or openai (default: openai when OPENAI_API_KEY is set, else offline)")
	fs.StringVar(&cfg.model, "model", "", "model for openai (default: $OPENAI_MODEL or gpt-4o-mini)")
	fs.StringVar(&cfg.smallModel, "small-model", "", "model of the intent check (default: $OPENAI_SMALL_MODEL, else --model)")
	fs.StringVar(&cfg.cache, "cache", "", "classification cache folder (default: the user cache dir)")
	fs.StringVar(&cfg.scoring, "scoring", "", "scoring configuration YAML (default: the built-in defaults)")
	switch sub {
	case "run":
		fs.StringVar(&cfg.jd, "jd", "", "job description, Markdown or text (required)")
		fs.StringVar(&cfg.profile, "profile", "", "ProfileSnapshot YAML (required)")
		fs.StringVar(&cfg.mode, "mode", companion.ModeFull, "screening, full or onboarding")
		fs.StringVar(&cfg.company, "company", "", "company name")
		fs.StringVar(&cfg.platform, "platform", "", "application platform (platforms/<name>.yaml)")
		fs.BoolVar(&cfg.refresh, "refresh", false, "classify again even when cached, and check the drift")
	case "continue":
		fs.BoolVar(&cfg.proceed, "proceed", false, "go on after the anti-impostor pause")
		fs.BoolVar(&cfg.stop, "stop", false, "stop the application at the anti-impostor pause")
	default:
		return cfg, fmt.Errorf("unknown subcommand (want run or continue)")
	}
	positional, err := parseInterleaved(fs, args)
	if err != nil {
		return cfg, err
	}
	switch {
	case len(positional) > 0:
		return cfg, fmt.Errorf("unexpected argument %q", positional[0])
	case cfg.out == "":
		return cfg, errors.New("--out is required")
	case sub == "run" && cfg.jd == "":
		return cfg, errors.New("--jd is required")
	case sub == "run" && cfg.profile == "":
		return cfg, errors.New("--profile is required")
	case sub == "continue" && cfg.proceed == cfg.stop:
		return cfg, errors.New("give exactly one of --proceed or --stop")
	}
	switch cfg.provider {
	case "", "offline", "openai":
	default:
		return cfg, fmt.Errorf("--llm must be offline or openai, got %q", cfg.provider)
	}
	return cfg, nil
}

// companionAnalyst picks the analyst: the LLM agents (the intent check on
// the small model) or the offline baseline.
func companionAnalyst(cfg companionConfig, getenv func(string) string) (companion.Analyst, string, error) {
	client, err := app.ChooseLLM(cfg.provider, cfg.model, getenv)
	if err != nil {
		return nil, "", err
	}
	if client == nil {
		return companion.Offline{}, "LLM: offline baseline (deterministic; the report is labelled as a baseline, not a model judgment)", nil
	}
	smallModel := cfg.smallModel
	if smallModel == "" {
		smallModel = getenv("OPENAI_SMALL_MODEL")
	}
	small := client
	if smallModel != "" && smallModel != client.Info().Model {
		if small, err = app.ChooseLLM("openai", smallModel, getenv); err != nil {
			return nil, "", err
		}
	}
	a := agents.New(client, small, "openai", client.Info().Model, small.Info().Model)
	return a, fmt.Sprintf("LLM: openai-compatible, model %s (intent: %s)", client.Info().Model, small.Info().Model), nil
}

func (m *Main) companionEngine(cfg companionConfig) (companion.Engine, error) {
	if cfg.scoring == "" {
		return companion.NewEngine(companion.DefaultConfig()), nil
	}
	data, err := os.ReadFile(cfg.scoring)
	if err != nil {
		return companion.Engine{}, err
	}
	c, err := companion.ParseConfig(cfg.scoring, data)
	if err != nil {
		return companion.Engine{}, err
	}
	return companion.NewEngine(c), nil
}

func companionCache(cfg companionConfig) (companion.Cache, error) {
	dir := cfg.cache
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return nil, fmt.Errorf("no cache folder (give --cache): %w", err)
		}
		dir = filepath.Join(base, "veredicto", "companion")
	}
	return companion.FileCache{Dir: dir, Tenant: "local"}, nil
}

func (m *Main) companionRunner(cfg companionConfig, a companion.Analyst, e companion.Engine, cache companion.Cache) *companion.Runner {
	return &companion.Runner{
		Analyst: a, Engine: e, Cache: cache, Refresh: cfg.refresh,
		Save: func(_ context.Context, c *companion.Context) error { return companion.SaveDir(cfg.out, c) },
		Emit: func(ev companion.Event) { fmt.Fprintln(m.Stderr, ev.Message) },
	}
}

func (m *Main) companionRun(ctx context.Context, cfg companionConfig, getenv func(string) string) int {
	fail := func(code int, format string, args ...any) int {
		fmt.Fprintf(m.Stderr, "veredicto companion run: "+format+"\n", args...)
		return code
	}
	jd, err := os.ReadFile(cfg.jd)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	data, err := os.ReadFile(cfg.profile)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	profile, err := companion.ParseProfile(cfg.profile, data)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	engine, err := m.companionEngine(cfg)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	a, notice, err := companionAnalyst(cfg, getenv)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	c, err := companion.NewContext(cfg.profile, string(jd), profile, cfg.mode, cfg.company, cfg.platform, a.Info())
	if err != nil {
		var pe *companion.ProfileIncompleteError
		if errors.As(err, &pe) {
			fmt.Fprintf(m.Stderr, "veredicto companion run: %s: el perfil está incompleto:\n", cfg.profile)
			for _, msg := range pe.Messages {
				fmt.Fprintf(m.Stderr, "  - %s\n", msg)
			}
			return exitUsage
		}
		return fail(exitUsage, "%v", err)
	}
	prev, err := companion.LoadDir(cfg.out)
	var nf *veredicto.NotFoundError
	switch {
	case errors.As(err, &nf):
	case err != nil:
		return fail(exitUsage, "%v", err)
	case prev.InputHash != c.InputHash || prev.Mode != c.Mode:
		return fail(exitUsage, "%s holds another application (different JD, profile, model or mode); choose another --out", cfg.out)
	case prev.Status == companion.StatusPaused:
		fmt.Fprintf(m.Stderr, "%s\n\nThe application is paused. Continue with:\n  veredicto companion continue --out %s --proceed   (or --stop)\n", prev.Pause.Preview, cfg.out)
		return exitPaused
	case prev.Status == companion.StatusRunning && !cfg.refresh:
		fmt.Fprintf(m.Stderr, "Reanudando desde la fase %d completada (sin repetir llamadas ya pagadas).\n", prev.LastCompletedPhase)
		c = prev
	default:
		// A finished application run again: keep the previous output.
		for _, f := range []string{companion.ContextFile, companion.ReportFile} {
			p := filepath.Join(cfg.out, f)
			ext := filepath.Ext(f)
			if err := os.Rename(p, strings.TrimSuffix(p, ext)+".prev"+ext); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fail(exitFailed, "keep the previous %s: %v", f, err)
			}
		}
	}
	cache, err := companionCache(cfg)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	fmt.Fprintln(m.Stderr, notice)
	for _, w := range c.Warnings {
		fmt.Fprintf(m.Stderr, "warning: %s\n", w)
	}
	return m.companionFinish(ctx, cfg, m.companionRunner(cfg, a, engine, cache).Run(ctx, c), c, "run")
}

func (m *Main) companionFinish(ctx context.Context, cfg companionConfig, err error, c *companion.Context, sub string) int {
	var ir *companion.IntentRejectedError
	var pe *companion.PausedError
	var ie *veredicto.InvalidInputError
	switch {
	case errors.As(err, &ir):
		fmt.Fprintf(m.Stderr, "veredicto companion %s: rejected: %s\n", sub, ir.Reason)
		return exitUsage
	case errors.As(err, &pe):
		fmt.Fprintf(m.Stderr, "\n%s\n\nThe application is paused (%s/%s). Continue with:\n  veredicto companion continue --out %s --proceed   (or --stop)\n", pe.Preview, cfg.out, companion.ContextFile, cfg.out)
		return exitPaused
	case errors.As(err, &ie):
		fmt.Fprintf(m.Stderr, "veredicto companion %s: %v\n", sub, err)
		return exitUsage
	case ctx.Err() != nil:
		fmt.Fprintf(m.Stderr, "veredicto companion %s: interrupted after phase %d; run it again to resume\n", sub, c.LastCompletedPhase)
		return exitInterrupted
	case err != nil:
		fmt.Fprintf(m.Stderr, "veredicto companion %s: %v (saved up to phase %d; run it again to resume)\n", sub, err, c.LastCompletedPhase)
		return exitFailed
	}
	s := c.ScoringResult
	fmt.Fprintf(m.Stdout, "%s: %s · confidence %.2f · SAS %d · %s\n", filepath.Join(cfg.out, companion.ReportFile), c.Status, s.Confidence.Final, s.SAS.Total, s.DecisionMatrix)
	return exitOK
}

func (m *Main) companionContinue(ctx context.Context, cfg companionConfig, getenv func(string) string) int {
	fail := func(code int, format string, args ...any) int {
		fmt.Fprintf(m.Stderr, "veredicto companion continue: "+format+"\n", args...)
		return code
	}
	c, err := companion.LoadDir(cfg.out)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	if err := companion.Resolve(c, cfg.proceed); err != nil {
		return fail(exitUsage, "%v", err)
	}
	if cfg.provider == "" {
		cfg.provider = c.Analyst.Provider
	}
	if cfg.model == "" && c.Analyst.Provider == "openai" {
		cfg.model = c.Analyst.Model
	}
	a, notice, err := companionAnalyst(cfg, getenv)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	if ai := a.Info(); ai.Provider != c.Analyst.Provider || ai.Model != c.Analyst.Model {
		return fail(exitUsage, "the application was analysed by %s/%s; continue it with the same (--llm, --model)", c.Analyst.Provider, c.Analyst.Model)
	}
	engine, err := m.companionEngine(cfg)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	cache, err := companionCache(cfg)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	fmt.Fprintln(m.Stderr, notice)
	return m.companionFinish(ctx, cfg, m.companionRunner(cfg, a, engine, cache).Run(ctx, c), c, "continue")
}
