package chat

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/veredicto/veredicto"
)

// LearnOptions tune Learn; zero fields take the defaults.
type LearnOptions struct {
	// Epochs over the training requests (default 40, at most 500).
	Epochs int `json:"epochs"`
	// Rate is AdaGrad's learning rate (default 0.5).
	Rate float64 `json:"rate"`
	// L2 pulls every weight towards its prior: the registry's keyword
	// weights, the heuristic's score, zero elsewhere (default 0.001).
	L2 float64 `json:"l2"`
	// Folds split the training requests to choose the calibration out of
	// fold (default 5, 2 to 10).
	Folds int `json:"folds"`
	// MinCount drops a stem or n-gram found in fewer training requests
	// (default 2).
	MinCount int `json:"min_count"`
	// HintPrecision is the least precision the hint (0.55) may have on
	// validation, besides the keyword heuristic's own (default 0.8).
	HintPrecision float64 `json:"hint_precision"`
	// MissedPrecision is the precision at which a specialist's score is
	// 0.75 (default 0.95).
	MissedPrecision float64 `json:"missed_precision"`
}

func (o LearnOptions) withDefaults() LearnOptions {
	def := func(v *float64, d float64) {
		if *v <= 0 {
			*v = d
		}
	}
	if o.Epochs <= 0 {
		o.Epochs = 40
	}
	o.Epochs = min(o.Epochs, 500)
	if o.Folds <= 0 {
		o.Folds = 5
	}
	o.Folds = min(max(o.Folds, 2), 10)
	if o.MinCount <= 0 {
		o.MinCount = 2
	}
	def(&o.Rate, 0.5)
	def(&o.L2, 0.001)
	def(&o.HintPrecision, 0.8)
	def(&o.MissedPrecision, 0.95)
	return o
}

// MinLearnRequests is the fewest training requests Learn accepts, with at
// least MinLearnPerAgent for each specialist.
const (
	MinLearnRequests = 50
	MinLearnPerAgent = 5
)

// example is one training request: its features as indices and values,
// and its class.
type example struct {
	idx   []int
	val   []float64
	class int
}

// Learn fits an intent model for the registry on train (its Target labels,
// "" for none) — never on the held-out split. It
//
//  1. reads every request's features (featuresOf) and keeps the stems and
//     n-grams found in at least MinCount requests;
//  2. fits a multinomial logistic regression by AdaGrad, each weight
//     starting from and pulled towards its prior: a keyword's weight in the
//     registry for its own specialist, the heuristic's score for its own,
//     zero elsewhere. Every false positive lowers the weights of the
//     features that fired for the wrong class and every false negative
//     raises them for the right one: the keyword re-weighting of seed 004
//     §12, extended to negation, status, paraphrase, stem and n-gram
//     features;
//  3. fits the same on Folds−1 parts and predicts the remaining one, for
//     every part, and chooses each specialist's Calibration on those
//     out-of-fold predictions;
//  4. refits on every request for the model it returns.
//
// It is deterministic: the same registry, requests and options give the
// same model. ctx bounds it.
func Learn(ctx context.Context, r *Registry, train []Labelled, opts LearnOptions) (*IntentModel, error) {
	opts = opts.withDefaults()
	classes := r.classes()
	classOf := map[string]int{}
	for i, c := range classes {
		classOf[c] = i
	}
	if len(train) < MinLearnRequests {
		return nil, &veredicto.InvalidInputError{File: "corpus", Problem: fmt.Sprintf("has %d requests; learning needs at least %d", len(train), MinLearnRequests)}
	}
	perClass := make([]int, len(classes))
	for i, l := range train {
		c, ok := classOf[l.Target]
		if !ok {
			return nil, &veredicto.InvalidInputError{File: "corpus", Field: fmt.Sprintf("[%d].target", i), Problem: fmt.Sprintf("%q is not a specialist of %s", l.Target, r.File())}
		}
		perClass[c]++
	}
	for c, n := range perClass {
		if n < MinLearnPerAgent {
			return nil, &veredicto.InvalidInputError{File: "corpus", Problem: fmt.Sprintf("labels %d requests for %q; learning needs at least %d of each", n, cmp.Or(classes[c], "none"), MinLearnPerAgent)}
		}
	}
	feats := make([]features, len(train))
	count := map[string]int{}
	for i, l := range train {
		if i%64 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		feats[i] = r.featuresOf(l.Text)
		for name := range feats[i].values {
			count[name]++
		}
	}
	var names []string
	for name, n := range count {
		if n >= opts.MinCount || !isLexical(name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	index := make(map[string]int, len(names))
	for i, n := range names {
		index[n] = i
	}
	prior := priorWeights(r, names, classes)
	examples := make([]example, len(train))
	for i, f := range feats {
		var e example
		for _, n := range sortedNames(f.values) {
			if j, ok := index[n]; ok {
				e.idx = append(e.idx, j)
				e.val = append(e.val, f.values[n])
			}
		}
		e.class = classOf[train[i].Target]
		examples[i] = e
	}

	// Out of fold: every request predicted by a fit that did not see it.
	order := rand.New(rand.NewPCG(35, 2026)).Perm(len(examples))
	fold := make([]int, len(examples))
	for k, i := range order {
		fold[i] = k % opts.Folds
	}
	oof := make([][]float64, len(examples))
	for f := range opts.Folds {
		var part []example
		for i, e := range examples {
			if fold[i] != f {
				part = append(part, e)
			}
		}
		w, b, err := fit(ctx, part, prior, len(classes), opts)
		if err != nil {
			return nil, err
		}
		for i, e := range examples {
			if fold[i] == f {
				oof[i] = predict(e, w, b)
			}
		}
	}
	w, b, err := fit(ctx, examples, prior, len(classes), opts)
	if err != nil {
		return nil, err
	}
	m := &IntentModel{Format: IntentModelFormat, Registry: r.Digest(), Label: LabelTarget, Classes: classes,
		Bias: roundAll(b), Weights: map[string][]float64{}, Calibration: map[string]Calibration{}, reg: r}
	for j, n := range names {
		row := roundAll(w[j])
		if slices.ContainsFunc(row, func(x float64) bool { return x != 0 }) {
			m.Weights[n] = row
		}
	}
	// The heuristic's precision at 0.55 on the same requests is each
	// specialist's floor for the hint.
	base := Evaluate(r, r, train, HintThreshold)
	for c := 1; c < len(classes); c++ {
		floor := max(opts.HintPrecision, base.Agents[classes[c]].Precision)
		cal := calibrate(oof, examples, c, floor, opts.MissedPrecision)
		m.Calibration[classes[c]] = Calibration{Hint: round4(cal.Hint), Missed: round4(cal.Missed)}
	}
	m.Fitted = Fitted{Requests: len(train), Options: opts, Corpus: []string{}}
	m.Fitted.Validation = evaluateOOF(m, oof, examples)
	if _, err := m.Encode(); err != nil { // sets Version
		return nil, err
	}
	return m, nil
}

// isLexical reports whether a feature is a stem, a stem pair or an n-gram
// (dropped when rare), not one of the structural ones.
func isLexical(name string) bool {
	return slices.ContainsFunc([]string{"w:", "¬w:", "b:", "n:"}, func(p string) bool { return strings.HasPrefix(name, p) })
}

func sortedNames(m map[string]float64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// priorWeights are the weights every fit starts from and is pulled
// towards: a keyword's registry weight (halved) and the heuristic's score
// (×3) for their own specialist.
func priorWeights(r *Registry, names []string, classes []string) [][]float64 {
	prior := make([][]float64, len(names))
	weight := map[string]float64{}
	for _, a := range r.Specialists() {
		for _, k := range a.Keywords {
			weight["k:"+a.ID+":"+k.Term] = k.Weight / 2
		}
	}
	for j, n := range names {
		prior[j] = make([]float64, len(classes))
		for c := 1; c < len(classes); c++ {
			switch {
			case n == "h:"+classes[c]:
				prior[j][c] = 3
			case strings.HasPrefix(n, "k:"+classes[c]+":"):
				prior[j][c] = weight[n]
			}
		}
	}
	return prior
}

// fit runs AdaGrad on the multinomial logistic loss with an L2 pull to the
// prior, over the examples in a fixed shuffled order each epoch.
func fit(ctx context.Context, examples []example, prior [][]float64, k int, o LearnOptions) ([][]float64, []float64, error) {
	w := make([][]float64, len(prior))
	g2 := make([][]float64, len(prior))
	for j := range prior {
		w[j] = slices.Clone(prior[j])
		g2[j] = make([]float64, k)
	}
	b, bg2 := make([]float64, k), make([]float64, k)
	rng := rand.New(rand.NewPCG(4, uint64(len(examples))))
	order := make([]int, len(examples))
	for i := range order {
		order[i] = i
	}
	const eps = 1e-8
	for range o.Epochs {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, i := range order {
			e := examples[i]
			p := predict(e, w, b)
			for c := range k {
				g := p[c]
				if c == e.class {
					g--
				}
				bg2[c] += g * g
				b[c] -= o.Rate * g / (math.Sqrt(bg2[c]) + eps)
				for t, j := range e.idx {
					gj := g*e.val[t] + o.L2*(w[j][c]-prior[j][c])
					g2[j][c] += gj * gj
					w[j][c] -= o.Rate * gj / (math.Sqrt(g2[j][c]) + eps)
				}
			}
		}
	}
	return w, b, nil
}

func predict(e example, w [][]float64, b []float64) []float64 {
	z := slices.Clone(b)
	for t, j := range e.idx {
		for c := range z {
			z[c] += e.val[t] * w[j][c]
		}
	}
	return softmax(z)
}

// calibrate chooses class c's Calibration on out-of-fold probabilities:
// among the requests whose most probable specialist is c, the hint is the
// threshold with the best F1 for c whose precision is at least floor, the
// missed threshold the lowest at or above it whose precision reaches
// missedPrecision. A threshold sits halfway between the probabilities it
// separates.
func calibrate(oof [][]float64, examples []example, c int, floor, missedPrecision float64) Calibration {
	type cand struct {
		p     float64
		right bool
	}
	var cands []cand
	positives := 0
	for i, e := range examples {
		if e.class == c {
			positives++
		}
		if argmaxAgent(oof[i]) == c {
			cands = append(cands, cand{oof[i][c], e.class == c})
		}
	}
	slices.SortFunc(cands, func(a, b cand) int { return -cmpFloat(a.p, b.p) })
	cal := Calibration{Hint: 1, Missed: 1}
	bestF1, hintAt := -1.0, -1
	correct := 0
	for i, x := range cands {
		if x.right {
			correct++
		}
		if i+1 < len(cands) && cands[i+1].p == x.p {
			continue // a threshold cannot split equal probabilities
		}
		precision := float64(correct) / float64(i+1)
		recall := float64(correct) / float64(max(positives, 1))
		if precision < floor || precision+recall == 0 {
			continue
		}
		if f1 := 2 * precision * recall / (precision + recall); f1 > bestF1 {
			bestF1, hintAt = f1, i
		}
	}
	if hintAt < 0 {
		return cal
	}
	cut := func(i int) float64 {
		if i+1 < len(cands) {
			return (cands[i].p + cands[i+1].p) / 2
		}
		return cands[i].p / 2
	}
	cal.Hint = cut(hintAt)
	correct = 0
	missedAt := -1
	for i, x := range cands {
		if x.right {
			correct++
		}
		if i+1 < len(cands) && cands[i+1].p == x.p {
			continue
		}
		if float64(correct)/float64(i+1) >= missedPrecision && i <= hintAt {
			missedAt = i // the lowest such threshold: keep going down
		}
	}
	if missedAt >= 0 {
		cal.Missed = max(cut(missedAt), cal.Hint)
	}
	return cal
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// argmaxAgent is the most probable specialist (class ≥ 1).
func argmaxAgent(p []float64) int {
	best := 1
	for c := 2; c < len(p); c++ {
		if p[c] > p[best] {
			best = c
		}
	}
	return best
}

// evaluateOOF is the model's Quality at 0.55 on its out-of-fold
// predictions (the validation figures recorded in the model).
func evaluateOOF(m *IntentModel, oof [][]float64, examples []example) Quality {
	scored := make([]Labelled, len(examples))
	byText := map[string]Intent{}
	for i, e := range examples {
		c := argmaxAgent(oof[i])
		id := m.Classes[c]
		s := math.Round(m.Calibration[id].score(oof[i][c])*100) / 100
		key := fmt.Sprint(i)
		byText[key] = Intent{Target: id, Score: s}
		scored[i] = Labelled{Text: key, Target: m.Classes[e.class]}
	}
	return Evaluate(fixedScorer(byText), m.reg, scored, HintThreshold)
}

type fixedScorer map[string]Intent

func (f fixedScorer) ScoreDelegationIntent(text string) Intent { return f[text] }

func roundAll(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Round(x*10000) / 10000
	}
	return out
}
