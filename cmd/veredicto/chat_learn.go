package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/app"
	"github.com/veredicto/veredicto/internal/chat"
	"github.com/veredicto/veredicto/prompts"
)

const chatEvaluateUsage = `Usage: veredicto chat evaluate --corpus FILE [--agents FILE] [--model FILE] [--threshold T] [--label target|seed]

Measures delegation intent on a labelled corpus: the keyword heuristic of a
registry, or with --model the learned model "veredicto chat learn" wrote for it
(a YAML list of {text, target}, such as examples/delegation/corpus/heldout.yaml)
and prints one JSON document: the threshold, the requests, how many were
predicted delegated (score at or above the threshold), how many of those
went to the labelled agent (correct), how many were labelled delegations
(positives), precision, recall and F1, the same per agent, and the
confusion pairs (label, predicted; "" is none), most frequent first.

--agents is the registry (default: the embedded prompts/agents.yaml); the
corpus's label field is the one that names its agents (target for the
project's registry, seed for examples/delegation/agents-seed.yaml) unless
--label says which. A model fitted for another registry is refused.

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
	var corpusFile, agentsFile, modelFile, label string
	var threshold float64
	fs := subcommandFlags("chat evaluate", chatEvaluateUsage, m.Stderr)
	fs.StringVar(&modelFile, "model", "", "learned intent model (default: the keyword heuristic)")
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
	var scorer chat.Scorer = reg
	name := "keywords"
	if modelFile != "" {
		model, err := readModel(reg, modelFile)
		if err != nil {
			return fail(exitUsage, "%v", err)
		}
		scorer, name = model, "model "+model.Version
	}
	out := chatEvaluation{Corpus: corpusFile, Registry: reg.File(), Label: label, Scorer: name,
		Quality: chat.Evaluate(scorer, reg, corpus, threshold)}
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

func readModel(reg *chat.Registry, file string) (*chat.IntentModel, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--model: %w", err)
	}
	return reg.LoadIntentModel(file, b)
}

const chatLearnUsage = `Usage: veredicto chat learn --corpus FILE [--corpus FILE…] [--agents FILE] [--label target|seed] --out FILE

Fits a delegation-intent model on labelled requests (the corpus's train
split, examples/delegation/corpus/train.yaml, and any more, such as a
tenant's feedback) and writes it as JSON: the data the registry loads, with
no fitting at start-up. The model is a logistic regression over the
request's features — the registry's keywords (re-weighted from the false
positives and negatives), negation, status questions, paraphrase groups,
stems and character n-grams of the corpus — with a per-agent calibration
chosen out of fold on the same requests so that 0.55 (the hint) and 0.75
(a missed delegation) keep their meaning. The fit is deterministic. A held-
out file (a name with "heldout") is refused: it is for "chat evaluate" only.

Use the model with "veredicto chat evaluate --model FILE", for every tenant
of a local server with CHAT_INTENT_MODEL=FILE, or for one tenant with
"veredicto chat recalibrate".

Flags:
`

type corpusFlags []string

func (c *corpusFlags) String() string     { return strings.Join(*c, ",") }
func (c *corpusFlags) Set(v string) error { *c = append(*c, v); return nil }

func (m *Main) runChatLearn(ctx context.Context, args []string) int {
	var corpora corpusFlags
	var agentsFile, label, out string
	fs := subcommandFlags("chat learn", chatLearnUsage, m.Stderr)
	fs.Var(&corpora, "corpus", "labelled requests to fit on (repeat for more files) (required)")
	fs.StringVar(&agentsFile, "agents", "", "agents registry (default: the embedded prompts/agents.yaml)")
	fs.StringVar(&label, "label", "", "label field of the corpus: target or seed (default: the one naming the registry's agents)")
	fs.StringVar(&out, "out", "", "where to write the model (required)")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return exitOK
		}
		return exitUsage
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(m.Stderr, "veredicto chat learn: "+format+"\n", a...)
		return code
	}
	switch {
	case fs.NArg() != 0:
		return fail(exitUsage, "unexpected argument %q", fs.Arg(0))
	case len(corpora) == 0:
		return fail(exitUsage, "--corpus is required")
	case out == "":
		return fail(exitUsage, "--out is required")
	case label != "" && label != chat.LabelTarget && label != chat.LabelSeed:
		return fail(exitUsage, "--label must be target or seed")
	}
	var reg *chat.Registry
	var train []chat.Labelled
	for _, file := range corpora {
		if strings.Contains(strings.ToLower(filepath.Base(file)), "heldout") {
			return fail(exitUsage, "%s is a held-out split: it is never fitted on (use it with chat evaluate)", file)
		}
		r, c, l, err := loadScoring(agentsFile, file, label)
		if err != nil {
			return fail(exitUsage, "%v", err)
		}
		reg, label = r, l
		train = append(train, c...)
	}
	model, err := chat.Learn(ctx, reg, train, chat.LearnOptions{})
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	model.Label = label
	model.Fitted.Corpus = corpora
	b, err := model.Encode()
	if err != nil {
		return fail(exitFailed, "%v", err)
	}
	if err := os.WriteFile(out, append(b, '\n'), 0o644); err != nil {
		return fail(exitFailed, "%v", err)
	}
	v := model.Fitted.Validation
	fmt.Fprintf(m.Stdout, "model %s: %d requests, %d features; out of fold at 0.55: precision %.4f, recall %.4f, F1 %.4f; written to %s\n",
		model.Version, len(train), len(model.Weights), v.Precision, v.Recall, v.F1, out)
	return exitOK
}

const chatRecalibrateUsage = `Usage: veredicto chat recalibrate --tenant T [--data DIR]

Refits the tenant's delegation-intent model from the corpus built into the
binary (examples/delegation/corpus, train split) plus the tenant's answers
to «¿Faltó delegar?» and «¿Era esto lo que pedías?», all but the newest
fifth. The candidate is judged at 0.55 against the tenant's current scorer
(its model, else $CHAT_INTENT_MODEL, else the keywords) on the corpus's
held-out split and on those newest answers, and promoted — written as the
tenant's model under DIR/reports/chat/models/T/, which the chat of
"veredicto serve --data DIR" reads within a minute — only if it loses F1 on
neither. The decision and its figures are printed as JSON, kept for
GET /api/chat/metrics and put on the tenant's event stream (chat-models).
"veredicto serve" runs this every week for every tenant that answered; on
AWS an EventBridge schedule does.

Flags:
`

func (m *Main) runChatRecalibrate(ctx context.Context, args []string) int {
	var tenant, data string
	fs := subcommandFlags("chat recalibrate", chatRecalibrateUsage, m.Stderr)
	fs.StringVar(&tenant, "tenant", "", "tenant whose model is refitted (required)")
	fs.StringVar(&data, "data", app.DefaultDataDir, "data folder of the local server")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return exitOK
		}
		return exitUsage
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(m.Stderr, "veredicto chat recalibrate: "+format+"\n", a...)
		return code
	}
	switch {
	case fs.NArg() != 0:
		return fail(exitUsage, "unexpected argument %q", fs.Arg(0))
	case !veredicto.ValidID(tenant):
		return fail(exitUsage, "--tenant is required: %s", veredicto.IDRule)
	}
	logger := slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	svc, err := app.LocalRecalibration(data, os.Getenv, logger)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	rec, err := svc.Recalibrate(ctx, tenant)
	if err != nil {
		return fail(exitFailed, "%v", err)
	}
	enc := json.NewEncoder(m.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rec); err != nil {
		return fail(exitFailed, "%v", err)
	}
	return exitOK
}
