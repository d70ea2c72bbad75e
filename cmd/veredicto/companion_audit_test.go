package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/veredicto/veredicto/internal/app"
	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/audit/audittest"
	"github.com/veredicto/veredicto/internal/companion"
	"github.com/veredicto/veredicto/internal/llm"
)

// TestAuditedCompanionVerifiesAndReplaysByteForByte is issue 30's check
// for one companion application: "run" pauses at the anti-impostor
// confirmation, "continue --proceed" goes on in the same record, the
// record verifies and holds the scoring engine's decisions and the
// person's answer with who, when and the preview's hash; with the
// provider stopped, replay writes context.json and report.md byte for
// byte; tampering fails verify naming the place. A second application
// served from the classification cache records the cached entry, and its
// replay (no classifier call in the record) is identical too.
func TestAuditedCompanionVerifiesAndReplaysByteForByte(t *testing.T) {
	e := newCompanionEnv(t)
	e.script.set(func(s *companionScript) { s.match = twoHardGaps })
	out := t.TempDir()
	if code, msgs, _ := e.run("run", "--jd", exampleJD, "--profile", exampleProfile, "--out", out); code != exitPaused ||
		!strings.Contains(msgs, "Registro de auditoría: "+filepath.Join(out, "audit")) {
		t.Fatalf("run: exit %d\n%s", code, msgs)
	}
	mustRun(t, "audit", "verify", out) // the pause ends the command's part
	code, msgs, _ := e.run("continue", "--out", out, "--proceed")
	if code != exitOK {
		t.Fatalf("continue: exit %d\n%s", code, msgs)
	}
	mustRun(t, "audit", "verify", out)
	if h, _ := filepath.Glob(filepath.Join(out, ".veredicto", "audit-history", "*")); len(h) != 0 {
		t.Errorf("continue opened another record: %v", h)
	}

	es := audittest.Entries(t, filepath.Join(out, "audit"), audit.MainChain)
	var start audit.Start
	json.Unmarshal(es[0].Data, &start)
	if start.Workflow != companion.WorkflowName || start.Tenant != app.CompanionTenant || len(start.Documents) != 3 ||
		start.Documents[companion.DocJD] == "" || start.Documents[companion.DocProfile] == "" || start.Prompts["culture_radar"] == "" {
		t.Errorf("start: %+v", start)
	}
	calls, summaries := 0, 0
	var humans []audit.HumanDecision
	for _, x := range es {
		switch x.Kind {
		case audit.KindModel:
			calls++
		case audit.KindSummary:
			summaries++
		case audit.KindHuman:
			var h audit.HumanDecision
			json.Unmarshal(x.Data, &h)
			humans = append(humans, h)
		}
	}
	if calls != len(e.srv.Calls()) || summaries != 2 {
		t.Errorf("%d model calls recorded of %d made; %d summaries, want one per command", calls, len(e.srv.Calls()), summaries)
	}
	c, _ := loadCompanion(t, out)
	id, preview := companion.PauseQuestion(app.CompanionTenant, c)
	if len(humans) != 2 || humans[0].Status != "pending" || humans[1].Status != "approved" || humans[1].Confirmation != id ||
		humans[1].Principal != "local:"+localUser() || humans[1].Preview != preview || humans[1].DecidedAt.IsZero() {
		t.Errorf("the anti-impostor question and answer: %+v; want pending then approved %s by local:%s on preview %s", humans, id, localUser(), preview)
	}
	if d := audittest.Decisions(es, companion.DecisionAnswer); len(d) != 1 || d[0].Outcome != "proceed" || d[0].Confirmation != id || d[0].Applies != "approved" {
		t.Errorf("the decision applied from the answer: %+v", d)
	}
	rule := audittest.Decisions(es, companion.DecisionAntiImpostor)
	if len(rule) != 1 || rule[0].Outcome != "pausa" || *rule[0].Score != 2 || *rule[0].Threshold != 2 || len(rule[0].Evidence) != 2 {
		t.Errorf("the anti-impostor rule: %+v", rule)
	}
	m := audittest.Decisions(es, companion.DecisionMatrix)
	if len(m) != 1 || m[0].Threshold == nil || m[0].Score == nil || !strings.Contains(m[0].Detail, "SAS") {
		t.Errorf("the decision matrix's rule: %+v", m)
	}
	if capped := audittest.Decisions(es, companion.DecisionHardFilter); (len(capped) == 1) != (m[0].Outcome != c.ScoringResult.DecisionMatrix) {
		t.Errorf("the hard-filter cap %+v; the matrix said %s, the decision is %s", capped, m[0].Outcome, c.ScoringResult.DecisionMatrix)
	}
	if n := len(audittest.Decisions(es, companion.DecisionRequirement)); n != len(c.ClassifiedRequirements) {
		t.Errorf("%d requirement scores recorded, %d requirements", n, len(c.ClassifiedRequirements))
	}
	if n := len(audittest.Decisions(es, companion.DecisionNonNegotiable)); n != len(c.ScoringResult.NonNegotiablesCheck) || n == 0 {
		t.Errorf("%d non-negotiables recorded, %d checked", n, len(c.ScoringResult.NonNegotiablesCheck))
	}

	// A follow-up phase rewrites the files: it goes into the same record
	// (its model calls, the files), which still verifies; the replay
	// reproduces the pipeline's files and names the phase it did not run.
	pipeline := map[string][]byte{}
	for _, f := range []string{companion.ContextFile, companion.ReportFile} {
		pipeline[f], _ = os.ReadFile(filepath.Join(out, f))
	}
	if code, msgs, schemas := e.run("verify", "--out", out); code != exitOK || strings.Join(schemas, ",") != "verify_facts,interview_intel" {
		t.Fatalf("companion verify: exit %d, calls %v\n%s", code, schemas, msgs)
	}
	mustRun(t, "audit", "verify", out)
	if n := len(audittest.Decisions(audittest.Entries(t, filepath.Join(out, "audit"), audit.MainChain), companion.DecisionCommand)); n != 3 {
		t.Errorf("%d commands recorded, want run, continue and verify", n)
	}

	// A second application on the same inputs: the classification comes
	// from the cache (no classifier call) and the record says so.
	cached := t.TempDir()
	if code, msgs, schemas := e.run("run", "--jd", exampleJD, "--profile", exampleProfile, "--out", cached, "--mode", "screening"); code != exitOK ||
		strings.Contains(strings.Join(schemas, ","), "classify_requirements") {
		t.Fatalf("cached run: exit %d, calls %v\n%s", code, schemas, msgs)
	}
	seeded := false
	for _, x := range audittest.Entries(t, filepath.Join(cached, "audit"), audit.MainChain) {
		var st audit.Stage
		if x.Kind == audit.KindStage && json.Unmarshal(x.Data, &st) == nil && st.Reused && st.Key == companion.SeedClassification+c.InputHash {
			seeded = true
		}
	}
	if !seeded {
		t.Error("the cached classification is not in the second application's record")
	}

	// The provider is stopped: the replay needs none.
	e.srv.Close()
	for dir, follow := range map[string]string{out: "not replayed: verify", cached: ""} {
		replay := t.TempDir()
		stdout := mustRun(t, "replay", dir, "--out", replay)
		if strings.Contains(stdout, "DIFFERS") || !strings.Contains(stdout, "2 reports identical") || !strings.Contains(stdout, follow) {
			t.Errorf("replay of %s:\n%s", dir, stdout)
		}
		for _, f := range []string{companion.ContextFile, companion.ReportFile} {
			a, _ := os.ReadFile(filepath.Join(dir, f))
			if dir == out {
				a = pipeline[f]
			}
			b, err := os.ReadFile(filepath.Join(replay, f))
			if err != nil || !bytes.Equal(a, b) {
				t.Errorf("%s: the replay's %s differs (%v)", dir, f, err)
			}
		}
		mustRun(t, "audit", "verify", replay)
	}

	// Tampering fails verify, naming the place.
	tamper := func(name string, edit func(dir string), want string) {
		t.Helper()
		verifyFailsOn(t, out, name, edit, want)
	}
	chain := func(dir string) string { return filepath.Join(dir, "audit", "chains", "main.jsonl") }
	tamper("the anti-impostor rule's threshold", func(d string) {
		b, _ := os.ReadFile(chain(d))
		os.WriteFile(chain(d), bytes.Replace(b, []byte(`"name":"anti_impostor_rule","score":2,"threshold":2`), []byte(`"name":"anti_impostor_rule","score":2,"threshold":3`), 1), 0o600)
	}, "main entry")
	tamper("the principal", func(d string) {
		b, _ := os.ReadFile(chain(d))
		os.WriteFile(chain(d), bytes.Replace(b, []byte(`"principal":"local:`), []byte(`"principal":"lokal:`), 1), 0o600)
	}, "main entry")
	tamper("the report edited", func(d string) {
		os.WriteFile(filepath.Join(d, companion.ReportFile), []byte("# Postular\n"), 0o600)
	}, "records report.md, which was changed after it was written")
}

// TestCompanionReplayNamesTheChangedPrompt: a record whose culture radar
// was asked with another system prompt than today's (the prompt changed
// since the run) verifies, and its replay stops with a divergence that
// names the agent.
func TestCompanionReplayNamesTheChangedPrompt(t *testing.T) {
	e := newCompanionEnv(t)
	out := t.TempDir()
	if code, msgs, _ := e.run("run", "--jd", exampleJD, "--profile", exampleProfile, "--out", out, "--mode", "screening"); code != exitOK {
		t.Fatalf("run: exit %d\n%s", code, msgs)
	}
	e.srv.Close()
	dir := filepath.Join(out, "audit")
	schema, err := llm.SchemaFor(companion.CultureRadar{})
	if err != nil {
		t.Fatal(err)
	}
	// A message is kept in its entry, or once by hash under texts/ (the
	// system prompt).
	text := func(m audit.Message) string {
		if m.Text != nil {
			return *m.Text
		}
		b, err := os.ReadFile(filepath.Join(dir, "texts", m.Hash))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	// Rewrite the record as if the run had sent an older prompt: the
	// call's system message and request hash change, every later entry
	// is chained again.
	var lines [][]byte
	prev, edited := audit.Genesis(audit.MainChain), false
	for _, x := range audittest.Entries(t, dir, audit.MainChain) {
		var call audit.ModelCall
		if x.Kind == audit.KindModel && json.Unmarshal(x.Data, &call) == nil && call.Agent == "culture_radar" {
			sys, user := text(call.Messages[0]), text(call.Messages[1])
			req := llm.Request{Schema: "culture_radar", JSONSchema: schema, System: sys, User: user}
			if audit.RequestHash(req) != call.Request {
				t.Fatal("the request hash is not recomputed as the run computed it")
			}
			req.System = "Versión anterior del prompt del Culture Radar."
			if err := audit.NewDir(dir).PutText(t.Context(), audit.Hash([]byte(req.System)), []byte(req.System)); err != nil {
				t.Fatal(err)
			}
			call.Messages[0].Hash, call.Request = audit.Hash([]byte(req.System)), audit.RequestHash(req)
			x.Data, _ = json.Marshal(call)
			edited = true
		}
		x.Prev = prev
		line, _ := json.Marshal(x)
		prev = audit.Hash(line)
		lines = append(lines, line)
	}
	if !edited {
		t.Fatal("no culture_radar call in the record")
	}
	if err := os.WriteFile(filepath.Join(dir, "chains", "main.jsonl"), append(bytes.Join(lines, []byte("\n")), '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "audit", "verify", out)
	code, _, stderr := runCLI(t, "", "replay", out, "--out", t.TempDir())
	if code != exitFailed || !strings.Contains(stderr, "replay diverged at culture_radar") {
		t.Errorf("replay: exit %d\n%s", code, stderr)
	}
}
