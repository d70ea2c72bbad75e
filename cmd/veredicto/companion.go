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
	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/companion"
	"github.com/veredicto/veredicto/internal/labels"
	"github.com/veredicto/veredicto/internal/yamldoc"
	"github.com/veredicto/veredicto/platforms"
)

// exitPaused: the work stopped at a confirmation the user must answer.
const exitPaused = 3

const companionUsage = `Usage:
  veredicto companion run --jd JD.md --profile profile.yaml --out DIR [--mode screening|full|onboarding]
      [--company NAME] [--platform NAME] [--llm offline|openai] [--model M] [--small-model M]
      [--cache DIR] [--refresh] [--scoring FILE]
  veredicto companion continue --out DIR --proceed|--stop [--llm offline|openai] [--model M]
  veredicto companion answer --out DIR [--platform NAME [--confirm]] [--question Q]...
  veredicto companion verify --out DIR
  veredicto companion audit --out DIR
  veredicto companion retro --out DIR [--answers FILE]
  veredicto companion refine --out DIR --instruction "..."

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

After a full run, the phases you trigger: "answer" (phase 4) previews the
platform's usual fields (platforms/<name>.yaml: getonboard, linkedin_jobs)
and answers them once you --confirm, plus any --question, coherent with the
CV; "verify" (phase 5) cross-checks the CV against the profile, checks the
non-negotiables in code and anticipates 3 technical and 2 culture
questions; "audit" (phase 6) checks the 6 brand criteria; "retro" (phase 7)
asks the 4 retrospective questions (without --answers it prints them and a
template) and records the learnings. "refine" iterates on phases 3-5 with a
persisted history; a factual correction ("coordiné, no lideré") updates the
profile and writes DIR/profile.refined.yaml with the change recorded, to
start the next application from it.

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
	questions                                 stringList
	confirm                                   bool
	answers, instruction                      string
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
	case "continue":
		return m.companionContinue(ctx, cfg, getenv)
	default:
		return m.companionFollowUp(ctx, args[0], cfg, getenv)
	}
}

func parseCompanionArgs(sub string, args []string, stderr io.Writer) (companionConfig, error) {
	var cfg companionConfig
	fs := subcommandFlags("companion "+sub, companionUsage+"\nFlags:\n", stderr)
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
	case "answer":
		fs.StringVar(&cfg.platform, "platform", "", "platform whose layer-2 fields to answer (platforms/<name>.yaml)")
		fs.Var(&cfg.questions, "question", "a portal question to answer (repeatable)")
		fs.BoolVar(&cfg.confirm, "confirm", false, "confirm the platform's fields shown in the preview")
	case "verify", "audit":
	case "retro":
		fs.StringVar(&cfg.answers, "answers", "", "YAML with your answers to the 4 questions (answers: [...])")
	case "refine":
		fs.StringVar(&cfg.instruction, "instruction", "", "what to change, e.g. \"coordiné, no lideré\" (required)")
	default:
		return cfg, fmt.Errorf("unknown subcommand (want run, continue, answer, verify, audit, retro or refine)")
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
	case sub == "refine" && strings.TrimSpace(cfg.instruction) == "":
		return cfg, errors.New("--instruction is required")
	}
	if err := checkProvider(cfg.provider); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// companionAnalyst picks the analyst (app.ChooseCompanionAnalyst).
func companionAnalyst(cfg companionConfig, getenv func(string) string) (companion.Analyst, string, error) {
	return app.ChooseCompanionAnalyst(cfg.provider, cfg.model, cfg.smallModel, getenv)
}

// companionEngine is the ScoringEngine of --scoring (the defaults without
// it), and the configuration's text, which the audit record keeps.
func (m *Main) companionEngine(cfg companionConfig) (companion.Engine, []byte, error) {
	if cfg.scoring == "" {
		return companion.NewEngine(companion.DefaultConfig()), companion.DefaultConfigYAML(), nil
	}
	data, err := os.ReadFile(cfg.scoring)
	if err != nil {
		return companion.Engine{}, nil, err
	}
	c, err := companion.ParseConfig(cfg.scoring, data)
	if err != nil {
		return companion.Engine{}, nil, err
	}
	return companion.NewEngine(c), data, nil
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
		Analyst: a, Engine: e, Cache: cache, Refresh: cfg.refresh, Tenant: app.CompanionTenant,
		Save: func(ctx context.Context, c *companion.Context) error { return companion.SaveDir(ctx, cfg.out, c) },
		// The pause's text is printed once, by companionFinish, with how to
		// answer it.
		Emit: func(ev companion.Event) {
			if ev.Kind != "pause" {
				fmt.Fprintln(m.Stderr, ev.Message)
			}
		},
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
	engine, scoring, err := m.companionEngine(cfg)
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
		// The company, platform and mode come from flags: name the flag.
		var ie *veredicto.InvalidInputError
		if errors.As(err, &ie) && ie.File == "" && ie.Field != "" {
			return fail(exitUsage, "--%s: %s", ie.Field, ie.Problem)
		}
		return fail(exitUsage, "%v", err)
	}
	prev, err := companion.LoadDir(cfg.out)
	var nf *veredicto.NotFoundError
	command, from := companion.CommandRun, []byte(nil)
	switch {
	case errors.As(err, &nf):
	case err != nil:
		return fail(exitUsage, "%v", err)
	case prev.InputHash != c.InputHash || prev.Mode != c.Mode:
		return fail(exitUsage, "%s holds another application (different JD, profile, model or mode); choose another --out", cfg.out)
	case prev.Status == companion.StatusPaused:
		fmt.Fprintf(m.Stderr, "%s\n\nLa postulación está en pausa. Para seguir:\n  veredicto companion continue --out %s --proceed   (o --stop para detenerte)\n", prev.Pause.Preview, cfg.out)
		return exitPaused
	case prev.Status == companion.StatusRunning && !cfg.refresh:
		fmt.Fprintf(m.Stderr, "Reanudando desde la fase %d completada (sin repetir llamadas ya pagadas).\n", prev.LastCompletedPhase)
		c, command = prev, companion.CommandResume
		if from, err = os.ReadFile(filepath.Join(cfg.out, companion.ContextFile)); err != nil {
			return fail(exitFailed, "%v", err)
		}
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
	// One application, one record: OUT/audit (an earlier run's is kept
	// aside), starting with the inputs' texts.
	folder := companionFolder(cfg, a, c, from, map[string][]byte{companion.DocJD: jd, companion.DocProfile: data, companion.DocScoring: scoring})
	ctx, archived, err := folder.Begin(ctx)
	if err != nil {
		return fail(exitFailed, "audit record: %v", err)
	}
	if archived != "" {
		fmt.Fprintf(m.Stderr, "the earlier run's audit record is now %s\n", archived)
	}
	return m.companionFinish(ctx, cfg, companion.Command(ctx, m.companionRunner(cfg, a, engine, cache), c, command), c, "run")
}

func (m *Main) companionFinish(ctx context.Context, cfg companionConfig, err error, c *companion.Context, sub string) int {
	var ir *companion.IntentRejectedError
	var pe *companion.PausedError
	var ie *veredicto.InvalidInputError
	switch {
	case errors.As(err, &ir):
		fmt.Fprintf(m.Stderr, "veredicto companion %s: la oferta no se evaluó: %s\n", sub, ir.Reason)
		return exitUsage
	case errors.As(err, &pe):
		fmt.Fprintf(m.Stderr, "\n%s\n\nLa postulación está en pausa (%s/%s). Para seguir:\n  veredicto companion continue --out %s --proceed   (o --stop para detenerte)\n", pe.Preview, cfg.out, companion.ContextFile, cfg.out)
		m.companionRecordLine(m.Stderr, cfg)
		return exitPaused
	case errors.As(err, &ie):
		fmt.Fprintf(m.Stderr, "veredicto companion %s: %v\n", sub, err)
		return exitUsage
	case ctx.Err() != nil:
		fmt.Fprintf(m.Stderr, "veredicto companion %s: interrumpida tras la fase %d; vuelve a ejecutarla para retomarla\n", sub, c.LastCompletedPhase)
		return exitInterrupted
	case err != nil:
		fmt.Fprintf(m.Stderr, "veredicto companion %s: %v (guardada hasta la fase %d; vuelve a ejecutarla para retomarla)\n", sub, err, c.LastCompletedPhase)
		return exitFailed
	}
	// The result line is the candidate's: Spanish, codes through labels.
	s := c.ScoringResult
	fmt.Fprintf(m.Stdout, "%s: postulación %s · Confidence Score %.2f · SAS %d · %s\n", filepath.Join(cfg.out, companion.ReportFile),
		labels.Of(labels.CompanionStatus, c.Status), s.Confidence.Final, s.SAS.Total, labels.Of(labels.CompanionDecision, s.DecisionMatrix))
	m.companionRecordLine(m.Stdout, cfg)
	return exitOK
}

// companionRecordLine says where the application's audit record is.
func (m *Main) companionRecordLine(w io.Writer, cfg companionConfig) {
	fmt.Fprintf(w, "Registro de auditoría: %s (verifícalo con: veredicto audit verify %s; reprodúcelo con: veredicto replay %s --out CARPETA)\n",
		filepath.Join(cfg.out, "audit"), cfg.out, cfg.out)
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
	if err := companion.CheckPaused(c); err != nil {
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
	engine, scoring, err := m.companionEngine(cfg)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	cache, err := companionCache(cfg)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	from, err := os.ReadFile(filepath.Join(cfg.out, companion.ContextFile))
	if err != nil {
		return fail(exitFailed, "%v", err)
	}
	fmt.Fprintln(m.Stderr, notice)
	// The answer goes into the record "run" opened (a new one starting
	// from the saved context when the folder holds another).
	folder := companionFolder(cfg, a, c, from, map[string][]byte{companion.DocJD: []byte(c.JDText), companion.DocScoring: scoring})
	ctx, archived, err := folder.Continue(ctx)
	if err != nil {
		return fail(exitFailed, "audit record: %v", err)
	}
	if archived != "" {
		fmt.Fprintf(m.Stderr, "the folder's audit record was another application's; it is now %s\n", archived)
	}
	err = companion.Continue(ctx, m.companionRunner(cfg, a, engine, cache), c, cfg.proceed, "local:"+localUser())
	return m.companionFinish(ctx, cfg, err, c, "continue")
}

// companionFollowUp runs a phase the user triggers (4-7) or a refinement
// on the application in cfg.out, with the analyst that ran it.
func (m *Main) companionFollowUp(ctx context.Context, sub string, cfg companionConfig, getenv func(string) string) int {
	fail := func(code int, format string, args ...any) int {
		fmt.Fprintf(m.Stderr, "veredicto companion %s: "+format+"\n", append([]any{sub}, args...)...)
		return code
	}
	c, err := companion.LoadDir(cfg.out)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	if cfg.provider == "" {
		cfg.provider = c.Analyst.Provider
	}
	if cfg.model == "" && c.Analyst.Provider == "openai" {
		cfg.model = c.Analyst.Model
	}
	a, _, err := companionAnalyst(cfg, getenv)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	f, ok := a.(companion.FollowUp)
	if !ok {
		return fail(exitFailed, "the analyst cannot run the follow-up phases")
	}
	// What the phase does, once its inputs are known (a preview or a
	// template asks first, and changes nothing).
	var run func(ctx context.Context) error
	switch sub {
	case "answer":
		var platform string
		var questions []string
		platform, questions, err = m.companionAnswerQuestions(c, cfg)
		run = func(ctx context.Context) error {
			fmt.Fprintln(m.Stderr, "[Fase 4/7] Preparando respuestas de postulación...")
			return companion.Answer(ctx, f, c, platform, questions)
		}
	case "verify":
		run = func(ctx context.Context) error {
			fmt.Fprintln(m.Stderr, "[Fase 5/7] Verificando integridad factual e Interview Intel...")
			return companion.Verify(ctx, f, c)
		}
	case "audit":
		run = func(ctx context.Context) error {
			fmt.Fprintln(m.Stderr, "[Fase 6/7] Auditando coherencia de marca...")
			return companion.Audit(ctx, f, c)
		}
	case "retro":
		var answers []string
		answers, err = m.companionRetroAnswers(cfg)
		run = func(ctx context.Context) error {
			fmt.Fprintln(m.Stderr, "[Fase 7/7] Capturando learnings...")
			return companion.Retro(ctx, f, c, answers)
		}
	case "refine":
		run = func(ctx context.Context) error { return m.companionRefine(ctx, f, c, cfg) }
	}
	if err == nil {
		// The phase goes into the application's record (its model calls,
		// the files it rewrites), so the record still verifies after it.
		from, rerr := os.ReadFile(filepath.Join(cfg.out, companion.ContextFile))
		if rerr != nil {
			return fail(exitFailed, "%v", rerr)
		}
		var archived string
		ctx, archived, err = companionFolder(cfg, a, c, from, nil).Continue(ctx)
		if archived != "" {
			fmt.Fprintf(m.Stderr, "the folder's audit record was another application's; it is now %s\n", archived)
		}
		if err == nil {
			err = companion.FollowUpCommand(ctx, c, sub, run, func(ctx context.Context) error { return companion.SaveDir(ctx, cfg.out, c) })
		}
	}
	var waiting *confirmationNeeded
	var ie *veredicto.InvalidInputError
	var ce *veredicto.ConflictError
	switch {
	case errors.As(err, &waiting):
		fmt.Fprintln(m.Stderr, waiting.msg)
		return exitPaused
	case errors.As(err, &ie), errors.As(err, &ce):
		return fail(exitUsage, "%v", err)
	case err != nil:
		return fail(exitFailed, "%v", err)
	}
	fmt.Fprintf(m.Stdout, "%s: fase %d/7 completada\n", filepath.Join(cfg.out, companion.ReportFile), c.LastCompletedPhase)
	return exitOK
}

// companionFolder is the audit record of the application c in cfg.out,
// analysed by a: from is the saved context a new record starts from (nil
// for a new application), docs the inputs' texts (the JD's, from the
// context, when nil).
func companionFolder(cfg companionConfig, a companion.Analyst, c *companion.Context, from []byte, docs map[string][]byte) app.CompanionFolder {
	if docs == nil {
		docs = map[string][]byte{companion.DocJD: []byte(c.JDText)}
	}
	return app.CompanionFolder{Out: cfg.out, Analyst: a, From: from, Docs: docs,
		Input: companion.RecordedInput{Surface: companion.SurfaceFolder, Analyst: a.Info(), StartInput: companion.StartInput{Tenant: app.CompanionTenant,
			ApplicationID: c.ApplicationID, Mode: c.Mode, Company: c.Company, Platform: c.PlatformName, Refresh: cfg.refresh}}}
}

// companionRefine runs a refinement; a factual correction writes the
// corrected profile beside the application (recorded with its files).
func (m *Main) companionRefine(ctx context.Context, f companion.FollowUp, c *companion.Context, cfg companionConfig) error {
	at, err := audit.Now(ctx, "refine")
	if err != nil {
		return err
	}
	changed, err := companion.Refine(ctx, f, c, cfg.instruction, at)
	if err != nil {
		return err
	}
	if changed {
		p := filepath.Join(cfg.out, companion.RefinedProfileFile)
		if err := companion.SaveProfile(p, c.Profile); err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := companion.RecordFile(ctx, companion.RefinedProfileFile, b); err != nil {
			return err
		}
		fmt.Fprintf(m.Stderr, "Perfil actualizado: %s (usa este archivo en tu próxima postulación).\n", p)
	}
	fmt.Fprintln(m.Stdout, c.RefinementHistory[len(c.RefinementHistory)-1].Reply)
	return nil
}

// confirmationNeeded is a phase that waits for the user's confirmation.
type confirmationNeeded struct{ msg string }

func (e *confirmationNeeded) Error() string { return e.msg }

// companionAnswerQuestions are the questions phase 4 answers: the
// platform's usual fields once the user confirmed them (the preview
// otherwise, as a *confirmationNeeded), and any --question.
func (m *Main) companionAnswerQuestions(c *companion.Context, cfg companionConfig) (string, []string, error) {
	// Before any preview: the answers are written from the CV's content.
	if err := companion.RequireCV(c, "answer"); err != nil {
		return "", nil, err
	}
	platform := cfg.platform
	if platform == "" {
		platform = c.PlatformName
	}
	var questions []string
	if platform != "" {
		s, err := platforms.Load(platform)
		if err != nil {
			return "", nil, &veredicto.InvalidInputError{Field: "platform", Problem: err.Error()}
		}
		var labels []string
		for _, fl := range s.Layer2Fields {
			labels = append(labels, fl.Label)
		}
		name := s.DisplayName
		if name == "" {
			name = s.PlatformName
		}
		preview := fmt.Sprintf("%s generalmente pide: %s. ¿Te aparecen estas mismas?", name, strings.Join(labels, ", "))
		if !cfg.confirm {
			var b strings.Builder
			b.WriteString(preview + "\n")
			for _, fl := range s.Layer2Fields {
				fmt.Fprintf(&b, "  - %s\n", fl.Question)
			}
			fmt.Fprintf(&b, "Confirm with: veredicto companion answer --out %s --platform %s --confirm [--question \"other question\"]...", cfg.out, s.PlatformName)
			return "", nil, &confirmationNeeded{msg: b.String()}
		}
		for _, fl := range s.Layer2Fields {
			questions = append(questions, fl.Question)
		}
		platform = s.PlatformName
	}
	return platform, append(questions, cfg.questions...), nil
}

// companionRetroAnswers are the answers --answers gives to the 4
// retrospective questions (without it, the questions and a template, as
// a *confirmationNeeded).
func (m *Main) companionRetroAnswers(cfg companionConfig) ([]string, error) {
	if cfg.answers == "" {
		var b strings.Builder
		b.WriteString("[Fase 7/7] Retrospectiva: responde estas 4 preguntas en un YAML y pásalo con --answers FILE:\n")
		for i, q := range companion.RetroQuestions {
			fmt.Fprintf(&b, "  %d. %s\n", i+1, q)
		}
		b.WriteString("Template:\nanswers:\n  - \"...\"\n  - \"...\"\n  - \"...\"\n  - \"...\"")
		return nil, &confirmationNeeded{msg: b.String()}
	}
	data, err := os.ReadFile(cfg.answers)
	if err != nil {
		return nil, &veredicto.InvalidInputError{File: cfg.answers, Problem: err.Error()}
	}
	var doc struct {
		Answers []string `yaml:"answers"`
	}
	if err := yamldoc.Decode(cfg.answers, data, &doc); err != nil {
		return nil, err
	}
	if len(doc.Answers) != len(companion.RetroQuestions) {
		return nil, &veredicto.InvalidInputError{File: cfg.answers, Field: "answers", Problem: fmt.Sprintf("want %d answers, one per question, got %d", len(companion.RetroQuestions), len(doc.Answers))}
	}
	return doc.Answers, nil
}
