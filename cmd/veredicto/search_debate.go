package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/veredicto/veredicto/internal/debate"
)

const searchDebateUsage = `Usage: veredicto search debate OUT/<candidate> [--search DIR] [--question Q.yaml] [--out DIR] [--llm offline|openai] [--model M] [--no-optional-council]

Opens a committee debate (seed 003) on a candidate that a search run
escalated to the senior consultant (decision ESCALADO_CONSULTOR_SENIOR in
OUT/<candidate>/report.json). The knowledge base is the candidate's
report.md and the search's summary.md, plus, with --search DIR, the search
folder's shared documents and this candidate's own documents (never another
candidate's).

The default question asks whether to advance with the offer, naming the
escalation's reason, with the options "avanzar con la oferta", "pedir más
evidencia antes de decidir" and "descartar la candidatura" and a committee of
cfo, chro, ceo and consultor-senior; --question Q.yaml replaces it (same
format as "veredicto debate run").

Writes OUT/<candidate>/debate/ (or --out DIR): debate_log.yaml and debate.md.
Exit codes as "veredicto debate run": 0 decided, 3 pending a person, 2 bad
input, 1 failed.

Flags:
`

func (m *Main) runSearchDebate(ctx context.Context, args []string) int {
	var cfg debateRunConfig
	var searchDir string
	fs := subcommandFlags("search debate", searchDebateUsage, m.Stderr)
	fs.StringVar(&searchDir, "search", "", "the search folder (adds its documents to the knowledge base)")
	fs.StringVar(&cfg.question, "question", "", "QUESTION.yaml replacing the default question")
	fs.StringVar(&cfg.out, "out", "", "output folder (default OUT/<candidate>/debate)")
	fs.StringVar(&cfg.provider, "llm", "", "offline or openai (default: openai when OPENAI_API_KEY is set, else offline)")
	fs.StringVar(&cfg.model, "model", "", "model name for openai (default: $OPENAI_MODEL or gpt-4o-mini)")
	fs.BoolVar(&cfg.noOptionalCouncil, "no-optional-council", false, "skip the optional council")
	positional, err := parseInterleaved(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintf(m.Stderr, "veredicto search debate: %v\n", err)
		return exitUsage
	}
	if len(positional) != 1 {
		fmt.Fprint(m.Stderr, searchDebateUsage)
		return exitUsage
	}
	if err := checkProvider(cfg.provider); err != nil {
		fmt.Fprintf(m.Stderr, "veredicto search debate: %v\n", err)
		return exitUsage
	}
	return m.searchDebate(ctx, positional[0], searchDir, cfg, os.Getenv, m.Stderr)
}

func (m *Main) searchDebate(ctx context.Context, candDir, searchDir string, cfg debateRunConfig, getenv func(string) string, stderr io.Writer) int {
	const prefix = "veredicto search debate"
	q, docs, err := debate.FromSearch(candDir, searchDir)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prefix, err)
		return exitUsage
	}
	// The question as QUESTION.yaml: the file given, or the default one
	// written out (the audit record keeps it).
	var data []byte
	if cfg.question != "" {
		if data, err = os.ReadFile(cfg.question); err == nil {
			_, err = debate.ParseQuestion(cfg.question, data)
		}
	} else {
		cfg.question = "QUESTION.yaml"
		data, err = debate.MarshalQuestion(q)
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prefix, err)
		return exitUsage
	}
	if cfg.out == "" {
		cfg.out = filepath.Join(candDir, "debate")
	}
	return m.debateExecute(ctx, prefix, cfg, data, docs, getenv)
}
