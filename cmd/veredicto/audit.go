package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/veredicto/veredicto/internal/app"
	"github.com/veredicto/veredicto/internal/audit"
)

const auditUsage = `Usage: veredicto audit verify PATH [--data DIR] [--tenant T] [--json]
       veredicto audit purge --tenant T [--search ID] … (see "veredicto audit purge -h")

Checks an execution's audit record: every chain links entry to entry from
its start, every text it names (documents, prompts, answers) is there and
unchanged, every report it records still has the recorded hash, the
summary names every chain's head, and no two entries contradict each other
(a review recorded expired and a decision applied from it). The first bad
entry of each chain is named; exit 1 when anything is wrong.

PATH is a "search run" output folder (its audit/ record), a record folder,
an execution's ARN or name whose record "serve" keeps under --data
(DATA/reports/audit/<tenant>/<execution>/), or a record in a stack's
reports bucket, s3://BUCKET/audit/<tenant>/<execution> (AWS_REGION and
credentials from the environment).

A record purged by "veredicto audit purge" holds only its tombstone: it
verifies (exit 0) when the tombstone is sound and nothing else remains,
and says when, by whom and why it was purged.

  veredicto audit purge --tenant T [--search ID] --by WHO --reason WHY --yes
erases a tenant's or a search's data and records ("veredicto audit purge -h").

Flags:
`

const replayUsage = `Usage: veredicto replay PATH --out DIR [--data DIR] [--tenant T]

Re-runs a recorded execution with no provider and no network: every model
call is answered from the record by its request's hash, and the clock
readings, stage outputs reused from earlier runs and the people's
decisions come from the record too. It writes the reports into DIR and
says whether each one is byte for byte the report the run wrote. A prompt,
document or code change since the run stops the replay with an error that
names the agent and the candidate where it diverged (exit 1). PATH is as
for "veredicto audit verify"; the record must verify first. A chat's
record is verified, not replayed (exit 2): its turns' tools act on state
outside the record, and each workflow a turn starts has its own record.

Flags:
`

func (m *Main) runAudit(ctx context.Context, args []string) int {
	if len(args) > 0 && args[0] == "purge" {
		return m.runAuditPurge(ctx, args[1:])
	}
	if len(args) == 0 || args[0] != "verify" {
		fmt.Fprint(m.Stderr, auditUsage)
		return exitUsage
	}
	fs := subcommandFlags("audit verify", auditUsage, m.Stderr)
	data := fs.String("data", app.DefaultDataDir, "the data folder of \"serve\", for an execution's ARN or name")
	tenant := fs.String("tenant", "", "the tenant whose execution it is, when two used the name")
	asJSON := fs.Bool("json", false, "print the problems as JSON")
	pos, err := parseInterleaved(fs, args[1:])
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if len(pos) != 1 {
		fs.Usage()
		return exitUsage
	}
	rec, err := locateForVerify(pos[0], *data, *tenant)
	if err != nil {
		fmt.Fprintf(m.Stderr, "veredicto audit verify: %v\n", err)
		return exitUsage
	}
	problems, err := audit.Verify(ctx, rec.store, rec.files)
	var purged *audit.Tombstone
	if err == nil && len(problems) == 0 {
		purged, err = audit.ReadTombstone(ctx, rec.store)
	}
	if err != nil {
		fmt.Fprintf(m.Stderr, "veredicto audit verify: %v\n", err)
		return exitFailed
	}
	switch {
	case *asJSON:
		b, _ := json.MarshalIndent(map[string]any{"record": rec.where, "ok": len(problems) == 0, "problems": nonNilProblems(problems), "purged": purged}, "", "  ")
		fmt.Fprintln(m.Stdout, string(b))
	case purged != nil:
		printPurged(m.Stdout, rec.where, purged)
	default:
		printProblems(m.Stdout, rec.where, problems)
	}
	if len(problems) > 0 {
		return exitFailed
	}
	return exitOK
}

func nonNilProblems(ps []audit.Problem) []audit.Problem {
	if ps == nil {
		return []audit.Problem{}
	}
	return ps
}

func printProblems(w io.Writer, dir string, problems []audit.Problem) {
	if len(problems) == 0 {
		fmt.Fprintf(w, "%s: the record verifies: every chain intact, every text and report unchanged, no contradiction\n", dir)
		return
	}
	fmt.Fprintf(w, "%s: %d problem(s):\n", dir, len(problems))
	for _, p := range problems {
		fmt.Fprintf(w, "  %s\n", p)
	}
}

func (m *Main) runReplay(ctx context.Context, args []string) int {
	fs := subcommandFlags("replay", replayUsage, m.Stderr)
	out := fs.String("out", "", "the folder the replay writes its reports to (required; not the run's own)")
	data := fs.String("data", app.DefaultDataDir, "the data folder of \"serve\", for an execution's ARN or name")
	tenant := fs.String("tenant", "", "the tenant whose execution it is, when two used the name")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if len(pos) != 1 || *out == "" {
		fs.Usage()
		return exitUsage
	}
	rec, err := app.LocateRecord(pos[0], *data, *tenant)
	if err != nil {
		fmt.Fprintf(m.Stderr, "veredicto replay: %v\n", err)
		return exitUsage
	}
	if same(*out, rec.Files) {
		fmt.Fprintf(m.Stderr, "veredicto replay: --out %s is where the run wrote its reports; give another folder\n", *out)
		return exitUsage
	}
	problems, err := audit.Verify(ctx, rec.Store(), rec.ReadFile)
	if err != nil {
		fmt.Fprintf(m.Stderr, "veredicto replay: %v\n", err)
		return exitFailed
	}
	if t, _ := audit.ReadTombstone(ctx, rec.Store()); t != nil && len(problems) == 0 {
		fmt.Fprintf(m.Stderr, "veredicto replay: the record of %s was purged on %s (%s): only its hashes remain, nothing to replay\n", t.Execution, t.PurgedAt.Format(time.RFC3339), t.Reason)
		return exitFailed
	}
	if len(problems) > 0 {
		printProblems(m.Stderr, rec.Dir, problems)
		fmt.Fprintln(m.Stderr, "veredicto replay: the record does not verify; nothing replayed")
		return exitFailed
	}
	res, err := app.Replay(ctx, rec, *out)
	var nr *app.NotReplayableError
	if errors.As(err, &nr) {
		// Nothing to replay is a question of what was asked, not a failure
		// of the record: it verified above.
		fmt.Fprintf(m.Stderr, "veredicto replay: the record verifies; %v\n", err)
		return exitUsage
	}
	if err != nil {
		fmt.Fprintf(m.Stderr, "veredicto replay: %v\n", err)
		return exitFailed
	}
	differ := 0
	for _, f := range res.Files {
		verdict := "identical"
		if !f.Identical {
			verdict, differ = "DIFFERS", differ+1
		}
		fmt.Fprintf(m.Stdout, "  %-9s %s\n", verdict, filepath.Join(*out, filepath.FromSlash(f.Path)))
	}
	if len(res.NotReplayed) > 0 {
		fmt.Fprintf(m.Stdout, "  recorded after the replayed part, not replayed: %s\n", strings.Join(res.NotReplayed, ", "))
	}
	if differ > 0 {
		fmt.Fprintf(m.Stderr, "veredicto replay: %d of %d reports differ from the run's\n", differ, len(res.Files))
		return exitFailed
	}
	fmt.Fprintf(m.Stdout, "Replayed with no provider: %d reports identical to the run's; the replay's own record is %s\n", len(res.Files), filepath.Join(*out, "audit"))
	return exitOK
}

// same reports whether two paths name one folder.
func same(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}
