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
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/app"
	"github.com/veredicto/veredicto/internal/flags"
)

const flagsUsage = `Usage: veredicto flags --questions Q.yaml --transcript T.yaml [--transcript T2.yaml] [--context C.yaml] [--llm offline|openai] [--model M] [--hedging FILE] [--out DIR]

Classifies interview answers into the Flags of seed 002 and prints the Flags
YAML on stdout: flags_id, generated_at, summary and by_question in
question-set order. Flags describe; they never explain or recommend.

Q.yaml is the question set (question_set_id; questions: question_id, target
rrhh|tecnico, question_text, closure_rule, max_words). Each T.yaml is a
transcript (transcript_id, target, answers: question_id, answer_text,
forced_closure); when two transcripts answer the same question the first one
given wins. C.yaml is the optional context pack (context_pack_id; facts: id,
text): without it contradiction_with_context is false ("no comparable").
--hedging replaces the default doubt lexicon with FILE, one marker per line.

contradiction_with_context is judged by an LLM ("openai", the default when
OPENAI_API_KEY is set; OPENAI_BASE_URL and OPENAI_MODEL configure any
OpenAI-compatible endpoint) or by the offline judge (number and negation
mismatches on shared terms). Every other flag is computed by fixed rules.

With --out DIR the flags are also written to DIR/flags.yaml, and DIR/audit
keeps the classification's audit record: every document, the judge's model
calls, for every rule that fired the rule and the answer span behind the
flag (which the Flags output never explains), and the output's hash.
"veredicto audit verify DIR" checks it; "veredicto replay DIR --out OTHER"
classifies again from it with no provider, byte for byte.

A question with no answer is flagged conservatively and named in a warning
on stderr. Bad input (a malformed file, an unknown or missing field, an
answer to a question not in the set) exits 2; a failed LLM call exits 1.

Flags:
`

type flagsConfig struct {
	questions   string
	transcripts []string
	context     string
	provider    string
	model       string
	hedging     string
	out         string
	// now is the clock for generated_at; nil means time.Now.
	now func() time.Time
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error {
	*s = append(*s, v)
	return nil
}

func (m *Main) runFlags(ctx context.Context, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(m.Stderr, strings.Replace(flagsUsage, "\nFlags:\n", "", 1))
		return exitUsage
	}
	cfg, err := parseFlagsArgs(args, m.Stderr)
	if err != nil {
		if err == flag.ErrHelp {
			return exitOK
		}
		fmt.Fprintf(m.Stderr, "veredicto flags: %v\n", err)
		return exitUsage
	}
	return m.flagsRun(ctx, cfg, os.Getenv)
}

func parseFlagsArgs(args []string, stderr io.Writer) (flagsConfig, error) {
	var cfg flagsConfig
	fs := subcommandFlags("flags", flagsUsage, stderr)
	var transcripts stringList
	fs.StringVar(&cfg.questions, "questions", "", "question set YAML (required)")
	fs.Var(&transcripts, "transcript", "transcript YAML (required; repeat for several)")
	fs.StringVar(&cfg.context, "context", "", "context pack YAML (optional)")
	fs.StringVar(&cfg.provider, "llm", "", "contradiction judge: offline or openai (default: openai when OPENAI_API_KEY is set, else offline)")
	fs.StringVar(&cfg.model, "model", "", "model name for openai (default: $OPENAI_MODEL or gpt-4o-mini)")
	fs.StringVar(&cfg.hedging, "hedging", "", "doubt lexicon file, one marker per line (default: the built-in lexicon)")
	fs.StringVar(&cfg.out, "out", "", "also write DIR/flags.yaml and keep the classification's audit record in DIR/audit")
	positional, err := parseInterleaved(fs, args)
	if err != nil {
		return cfg, err
	}
	cfg.transcripts = transcripts
	switch {
	case len(positional) > 0:
		return cfg, fmt.Errorf("unexpected argument %q (inputs are given with --questions and --transcript)", positional[0])
	case cfg.questions == "":
		return cfg, errors.New("--questions is required")
	case len(cfg.transcripts) == 0:
		return cfg, errors.New("at least one --transcript is required")
	}
	if err := checkProvider(cfg.provider); err != nil {
		return cfg, err
	}
	return cfg, nil
}

func (m *Main) flagsRun(ctx context.Context, cfg flagsConfig, getenv func(string) string) int {
	fail := func(code int, format string, args ...any) int {
		fmt.Fprintf(m.Stderr, "veredicto flags: "+format+"\n", args...)
		return code
	}
	read := func(path string) (*flags.Document, error) {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		return &flags.Document{Name: path, Data: data}, nil
	}
	var in flags.Inputs
	q, err := read(cfg.questions)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	in.Questions = *q
	for _, p := range cfg.transcripts {
		t, err := read(p)
		if err != nil {
			return fail(exitUsage, "%v", err)
		}
		in.Transcripts = append(in.Transcripts, *t)
	}
	if cfg.context != "" {
		if in.Context, err = read(cfg.context); err != nil {
			return fail(exitUsage, "%v", err)
		}
	}
	if cfg.hedging != "" {
		if in.Hedging, err = read(cfg.hedging); err != nil {
			return fail(exitUsage, "%v", err)
		}
	}

	client, err := app.ChooseLLM(cfg.provider, cfg.model, getenv)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	var judge flags.ContradictionJudge = flags.OfflineJudge{}
	notice := "contradiction judge: offline (number and negation mismatches on shared terms)"
	if client != nil {
		judge, notice = flags.LLMJudge{Client: client}, "contradiction judge: openai-compatible, model "+client.Info().Model
	}
	if in.Context != nil {
		fmt.Fprintln(m.Stderr, notice)
	}
	now := cfg.now
	if now == nil {
		now = time.Now
	}
	var (
		warnings []string
		out      []byte
	)
	if cfg.out != "" {
		run := app.FolderFlags{Inputs: in, Out: cfg.out, Now: now}
		if client != nil {
			run.Client, run.Model = client, client.Info()
		}
		_, warnings, out, err = app.RunFolderFlags(ctx, run)
	} else {
		var res flags.Flags
		if res, warnings, err = flags.Run(ctx, in, judge, now); err == nil {
			out, err = flags.Encode(res, app.FlagsOutput)
		}
	}
	if err != nil {
		var ie *veredicto.InvalidInputError
		if errors.As(err, &ie) {
			return fail(exitUsage, "%v", err)
		}
		return fail(exitFailed, "%v", err)
	}
	for _, w := range warnings {
		fmt.Fprintf(m.Stderr, "warning: %s\n", w)
	}
	if _, err := m.Stdout.Write(out); err != nil {
		return fail(exitFailed, "write flags: %v", err)
	}
	if cfg.out != "" {
		fmt.Fprintf(m.Stderr, "Flags: %s; audit record: %s (veredicto audit verify %s; veredicto replay %s --out DIR)\n",
			filepath.Join(cfg.out, app.FlagsOutput), filepath.Join(cfg.out, "audit"), cfg.out, cfg.out)
	}
	return exitOK
}
