package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/app/flagsapp"
	"github.com/veredicto/veredicto/internal/audit"
	fileblob "github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/flags"
	"github.com/veredicto/veredicto/internal/httpapi/flagsapi"
	"github.com/veredicto/veredicto/internal/llm"
	"github.com/veredicto/veredicto/prompts"
)

// FlagsOutput is the file "veredicto flags --out DIR" writes in DIR.
const FlagsOutput = "flags.yaml"

// FolderFlags is a classification run in this process into a folder, as
// "veredicto flags --out DIR" does: DIR/flags.yaml and its audit record in
// DIR/audit (an earlier run's moved aside). A replay runs the same with
// the record's documents, its Replay answering the judge and the clock.
type FolderFlags struct {
	Inputs flags.Inputs
	Out    string
	// Execution names the record's execution; "" draws one.
	Execution string
	// Client is the contradiction judge's model (nil: the offline judge);
	// Model names it in the record.
	Client llm.Client
	Model  veredicto.ModelInfo
	Now    func() time.Time
	Replay *audit.Replay
	// Output is the flags' file in Out (FlagsOutput when empty).
	Output string
}

// RunFolderFlags classifies f's inputs, records the classification and
// writes the flags; it returns them, the warnings and the bytes written.
func RunFolderFlags(ctx context.Context, f FolderFlags) (flags.Flags, []string, []byte, error) {
	var judge flags.ContradictionJudge = flags.OfflineJudge{}
	model := flagsapp.OfflineModel
	if f.Client != nil {
		judge, model = flags.LLMJudge{Client: f.Client}, f.Model
	}
	if f.Execution == "" {
		f.Execution = flags.NewExecution()
	}
	ctx, err := openFolderRecord(ctx, f.Out, f.Execution, model, f.Replay)
	if err != nil {
		return flags.Flags{}, nil, nil, err
	}
	if f.Output == "" {
		f.Output = FlagsOutput
	}
	return flags.RunRecorded(ctx, f.Inputs, judge, f.Now, "", f.Output, fileblob.NewDir(f.Out))
}

// openFolderRecord starts a record of execution in out/audit, one
// execution per output folder (an earlier run's record moved aside
// first), and returns ctx with its main chain's scope.
func openFolderRecord(ctx context.Context, out, execution string, model veredicto.ModelInfo, replay *audit.Replay) (context.Context, error) {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return ctx, fmt.Errorf("create output %s: %w", out, err)
	}
	if _, err := ArchiveRecord(out); err != nil {
		return ctx, fmt.Errorf("keep the earlier audit record of %s: %w", out, err)
	}
	rec, err := (&audit.Folders{Root: filepath.Join(out, "audit"), Single: true}).Open(ctx, "", execution)
	if err != nil {
		return ctx, err
	}
	return audit.WithScope(ctx, &audit.Scope{Recorder: rec, Execution: execution, Chain: audit.MainChain, Model: model,
		PromptVersion: prompts.PromptVersion, Replay: replay}), nil
}

// localFlagsRecord keeps POST /flags' records with the other executions'
// (DATA/reports/audit) and their outputs in the reports folder.
func localFlagsRecord(records flags.Auditor, reports flags.BlobWriter, client *llm.OpenAI) *flagsapi.Record {
	return &flagsapi.Record{Audit: records, Reports: reports, Model: flagsapp.Model(client)}
}
