package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/catalog"
	"github.com/veredicto/veredicto/internal/companion"
)

// CompanionTenant is the tenant of the applications "veredicto companion"
// runs on this machine (its classification cache's too).
const CompanionTenant = "local"

// CompanionFolder is the audit record of an application run into a
// folder by "veredicto companion run|continue": OUT/audit, one
// application's record, the reports beside it.
type CompanionFolder struct {
	Out     string
	Analyst companion.Analyst
	// Input and Docs are what a new record starts with: the execution's
	// input and the documents by their texts (the JD, the profile, the
	// scoring configuration).
	Input companion.RecordedInput
	Docs  map[string][]byte
	// From is the saved context (OUT/context.json as read) a new record's
	// application starts from; nil for a new application.
	From []byte
}

// Begin archives the folder's earlier record (ArchiveRecord; archived
// says where it went, "" when there was none), opens a new one under a new
// execution name and returns ctx carrying its scope, after the start
// entry and the saved context it starts from.
func (f CompanionFolder) Begin(ctx context.Context) (_ context.Context, archived string, err error) {
	if archived, err = ArchiveRecord(f.Out); err != nil {
		return ctx, "", fmt.Errorf("keep the earlier audit record: %w", err)
	}
	ctx, err = f.begin(ctx, catalog.RunName("companion-"+f.Input.ApplicationID, time.Now()), nil)
	return ctx, archived, err
}

// begin opens the folder's record under execution (replay: the run's,
// and the record answering its model calls and clock readings).
func (f CompanionFolder) begin(ctx context.Context, execution string, replay *audit.Replay) (context.Context, error) {
	folders := &audit.Folders{Root: filepath.Join(f.Out, "audit"), Single: true}
	rec, err := folders.Open(ctx, f.Input.Tenant, execution)
	if err != nil {
		return ctx, err
	}
	ctx = audit.WithScope(ctx, companion.NewScope(rec, execution, f.Analyst, replay))
	if err := companion.Begin(ctx, f.Input, f.Docs); err != nil {
		return ctx, err
	}
	if f.From != nil {
		if err := companion.Seed(ctx, "context", companion.SeedContext, f.From); err != nil {
			return ctx, err
		}
	}
	return ctx, nil
}

// Continue returns ctx carrying the scope of the folder's record when that
// record is this application's (its last context.json is the folder's):
// the application's record goes on. Otherwise it begins a new record
// starting from the saved context (f.From), as Begin does.
func (f CompanionFolder) Continue(ctx context.Context) (context.Context, string, error) {
	store := audit.NewDir(filepath.Join(f.Out, "audit"))
	if execution, ok := f.recordOf(ctx, store); ok {
		rec, err := (&audit.Folders{Root: store.Root(), Single: true}).Open(ctx, f.Input.Tenant, execution)
		if err != nil {
			return ctx, "", err
		}
		return audit.WithScope(ctx, companion.NewScope(rec, execution, f.Analyst, nil)), "", nil
	}
	return f.Begin(ctx)
}

// recordOf is the execution whose record store is, when it is a career
// companion's whose last context.json is the folder's.
func (f CompanionFolder) recordOf(ctx context.Context, store *audit.Dir) (string, bool) {
	if _, err := os.Stat(filepath.Join(store.Root(), "chains")); errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	r, err := audit.OpenReplay(ctx, store)
	if err != nil || r.Start.Workflow != companion.WorkflowName {
		return "", false
	}
	reports, err := audit.Reports(ctx, store)
	if err != nil {
		return "", false
	}
	for _, rep := range reports {
		if rep.Path == companion.ContextFile {
			return r.Start.Execution, rep.SHA256 == audit.Hash(f.From)
		}
	}
	return "", false
}
