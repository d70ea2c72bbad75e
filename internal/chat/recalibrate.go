package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/eventlog"
)

// Corpus is the labelled corpus a recalibration fits on (Train) and
// judges with (Heldout, never fitted on).
type Corpus struct {
	Train, Heldout []Labelled
}

// RecalibrationStream is the tenant's event-log stream that carries each
// recalibration's decision (an event of type TypeRecalibration).
const (
	RecalibrationStream = "chat-models"
	TypeRecalibration   = "recalibration"
)

// Recalibration bounds.
const (
	// MaxNewest is the most answers kept aside as the newest feedback.
	MaxNewest = 500
	// RecalibrateEvery is how often a tenant with feedback is recalibrated
	// (the schedule on AWS, serve's job locally).
	RecalibrateEvery = 7 * 24 * time.Hour
	// MaxRecalibrateTenants bounds the tenants one scheduled run refits.
	MaxRecalibrateTenants = 200
)

// Recalibration is one recalibration's decision and figures, kept under
// the tenant's chat keys (the metrics show the last) and put on the
// tenant's RecalibrationStream.
type Recalibration struct {
	Tenant string    `json:"tenant"`
	At     time.Time `json:"at"`
	// Promoted: the candidate became the tenant's model. Reason says why
	// or why not.
	Promoted bool   `json:"promoted"`
	Reason   string `json:"reason"`
	// Current is the scorer the tenant had ("keywords" or "model
	// <version>"), Candidate the refitted model's version.
	Current   string `json:"current"`
	Candidate string `json:"candidate"`
	// Fitted counts the requests the candidate was fitted on: the corpus's
	// train split and the tenant's answers older than the newest.
	Fitted        int `json:"fitted"`
	FittedAnswers int `json:"fitted_answers"`
	// Heldout and Newest compare the two at 0.55 on the corpus's held-out
	// split and on the tenant's newest answers.
	Heldout ScorerComparison `json:"heldout"`
	Newest  ScorerComparison `json:"newest"`
}

// ScorerComparison is the current scorer's and the candidate's figures on the
// same requests.
type ScorerComparison struct {
	Requests  int     `json:"requests"`
	Current   Figures `json:"current"`
	Candidate Figures `json:"candidate"`
}

// Figures are a Quality's rates.
type Figures struct {
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
}

func figuresOf(q Quality) Figures { return Figures{q.Precision, q.Recall, q.F1} }

func recalibrationPrefix(tenant string) string { return "chat/" + tenant + "/_recalibration/" }

// feedbackIndexKey marks a tenant that has answered (the scheduled
// recalibration's list of tenants).
func feedbackIndexKey(tenant string) string { return "chat-index/feedback/" + tenant }

// Recalibrate refits the tenant's intent model from the corpus's train
// split plus the tenant's answers (Feedback), all but the newest — the
// latest fifth, at most MaxNewest — which are kept aside with the corpus's
// held-out split to judge it. The candidate is promoted (IntentModels.
// Promote) only if its F1 at 0.55 is at least the current scorer's on both
// (on the held-out split alone when the tenant has no answers): a refit
// never makes the tenant's delegations worse on what it is judged by. The
// decision is stored, shown by Metrics, and put on the tenant's
// RecalibrationStream.
func (s *Service) Recalibrate(ctx context.Context, tenant string) (Recalibration, error) {
	if s.Intents == nil || s.Intents.Blobs == nil {
		return Recalibration{}, errors.New("recalibrate: the chat has no model store")
	}
	if len(s.Corpus.Train) == 0 || len(s.Corpus.Heldout) == 0 {
		return Recalibration{}, errors.New("recalibrate: the chat has no corpus")
	}
	answers, err := s.FeedbackOf(ctx, tenant)
	if err != nil {
		return Recalibration{}, err
	}
	newestN := min((len(answers)+4)/5, MaxNewest)
	older, newest := answers[:len(answers)-newestN], answers[len(answers)-newestN:]
	train := append([]Labelled{}, s.Corpus.Train...)
	for _, f := range older {
		train = append(train, f.Labelled())
	}
	var judge []Labelled
	for _, f := range newest {
		judge = append(judge, f.Labelled())
	}
	rec := Recalibration{Tenant: tenant, At: s.now(), Fitted: len(train), FittedAnswers: len(older), Current: "keywords"}
	var current Scorer = s.Registry
	if m, err := s.Intents.Tenant(ctx, tenant); err != nil {
		s.logger().WarnContext(ctx, "recalibrate: the tenant's model is unreadable; judged against the fallback", "tenant", tenant, "error", err)
	} else if m != nil {
		current = m
	}
	if m, ok := current.(*IntentModel); ok {
		rec.Current = "model " + m.Version
	} else if s.Intents.Default != nil {
		current, rec.Current = s.Intents.Default, "model "+s.Intents.Default.Version
	}
	candidate, err := Learn(ctx, s.Registry, train, LearnOptions{})
	if err != nil {
		return Recalibration{}, fmt.Errorf("recalibrate %s: %w", tenant, err)
	}
	candidate.Fitted.Corpus = []string{"corpus train", fmt.Sprintf("%d answers of %s", len(older), tenant)}
	candidate.Fitted.Feedback = len(older)
	if _, err := candidate.Encode(); err != nil { // its version, for the record
		return Recalibration{}, err
	}
	rec.Candidate = candidate.Version
	compare := func(c []Labelled) ScorerComparison {
		return ScorerComparison{Requests: len(c), Current: figuresOf(Evaluate(current, s.Registry, c, HintThreshold)),
			Candidate: figuresOf(Evaluate(candidate, s.Registry, c, HintThreshold))}
	}
	rec.Heldout = compare(s.Corpus.Heldout)
	rec.Newest = compare(judge)
	switch {
	case rec.Heldout.Candidate.F1 < rec.Heldout.Current.F1:
		rec.Reason = fmt.Sprintf("refused: F1 on the held-out split would drop from %.4f to %.4f", rec.Heldout.Current.F1, rec.Heldout.Candidate.F1)
	case len(judge) > 0 && rec.Newest.Candidate.F1 < rec.Newest.Current.F1:
		rec.Reason = fmt.Sprintf("refused: F1 on the newest %d answers would drop from %.4f to %.4f", len(judge), rec.Newest.Current.F1, rec.Newest.Candidate.F1)
	default:
		rec.Promoted = true
		rec.Reason = fmt.Sprintf("promoted: F1 %.4f on the held-out split (was %.4f)", rec.Heldout.Candidate.F1, rec.Heldout.Current.F1)
		if len(judge) > 0 {
			rec.Reason += fmt.Sprintf(", %.4f on the newest %d answers (was %.4f)", rec.Newest.Candidate.F1, len(judge), rec.Newest.Current.F1)
		}
	}
	if rec.Promoted {
		if err := s.Intents.Promote(ctx, tenant, candidate); err != nil {
			return Recalibration{}, err
		}
	}
	if err := s.recordRecalibration(ctx, rec); err != nil {
		return rec, err
	}
	s.logger().InfoContext(ctx, "chat recalibration", "tenant", tenant, "promoted", rec.Promoted, "current", rec.Current,
		"candidate", rec.Candidate, "heldout_f1", rec.Heldout.Candidate.F1, "newest_answers", len(judge))
	return rec, nil
}

// recordRecalibration keeps the decision and puts it on the stream.
func (s *Service) recordRecalibration(ctx context.Context, rec Recalibration) error {
	b, _ := json.Marshal(rec)
	key := recalibrationPrefix(rec.Tenant) + rec.At.UTC().Format("20060102T150405.000000000Z")
	if _, err := s.Store.PutIfAbsent(ctx, key, b); err != nil {
		return fmt.Errorf("store recalibration of %s: %w", rec.Tenant, err)
	}
	var data map[string]any
	_ = json.Unmarshal(b, &data)
	ev, err := eventlog.New(TypeRecalibration, "recalibration:"+key, data)
	if err == nil {
		_, err = s.Events.Append(ctx, rec.Tenant, RecalibrationStream, ev)
	}
	if err != nil {
		return fmt.Errorf("recalibration of %s to the event stream: %w", rec.Tenant, err)
	}
	return nil
}

// LastRecalibration is the tenant's latest recalibration (ok false when
// it has none).
func (s *Service) LastRecalibration(ctx context.Context, tenant string) (Recalibration, bool, error) {
	keys, err := s.Store.List(ctx, recalibrationPrefix(tenant))
	if err != nil || len(keys) == 0 {
		return Recalibration{}, false, err
	}
	b, ok, err := s.Store.Get(ctx, keys[len(keys)-1])
	if err != nil || !ok {
		return Recalibration{}, false, err
	}
	var rec Recalibration
	if err := json.Unmarshal(b, &rec); err != nil {
		return Recalibration{}, false, fmt.Errorf("read %s: %w", keys[len(keys)-1], err)
	}
	return rec, true, nil
}

// RecalibrateDue recalibrates every tenant that has answered and whose
// last recalibration is older than every (RecalibrateEvery when 0), at most
// MaxRecalibrateTenants per call; one tenant's failure is logged and the
// others go on. It returns the decisions taken.
func (s *Service) RecalibrateDue(ctx context.Context, every time.Duration) ([]Recalibration, error) {
	if every <= 0 {
		every = RecalibrateEvery
	}
	keys, err := s.Store.List(ctx, feedbackIndexKey(""))
	if err != nil {
		return nil, fmt.Errorf("list tenants with feedback: %w", err)
	}
	var out []Recalibration
	for _, k := range keys {
		if len(out) == MaxRecalibrateTenants || ctx.Err() != nil {
			break
		}
		tenant := strings.TrimPrefix(k, feedbackIndexKey(""))
		if !veredicto.ValidID(tenant) {
			continue
		}
		last, ok, err := s.LastRecalibration(ctx, tenant)
		if err != nil {
			s.logger().WarnContext(ctx, "recalibrate: cannot read the last decision", "tenant", tenant, "error", err)
			continue
		}
		if ok && s.now().Sub(last.At) < every {
			continue
		}
		rec, err := s.Recalibrate(ctx, tenant)
		if err != nil {
			s.logger().ErrorContext(ctx, "recalibrate", "tenant", tenant, "error", err)
			continue
		}
		out = append(out, rec)
	}
	return out, nil
}
