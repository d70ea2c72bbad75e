package main

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/app"
	"github.com/veredicto/veredicto/internal/audit"
	fileblob "github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/intake"
	"github.com/veredicto/veredicto/internal/search"
	"github.com/veredicto/veredicto/internal/search/offline"
	"github.com/veredicto/veredicto/internal/search/searchtest"
	filestore "github.com/veredicto/veredicto/internal/store/file"
)

// servedSearch uploads the example search as tenant's searchID under the
// data folder, with marker in a candidate's CV, and runs it as "serve"
// does; it returns the executions recorded for it.
func servedSearch(t *testing.T, a *app.App, data, tenant, searchID, marker string) []string {
	t.Helper()
	ctx := context.Background()
	inputs, reports, _ := app.LocalLayout(data)
	searchtest.Upload(t, fileblob.NewDir(inputs), "../../examples/search-demo", search.InputPrefix(tenant, searchID), searchtest.AsSearch(searchID, marker))
	before, _ := (&audit.Folders{Root: filepath.Join(reports, app.AuditPrefix)}).Executions(tenant)
	st, err := a.Intake.Start(ctx, tenant, "api", intake.StartRequest{SearchID: searchID})
	if err != nil || !st.Started {
		t.Fatalf("start %s/%s: %+v %v", tenant, searchID, st, err)
	}
	after, _ := (&audit.Folders{Root: filepath.Join(reports, app.AuditPrefix)}).Executions(tenant)
	var runs []string
	for _, x := range after {
		if !strings.Contains(strings.Join(before, "\n"), x) {
			runs = append(runs, x)
		}
	}
	if len(runs) != 1 {
		t.Fatalf("executions recorded for %s/%s: %q", tenant, searchID, runs)
	}
	return runs
}

// holding lists the files under dir whose bytes contain s.
func holding(t *testing.T, dir, s string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(s)) {
				rel, _ := filepath.Rel(dir, p)
				out = append(out, rel)
			}
		}
		return nil
	})
	return out
}

// TestAuditPurgeErasesASearchUnderServe: searches run as "serve" runs them
// (uploads, the intake, the in-process workflow, records under
// DATA/reports/audit/<tenant>/<execution>/); "audit purge" of one search
// erases every byte of its documents, reports, stage and search records
// and audit record, leaving per execution a tombstone that "audit verify"
// reports as purged (exit 0) and "replay" refuses; the tenant's other
// search and another tenant's are untouched and still verify; a purge of
// the tenant then erases the rest of its data.
func TestAuditPurgeErasesASearchUnderServe(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	a := app.NewLocal(data, offline.New(), nil)
	s1 := servedSearch(t, a, data, "acme", "s-1", "MARCA-PERSONAL-ACME-S1")
	s2 := servedSearch(t, a, data, "acme", "s-2", "MARCA-PERSONAL-ACME-S2")
	g1 := servedSearch(t, a, data, "globex", "s-1", "MARCA-PERSONAL-GLOBEX-S1")
	if h := holding(t, data, "MARCA-PERSONAL-ACME-S1"); len(h) < 2 {
		t.Fatalf("the marker is in %q before the purge; want the upload and the audit record's texts", h)
	}

	code, _, stderr := runCLI(t, "", "audit", "purge", "--tenant", "acme", "--search", "s-1", "--by", "dpo@acme", "--reason", "solicitud 42", "--data", data)
	if code != exitUsage || !strings.Contains(stderr, "add --yes") || len(holding(t, data, "MARCA-PERSONAL-ACME-S1")) == 0 {
		t.Fatalf("without --yes: exit %d, %s; want nothing erased and --yes asked for", code, stderr)
	}
	for _, args := range [][]string{
		{"--search", "s-1", "--by", "x", "--reason", "y", "--yes"},
		{"--tenant", "acme", "--reason", "y", "--yes"},
		{"--tenant", "../acme", "--by", "x", "--reason", "y", "--yes"},
		{"--tenant", "acme", "--by", "x", "--reason", "y", "--yes", "--reports-bucket", "b"},
	} {
		code, _, stderr := runCLI(t, "", append([]string{"audit", "purge", "--data", data}, args...)...)
		if code != exitUsage || stderr == "" {
			t.Errorf("purge %q: exit %d, %q; want exit 2 naming the problem", args, code, stderr)
		}
	}

	stdout := mustRun(t, "audit", "purge", "--tenant", "acme", "--search", "s-1", "--by", "dpo@acme", "--reason", "solicitud 42", "--yes", "--data", data)
	if !strings.Contains(stdout, "purged   "+s1[0]) || !strings.Contains(stdout, "Erased ") {
		t.Errorf("purge output:\n%s", stdout)
	}
	if h := holding(t, data, "MARCA-PERSONAL-ACME-S1"); len(h) != 0 {
		t.Errorf("after the purge the search's personal data is still in %q", h)
	}
	// Only the tombstone still names the execution: its senior review (with
	// its preview) and its event stream are gone too.
	if h := holding(t, data, s1[0]); len(h) != 1 || !strings.HasSuffix(h[0], filepath.Join(s1[0], "chains", "tombstone.jsonl")) {
		t.Errorf("files naming the purged execution: %q; want its tombstone alone", h)
	}
	inputs, reports, _ := app.LocalLayout(data)
	for _, gone := range []string{filepath.Join(inputs, "searches", "acme", "s-1"), filepath.Join(reports, "reports", "acme", "s-1"),
		filepath.Join(data, "context", "stage", "acme", "s-1"), filepath.Join(data, "context", "search", "acme", "s-1.value")} {
		if _, err := os.Stat(gone); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s is still there (%v)", gone, err)
		}
	}
	if _, err := a.Intake.State(ctx, "acme", "s-1"); !errors.As(err, new(*veredicto.NotFoundError)) {
		t.Errorf("the purged search's state: %v, want not found", err)
	}
	stdout = mustRun(t, "audit", "verify", s1[0], "--data", data, "--tenant", "acme")
	if !strings.Contains(stdout, "purged on") || !strings.Contains(stdout, "by dpo@acme (solicitud 42)") {
		t.Errorf("verify of the purged execution:\n%s", stdout)
	}
	if code, _, stderr := runCLI(t, "", "replay", s1[0], "--data", data, "--tenant", "acme", "--out", t.TempDir()); code != exitFailed || !strings.Contains(stderr, "was purged") {
		t.Errorf("replay of the purged execution: exit %d, %s", code, stderr)
	}
	for _, x := range []struct{ tenant, exec, marker string }{{"acme", s2[0], "MARCA-PERSONAL-ACME-S2"}, {"globex", g1[0], "MARCA-PERSONAL-GLOBEX-S1"}} {
		if out := mustRun(t, "audit", "verify", x.exec, "--data", data, "--tenant", x.tenant); !strings.Contains(out, "the record verifies") {
			t.Errorf("%s's %s after the purge of acme's s-1:\n%s", x.tenant, x.exec, out)
		}
		if len(holding(t, data, x.marker)) == 0 {
			t.Errorf("%s's %s lost its data", x.tenant, x.exec)
		}
	}

	// A conversation of each tenant, in the chat's own store: the
	// tenant's purge takes acme's, never globex's.
	chats := filestore.NewLocal(app.ChatDir(data))
	for _, c := range [][2]string{{"chat/acme/c-1/feedback/00000001", "MARCA-PERSONAL-ACME-CHAT"}, {"chat/globex/c-1/feedback/00000001", "MARCA-PERSONAL-GLOBEX-CHAT"}} {
		if _, err := chats.PutIfAbsent(t.Context(), c[0], []byte(`{"text":"`+c[1]+`"}`)); err != nil {
			t.Fatal(err)
		}
	}
	stdout = mustRun(t, "audit", "purge", "--tenant", "acme", "--by", "dpo@acme", "--reason", "baja del cliente", "--yes", "--data", data)
	if h := holding(t, data, "MARCA-PERSONAL-ACME-CHAT"); len(h) != 0 {
		t.Errorf("after the tenant's purge its conversations are still in %q", h)
	}
	if len(holding(t, data, "MARCA-PERSONAL-GLOBEX-CHAT")) == 0 {
		t.Error("globex's conversation went with acme's")
	}
	if !strings.Contains(stdout, "already  "+s1[0]) || !strings.Contains(stdout, "purged   "+s2[0]) {
		t.Errorf("the tenant's purge:\n%s", stdout)
	}
	if h := holding(t, data, "MARCA-PERSONAL-ACME-S2"); len(h) != 0 {
		t.Errorf("after the tenant's purge its data is still in %q", h)
	}
	if len(holding(t, data, "MARCA-PERSONAL-GLOBEX-S1")) == 0 {
		t.Error("globex's data went with acme's")
	}
}
