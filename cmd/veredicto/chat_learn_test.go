package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/veredicto/veredicto/internal/chat"
)

const (
	trainCorpus   = "../../examples/delegation/corpus/train.yaml"
	heldoutCorpus = "../../examples/delegation/corpus/heldout.yaml"
)

func evaluateCLI(t *testing.T, args ...string) chatEvaluation {
	t.Helper()
	code, out, errOut := runCLI(t, "", append([]string{"chat", "evaluate"}, args...)...)
	if code != exitOK {
		t.Fatalf("chat evaluate %v: exit %d: %s", args, code, errOut)
	}
	var ev chatEvaluation
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ev); err != nil {
		t.Fatalf("chat evaluate printed %q: %v", out, err)
	}
	return ev
}

// TestChatEvaluateBaseline reproduces the keyword baseline's figures on
// the held-out split recorded in docs/BENCHMARKS.md.
func TestChatEvaluateBaseline(t *testing.T) {
	for _, tc := range []struct {
		threshold                    float64
		predicted, correct, positive int
		f1                           float64
	}{
		{0.55, 118, 85, 133, 0.6773},
		{0.75, 47, 38, 133, 0.4222},
	} {
		ev := evaluateCLI(t, "--corpus", heldoutCorpus, "--threshold", formatThreshold(tc.threshold))
		if ev.Scorer != "keywords" || ev.Label != chat.LabelTarget || ev.Registry != "prompts/agents.yaml" || ev.Requests != 208 {
			t.Errorf("header = %s %s %s %d, want keywords target prompts/agents.yaml 208", ev.Scorer, ev.Label, ev.Registry, ev.Requests)
		}
		if ev.Predicted != tc.predicted || ev.Correct != tc.correct || ev.Positives != tc.positive || ev.F1 != tc.f1 {
			t.Errorf("at %.2f: predicted %d correct %d positives %d F1 %.4f; BENCHMARKS.md records %d %d %d %.4f",
				tc.threshold, ev.Predicted, ev.Correct, ev.Positives, ev.F1, tc.predicted, tc.correct, tc.positive, tc.f1)
		}
		if len(ev.Agents) != 5 || len(ev.Confusion) == 0 {
			t.Errorf("agents %d, confusion %d; want 5 and some", len(ev.Agents), len(ev.Confusion))
		}
	}
	// The seed's registry reads the seed label.
	ev := evaluateCLI(t, "--corpus", heldoutCorpus, "--agents", "../../examples/delegation/agents-seed.yaml")
	if ev.Label != chat.LabelSeed || len(ev.Agents) != 12 || ev.Positives != 40 {
		t.Errorf("seed registry: label %s, %d agents, %d positives; want seed, 12, 40", ev.Label, len(ev.Agents), ev.Positives)
	}
}

func TestChatEvaluateRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no corpus", nil, "--corpus is required"},
		{"threshold", []string{"--corpus", heldoutCorpus, "--threshold", "1.5"}, "--threshold"},
		{"label", []string{"--corpus", heldoutCorpus, "--label", "x"}, "--label"},
		{"missing corpus", []string{"--corpus", "nope.yaml"}, "nope.yaml"},
		{"labels of another registry", []string{"--corpus", heldoutCorpus, "--agents", "../../examples/delegation/agents-seed.yaml", "--label", "target"}, "is not a specialist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, "", append([]string{"chat", "evaluate"}, tc.args...)...)
			if code != exitUsage || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d containing %q", code, errOut, exitUsage, tc.want)
			}
		})
	}
}

func formatThreshold(x float64) string {
	b, _ := json.Marshal(x)
	return string(b)
}
