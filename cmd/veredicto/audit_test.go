package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/llm/llmtest"
	"github.com/veredicto/veredicto/internal/search"
	"github.com/veredicto/veredicto/internal/search/searchtest"
)

// scriptedSearch runs "search run" on a search scripted by searchtest's
// model behind an OpenAI-compatible server, and returns the output folder,
// the data folder and the server.
func scriptedSearch(t *testing.T, plans map[string]searchtest.Plan, omit ...string) (dir, out, data string, srv *llmtest.Server, m *searchtest.Model) {
	t.Helper()
	dir, out, data = t.TempDir(), t.TempDir(), t.TempDir()
	ids := make([]string, 0, len(plans))
	for id := range plans {
		ids = append(ids, id)
	}
	searchtest.WriteSearch(t, dir, ids, omit...)
	m = searchtest.NewModel(plans)
	srv = llmtest.NewServer(t, m.Respond(t))
	t.Setenv("OPENAI_API_KEY", "test")
	t.Setenv("OPENAI_BASE_URL", srv.BaseURL())
	t.Setenv("OPENAI_MODEL", "gpt-4o-mini")
	return dir, out, data, srv, m
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	code, stdout, stderr := runCLI(t, "", args...)
	if code != exitOK {
		t.Fatalf("%v: exit %d\n%s\n%s", args, code, stdout, stderr)
	}
	return stdout
}

// TestAuditedSearchVerifiesAndReplaysByteForByte is the check: a
// scripted search's record verifies; with the provider stopped, replay
// writes every report byte for byte; a byte flipped in the record, a line
// deleted or a report edited each fails verify naming the place; a senior
// consultant's approval is recorded with the principal and the hash of
// the preview; a candidate without tests.md and case.md is escalated with
// the documents named and no GEM2 call is made for them.
func TestAuditedSearchVerifiesAndReplaysByteForByte(t *testing.T) {
	all := searchtest.Plans()
	plans := map[string]searchtest.Plan{"c-001": all["c-001"], "c-002": all["c-002"], "c-005": all["c-005"], "c-007": all["c-007"],
		"c-009": {Gem1: 8, Gem2: 9, Gem3: []int{9}, Rec: []string{"SI"}, Gem4: []int{9}}}
	dir, out, data, srv, m := scriptedSearch(t, plans, "c-009/tests.md", "c-009/case.md")

	stdout := mustRun(t, "search", "run", dir, "--out", out, "--data", data)
	if !strings.Contains(stdout, "Registro de auditoría: "+filepath.Join(out, "audit")) {
		t.Errorf("the run does not say where its record is:\n%s", stdout)
	}
	if m.Calls("c-009", "gem2") != 0 || m.Calls("c-009", "gem1") != 1 {
		t.Errorf("c-009 without tests and case: gem1 %d, gem2 %d calls", m.Calls("c-009", "gem1"), m.Calls("c-009", "gem2"))
	}
	var rep search.Report
	b, _ := os.ReadFile(filepath.Join(out, "c-009", "report.json"))
	json.Unmarshal(b, &rep)
	if rep.Decision != search.DecisionEscalated || rep.Escalation == nil || strings.Join(rep.Escalation.MissingInputs, " ") != "candidates/c-009/tests.md candidates/c-009/case.md" {
		t.Errorf("c-009: %s, escalation %+v", rep.Decision, rep.Escalation)
	}

	// The consultant approves c-005's escalation; the re-run (stages from
	// the cache) applies it, and records it.
	id := regexp.MustCompile(`revisión senior (cf_[0-9a-f]+) de c-005`).FindStringSubmatch(stdout)
	if id == nil {
		t.Fatalf("no pending review for c-005:\n%s", stdout)
	}
	mustRun(t, "confirm", "approve", id[1], "--data", data, "--comment", "Referencias sólidas")
	calls := len(srv.Calls())
	stdout = mustRun(t, "search", "run", dir, "--out", out, "--data", data)
	if len(srv.Calls()) != calls {
		t.Errorf("the re-run made %d model calls; every stage was cached", len(srv.Calls())-calls)
	}
	if h, _ := filepath.Glob(filepath.Join(out, ".veredicto", "audit-history", "*", "chains")); len(h) != 1 {
		t.Errorf("the first run's record was not kept aside: %v", h)
	}
	mustRun(t, "audit", "verify", out)
	human := findEntry(t, filepath.Join(out, "audit"), "candidate/c-005", audit.KindHuman)
	var hd audit.HumanDecision
	json.Unmarshal(human.Data, &hd)
	if hd.Status != "approved" || hd.Principal == "" || len(hd.Preview) != 64 || hd.Comment != "Referencias sólidas" || hd.Confirmation != id[1] {
		t.Errorf("the human decision recorded: %+v", hd)
	}
	md, _ := os.ReadFile(filepath.Join(out, "c-005", "report.md"))
	if !strings.Contains(string(md), "## Cómo se decidió") || !strings.Contains(string(md), "Aprobada por "+hd.Principal) || !strings.Contains(string(md), hd.Preview[:12]) {
		t.Errorf("c-005's report does not show who approved, on which preview:\n%s", md)
	}

	// The provider is stopped: the replay needs none.
	srv.Close()
	replay := t.TempDir()
	stdout = mustRun(t, "replay", out, "--out", replay)
	if strings.Contains(stdout, "DIFFERS") || !strings.Contains(stdout, "reports identical") {
		t.Errorf("replay:\n%s", stdout)
	}
	for _, f := range []string{"c-001/report.json", "c-005/report.md", "c-009/report.md", "summary.md", "summary.json"} {
		a, _ := os.ReadFile(filepath.Join(out, f))
		b, err := os.ReadFile(filepath.Join(replay, f))
		if err != nil || string(a) != string(b) {
			t.Errorf("%s: the replay's differs (%v)", f, err)
		}
	}
	mustRun(t, "audit", "verify", replay)

	// Tampering fails verify, naming the place.
	tamper := func(name string, edit func(dir string), want string) {
		t.Helper()
		verifyFailsOn(t, out, name, edit, want)
	}
	chain := func(dir string) string { return filepath.Join(dir, "audit", "chains", "candidate%2Fc-001.jsonl") }
	tamper("a byte flipped", func(d string) {
		b, _ := os.ReadFile(chain(d))
		i := strings.Index(string(b), `"gate_gem1"`)
		b[i+2] = 'X'
		os.WriteFile(chain(d), b, 0o600)
	}, "candidate/c-001 entry")
	tamper("a line deleted", func(d string) {
		b, _ := os.ReadFile(chain(d))
		lines := strings.SplitAfter(string(b), "\n")
		os.WriteFile(chain(d), []byte(strings.Join(append(lines[:2:2], lines[3:]...), "")), 0o600)
	}, "candidate/c-001 entry 2: is numbered 3")
	tamper("a report edited", func(d string) {
		os.WriteFile(filepath.Join(d, "c-002", "report.md"), []byte("# Aprobado\n"), 0o600)
	}, "records c-002/report.md, which was changed after it was written")
}

// findEntry returns the last entry of kind in chain.
func findEntry(t *testing.T, dir, chain, kind string) audit.Entry {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "chains", strings.ReplaceAll(chain, "/", "%2F")+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var found audit.Entry
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e audit.Entry
		if json.Unmarshal([]byte(line), &e) == nil && e.Kind == kind {
			found = e
		}
	}
	if found.Kind == "" {
		t.Fatalf("no %s entry in %s", kind, chain)
	}
	return found
}

// verifyFailsOn copies the run folder out, edits the copy and checks that
// "audit verify" fails on it naming want; name says what was changed.
func verifyFailsOn(t *testing.T, out, name string, edit func(dir string), want string) {
	t.Helper()
	cp := t.TempDir()
	copyTree(t, out, cp)
	edit(cp)
	code, stdout, _ := runCLI(t, "", "audit", "verify", cp)
	if code != exitFailed || !strings.Contains(stdout, want) {
		t.Errorf("%s: exit %d\n%s\nwant %q", name, code, stdout, want)
	}
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestStrictInputsRefusesTheSearch: --strict-inputs lists every
// candidate's gaps and refuses before any model call.
func TestStrictInputsRefusesTheSearch(t *testing.T) {
	dir, out, data, srv, _ := scriptedSearch(t, map[string]searchtest.Plan{"c-1": {}, "c-2": {}}, "c-1/references.md", "c-2/interview.md")
	code, _, stderr := runCLI(t, "", "search", "run", dir, "--out", out, "--data", data, "--strict-inputs")
	if code != exitUsage || !strings.Contains(stderr, "c-1: GEM3 needs candidates/c-1/references.md") || !strings.Contains(stderr, "c-2: GEM1 needs candidates/c-2/interview.md") {
		t.Errorf("exit %d\n%s", code, stderr)
	}
	if n := len(srv.Calls()); n != 0 {
		t.Errorf("%d model calls", n)
	}
}
