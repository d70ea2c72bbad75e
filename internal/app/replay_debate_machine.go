package app

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/veredicto/veredicto/internal/app/debateapp"
	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/audit"
	fileblob "github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/catalog"
	"github.com/veredicto/veredicto/internal/confirm"
	"github.com/veredicto/veredicto/internal/confirm/memory"
	"github.com/veredicto/veredicto/internal/debate"
	filestore "github.com/veredicto/veredicto/internal/store/file"
	"github.com/veredicto/veredicto/statemachines"
)

// replayDebateMachine re-runs a debate of the state machine (serve) on
// the in-process engine into out: the knowledge from the record, the
// agents answered from it, the person's decision delivered as recorded;
// its files land under out at the keys the run wrote them to.
func replayDebateMachine(ctx context.Context, r *audit.Replay, rec Record, out string) (*ReplayResult, error) {
	if _, err := ArchiveRecord(out); err != nil {
		return nil, err
	}
	reports := fileblob.NewDir(out)
	steps := debateapp.Steps(nil, recordedDocs{r: r}, reports, filestore.NewLocal(filepath.Join(out, ".veredicto", "context")), nil)
	if r.Start.Model.Provider != OfflineDebateModel.Provider {
		steps.Agents = debate.LLMAgents{Client: r}
	}
	steps.Model, steps.Replay = r.Start.Model, r
	debateapp.Recorded(steps, &audit.Folders{Root: filepath.Join(out, "audit"), Single: true})
	reg := catalog.DebateRegistry(steps, &confirm.Service{Store: memory.New()})
	eng := asl.New(reg)
	reg.Register("ConfirmFunction", replayedReviews(r, eng))
	sm, err := asl.Parse(statemachines.Debate)
	if err != nil {
		return nil, err
	}
	x, err := eng.Start(ctx, sm, r.Start.Input, asl.StartOptions{Name: r.Start.Execution, StateMachineName: "debate"})
	if err != nil {
		return nil, err
	}
	res, err := x.Wait(ctx)
	if err == nil && res.Status != asl.StatusSucceeded {
		err = fmt.Errorf("the replayed execution %s: %s", strings.ToLower(string(res.Status)), causeOf(res))
	}
	return replayed(ctx, r, rec, out, err)
}
