package chat

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/yamldoc"
)

// Labelled is one request of a labelled corpus: the specialist a person
// would expect it delegated to ("" for none). The corpus of issue 35
// (examples/delegation/corpus) also says where the request comes from and
// what it is, and carries a second label for the seed's agents.
type Labelled struct {
	// ID names the request in the corpus ("q001").
	ID string `yaml:"id,omitempty" json:"id,omitempty"`
	// Region is the consultant's Spanish: cl, mx, es or ar.
	Region string `yaml:"region,omitempty" json:"region,omitempty"`
	// Kind is what the request is: request, paraphrase, status, negation,
	// draft, smalltalk, domain, meta, other or near.
	Kind string `yaml:"kind,omitempty" json:"kind,omitempty"`
	// Typo marks a request typed with typos or without accents.
	Typo bool   `yaml:"typo,omitempty" json:"typo,omitempty"`
	Text string `yaml:"text" json:"text"`
	// Target is the label for the project's registry (prompts/agents.yaml),
	// Seed the label for the seed's twelve agents
	// (examples/delegation/agents-seed.yaml).
	Target string `yaml:"target" json:"target"`
	Seed   string `yaml:"seed,omitempty" json:"seed,omitempty"`
}

// MaxCorpus bounds the requests of one corpus.
const MaxCorpus = 50000

// LoadCorpus decodes a labelled corpus (a YAML list of {text, target}, with
// the optional fields of Labelled). An empty text, a text over
// MaxMessageBytes or a corpus over MaxCorpus requests is rejected.
func LoadCorpus(file string, data []byte) ([]Labelled, error) {
	var c []Labelled
	if err := yamldoc.Decode(file, data, &c); err != nil {
		return nil, err
	}
	if len(c) > MaxCorpus {
		return nil, &veredicto.InvalidInputError{File: file, Problem: fmt.Sprintf("has %d requests, over %d", len(c), MaxCorpus)}
	}
	for i, l := range c {
		if err := Check("corpus", l.Text); err != nil {
			return nil, &veredicto.InvalidInputError{File: file, Field: fmt.Sprintf("[%d].text", i), Problem: "must be a non-empty message of at most 8 KiB"}
		}
	}
	return c, nil
}

// Label fields of a corpus (Labelled.Target and Labelled.Seed).
const (
	LabelTarget = "target"
	LabelSeed   = "seed"
)

// Relabel returns corpus with Target set to the label field names
// (LabelTarget leaves it as is; LabelSeed takes Seed), so evaluation and
// fitting read one label.
func Relabel(corpus []Labelled, field string) []Labelled {
	out := slices.Clone(corpus)
	if field == LabelSeed {
		for i := range out {
			out[i].Target = out[i].Seed
		}
	}
	return out
}

// LabelFor picks the corpus's label field that fits the registry: target
// when every non-empty target is one of its specialists, else seed when
// every non-empty seed label is. A corpus that labels none of its
// requests for the registry is an error.
func LabelFor(r *Registry, corpus []Labelled) (string, error) {
	fits := func(get func(Labelled) string) bool {
		any := false
		for _, l := range corpus {
			if v := get(l); v != "" {
				if a, ok := r.Agent(v); !ok || a.ID == r.Supervisor {
					return false
				}
				any = true
			}
		}
		return any
	}
	switch {
	case fits(func(l Labelled) string { return l.Target }):
		return LabelTarget, nil
	case fits(func(l Labelled) string { return l.Seed }):
		return LabelSeed, nil
	}
	return "", &veredicto.InvalidInputError{File: r.File(), Problem: "names agents that the corpus's labels (target, seed) do not match"}
}

// Scorer scores how likely a request asks for each specialist: the
// keyword heuristic (*Registry) or a learned model (*Model).
type Scorer interface {
	ScoreDelegationIntent(text string) Intent
}

var _ Scorer = (*Registry)(nil)

// Quality is a scorer's precision and recall on a corpus at one
// threshold: a request is predicted delegated when its score reaches the
// threshold; the prediction is right when its target is the labelled one.
type Quality struct {
	Threshold float64 `json:"threshold"`
	Requests  int     `json:"requests"`
	Rates
	// Agents are the same figures per specialist: predicted for it,
	// correct, labelled for it.
	Agents map[string]Rates `json:"agents"`
	// Confusion counts the requests whose prediction ("" below the
	// threshold) is not their label, by pair, most frequent first.
	Confusion []Confusion `json:"confusion"`
}

// Rates are the counts and rates of a Quality, overall or for one
// specialist: Predicted counts requests at or above the threshold, Correct
// those whose target is the label, Positives the labelled delegations.
type Rates struct {
	Predicted int     `json:"predicted"`
	Correct   int     `json:"correct"`
	Positives int     `json:"positives"`
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
}

// Confusion is one kind of error: requests labelled Label ("" for none)
// predicted as Predicted ("" when below the threshold).
type Confusion struct {
	Label     string `json:"label"`
	Predicted string `json:"predicted"`
	Count     int    `json:"count"`
}

// Evaluate measures the registry's heuristic on corpus at threshold.
func (r *Registry) Evaluate(corpus []Labelled, threshold float64) Quality {
	return Evaluate(r, r, corpus, threshold)
}

// Evaluate measures s on corpus at threshold; reg lists the specialists
// reported per agent. Precision is 1 when nothing is predicted (no false
// alarm), recall 1 when nothing is labelled; F1 is their harmonic mean (0
// when both are 0). Figures are rounded to four decimals.
func Evaluate(s Scorer, reg *Registry, corpus []Labelled, threshold float64) Quality {
	q := Quality{Threshold: threshold, Requests: len(corpus), Agents: map[string]Rates{}, Confusion: []Confusion{}}
	for _, a := range reg.Specialists() {
		q.Agents[a.ID] = Rates{}
	}
	pairs := map[[2]string]int{}
	for _, l := range corpus {
		predicted := ""
		if in := s.ScoreDelegationIntent(l.Text); in.Target != "" && in.Score >= threshold {
			predicted = in.Target
		}
		if l.Target != "" {
			q.Positives++
			a := q.Agents[l.Target]
			a.Positives++
			q.Agents[l.Target] = a
		}
		if predicted != "" {
			q.Predicted++
			a := q.Agents[predicted]
			a.Predicted++
			if predicted == l.Target {
				q.Correct++
				a.Correct++
			}
			q.Agents[predicted] = a
		}
		if predicted != l.Target {
			pairs[[2]string{l.Target, predicted}]++
		}
	}
	q.Precision, q.Recall, q.F1 = rates(q.Correct, q.Predicted, q.Positives)
	for id, a := range q.Agents {
		a.Precision, a.Recall, a.F1 = rates(a.Correct, a.Predicted, a.Positives)
		q.Agents[id] = a
	}
	for p, n := range pairs {
		q.Confusion = append(q.Confusion, Confusion{Label: p[0], Predicted: p[1], Count: n})
	}
	slices.SortFunc(q.Confusion, func(a, b Confusion) int {
		return cmp.Or(b.Count-a.Count, cmp.Compare(a.Label, b.Label), cmp.Compare(a.Predicted, b.Predicted))
	})
	return q
}

// rates are precision, recall and F1 from counts, four decimals.
func rates(correct, predicted, positives int) (p, r, f float64) {
	p, r = 1, 1
	if predicted > 0 {
		p = float64(correct) / float64(predicted)
	}
	if positives > 0 {
		r = float64(correct) / float64(positives)
	}
	if p+r > 0 {
		f = 2 * p * r / (p + r)
	}
	return round4(p), round4(r), round4(f)
}

func round4(x float64) float64 { return math.Round(x*10000) / 10000 }

// CohenKappa is the agreement of two labellings of the same items beyond
// chance: (po − pe) / (1 − pe), where po is the share of items both gave
// the same label and pe the share expected from each one's label
// frequencies. It is 1 when both agree on everything (also when pe is 1).
func CohenKappa(a, b []string) (agreement, kappa float64) {
	n := min(len(a), len(b))
	if n == 0 {
		return 1, 1
	}
	ca, cb := map[string]int{}, map[string]int{}
	same := 0
	for i := range n {
		if a[i] == b[i] {
			same++
		}
		ca[a[i]]++
		cb[b[i]]++
	}
	po := float64(same) / float64(n)
	pe := 0.0
	for k, x := range ca {
		pe += float64(x) * float64(cb[k]) / float64(n) / float64(n)
	}
	if pe == 1 {
		return po, 1
	}
	return po, (po - pe) / (1 - pe)
}
