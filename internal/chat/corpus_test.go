package chat

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/veredicto/veredicto/internal/yamldoc"
)

// corpusDir holds the delegation corpus of issue 35.
const corpusDir = "../../examples/delegation/corpus"

func loadSplit(t testing.TB, split string) []Labelled {
	t.Helper()
	file := filepath.Join(corpusDir, split+".yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	c, err := LoadCorpus(file, data)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func seedRegistry(t testing.TB) *Registry {
	t.Helper()
	data, err := os.ReadFile("../../examples/delegation/agents-seed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r, err := LoadRegistry("agents-seed.yaml", data, map[string]bool{"external": true})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestDelegationCorpus checks the corpus's shape: at least 600 requests,
// unique ids, no text in both splits or in the heuristic's tuning corpus,
// both labels naming agents of their registries, every label and the four
// regions in both splits.
func TestDelegationCorpus(t *testing.T) {
	project, seed := defaultRegistry(t), seedRegistry(t)
	train, heldout := loadSplit(t, "train"), loadSplit(t, "heldout")
	if n := len(train) + len(heldout); n < 600 {
		t.Fatalf("corpus has %d requests, want at least 600", n)
	}
	tuned := map[string]bool{}
	for _, l := range loadCorpus(t) {
		tuned[fold(l.Text)] = true
	}
	ids, texts := map[string]string{}, map[string]string{}
	kinds := map[string]bool{"request": true, "paraphrase": true, "status": true, "negation": true, "draft": true,
		"smalltalk": true, "domain": true, "meta": true, "other": true, "near": true}
	for _, split := range []struct {
		name string
		c    []Labelled
	}{{"train", train}, {"heldout", heldout}} {
		labels, regions := map[string]int{}, map[string]int{}
		for _, l := range split.c {
			if l.ID == "" || ids[l.ID] != "" {
				t.Errorf("%s: id %q is empty or repeated", split.name, l.ID)
			}
			ids[l.ID] = split.name
			if prev, dup := texts[fold(l.Text)]; dup {
				t.Errorf("%s %s: text also in %s", split.name, l.ID, prev)
			}
			texts[fold(l.Text)] = split.name + " " + l.ID
			if tuned[fold(l.Text)] {
				t.Errorf("%s %s: text is in the heuristic's tuning corpus", split.name, l.ID)
			}
			if !kinds[l.Kind] {
				t.Errorf("%s %s: kind %q", split.name, l.ID, l.Kind)
			}
			for _, c := range []struct {
				reg   *Registry
				label string
			}{{project, l.Target}, {seed, l.Seed}} {
				if a, ok := c.reg.Agent(c.label); c.label != "" && (!ok || a.ID == c.reg.Supervisor) {
					t.Errorf("%s %s: label %q is not a specialist of %s", split.name, l.ID, c.label, c.reg.File())
				}
			}
			labels[l.Target]++
			regions[l.Region]++
		}
		for _, want := range []string{"", "search-analyst", "flags-classifier", "companion", "debate", "reports"} {
			if labels[want] < 20 {
				t.Errorf("%s has %d requests labelled %q, want at least 20", split.name, labels[want], want)
			}
		}
		for _, want := range []string{"cl", "mx", "es", "ar"} {
			if regions[want] < 40 {
				t.Errorf("%s has %d requests from %s, want at least 40", split.name, regions[want], want)
			}
		}
	}
	if field, err := LabelFor(project, train); err != nil || field != LabelTarget {
		t.Errorf("LabelFor(project) = %q, %v; want target", field, err)
	}
	if field, err := LabelFor(seed, train); err != nil || field != LabelSeed {
		t.Errorf("LabelFor(seed) = %q, %v; want seed", field, err)
	}
}

// TestCorpusAgreement recomputes the two labelling passes' agreement and
// Cohen's kappa recorded in the corpus's README, and checks that every
// request's label is the passes' when they agree.
func TestCorpusAgreement(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(corpusDir, "passes.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var passes []struct {
		ID     string    `yaml:"id"`
		Target [2]string `yaml:"target"`
		Seed   [2]string `yaml:"seed"`
	}
	if err := yamldoc.Decode("passes.yaml", data, &passes); err != nil {
		t.Fatal(err)
	}
	final := map[string]Labelled{}
	for _, l := range append(loadSplit(t, "train"), loadSplit(t, "heldout")...) {
		final[l.ID] = l
	}
	if len(passes) != len(final) {
		t.Fatalf("passes.yaml has %d requests, the corpus %d", len(passes), len(final))
	}
	var a, b, sa, sb []string
	for _, p := range passes {
		l, ok := final[p.ID]
		if !ok {
			t.Fatalf("passes.yaml names %s, not in the corpus", p.ID)
		}
		if p.Target[0] == p.Target[1] && l.Target != p.Target[0] {
			t.Errorf("%s: target %q, both passes said %q", p.ID, l.Target, p.Target[0])
		}
		if p.Seed[0] == p.Seed[1] && l.Seed != p.Seed[0] {
			t.Errorf("%s: seed %q, both passes said %q", p.ID, l.Seed, p.Seed[0])
		}
		a, b = append(a, p.Target[0]), append(b, p.Target[1])
		sa, sb = append(sa, p.Seed[0]), append(sb, p.Seed[1])
	}
	readme, err := os.ReadFile(filepath.Join(corpusDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name       string
		a, b       []string
		agree, kap float64
	}{{"target", a, b, 0.9957, 0.9946}, {"seed", sa, sb, 0.9986, 0.9957}} {
		po, k := CohenKappa(c.a, c.b)
		t.Logf("%s: agreement %.4f, kappa %.4f", c.name, po, k)
		if math.Abs(po-c.agree) > 0.00005 || math.Abs(k-c.kap) > 0.00005 {
			t.Errorf("%s: agreement %.4f kappa %.4f, README records %.4f and %.4f", c.name, po, k, c.agree, c.kap)
		}
		if !strings.Contains(string(readme), fmt.Sprintf("**%.4f**", c.kap)) {
			t.Errorf("README does not record %s's kappa %.4f", c.name, c.kap)
		}
	}
}

func TestCohenKappa(t *testing.T) {
	for _, tc := range []struct {
		name    string
		a, b    []string
		po, kap float64
	}{
		{"all agree", []string{"x", "y", "x"}, []string{"x", "y", "x"}, 1, 1},
		{"one label only", []string{"x", "x"}, []string{"x", "x"}, 1, 1},
		// po 0.5, pe 0.5: no agreement beyond chance.
		{"chance", []string{"x", "x", "y", "y"}, []string{"x", "y", "x", "y"}, 0.5, 0},
		// 20 items, 15 agree; pa(x)=10/20, pb(x)=9/20.
		{"textbook", append(rep("x", 10), rep("y", 10)...), append(append(append(rep("x", 7), rep("y", 3)...), rep("x", 2)...), rep("y", 8)...), 0.75, 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			po, k := CohenKappa(tc.a, tc.b)
			if math.Abs(po-tc.po) > 1e-9 || math.Abs(k-tc.kap) > 1e-9 {
				t.Errorf("CohenKappa = %v, %v; want %v, %v", po, k, tc.po, tc.kap)
			}
		})
	}
}

func rep(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}
