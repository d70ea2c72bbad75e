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
	if r.Start.Model.Provider != debateapp.OfflineModel.Provider {
		steps.Agents = debate.LLMAgents{Client: r}
	}
	steps.Model, steps.Replay = r.Start.Model, r
	debateapp.Recorded(steps, &audit.Folders{Root: filepath.Join(out, "audit"), Single: true})
	reg := catalog.DebateRegistry(steps, &confirm.Service{Store: memory.New()})
	return replayed(ctx, r, rec, out, runReplay(ctx, r, reg, statemachines.Debate, "debate"))
}

// runReplay runs a state machine's definition on reg's functions with
// the recorded execution's input and name, the people's answers
// (ConfirmFunction) delivered as recorded; it returns why the execution
// did not succeed.
func runReplay(ctx context.Context, r *audit.Replay, reg *asl.Registry, definition []byte, name string) error {
	eng := asl.New(reg)
	reg.Register("ConfirmFunction", replayedReviews(r, eng))
	sm, err := asl.Parse(definition)
	if err != nil {
		return err
	}
	x, err := eng.Start(ctx, sm, r.Start.Input, asl.StartOptions{Name: r.Start.Execution, StateMachineName: name})
	if err != nil {
		return err
	}
	res, err := x.Wait(ctx)
	if err != nil {
		return err
	}
	if res.Status != asl.StatusSucceeded {
		return fmt.Errorf("the replayed execution %s: %s", strings.ToLower(string(res.Status)), causeOf(res))
	}
	return nil
}
