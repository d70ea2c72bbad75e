package chat

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/veredicto/veredicto"
)

// IntentModelFormat names the learned model's file format.
const IntentModelFormat = "veredicto-intent-model/1"

// IntentModel is a learned delegation-intent model (veredicto chat learn,
// Learn): data the registry loads (LoadIntentModel), never refitted at
// start-up. It scores a request as a multinomial logistic regression over
// the request's features (featuresOf) with a class for every specialist and
// one for none, then maps each specialist's probability through its own
// calibration so that 0.55 and 0.75 keep their meaning (Calibration).
//
// Its Intent has the heuristic's shape: the target is the specialist with
// the highest probability, the score its calibrated probability; scores
// never reach the model that converses.
type IntentModel struct {
	Format string `json:"format"`
	// Version is a digest of the model's content: the same fit gives the
	// same version.
	Version string `json:"version"`
	// Registry is the digest of the registry the model was fitted for
	// (Registry.Digest); Label the corpus label field it learned.
	Registry string `json:"registry"`
	Label    string `json:"label"`
	Fitted   Fitted `json:"fitted"`
	// Classes are "" (none) then the specialists in registry order; Bias
	// and every Weights row have one value per class.
	Classes []string             `json:"classes"`
	Bias    []float64            `json:"bias"`
	Weights map[string][]float64 `json:"weights"`
	// Calibration maps each specialist's probability to its score.
	Calibration map[string]Calibration `json:"calibration"`

	reg *Registry
}

// Fitted says what a model was fitted on and how it did on the
// validation part of its training data (out of fold).
type Fitted struct {
	Corpus     []string     `json:"corpus"`
	Requests   int          `json:"requests"`
	Feedback   int          `json:"feedback"`
	Options    LearnOptions `json:"options"`
	Validation Quality      `json:"validation"`
}

// Calibration is one specialist's map from probability to score: the
// probability Hint maps to HintThreshold (0.55), Missed to MissedThreshold
// (0.75), linearly between (0, 0), (Hint, 0.55), (Missed, 0.75) and (1, 1).
// Learn chooses them on the validation part of the training data: Hint is
// where the specialist's F1 is best among the thresholds whose precision is
// at least the keyword heuristic's at 0.55 (so the hint is never worse than
// it was), Missed the lowest at or above Hint whose precision reaches
// LearnOptions.MissedPrecision (a missed delegation is nearly surely one).
// 1 means never.
type Calibration struct {
	Hint   float64 `json:"hint"`
	Missed float64 `json:"missed"`
}

// score maps a probability to a score.
func (c Calibration) score(p float64) float64 {
	points := [][2]float64{{0, 0}, {c.Hint, HintThreshold}, {c.Missed, MissedThreshold}, {1, 1}}
	if p >= 1 {
		return 1
	}
	for i := 1; i < len(points); i++ {
		x0, y0, x1, y1 := points[i-1][0], points[i-1][1], points[i][0], points[i][1]
		if p < x1 {
			if x1 <= x0 {
				return y0
			}
			return y0 + (p-x0)*(y1-y0)/(x1-x0)
		}
	}
	return 1
}

// Bounds of a model file.
const (
	MaxModelBytes    = 32 << 20
	MaxModelFeatures = 500000
)

// Digest identifies the registry's scoring data (its specialists, names
// and keywords): a model fitted for another digest is refused.
func (r *Registry) Digest() string {
	type agent struct {
		ID       string    `json:"id"`
		Name     string    `json:"name"`
		Aliases  []string  `json:"aliases"`
		Keywords []Keyword `json:"keywords"`
	}
	var agents []agent
	for _, a := range r.Specialists() {
		agents = append(agents, agent{a.ID, a.Name, a.Aliases, a.Keywords})
	}
	b, _ := json.Marshal(agents)
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// classes are a registry's model classes: none, then the specialists.
func (r *Registry) classes() []string {
	out := []string{""}
	for _, a := range r.Specialists() {
		out = append(out, a.ID)
	}
	return out
}

// LoadIntentModel decodes and checks a model for the registry: its
// format, its registry's digest, its classes, sizes and numbers. A model
// fitted for another registry is an error (refit it with veredicto chat
// learn).
func (r *Registry) LoadIntentModel(file string, data []byte) (*IntentModel, error) {
	bad := func(field, problem string) error {
		return &veredicto.InvalidInputError{File: file, Field: field, Problem: problem}
	}
	if len(data) > MaxModelBytes {
		return nil, bad("", fmt.Sprintf("is %d bytes, over %d", len(data), MaxModelBytes))
	}
	var m IntentModel
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, bad("", "is not an intent model: "+err.Error())
	}
	switch {
	case m.Format != IntentModelFormat:
		return nil, bad("format", fmt.Sprintf("must be %q", IntentModelFormat))
	case m.Registry != r.Digest():
		return nil, bad("registry", fmt.Sprintf("was fitted for another registry than %s: refit it with veredicto chat learn", r.File()))
	case !slices.Equal(m.Classes, r.classes()):
		return nil, bad("classes", "must be \"\" then the registry's specialists in order")
	case len(m.Bias) != len(m.Classes):
		return nil, bad("bias", fmt.Sprintf("must have %d values", len(m.Classes)))
	case len(m.Weights) > MaxModelFeatures:
		return nil, bad("weights", fmt.Sprintf("has %d features, over %d", len(m.Weights), MaxModelFeatures))
	}
	if !finite(m.Bias) {
		return nil, bad("bias", "must be finite numbers")
	}
	for name, w := range m.Weights {
		if len(w) != len(m.Classes) || !finite(w) {
			return nil, bad("weights", fmt.Sprintf("%q must have %d finite values", name, len(m.Classes)))
		}
	}
	for _, id := range m.Classes[1:] {
		c, ok := m.Calibration[id]
		if !ok || !(c.Hint > 0 && c.Hint <= c.Missed && c.Missed <= 1) {
			return nil, bad("calibration."+id, "must have 0 < hint ≤ missed ≤ 1")
		}
	}
	if len(m.Calibration) != len(m.Classes)-1 {
		return nil, bad("calibration", "must name exactly the registry's specialists")
	}
	m.reg = r
	return &m, nil
}

func finite(xs []float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// Encode writes the model as JSON with its Version set to the digest of
// its content: indented, one feature's weights a line, features sorted.
func (m *IntentModel) Encode() ([]byte, error) {
	m.Version = ""
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode intent model: %w", err)
	}
	sum := sha256.Sum256(b)
	m.Version = hex.EncodeToString(sum[:6])
	head := *m
	head.Weights = map[string][]float64{}
	hb, err := json.MarshalIndent(&head, "", " ")
	if err != nil {
		return nil, fmt.Errorf("encode intent model: %w", err)
	}
	names := make([]string, 0, len(m.Weights))
	for n := range m.Weights {
		names = append(names, n)
	}
	slices.Sort(names)
	var w bytes.Buffer
	w.WriteString("\"weights\": {")
	for i, n := range names {
		k, _ := json.Marshal(n)
		v, _ := json.Marshal(m.Weights[n])
		if i > 0 {
			w.WriteByte(',')
		}
		fmt.Fprintf(&w, "\n  %s: %s", k, v)
	}
	w.WriteString("\n }")
	out := bytes.Replace(hb, []byte(`"weights": {}`), w.Bytes(), 1)
	return out, nil
}

// probabilities are the model's class probabilities for features f.
func (m *IntentModel) probabilities(f features) []float64 {
	logits := slices.Clone(m.Bias)
	for name, v := range f.values {
		if w, ok := m.Weights[name]; ok {
			for c := range logits {
				logits[c] += v * w[c]
			}
		}
	}
	return softmax(logits)
}

func softmax(z []float64) []float64 {
	mx := slices.Max(z)
	sum := 0.0
	out := make([]float64, len(z))
	for i, v := range z {
		out[i] = math.Exp(v - mx)
		sum += out[i]
	}
	for i := range out {
		out[i] /= sum
	}
	return out
}

// ScoreDelegationIntent scores text with the model: the target is the
// specialist with the highest probability, the score its calibrated
// probability (two decimals); Scores holds every specialist's calibrated
// score above zero. Reasons name the model, the target's keywords, the
// negation and status cues and the paraphrase groups found, then the
// score.
func (m *IntentModel) ScoreDelegationIntent(text string) Intent {
	f := m.reg.featuresOf(text)
	p := m.probabilities(f)
	in := Intent{Scores: map[string]float64{}, Reasons: []string{}}
	best := -1
	for c := 1; c < len(m.Classes); c++ {
		id := m.Classes[c]
		s := math.Round(m.Calibration[id].score(p[c])*100) / 100
		if s > 0 {
			in.Scores[id] = s
		}
		if best < 0 || p[c] > p[best] {
			best = c
		}
	}
	id := ""
	if best > 0 && in.Scores[m.Classes[best]] > 0 {
		id = m.Classes[best]
	}
	score := in.Scores[id]
	in.Target, in.Score = id, score
	in.Reasons = append(in.Reasons, "model "+m.Version)
	var matched []string
	for name := range f.values {
		if term, ok := strings.CutPrefix(name, "k:"+id+":"); ok && id != "" {
			matched = append(matched, term)
		}
	}
	if len(matched) > 0 {
		slices.Sort(matched)
		in.Reasons = append(in.Reasons, "matched: "+strings.Join(matched, ", "))
	}
	if len(f.negations) > 0 {
		in.Reasons = append(in.Reasons, "negation: "+strings.Join(f.negations, ", "))
	}
	if f.status != "" {
		in.Reasons = append(in.Reasons, "status question: "+f.status)
	}
	var groups []string
	for _, g := range paraphraseNames {
		if f.values["p:"+g] > 0 {
			groups = append(groups, g)
		}
	}
	if len(groups) > 0 {
		in.Reasons = append(in.Reasons, "paraphrase: "+strings.Join(groups, ", "))
	}
	in.Reasons = append(in.Reasons, fmt.Sprintf("score:%.2f", score))
	return in
}
