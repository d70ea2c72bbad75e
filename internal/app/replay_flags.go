package app

import (
	"context"
	"fmt"

	"github.com/veredicto/veredicto/internal/app/flagsapp"
	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/flags"
)

// replayFlags re-runs a recorded classification into out: the same
// documents, the contradiction judge answered from the record, the clock
// reading of generated_at read back; the flags are written where the run
// wrote them (flags.yaml, or under serve the key of POST /flags' output).
func replayFlags(ctx context.Context, r *audit.Replay, rec Record, out string) (*ReplayResult, error) {
	in, output, err := flags.Recorded(ctx, r)
	if err != nil {
		return nil, err
	}
	run := FolderFlags{Inputs: in, Out: out, Execution: r.Start.Execution, Replay: r}
	if r.Start.Model.Provider != flagsapp.OfflineModel.Provider {
		run.Client, run.Model = r, r.Start.Model
	}
	if output != FlagsOutput {
		// POST /flags under serve: the output's key in the reports folder.
		run.Output = output
	}
	_, _, _, err = RunFolderFlags(ctx, run)
	if err != nil {
		err = fmt.Errorf("replay flags %s: %w", r.Start.Execution, err)
	}
	return replayed(ctx, r, rec, out, err)
}
