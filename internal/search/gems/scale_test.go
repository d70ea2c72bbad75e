package gems_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/asl"
	fileblob "github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/catalog"
	"github.com/veredicto/veredicto/internal/search"
	"github.com/veredicto/veredicto/internal/search/gems"
	"github.com/veredicto/veredicto/internal/search/searchtest"
	filestore "github.com/veredicto/veredicto/internal/store/file"
	"github.com/veredicto/veredicto/prompts"
)

// TestTheLargestSearchFitsTheStateLimit: a search of MaxCandidates
// candidates whose ids are as long as ids may be runs to its summary.
// Step Functions fails a state whose result passes 256 KiB
// (States.DataLimitExceeded, as the engine does): the Map once kept every
// candidate's figures and review and failed at its end, every model call
// paid. It keeps the decision and the report's hash; the summary reads the
// figures back from each report.
func TestTheLargestSearchFitsTheStateLimit(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	ids := make([]string, search.MaxCandidates)
	for i := range ids {
		ids[i] = fmt.Sprintf("candidato-con-el-identificador-mas-largo-que-se-admite-%09d", i)
	}
	if len(ids[0]) != 64 || !veredicto.ValidID(ids[0]) {
		t.Fatalf("id %q (%d bytes): want a valid id of 64", ids[0], len(ids[0]))
	}
	searchtest.WriteSearch(t, dir, ids)
	svc := &search.Service{Inputs: fileblob.NewDir(dir), Reports: fileblob.NewDir(out), Store: filestore.NewMemory(),
		Analyst: gems.New(&scriptedClient{}, veredicto.ModelInfo{Provider: "scripted", Model: "test"}), PromptVersions: prompts.PromptVersion}
	res, err := catalog.RunSearch(context.Background(), svc, search.StartInput{SearchID: "bench", Concurrency: 20}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != asl.StatusSucceeded {
		t.Fatalf("%d candidates: %s %s: %s", len(ids), res.Status, res.Error, res.Cause)
	}
	if n := len(res.Output); n > 128<<10 {
		t.Errorf("the execution's output is %d bytes: want at most half of Step Functions' 256 KiB", n)
	}
	sum := searchtest.ReadSummary(t, out)
	if len(sum.Ranking) != len(ids) || sum.Metrics.Usage.Calls == 0 {
		t.Fatalf("summary ranks %d of %d, usage %+v", len(sum.Ranking), len(ids), sum.Metrics.Usage)
	}
	for _, r := range sum.Ranking {
		if r.Decision != search.DecisionApproved || r.Scores["gem1"] != 8 || r.QAScore == nil || r.Usage.Calls != 4 || r.ReportSHA256 != "" ||
			r.ReportKey != filepath.Join(r.CandidateID, "report.json") {
			t.Fatalf("a summary row without its report's figures: %+v", r)
		}
	}
}
