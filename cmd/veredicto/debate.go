package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/app"
	"github.com/veredicto/veredicto/internal/debate"
	"github.com/veredicto/veredicto/internal/labels"
)

// exitPending: the debate ran and escalated to a person whose decision is
// pending (recorded in debate.md and debate_log.yaml).
const exitPending = 3

const debateUsage = `Usage: veredicto debate run QUESTION.yaml --out DIR [--knowledge DIR] [--llm offline|openai] [--model M] [--no-optional-council]

Runs a committee debate on one hiring question (seed 003): the routing
checkpoint (simple, debate or council), up to three rounds (positions in
parallel, sequential rebuttals, a refinement on the open divergences), the
convergence checkpoint, the circuit breaker, timeouts, the council of three
and the escalation to a person.

QUESTION.yaml: question, options (the possible recommendations),
participants (id, brief), optional mode (auto|simple|debate|council),
value_at_risk (amount, currency; default BRL), irreversible, risk_level
(BAIXO|MEDIO|ALTO|CATASTROFICO) and config overrides named as the seed's
parameters (config: {timeout: {per_agent: 30, per_round: 120, total: 300},
convergence: {threshold: 70}, debate: {rounds: {max: 3}}, ...}; seconds).
--knowledge DIR is the internal knowledge base (text files: .md .txt .yaml
.json), chunked with stable ids and cited as [RAG:<chunk_id>].

Writes DIR/debate_log.yaml (the seed's debate_log) and DIR/debate.md (the
report, in Spanish). An existing debate in DIR is never overwritten.
DIR/audit is the debate's audit record (the question, the knowledge, every
model call, each round's convergence, the circuit breaker, the escalation
and the hashes of the files): "veredicto audit verify DIR" checks it and
"veredicto replay DIR --out OTHER" re-runs the debate from it with no
provider.

The LLM is "openai" when OPENAI_API_KEY is set (OPENAI_BASE_URL and
OPENAI_MODEL configure any OpenAI-compatible endpoint), otherwise the
offline baseline (deterministic, labelled as such).

Exit codes: 0 a decision was emitted; 3 the decision is pending a person
(escalated to HUMANO); 2 bad invocation or input (nothing ran); 1 the
debate failed (e.g. the LLM provider).

Flags:
`

type debateRunConfig struct {
	question          string
	knowledge         string
	out               string
	provider          string
	model             string
	noOptionalCouncil bool
	now               func() time.Time
}

func (m *Main) runDebate(ctx context.Context, args []string) int {
	return runSubcommand(m, "debate", debateUsage, args, parseDebateRun, func(cfg debateRunConfig) int {
		return m.debateRun(ctx, cfg, os.Getenv)
	})
}

func parseDebateRun(args []string, stderr io.Writer) (debateRunConfig, error) {
	var cfg debateRunConfig
	fs := subcommandFlags("debate run", debateUsage, stderr)
	fs.StringVar(&cfg.out, "out", "", "output folder (required)")
	fs.StringVar(&cfg.knowledge, "knowledge", "", "knowledge base folder (optional)")
	fs.StringVar(&cfg.provider, "llm", "", "offline or openai (default: openai when OPENAI_API_KEY is set, else offline)")
	fs.StringVar(&cfg.model, "model", "", "model name for openai (default: $OPENAI_MODEL or gpt-4o-mini)")
	fs.BoolVar(&cfg.noOptionalCouncil, "no-optional-council", false, "skip the optional council (synthesis confidence 50-69%, value at risk under the threshold)")
	positional, err := parseInterleaved(fs, args)
	if err != nil {
		return cfg, err
	}
	switch {
	case len(positional) != 1:
		return cfg, fmt.Errorf("want exactly one QUESTION.yaml, got %d", len(positional))
	case cfg.out == "":
		return cfg, errors.New("--out is required")
	}
	cfg.question = positional[0]
	if err := checkProvider(cfg.provider); err != nil {
		return cfg, err
	}
	return cfg, nil
}

func (m *Main) debateRun(ctx context.Context, cfg debateRunConfig, getenv func(string) string) int {
	fail := func(code int, format string, args ...any) int {
		fmt.Fprintf(m.Stderr, "veredicto debate run: "+format+"\n", args...)
		return code
	}
	data, err := os.ReadFile(cfg.question)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	if _, err := debate.ParseQuestion(cfg.question, data); err != nil {
		return fail(exitUsage, "%v", err)
	}
	var docs []debate.Document
	if cfg.knowledge != "" {
		if docs, err = debate.LoadDocuments(cfg.knowledge); err != nil {
			return fail(exitUsage, "%v", err)
		}
		if len(debate.Chunks(docs)) == 0 {
			fmt.Fprintf(m.Stderr, "warning: %s holds no documents with text (.md, .txt, .yaml, .json): the debate runs without evidence from it\n", cfg.knowledge)
		}
	}
	return m.debateExecute(ctx, "veredicto debate run", cfg, data, docs, getenv)
}

// debateExecute runs a debate on QUESTION.yaml's text and the knowledge
// documents, records it in OUT/audit and writes its outputs; prefix names
// the command in messages.
func (m *Main) debateExecute(ctx context.Context, prefix string, cfg debateRunConfig, question []byte, docs []debate.Document, getenv func(string) string) int {
	fail := func(code int, format string, args ...any) int {
		fmt.Fprintf(m.Stderr, prefix+": "+format+"\n", args...)
		return code
	}
	if _, err := os.Stat(filepath.Join(cfg.out, "debate_log.yaml")); err == nil {
		return fail(exitUsage, "%s already holds a debate (debate_log.yaml); choose another --out", cfg.out)
	}
	client, err := app.ChooseLLM(cfg.provider, cfg.model, getenv)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	run := app.FolderDebate{Question: question, QuestionName: cfg.question, Documents: docs, Out: cfg.out, OptionalCouncil: !cfg.noOptionalCouncil,
		Now: cfg.now, Logger: slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	notice := "LLM: offline baseline (deterministic lexical rules, labelled in the report): not a model judgment"
	if client != nil {
		run.Client, run.Model = client, client.Info()
		notice = "LLM: openai-compatible, model " + client.Info().Model
	}
	fmt.Fprintln(m.Stderr, notice)
	r, err := app.RunFolderDebate(ctx, run)
	if err != nil {
		if ctx.Err() != nil {
			return fail(exitInterrupted, "interrupted: %v", err)
		}
		var ie *veredicto.InvalidInputError
		if errors.As(err, &ie) {
			return fail(exitUsage, "%v", err)
		}
		return fail(exitFailed, "%v", err)
	}
	// The result lines are for the person who asked: Spanish, codes
	// through their labels.
	fmt.Fprintf(m.Stdout, "debate %s: ruta %s, %d ronda(s), convergencia %.1f%%, confianza de la síntesis %.1f%%\n",
		r.SessionID, labels.Of(labels.DebateMode, r.Mode), len(r.Rounds), r.Convergence, r.Confidence)
	fmt.Fprintf(m.Stderr, "Audit record: %s (veredicto audit verify %s; veredicto replay %s --out DIR)\n",
		filepath.Join(cfg.out, "audit"), cfg.out, cfg.out)
	if r.Pending {
		fmt.Fprintf(m.Stdout, "escalado a %s: decisión pendiente (ver %s)\n", labels.Of(labels.DebateTarget, r.Target), filepath.Join(cfg.out, "debate.md"))
		return exitPending
	}
	final := r.Final
	if final == "" {
		final = "ninguna"
	}
	fmt.Fprintf(m.Stdout, "decisión: %s (escalado a: %s)\ninforme: %s\n", final, labels.Of(labels.DebateTarget, r.Target), filepath.Join(cfg.out, "debate.md"))
	return exitOK
}
