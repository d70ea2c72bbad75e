package chat

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	fileblob "github.com/veredicto/veredicto/internal/blob/file"
)

// answer stores a labelled answer of tenant directly (as Feedback would).
func answer(t *testing.T, r *rig, tenant string, n int, text, label string, at time.Time) {
	t.Helper()
	f := Feedback{ChatID: "fb", Turn: n, Question: QuestionMissed, Answer: AnswerYes, Agent: label, Text: text, Label: label, At: at}
	b, _ := json.Marshal(f)
	if _, err := r.svc.Store.PutIfAbsent(t.Context(), feedbackKey(tenant, "fb", n), b); err != nil {
		t.Fatal(err)
	}
	if _, err := r.svc.Store.PutIfAbsent(t.Context(), feedbackIndexKey(tenant), []byte("{}")); err != nil {
		t.Fatal(err)
	}
}

func recalibrationRig(t *testing.T) *rig {
	t.Helper()
	r := newRig(t, nil, Options{})
	r.svc.Corpus = Corpus{Train: loadSplit(t, "train"), Heldout: loadSplit(t, "heldout")}
	r.svc.Intents = &IntentModels{Registry: r.svc.Registry, Blobs: fileblob.NewDir(t.TempDir())}
	return r
}

// TestRecalibratePromotes: a tenant on the keywords, with sound answers,
// gets a refitted model that is better on the held-out split and on its
// newest answers; the decision is in the metrics and on the stream.
func TestRecalibratePromotes(t *testing.T) {
	r := recalibrationRig(t)
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	sound := []struct{ text, label string }{
		{"Pónganse de acuerdo los evaluadores sobre c-004", "debate"},
		{"Quiero ver frente a frente a c-002 y c-009", "search-analyst"},
		{"Hazle llegar a la clienta el informe de c-003", "reports"},
		{"Mira si en la entrevista c-006 se fue por las ramas", "flags-classifier"},
		{"¿Qué me falta para la vacante de gerente de compras?", "companion"},
	}
	for i := range 10 {
		s := sound[i%len(sound)]
		answer(t, r, "acme", i+1, fmt.Sprintf("%s (%d)", s.text, i), s.label, at.Add(time.Duration(i)*time.Hour))
	}
	rec, err := r.svc.Recalibrate(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("decision: %+v", rec)
	if !rec.Promoted || rec.Current != "keywords" || rec.FittedAnswers != 8 || rec.Newest.Requests != 2 || rec.Fitted != len(r.svc.Corpus.Train)+8 {
		t.Errorf("decision = %+v; want promoted over the keywords, 8 answers fitted and 2 kept aside", rec)
	}
	if rec.Heldout.Candidate.F1 < rec.Heldout.Current.F1+0.15 {
		t.Errorf("held-out F1 %.4f against the keywords' %.4f", rec.Heldout.Candidate.F1, rec.Heldout.Current.F1)
	}
	if got, ok := r.svc.Intents.For(t.Context(), "acme").(*IntentModel); !ok || got.Version != rec.Candidate || got.Fitted.Feedback != 8 {
		t.Errorf("acme's scorer is not the promoted candidate %s", rec.Candidate)
	}
	m, err := r.svc.Metrics(t.Context(), "acme")
	if err != nil || m.Recalibration == nil || m.Recalibration.Candidate != rec.Candidate || !m.Recalibration.Promoted {
		t.Errorf("metrics' recalibration = %+v, %v", m.Recalibration, err)
	}
	evs, err := r.events.Read(t.Context(), "acme", RecalibrationStream, 0, 10)
	if err != nil || len(evs) != 1 || evs[0].Type != TypeRecalibration || !strings.Contains(string(evs[0].Data), `"promoted":true`) ||
		strings.Contains(string(evs[0].Data), "Pónganse") {
		t.Errorf("stream = %v, %v; want one recalibration event, figures only", evs, err)
	}
	// Due only after a week.
	done, err := r.svc.RecalibrateDue(t.Context(), 0)
	if err != nil || len(done) != 0 {
		t.Errorf("RecalibrateDue right after: %d, %v; want none", len(done), err)
	}
	r.svc.Now = func() time.Time { return time.Now().Add(8 * 24 * time.Hour) }
	if done, err := r.svc.RecalibrateDue(t.Context(), 0); err != nil || len(done) != 1 || done[0].Tenant != "acme" {
		t.Errorf("RecalibrateDue a week later: %+v, %v; want acme", done, err)
	}
}

// TestRecalibrateRefusesAnF1Loss: answers that send comparisons to the
// reports agent would make a refitted model worse on the held-out split
// than the tenant's current model: it is not promoted, and the refusal is
// recorded.
func TestRecalibrateRefusesAnF1Loss(t *testing.T) {
	r := recalibrationRig(t)
	shipped := loadShipped(t, r.svc.Registry)
	if err := r.svc.Intents.Promote(t.Context(), "acme", shipped); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	wrong := []string{"Compara a c-%03d con c-%03d en liderazgo", "Dame el ranking de la búsqueda cfo-%d con c-%03d", "Evalúa la terna de la búsqueda coo-%d, c-%03d",
		"¿Quién tiene mejor puntaje, c-%03d o c-%03d?", "Lanza la evaluación de la búsqueda dir-%d-%03d"}
	for i := range 150 {
		answer(t, r, "acme", i+1, fmt.Sprintf(wrong[i%len(wrong)], i, i+1), "reports", at.Add(time.Duration(i)*time.Minute))
	}
	rec, err := r.svc.Recalibrate(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("decision: %+v", rec)
	if rec.Promoted || rec.Current != "model "+shipped.Version || !strings.HasPrefix(rec.Reason, "refused: F1 on the held-out split would drop") {
		t.Errorf("decision = %+v; want refused for the held-out F1", rec)
	}
	if got, ok := r.svc.Intents.For(t.Context(), "acme").(*IntentModel); !ok || got.Version != shipped.Version {
		t.Errorf("acme's model changed although the recalibration was refused")
	}
	if m, _ := r.svc.Metrics(t.Context(), "acme"); m.Recalibration == nil || m.Recalibration.Promoted {
		t.Errorf("metrics do not show the refusal: %+v", m.Recalibration)
	}
}

func TestRecalibrateNeedsItsParts(t *testing.T) {
	r := newRig(t, nil, Options{})
	if _, err := r.svc.Recalibrate(t.Context(), "acme"); err == nil || !strings.Contains(err.Error(), "model store") {
		t.Errorf("without a model store: %v", err)
	}
	r.svc.Intents = &IntentModels{Registry: r.svc.Registry, Blobs: fileblob.NewDir(t.TempDir())}
	if _, err := r.svc.Recalibrate(t.Context(), "acme"); err == nil || !strings.Contains(err.Error(), "corpus") {
		t.Errorf("without a corpus: %v", err)
	}
}

// TestScheduledRecalibrationMessage: the weekly schedule's message on the
// turns queue recalibrates the tenants due, and is never retried.
func TestScheduledRecalibrationMessage(t *testing.T) {
	r := recalibrationRig(t)
	answer(t, r, "acme", 1, "Quiero ver frente a frente a c-002 y c-009", "search-analyst", time.Now())
	resp, err := r.svc.HandleSQS(t.Context(), events.SQSEvent{Records: []events.SQSMessage{{MessageId: "w1", Body: `{"recalibrate": true}`}}})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("HandleSQS = %+v, %v", resp, err)
	}
	if last, ok, err := r.svc.LastRecalibration(t.Context(), "acme"); err != nil || !ok || !last.Promoted {
		t.Errorf("after the scheduled message: %+v, %v, %v; want acme recalibrated", last, ok, err)
	}
}
