package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/veredicto/veredicto/internal/chat"
	"github.com/veredicto/veredicto/prompts"
)

const chatEvaluateUsage = `Usage: veredicto chat evaluate --corpus FILE [--agents FILE] [--threshold T] [--label target|seed]

Measures the delegation-intent heuristic of a registry on a labelled corpus
(a YAML list of {text, target}, such as examples/delegation/corpus/heldout.yaml)
and prints one JSON document: the threshold, the requests, how many were
predicted delegated (score at or above the threshold), how many of those
went to the labelled agent (correct), how many were labelled delegations
(positives), precision, recall and F1, the same per agent, and the
confusion pairs (label, predicted; "" is none), most frequent first.

--agents is the registry (default: the embedded prompts/agents.yaml); the
corpus's label field is the one that names its agents (target for the
project's registry, seed for examples/delegation/agents-seed.yaml) unless
--label says which.

Flags:
`

// chatEvaluation is what "veredicto chat evaluate" prints.
type chatEvaluation struct {
	Corpus   string `json:"corpus"`
	Registry string `json:"registry"`
	Label    string `json:"label"`
	Scorer   string `json:"scorer"`
	chat.Quality
}

func (m *Main) runChatEvaluate(_ context.Context, args []string) int {
	var corpusFile, agentsFile, label string
	var threshold float64
	fs := subcommandFlags("chat evaluate", chatEvaluateUsage, m.Stderr)
	fs.StringVar(&corpusFile, "corpus", "", "labelled corpus (YAML list of {text, target}) (required)")
	fs.StringVar(&agentsFile, "agents", "", "agents registry (default: the embedded prompts/agents.yaml)")
	fs.Float64Var(&threshold, "threshold", chat.HintThreshold, "score at which a request counts as delegated")
	fs.StringVar(&label, "label", "", "label field of the corpus: target or seed (default: the one naming the registry's agents)")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return exitOK
		}
		return exitUsage
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(m.Stderr, "veredicto chat evaluate: "+format+"\n", a...)
		return code
	}
	switch {
	case fs.NArg() != 0:
		return fail(exitUsage, "unexpected argument %q", fs.Arg(0))
	case corpusFile == "":
		return fail(exitUsage, "--corpus is required")
	case threshold <= 0 || threshold > 1:
		return fail(exitUsage, "--threshold must be above 0 and at most 1")
	case label != "" && label != chat.LabelTarget && label != chat.LabelSeed:
		return fail(exitUsage, "--label must be target or seed")
	}
	reg, corpus, label, err := loadScoring(agentsFile, corpusFile, label)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	out := chatEvaluation{Corpus: corpusFile, Registry: reg.File(), Label: label, Scorer: "keywords",
		Quality: chat.Evaluate(reg, reg, corpus, threshold)}
	enc := json.NewEncoder(m.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fail(exitFailed, "%v", err)
	}
	return exitOK
}

// loadScoring reads a registry (the embedded one when file is empty) and a
// corpus relabelled with label (chosen from the registry when empty).
func loadScoring(agentsFile, corpusFile, label string) (*chat.Registry, []chat.Labelled, string, error) {
	file, data := prompts.AgentsFile, prompts.AgentsYAML
	if agentsFile != "" {
		b, err := os.ReadFile(agentsFile)
		if err != nil {
			return nil, nil, "", fmt.Errorf("--agents: %w", err)
		}
		file, data = agentsFile, b
	}
	reg, err := chat.LoadScoringRegistry(file, data)
	if err != nil {
		return nil, nil, "", err
	}
	corpus, err := readCorpus(corpusFile)
	if err != nil {
		return nil, nil, "", err
	}
	if label == "" {
		if label, err = chat.LabelFor(reg, corpus); err != nil {
			return nil, nil, "", fmt.Errorf("%s: %w", corpusFile, err)
		}
	}
	corpus = chat.Relabel(corpus, label)
	for i, l := range corpus {
		if a, ok := reg.Agent(l.Target); l.Target != "" && (!ok || a.ID == reg.Supervisor) {
			return nil, nil, "", fmt.Errorf("%s: [%d].%s %q is not a specialist of %s", corpusFile, i, label, l.Target, reg.File())
		}
	}
	return reg, corpus, label, nil
}

func readCorpus(file string) ([]chat.Labelled, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--corpus: %w", err)
	}
	return chat.LoadCorpus(file, b)
}
