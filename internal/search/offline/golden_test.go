package offline_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/asl"
	fileblob "github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/catalog"
	"github.com/veredicto/veredicto/internal/search"
	"github.com/veredicto/veredicto/internal/search/offline"
	filestore "github.com/veredicto/veredicto/internal/store/file"
	"github.com/veredicto/veredicto/prompts"
)

var update = flag.Bool("update", false, "rewrite the golden reports in testdata/golden")

const exampleDir = "../../../examples/search-demo"

// runExample evaluates the example search with the offline analyst and a
// fixed clock, and returns every report file written, by path.
func runExample(t *testing.T, concurrency int) map[string][]byte {
	t.Helper()
	out := t.TempDir()
	clock := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)
	svc := &search.Service{
		Inputs: fileblob.NewDir(exampleDir), Reports: fileblob.NewDir(out), Store: filestore.NewMemory(),
		Analyst: &offline.Analyst{Year: 2026}, PromptVersions: prompts.PromptVersion,
		Now: func() time.Time { return clock },
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := catalog.RunSearch(ctx, svc, search.StartInput{SearchID: "demo-cfo-andina", Concurrency: concurrency}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != asl.StatusSucceeded {
		t.Fatalf("execution %s: %s: %s", res.Status, res.Error, res.Cause)
	}
	files := map[string][]byte{}
	err = filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(out, p)
		b, err := os.ReadFile(p)
		files[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestExampleGolden pins the offline reports of examples/search-demo: six
// candidates reaching every decision of the protocol, one of them approved
// only after a QA correction. Run with -update after an intended change and
// review the diff.
func TestExampleGolden(t *testing.T) {
	files := runExample(t, 4)
	// The example is built so the baseline reaches every outcome.
	wantDecision := map[string]string{
		"c-001": search.DecisionApproved, "c-002": search.DecisionDiscarded1, "c-003": search.DecisionDiscarded2,
		"c-004": search.DecisionDiscarded3, "c-005": search.DecisionEscalated, "c-006": search.DecisionApproved,
	}
	for id, d := range wantDecision {
		var rep search.Report
		if err := json.Unmarshal(files[id+"/report.json"], &rep); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if rep.Decision != d {
			t.Errorf("%s: decision %s, want %s", id, rep.Decision, d)
		}
		if rep.Baseline == "" || !bytes.Contains(files[id+"/report.md"], []byte("Línea base offline")) {
			t.Errorf("%s: report not labelled as an offline baseline", id)
		}
	}
	var c6 search.Report
	json.Unmarshal(files["c-006/report.json"], &c6)
	if strings.Join(c6.StageOrder, " ") != "gem1 gem2 gem3 gem4 correction_1 gem4_retry_1" {
		t.Errorf("c-006 stages %v: want approval after one QA correction", c6.StageOrder)
	}
	var c5 search.Report
	json.Unmarshal(files["c-005/report.json"], &c5)
	if c5.Reason != search.ReasonNoEvidence || c5.Escalation == nil {
		t.Errorf("c-005: reason %s escalation %v, want structural lack of evidence with a package", c5.Reason, c5.Escalation)
	}
	golden := filepath.Join("testdata", "golden")
	if *update {
		if err := os.RemoveAll(golden); err != nil {
			t.Fatal(err)
		}
		for name, b := range files {
			p := filepath.Join(golden, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	var names []string
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var want []string
	filepath.WalkDir(golden, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(golden, p)
			want = append(want, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(want)
	if strings.Join(names, "\n") != strings.Join(want, "\n") {
		t.Fatalf("report files:\n%s\nwant:\n%s", strings.Join(names, "\n"), strings.Join(want, "\n"))
	}
	for _, n := range names {
		g, _ := os.ReadFile(filepath.Join(golden, n))
		if !bytes.Equal(files[n], g) {
			t.Errorf("%s differs from testdata/golden/%s (run go test ./internal/search/offline -run Golden -update and review the diff)", n, n)
		}
	}
}

// TestDeterministic: the same input gives byte-identical reports, whatever
// the concurrency.
func TestDeterministic(t *testing.T) {
	a, b := runExample(t, 1), runExample(t, 6)
	for n, x := range a {
		if !bytes.Equal(x, b[n]) {
			t.Errorf("%s differs between runs", n)
		}
	}
	if len(a) != len(b) {
		t.Errorf("%d files vs %d", len(a), len(b))
	}
}
