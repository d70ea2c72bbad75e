package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/veredicto/veredicto"
	fileblob "github.com/veredicto/veredicto/internal/blob/file"
)

// shippedModel is the model fitted on the train split
// (veredicto chat learn --corpus examples/delegation/corpus/train.yaml).
const shippedModel = "../../examples/delegation/model.json"

func loadShipped(t testing.TB, r *Registry) *IntentModel {
	t.Helper()
	b, err := os.ReadFile(shippedModel)
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.LoadIntentModel(shippedModel, b)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The goal of issue 35 on the held-out split, against the keyword
// baseline's figures at 0.55 (docs/BENCHMARKS.md).
const (
	goalF1Gain     = 0.15
	shippedF1      = 0.9389
	shippedVersion = "12a399bc8902"
)

// checkGoal fails when the model's F1 on the held-out split is not at least
// goalF1Gain above the keyword baseline's, or an agent's precision is
// below the baseline's.
func checkGoal(t *testing.T, r *Registry, m Scorer, heldout []Labelled) Quality {
	t.Helper()
	base := r.Evaluate(heldout, HintThreshold)
	q := Evaluate(m, r, heldout, HintThreshold)
	t.Logf("held out at 0.55: keywords P %.4f R %.4f F1 %.4f; model P %.4f R %.4f F1 %.4f", base.Precision, base.Recall, base.F1, q.Precision, q.Recall, q.F1)
	if q.F1 < base.F1+goalF1Gain {
		t.Errorf("model F1 %.4f, want at least the baseline's %.4f + %.2f", q.F1, base.F1, goalF1Gain)
	}
	for id, b := range base.Agents {
		if got := q.Agents[id].Precision; got < b.Precision {
			t.Errorf("%s: model precision %.4f below the baseline's %.4f", id, got, b.Precision)
		}
	}
	return q
}

// TestLearnedModelGoal holds the shipped model, and a model fitted again
// on the train split, to the goal on the held-out split; the shipped
// model's figures are the ones recorded in docs/BENCHMARKS.md.
func TestLearnedModelGoal(t *testing.T) {
	r := defaultRegistry(t)
	heldout := loadSplit(t, "heldout")
	shipped := loadShipped(t, r)
	if shipped.Version != shippedVersion {
		t.Errorf("shipped model version %s, BENCHMARKS.md records %s", shipped.Version, shippedVersion)
	}
	if q := checkGoal(t, r, shipped, heldout); q.F1 != shippedF1 {
		t.Errorf("shipped model F1 %.4f on the held-out split, BENCHMARKS.md records %.4f", q.F1, shippedF1)
	}
	refit, err := Learn(t.Context(), r, loadSplit(t, "train"), LearnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkGoal(t, r, refit, heldout)
}

// sample is every k-th request: every label, fewer requests.
func sample(c []Labelled, k int) []Labelled {
	var out []Labelled
	for i := 0; i < len(c); i += k {
		out = append(out, c[i])
	}
	return out
}

func TestCalibrationScore(t *testing.T) {
	c := Calibration{Hint: 0.4, Missed: 0.8}
	for _, tc := range []struct{ p, want float64 }{
		{0, 0}, {0.2, 0.275}, {0.4, HintThreshold}, {0.6, 0.65}, {0.8, MissedThreshold}, {0.9, 0.875}, {1, 1},
	} {
		if got := c.score(tc.p); abs(got-tc.want) > 1e-9 {
			t.Errorf("score(%v) = %v, want %v", tc.p, got, tc.want)
		}
	}
	// Hint and missed at the same probability: 0.75 from there on.
	same := Calibration{Hint: 0.5, Missed: 0.5}
	if got := same.score(0.5); got != MissedThreshold {
		t.Errorf("score at hint = missed: %v, want 0.75", got)
	}
	// Never: no probability below 1 reaches 0.55.
	never := Calibration{Hint: 1, Missed: 1}
	if got := never.score(0.99); got >= HintThreshold {
		t.Errorf("score with hint 1: %v, want below 0.55", got)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func TestLoadIntentModelRejects(t *testing.T) {
	r := defaultRegistry(t)
	good, err := os.ReadFile(shippedModel)
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(m map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal(good, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, _ := json.Marshal(m)
		return b
	}
	tests := []struct {
		name  string
		data  []byte
		field string
	}{
		{"not json", []byte("{"), ""},
		{"unknown field", edit(func(m map[string]any) { m["extra"] = 1 }), ""},
		{"format", edit(func(m map[string]any) { m["format"] = "other/1" }), "format"},
		{"another registry", edit(func(m map[string]any) { m["registry"] = "sha256:00" }), "registry"},
		{"classes", edit(func(m map[string]any) { m["classes"] = []string{"", "reports"} }), "classes"},
		{"bias", edit(func(m map[string]any) { m["bias"] = []float64{1} }), "bias"},
		{"row", edit(func(m map[string]any) { m["weights"] = map[string]any{"w:x": []float64{1, 2}} }), "weights"},
		{"calibration", edit(func(m map[string]any) {
			m["calibration"].(map[string]any)["debate"] = map[string]any{"hint": 0.9, "missed": 0.5}
		}), "calibration.debate"},
		{"too big", bytes.Repeat([]byte(" "), MaxModelBytes+1), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.LoadIntentModel("m.json", tc.data)
			var ie *veredicto.InvalidInputError
			if !errors.As(err, &ie) || ie.File != "m.json" || ie.Field != tc.field {
				t.Errorf("err = %v, want an InvalidInputError on m.json field %q", err, tc.field)
			}
		})
	}
	// The seed's registry has another digest: the project's model is refused.
	if _, err := seedRegistry(t).LoadIntentModel("m.json", good); err == nil || !strings.Contains(err.Error(), "refit") {
		t.Errorf("model on the seed registry: err = %v, want refit", err)
	}
}

func TestLearnDeterministicAndEncoded(t *testing.T) {
	r := defaultRegistry(t)
	train := sample(loadSplit(t, "train"), 2)
	a, err := Learn(t.Context(), r, train, LearnOptions{Epochs: 5})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Learn(t.Context(), r, train, LearnOptions{Epochs: 5})
	if err != nil {
		t.Fatal(err)
	}
	ea, _ := a.Encode()
	eb, _ := b.Encode()
	if !bytes.Equal(ea, eb) {
		t.Fatal("two fits of the same requests differ")
	}
	back, err := r.LoadIntentModel("m.json", ea)
	if err != nil {
		t.Fatalf("an encoded model does not load: %v", err)
	}
	if back.Version != a.Version || back.Fitted.Options.Epochs != 5 {
		t.Errorf("loaded version %s epochs %d, want %s 5", back.Version, back.Fitted.Options.Epochs, a.Version)
	}
	text := "Compara a c-001 con c-004 en liderazgo"
	if x, y := a.ScoreDelegationIntent(text), back.ScoreDelegationIntent(text); x.Target != y.Target || x.Score != y.Score {
		t.Errorf("scores differ after a round trip: %+v, %+v", x, y)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Learn(ctx, r, train, LearnOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Learn: err = %v", err)
	}
}

func TestLearnRejects(t *testing.T) {
	r := defaultRegistry(t)
	train := loadSplit(t, "train")
	few := train[:10]
	if _, err := Learn(t.Context(), r, few, LearnOptions{}); err == nil || !strings.Contains(err.Error(), "at least 50") {
		t.Errorf("10 requests: err = %v", err)
	}
	var noDebate []Labelled
	for _, l := range train {
		if l.Target != "debate" {
			noDebate = append(noDebate, l)
		}
	}
	if _, err := Learn(t.Context(), r, noDebate, LearnOptions{}); err == nil || !strings.Contains(err.Error(), `"debate"`) {
		t.Errorf("no debate labelled: err = %v", err)
	}
	bad := append([]Labelled{{Text: "hola", Target: "astra-email"}}, train...)
	if _, err := Learn(t.Context(), r, bad, LearnOptions{}); err == nil || !strings.Contains(err.Error(), "astra-email") {
		t.Errorf("a label of another registry: err = %v", err)
	}
}

// TestLearnedIntentContract: the learned model's Intent has the
// heuristic's shape and reasons, reads negation, status and paraphrase.
func TestLearnedIntentContract(t *testing.T) {
	r := defaultRegistry(t)
	m := loadShipped(t, r)
	tests := []struct {
		text   string
		target string // "" when the score must stay below 0.55
		reason string
	}{
		{"No hace falta debatir esto", "", "negation: no hace falta"},
		{"Ya no compares a nadie", "", ""},
		{"Prepara el informe de c-004 sin enviarlo todavía", "", "negation: sin"},
		{"Contrástame a las dos finalistas", "search-analyst", "paraphrase: compare"},
		{"Reenvía el informe de c-007", "reports", "paraphrase: send"},
		{"Haz que los agentes debatan", "debate", "paraphrase: committee"},
		{"¿Cómo va la búsqueda cfo-2026?", "search-analyst", "status question: como va*"},
		{"¿Ya terminó el debate de c-005?", "debate", "status question"},
		{"Hola, ¿cómo estás?", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			in := m.ScoreDelegationIntent(tc.text)
			got := in.Target
			if in.Score < HintThreshold {
				got = ""
			}
			if got != tc.target {
				t.Errorf("target %q at %.2f (%v), want %q at ≥ 0.55", in.Target, in.Score, in.Reasons, tc.target)
			}
			if tc.reason != "" && !strings.Contains(strings.Join(in.Reasons, "|"), tc.reason) {
				t.Errorf("reasons %v, want one with %q", in.Reasons, tc.reason)
			}
			if in.Target != "" && (in.Reasons[0] != "model "+m.Version || in.Scores[in.Target] != in.Score) {
				t.Errorf("intent %+v: reasons must open with the model, scores hold the target's", in)
			}
			for _, s := range in.Scores {
				if s <= 0 || s > 1 {
					t.Errorf("score %v outside (0, 1]", s)
				}
			}
		})
	}
}

func TestIntentModelsChoose(t *testing.T) {
	r := defaultRegistry(t)
	shipped := loadShipped(t, r)
	dir := t.TempDir()
	blobs := fileblob.NewDir(dir)
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	models := &IntentModels{Registry: r, Blobs: blobs, Now: func() time.Time { return now }}
	ctx := t.Context()
	if got := models.For(ctx, "acme"); got != Scorer(r) {
		t.Errorf("no model anywhere: scorer %T, want the registry", got)
	}
	models.Default = shipped
	if got := models.For(ctx, "acme"); got != Scorer(shipped) {
		t.Errorf("an installation model: scorer %T, want it", got)
	}
	// A tenant's promoted model wins for that tenant only.
	small, err := Learn(ctx, r, sample(loadSplit(t, "train"), 2), LearnOptions{Epochs: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := models.Promote(ctx, "acme", small); err != nil {
		t.Fatal(err)
	}
	if got, ok := models.For(ctx, "acme").(*IntentModel); !ok || got.Version != small.Version {
		t.Errorf("acme's scorer is not its promoted model")
	}
	if got := models.For(ctx, "other"); got != Scorer(shipped) {
		t.Errorf("another tenant's scorer %T, want the installation's", got)
	}
	// A broken model is skipped, not fatal; read again after the TTL.
	if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(ModelKey("acme"))), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, ok := models.For(ctx, "acme").(*IntentModel); !ok || got.Version != small.Version {
		t.Errorf("within the TTL the cached model is used")
	}
	now = now.Add(2 * time.Minute)
	if got := models.For(ctx, "acme"); got != Scorer(shipped) {
		t.Errorf("a broken tenant model: scorer %T, want the installation's", got)
	}
}

// TestOfflineFollowsTheTenantModel: with the learned model the offline
// supervisor delegates a paraphrase the keywords miss, keeps a negated
// send to itself, and answers a status question about a sent report
// without sending it again.
func TestOfflineFollowsTheTenantModel(t *testing.T) {
	r := newRig(t, nil, Options{})
	r.svc.Intents = &IntentModels{Registry: r.svc.Registry, Default: loadShipped(t, r.svc.Registry)}
	const paraphrase = "Contrástame a las dos finalistas"
	if kw := r.svc.Registry.ScoreDelegationIntent(paraphrase); kw.Score >= HintThreshold {
		t.Fatalf("the keywords delegate %q too (%.2f): not a paraphrase they miss", paraphrase, kw.Score)
	}
	if res := r.turn(t, "m", paraphrase); res.Delegated != "search-analyst" {
		t.Errorf("paraphrased comparison: %+v, want the analyst", res)
	}
	res := r.turn(t, "m", "Deja listo el informe de c-001 pero no lo envíes todavía")
	if res.Delegated != "" || len(r.outbox.sent) != 0 {
		t.Errorf("negated send: %+v, %d sent; want nothing delegated", res, len(r.outbox.sent))
	}
	res = r.turn(t, "m", "¿Ya se envió el informe de c-001 al cliente?")
	if res.Delegated != "" || res.Text != OfflineStatusTemplate {
		t.Errorf("status of a send: %+v; want the offline status answer", res)
	}
	res = r.turn(t, "m", "¿Cómo va la búsqueda cfo-2026?")
	if res.Delegated != "search-analyst" {
		t.Errorf("status of a search: %+v; want the analyst's status", res)
	}
	hist, _ := r.svc.History(t.Context(), "acme", "m", 10)
	if len(hist) != 4 || !strings.HasPrefix(hist[0].Intent.Reasons[0], "model ") {
		t.Errorf("stored intent does not name the model: %+v", hist[0].Intent)
	}
}

// BenchmarkLearnedIntent measures one scoring with the shipped model over
// the held-out split (docs/BENCHMARKS.md).
func BenchmarkLearnedIntent(b *testing.B) {
	r := defaultRegistry(b)
	m := loadShipped(b, r)
	heldout := loadSplit(b, "heldout")
	for i := 0; b.Loop(); i++ {
		m.ScoreDelegationIntent(heldout[i%len(heldout)].Text)
	}
}
