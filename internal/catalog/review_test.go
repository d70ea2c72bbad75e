package catalog_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/asl"
	fileblob "github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/catalog"
	"github.com/veredicto/veredicto/internal/confirm"
	confirmengine "github.com/veredicto/veredicto/internal/confirm/engine"
	"github.com/veredicto/veredicto/internal/confirm/memory"
	"github.com/veredicto/veredicto/internal/httpapi"
	"github.com/veredicto/veredicto/internal/labels"
	"github.com/veredicto/veredicto/internal/poll"
	"github.com/veredicto/veredicto/internal/search"
	"github.com/veredicto/veredicto/internal/search/offline"
	filestore "github.com/veredicto/veredicto/internal/store/file"
	"github.com/veredicto/veredicto/prompts"
)

// tenant owns the search in these tests: every Task of the review's path
// must carry it (a stage looked up under another tenant is missing).
const tenant = "acme"

// reviewRun is one run of examples/search-demo (c-005 is escalated for a
// structural lack of evidence) through the real definition, the real
// handlers and the offline analyst, with senior reviews kept in reviews.
type reviewRun struct {
	out     string
	reviews *confirm.Service
}

func newReviewRun(t *testing.T, reviews confirm.Store) *reviewRun {
	t.Helper()
	return &reviewRun{out: t.TempDir(), reviews: &confirm.Service{Store: reviews, Logger: slog.New(slog.DiscardHandler)}}
}

// run evaluates the search; decide, when set, is called with the id of
// the pending senior review once it is stored, in parallel with the run.
func (r *reviewRun) run(t *testing.T, review *search.ReviewOptions, decide func(id string)) map[string]search.Report {
	t.Helper()
	svc := &search.Service{Inputs: fileblob.NewDir("../../examples/search-demo"), Reports: fileblob.NewDir(r.out), Store: filestore.NewMemory(),
		Analyst: offline.New(), PromptVersions: prompts.PromptVersion}
	eng := asl.New(catalog.SearchRegistry(svc, r.reviews))
	r.reviews.Tasks = confirmengine.Tasks{Engine: eng}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	x, err := catalog.StartSearch(ctx, eng, search.StartInput{Tenant: tenant, SearchID: "demo-cfo-andina", Concurrency: 3, Review: review}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if decide != nil {
		decide(pendingReview(t, r.reviews))
	}
	res, err := x.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != asl.StatusSucceeded {
		t.Fatalf("execution %s: %s: %s", res.Status, res.Error, res.Cause)
	}
	reports := map[string]search.Report{}
	for _, id := range []string{"c-001", "c-002", "c-003", "c-004", "c-005", "c-006"} {
		var rep search.Report
		readJSON(t, filepath.Join(r.out, id, "report.json"), &rep)
		reports[id] = rep
	}
	return reports
}

func (r *reviewRun) summary(t *testing.T) (search.Summary, string) {
	t.Helper()
	var sum search.Summary
	readJSON(t, filepath.Join(r.out, "summary.json"), &sum)
	md, err := os.ReadFile(filepath.Join(r.out, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	return sum, string(md)
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// pendingReview waits until the run has stored its one pending senior review.
func pendingReview(t *testing.T, svc *confirm.Service) string {
	t.Helper()
	var id string
	poll.Until(t, 30*time.Second, func() bool {
		list, _, err := svc.Store.List(t.Context(), tenant, time.Now(), 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range list {
			if c.Status == confirm.StatusPending && c.TaskToken != "" {
				id = c.ID
				return true
			}
		}
		return false
	}, "a senior review waiting")
	return id
}

// TestSeniorReview runs every path of the senior consultant's review: the
// other candidates' decisions never change, c-005's does as the
// consultant says, with who, when and the comment in report.json,
// report.md and the summary.
func TestSeniorReview(t *testing.T) {
	unchanged := map[string]string{"c-001": search.DecisionApproved, "c-002": search.DecisionDiscarded1,
		"c-003": search.DecisionDiscarded2, "c-004": search.DecisionDiscarded3, "c-006": search.DecisionApproved}
	wait := &search.ReviewOptions{Wait: true, TimeoutSeconds: 600}
	tests := []struct {
		name     string
		review   *search.ReviewOptions
		approve  *bool // nil: nobody answers
		decision string
		status   string
		by       string
		note     string // in report.md
		counts   search.SeniorReviews
	}{
		{"unattended", nil, nil, search.DecisionEscalated, search.ReviewPending, "", "Revisión del consultor senior pendiente", search.SeniorReviews{Open: 1}},
		{"approved", wait, new(true), search.DecisionApprovedByConsultant, search.ReviewApproved, "ana", "Aprobado por el consultor senior ana el %s. Comentario: «visto»", search.SeniorReviews{Approved: 1}},
		{"rejected", wait, new(false), search.DecisionDiscardedByConsultant, search.ReviewRejected, "ana", "Descartado por el consultor senior ana el %s. Comentario: «visto»", search.SeniorReviews{Rejected: 1}},
		{"timed out", &search.ReviewOptions{Wait: true, TimeoutSeconds: 1}, nil, search.DecisionEscalated, search.ReviewExpired, "", "expiró sin decisión", search.SeniorReviews{Open: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newReviewRun(t, memory.New())
			var decide func(string)
			if tt.approve != nil {
				decide = func(id string) {
					if _, err := r.reviews.Resolve(t.Context(), tenant, confirm.Resolution{ID: id, Approved: *tt.approve, By: "ana", Comment: "visto"}); err != nil {
						t.Errorf("Resolve: %v", err)
					}
				}
			}
			reports := r.run(t, tt.review, decide)
			for id, want := range unchanged {
				if got := reports[id].Decision; got != want || reports[id].Review != nil {
					t.Errorf("%s: decision %s, review %+v; want %s and no review", id, got, reports[id].Review, want)
				}
			}
			c5 := reports["c-005"]
			if c5.Decision != tt.decision || c5.Reason != search.ReasonNoEvidence || c5.Escalation == nil {
				t.Fatalf("c-005: %s (%s), escalation %v; want %s for a structural lack of evidence, with its package", c5.Decision, c5.Reason, c5.Escalation != nil, tt.decision)
			}
			if c5.Review == nil || c5.Review.Status != tt.status || c5.Review.DecidedBy != tt.by || c5.Review.ID == "" {
				t.Fatalf("c-005 review %+v, want status %s by %q with the confirmation id", c5.Review, tt.status, tt.by)
			}
			note := tt.note
			if tt.by != "" {
				rec, err := r.reviews.Store.Get(t.Context(), tenant, c5.Review.ID)
				if err != nil || rec.Decision == nil {
					t.Fatalf("the review's record: %+v, %v", rec, err)
				}
				if c5.Review.Comment != "visto" || c5.Review.DecidedAt == nil || !c5.Review.DecidedAt.Equal(rec.Decision.DecidedAt) {
					t.Errorf("c-005 review %+v, want the comment and decided_at %s as recorded", c5.Review, rec.Decision.DecidedAt)
				}
				note = fmt.Sprintf(tt.note, rec.Decision.DecidedAt.UTC().Format("2006-01-02 15:04 MST"))
			}
			md, err := os.ReadFile(filepath.Join(r.out, "c-005", "report.md"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(md), note) || !strings.Contains(string(md), c5.Review.ID) {
				t.Errorf("c-005/report.md lacks %q and the review id:\n%s", note, md)
			}
			sum, summaryMD := r.summary(t)
			if sum.Metrics.SeniorReviews != tt.counts || sum.Metrics.EscalationRate != 0.167 {
				t.Errorf("summary senior_reviews %+v, escalation rate %v; want %+v and 1 of 6 cases escalated", sum.Metrics.SeniorReviews, sum.Metrics.EscalationRate, tt.counts)
			}
			for _, c := range sum.Ranking {
				if c.CandidateID == "c-005" && (c.Decision != tt.decision || c.Review == nil || c.Review.DecidedBy != tt.by || c.Escalation != nil) {
					t.Errorf("summary ranks c-005 as %s with review %+v (package %v); want %s by %q, the package left to report.json", c.Decision, c.Review, c.Escalation != nil, tt.decision, tt.by)
				}
			}
			if !strings.Contains(summaryMD, "| c-005 | "+labels.Of(labels.Decision, tt.decision)+" |") {
				t.Errorf("summary.md has no review row for c-005 with %s:\n%s", tt.decision, summaryMD)
			}
			// The task's timeout counts from the Task's start, the
			// record's expiry from its creation a moment later: a timed-out
			// review leaves the pending list within that moment.
			wantPending := tt.status == search.ReviewPending
			var pending []confirm.View
			listed := func() bool {
				var err error
				if pending, _, err = r.reviews.List(t.Context(), tenant); err != nil {
					t.Fatal(err)
				}
				return len(pending) == 1 && pending[0].ID == c5.Review.ID
			}
			settled := listed() == wantPending
			if !settled && tt.status == search.ReviewExpired {
				settled = poll.Within(5*time.Second, func() bool { return !listed() })
			}
			if !settled || len(pending) > 1 {
				t.Errorf("pending reviews %+v; want c-005's listed: %v", pending, wantPending)
			}
		})
	}
}

// TestSeniorReviewDecidedBetweenRuns: a review recorded by an unattended
// run and decided afterwards is applied by the next run of the search,
// which waits for nobody; the decision is recorded once.
func TestSeniorReviewDecidedBetweenRuns(t *testing.T) {
	for _, approve := range []bool{true, false} {
		want := map[bool]string{true: search.DecisionApprovedByConsultant, false: search.DecisionDiscardedByConsultant}[approve]
		t.Run(want, func(t *testing.T) {
			r := newReviewRun(t, memory.New())
			first := r.run(t, nil, nil)["c-005"]
			if first.Decision != search.DecisionEscalated || first.Review == nil || first.Review.Status != search.ReviewPending {
				t.Fatalf("first run: c-005 %s, review %+v; want escalated with a pending review", first.Decision, first.Review)
			}
			v, err := r.reviews.Resolve(t.Context(), tenant, confirm.Resolution{ID: first.Review.ID, Approved: approve, By: "ana", Comment: "tras llamar a referencias"})
			if err != nil || v.Delivery != confirm.DeliveryNextRun {
				t.Fatalf("Resolve: %+v, %v; want the decision recorded for the next run", v, err)
			}
			again := r.run(t, nil, nil)["c-005"]
			if again.Decision != want || again.Review == nil || again.Review.ID != first.Review.ID || again.Review.DecidedBy != "ana" || again.Review.Comment != "tras llamar a referencias" {
				t.Errorf("second run: c-005 %s, review %+v; want %s by ana with the comment, same review", again.Decision, again.Review, want)
			}
			if _, err := r.reviews.Resolve(t.Context(), tenant, confirm.Resolution{ID: first.Review.ID, Approved: !approve, By: "bob"}); httpapi.StatusOf(err) != 409 {
				t.Errorf("a second decision: %v, want 409", err)
			}
		})
	}
}

// TestSeniorReviewUnavailable: when the review cannot be requested
// (ConfirmFunction fails for good), the Map goes on: the candidate stays
// escalated, its report says the review could not be requested, and every
// other candidate's decision is the same.
func TestSeniorReviewUnavailable(t *testing.T) {
	out := t.TempDir()
	svc := &search.Service{Inputs: fileblob.NewDir("../../examples/search-demo"), Reports: fileblob.NewDir(out), Store: filestore.NewMemory(),
		Analyst: offline.New(), PromptVersions: prompts.PromptVersion}
	reg := catalog.SearchRegistry(svc, &confirm.Service{Store: memory.New()})
	reg.Register("ConfirmFunction", catalog.EngineHandler(func(context.Context, confirm.Request) (confirm.Response, error) {
		return confirm.Response{}, &veredicto.InvalidInputError{File: "ConfirmFunction payload", Field: "preview", Problem: "too large"}
	}))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, review := range []*search.ReviewOptions{nil, {Wait: true, TimeoutSeconds: 600}} {
		x, err := catalog.StartSearch(ctx, asl.New(reg), search.StartInput{SearchID: "demo-cfo-andina", Review: review}, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := x.Wait(ctx)
		if err != nil || res.Status != asl.StatusSucceeded {
			t.Fatalf("execution %v %v: want success", res, err)
		}
		var rep search.Report
		readJSON(t, filepath.Join(out, "c-005", "report.json"), &rep)
		if rep.Decision != search.DecisionEscalated || rep.Review == nil || rep.Review.Status != search.ReviewUnavailable || rep.Review.Error != "InvalidInputError" {
			t.Errorf("wait %v: c-005 %s, review %+v; want escalated with the review unavailable (InvalidInputError)", review != nil, rep.Decision, rep.Review)
		}
		var sum search.Summary
		readJSON(t, filepath.Join(out, "summary.json"), &sum)
		if len(sum.Ranking) != 6 || sum.Metrics.SeniorReviews.Open != 1 {
			t.Errorf("summary ranks %d candidates, senior reviews %+v; want 6 and one open", len(sum.Ranking), sum.Metrics.SeniorReviews)
		}
	}
}
