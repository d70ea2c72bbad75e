package catalog_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	fileblob "github.com/veredicto/veredicto/internal/blob/file"

	"github.com/veredicto/veredicto/internal/app"
	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/audit/audittest"
	"github.com/veredicto/veredicto/internal/companion"
	"github.com/veredicto/veredicto/internal/confirm"
)

// TestCompanionWorkflowRecordsTheStop runs the workflow with an audit
// record: the person stops at the anti-impostor pause, and the record
// holds the question (pending, with the preview's hash) and the answer
// (rejected by the principal who decided, on that preview), the decision
// applied from it, the status and the summary; it verifies against the
// blobs and replays byte for byte. A second application on the same
// inputs reads the classification from the cache, which its record holds
// for its replay.
func TestCompanionWorkflowRecordsTheStop(t *testing.T) {
	r := newCompanionRun(t)
	records := t.TempDir()
	r.svc.Audit = &audit.Folders{Root: records}
	jd, p := companionInputs(t, hardGapsJD)
	var asked string
	res, in := r.start(t, jd, p, companion.ModeFull, func(id string) {
		asked = id
		if _, err := r.confirms.Resolve(t.Context(), tenant, confirm.Resolution{ID: id, Approved: false, By: "ana", Comment: "no postulo"}); err != nil {
			t.Fatal(err)
		}
	})
	if res.Status != asl.StatusSucceeded || !strings.HasSuffix(strings.Join(statePath(res), " "), "RecordStop Stopped") {
		t.Fatalf("%s: %v", res.Status, statePath(res))
	}
	dir := filepath.Join(records, tenant, tenant+"-"+in.ApplicationID)
	rec := app.Record{Dir: dir, Files: r.blobs}
	if ps, err := audit.Verify(t.Context(), rec.Store(), rec.ReadFile); err != nil || len(ps) != 0 {
		t.Fatalf("verify: %v %v", ps, err)
	}
	asked2, err := r.confirms.Store.Get(t.Context(), tenant, asked)
	if err != nil {
		t.Fatal(err)
	}
	var humans []audit.HumanDecision
	var answer, status []audit.Decision
	for _, e := range audittest.Entries(t, dir, audit.MainChain) {
		var h audit.HumanDecision
		var d audit.Decision
		switch {
		case e.Kind == audit.KindHuman && json.Unmarshal(e.Data, &h) == nil:
			humans = append(humans, h)
		case e.Kind == audit.KindDecision && json.Unmarshal(e.Data, &d) == nil && d.Name == companion.DecisionAnswer:
			answer = append(answer, d)
		case e.Kind == audit.KindDecision && json.Unmarshal(e.Data, &d) == nil && d.Name == companion.DecisionStatus:
			status = append(status, d)
		}
	}
	preview := confirm.PreviewHash(asked2.Preview)
	if len(humans) != 2 || humans[0].Status != "pending" || humans[0].Confirmation != asked || humans[0].Preview != preview ||
		humans[1].Status != "rejected" || humans[1].Confirmation != asked || humans[1].Principal != "ana" || humans[1].Comment != "no postulo" || humans[1].Preview != preview {
		t.Errorf("the question and the answer: %+v; want %s asked on preview %s, rejected by ana", humans, asked, preview)
	}
	if len(answer) != 1 || answer[0].Outcome != "stop" || answer[0].Confirmation != asked || answer[0].Applies != "rejected" {
		t.Errorf("the decision applied: %+v", answer)
	}
	if len(status) != 1 || status[0].Outcome != companion.StatusStopped {
		t.Errorf("the status: %+v", status)
	}
	replay := t.TempDir()
	got, err := app.Replay(context.Background(), rec, replay)
	if err != nil || len(got.Files) != 2 || !got.Files[0].Identical || !got.Files[1].Identical {
		t.Fatalf("replay: %+v, %v", got, err)
	}
	for _, f := range []string{companion.ContextFile, companion.ReportFile} {
		key := companion.Prefix(tenant, in.ApplicationID) + f
		a, _ := fileblob.NewDir(r.blobs).Get(t.Context(), key)
		b, err := os.ReadFile(filepath.Join(replay, key))
		if err != nil || string(a) != string(b) {
			t.Errorf("the replay's %s differs (%v)", key, err)
		}
	}

	// Screening on the same inputs: served from the classification cache.
	res, in = r.start(t, jd, p, companion.ModeScreening, nil)
	if res.Status != asl.StatusSucceeded {
		t.Fatalf("screening: %s", res.Status)
	}
	dir = filepath.Join(records, tenant, tenant+"-"+in.ApplicationID)
	seeded := false
	for _, e := range audittest.Entries(t, dir, audit.MainChain) {
		var st audit.Stage
		if e.Kind == audit.KindStage && json.Unmarshal(e.Data, &st) == nil && st.Reused && strings.HasPrefix(st.Key, companion.SeedClassification) {
			seeded = true
		}
	}
	if !seeded {
		t.Error("the cached classification is not in the screening's record")
	}
	rec = app.Record{Dir: dir, Files: r.blobs}
	if got, err := app.Replay(context.Background(), rec, t.TempDir()); err != nil || len(got.Files) != 2 || !got.Files[0].Identical || !got.Files[1].Identical {
		t.Errorf("replay of the cached application: %+v, %v", got, err)
	}
}
