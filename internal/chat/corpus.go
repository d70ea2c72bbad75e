package chat

import (
	"github.com/veredicto/veredicto/internal/yamldoc"
)

// Labelled is one request of a labelled corpus: the specialist a person
// would expect it delegated to ("" for none).
type Labelled struct {
	Text   string `yaml:"text"`
	Target string `yaml:"target"`
}

// LoadCorpus decodes a labelled corpus (a YAML list of {text, target}).
func LoadCorpus(file string, data []byte) ([]Labelled, error) {
	var c []Labelled
	if err := yamldoc.Decode(file, data, &c); err != nil {
		return nil, err
	}
	return c, nil
}

// Quality is the heuristic's precision and recall on a corpus at one
// threshold: a request is predicted delegated when its score reaches the
// threshold; the prediction is right when its target is the labelled one.
type Quality struct {
	Threshold float64 `json:"threshold"`
	// Predicted counts requests at or above the threshold, Correct those
	// whose target is the label, Positives the labelled delegations.
	Predicted, Correct, Positives int
	Precision, Recall             float64
}

// Evaluate measures the registry's heuristic on corpus at threshold.
// Precision is 1 when nothing is predicted (no false alarm), recall 1
// when nothing is labelled.
func (r *Registry) Evaluate(corpus []Labelled, threshold float64) Quality {
	q := Quality{Threshold: threshold}
	for _, l := range corpus {
		if l.Target != "" {
			q.Positives++
		}
		in := r.ScoreDelegationIntent(l.Text)
		if in.Score < threshold {
			continue
		}
		q.Predicted++
		if in.Target == l.Target {
			q.Correct++
		}
	}
	q.Precision, q.Recall = 1, 1
	if q.Predicted > 0 {
		q.Precision = float64(q.Correct) / float64(q.Predicted)
	}
	if q.Positives > 0 {
		q.Recall = float64(q.Correct) / float64(q.Positives)
	}
	return q
}
