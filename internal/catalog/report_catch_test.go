package catalog_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/asl"
	fileblob "github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/catalog"
	"github.com/veredicto/veredicto/internal/search"
	"github.com/veredicto/veredicto/internal/search/offline"
	"github.com/veredicto/veredicto/internal/search/searchtest"
	filestore "github.com/veredicto/veredicto/internal/store/file"
	"github.com/veredicto/veredicto/prompts"
)

// failingReports refuses to write one candidate's report.
type failingReports struct {
	*fileblob.Dir
	candidate string
}

func (f failingReports) Put(ctx context.Context, key string, data []byte, contentType string) error {
	if strings.Contains(key, f.candidate+"/report.") {
		return errors.New("disk full")
	}
	return f.Dir.Put(ctx, key, data, contentType)
}

func summaryOf(t *testing.T, reports search.BlobWriter, out string) search.Summary {
	t.Helper()
	svc := &search.Service{Inputs: fileblob.NewDir("../../examples/search-demo"), Reports: reports, Store: filestore.NewMemory(),
		Analyst: offline.New(), PromptVersions: prompts.PromptVersion}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := catalog.RunSearch(ctx, svc, search.StartInput{SearchID: "demo-cfo-andina", Concurrency: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != asl.StatusSucceeded {
		t.Fatalf("execution %s: %s: %s", res.Status, res.Error, res.Cause)
	}
	return searchtest.ReadSummary(t, out)
}

// TestOneFailingReportKeepsTheSummary: a report that cannot be written is
// caught in the Map; the other candidates' reports and the summary are
// written, and the summary still ranks that candidate with its decision.
func TestOneFailingReportKeepsTheSummary(t *testing.T) {
	calmOut, out := t.TempDir(), t.TempDir()
	calm := summaryOf(t, fileblob.NewDir(calmOut), calmOut)
	got := summaryOf(t, failingReports{Dir: fileblob.NewDir(out), candidate: "c-002"}, out)

	decisions := func(s search.Summary) map[string]string {
		m := map[string]string{}
		for _, r := range s.Ranking {
			m[r.CandidateID] = r.Decision + " " + r.Reason
		}
		return m
	}
	want, have := decisions(calm), decisions(got)
	if len(have) != len(want) {
		t.Errorf("summary ranks %d candidates, want %d", len(have), len(want))
	}
	for id, w := range want {
		if have[id] != w {
			t.Errorf("%s: %q, want %q as without the failure", id, have[id], w)
		}
	}
	for _, r := range got.Ranking {
		_, err := os.Stat(filepath.Join(out, r.CandidateID, "report.json"))
		switch {
		case r.CandidateID == "c-002" && (err == nil || r.ReportKey != ""):
			t.Errorf("c-002: report_key %q, report.json err %v: want no report", r.ReportKey, err)
		case r.CandidateID != "c-002" && err != nil:
			t.Errorf("%s: %v", r.CandidateID, err)
		}
	}
}
