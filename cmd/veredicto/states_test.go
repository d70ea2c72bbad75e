package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/poll"
)

func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	m := &Main{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb}
	code = m.Run(context.Background(), args)
	return code, out.String(), errb.String()
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestStatesRunGatesDemo(t *testing.T) {
	hist := filepath.Join(t.TempDir(), "history.jsonl")
	code, out, errs := runCLI(t, "", "states", "run", "../../statemachines/gates_demo.asl.json",
		"--input", "../../examples/states/gates_demo.input.json", "--history", hist)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, errs)
	}
	var got struct {
		Decisions []struct {
			CandidateID string `json:"candidate_id"`
			Decision    string `json:"decision"`
		} `json:"decisions"`
		Approved  []string `json:"approved"`
		Evaluated int      `json:"evaluated"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, out)
	}
	// Thresholds 6/6/7(gem3 override)/7: c-001 passes everything; c-002 fails
	// GEM1 (5); c-003 passes GEM2 at exactly 6 and fails GEM3 (6 < 7); c-004
	// fails QA (6 < 7) and is escalated.
	want := map[string]string{"c-001": "APROBADO", "c-002": "DESCARTADO_GEM1", "c-003": "DESCARTADO_GEM3", "c-004": "ESCALADO_CONSULTOR_SENIOR"}
	if got.Evaluated != 4 || len(got.Decisions) != 4 {
		t.Fatalf("evaluated %d, decisions %v", got.Evaluated, got.Decisions)
	}
	for i, d := range got.Decisions {
		id := []string{"c-001", "c-002", "c-003", "c-004"}[i]
		if d.CandidateID != id || d.Decision != want[id] {
			t.Errorf("decision %d = %+v, want %s %s", i, d, id, want[id])
		}
	}
	if len(got.Approved) != 1 || got.Approved[0] != "c-001" {
		t.Errorf("approved %v", got.Approved)
	}
	data, err := os.ReadFile(hist)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	var first, last struct{ Type string }
	json.Unmarshal([]byte(lines[0]), &first)
	json.Unmarshal([]byte(lines[len(lines)-1]), &last)
	if first.Type != "ExecutionStarted" || last.Type != "ExecutionSucceeded" {
		t.Errorf("history runs %s … %s", first.Type, last.Type)
	}
}

func TestStatesRunFailures(t *testing.T) {
	dir := t.TempDir()
	fail := writeFile(t, dir, "fail.asl.json", `{"StartAt":"F","States":{"F":{"Type":"Fail","Error":"Demo.Error","Cause":"why"}}}`)
	bad := writeFile(t, dir, "bad.asl.json", `{"StartAt":"A","States":{"A":{"Type":"Pass"}}}`)
	unbound := writeFile(t, dir, "unbound.asl.json", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"${NopeFunctionArn}","End":true}}}`)
	badInput := writeFile(t, dir, "in.json", `{"a":`)
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"failed execution", []string{"states", "run", fail}, exitFailed, "Error: Demo.Error\nCause: why"},
		{"invalid definition", []string{"states", "run", bad}, exitUsage, `state "A": needs Next or "End": true`},
		{"unbound resource", []string{"states", "run", unbound}, exitUsage, `NopeFunction`},
		{"bad input", []string{"states", "run", fail, "--input", badInput}, exitUsage, "is not valid JSON"},
		{"missing file", []string{"states", "run", filepath.Join(dir, "nope.json")}, exitUsage, "nope.json"},
		{"no definition", []string{"states", "run"}, exitUsage, "want exactly one definition file"},
		{"unknown command", []string{"frobnicate"}, exitUsage, `unknown command "frobnicate"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runCLI(t, "", tt.args...)
			if code != tt.code || !strings.Contains(errs, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit %d mentioning %q", code, errs, tt.code, tt.want)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing on failure", out)
			}
		})
	}
}

func TestStatesRunInputFromStdin(t *testing.T) {
	def := writeFile(t, t.TempDir(), "p.asl.json", `{"StartAt":"P","States":{"P":{"Type":"Pass","Parameters":{"sum.$":"States.MathAdd($.a, $.b)"},"End":true}}}`)
	code, out, errs := runCLI(t, `{"a":2,"b":3}`, "states", "run", def, "--input", "-")
	if code != exitOK || strings.TrimSpace(out) != "{\n  \"sum\": 5\n}" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

func TestStatesRunInterruptedKeepsStreamedHistory(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: builds the CLI and interrupts it as a subprocess; make test-long runs it")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "veredicto")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	def := writeFile(t, dir, "wait.asl.json", `{"StartAt":"Prepare","States":{
		"Prepare":{"Type":"Pass","Result":{"ready":true},"Next":"Fan"},
		"Fan":{"Type":"Parallel","Branches":[
			{"StartAt":"Long","States":{"Long":{"Type":"Wait","Seconds":3600,"End":true}}},
			{"StartAt":"Longer","States":{"Longer":{"Type":"Wait","Seconds":7200,"End":true}}}],"End":true}}}`)
	hist := filepath.Join(dir, "history.jsonl")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a guard against a hang, not a timing assertion
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "states", "run", def, "--history", hist)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupt once both Waits are streamed: the history is written as
	// it happens, not at the end.
	if !poll.Within(time.Minute, func() bool {
		data, _ := os.ReadFile(hist)
		return strings.Count(string(data), `"type":"WaitStateEntered"`) >= 2
	}) {
		cmd.Process.Kill()
		t.Fatalf("the history never showed both Wait states entered; stderr:\n%s", stderr.String())
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != exitInterrupted {
		t.Fatalf("exit: %v, want code %d; stderr:\n%s", err, exitInterrupted, stderr.String())
	}
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr %q does not say the run was interrupted", stderr.String())
	}

	data, err := os.ReadFile(hist)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(data, []byte("\n")) {
		t.Errorf("the history does not end with a complete line")
	}
	var types []string
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		var ev struct {
			ID   int    `json:"id"`
			Type string `json:"type"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("history line %d is not a JSON event: %v\n%s", i+1, err, line)
		}
		if ev.ID != i+1 {
			t.Errorf("history line %d holds event #%d", i+1, ev.ID)
		}
		types = append(types, ev.Type)
	}
	if len(types) < 2 || types[0] != "ExecutionStarted" || types[len(types)-1] != "ExecutionAborted" {
		t.Errorf("history runs %v, want ExecutionStarted … ExecutionAborted", types)
	}
	for _, want := range []string{"PassStateExited", "ParallelStateStarted", "WaitStateEntered"} {
		if !slices.Contains(types, want) {
			t.Errorf("history %v lacks %s", types, want)
		}
	}
}

// TestStatesRunExpiresItsQuestions: a question a Task of a states-run
// execution waited on expires when the execution ends (here a sibling
// branch fails while it waits), as under serve: nothing is left pending
// that no run can receive.
func TestStatesRunExpiresItsQuestions(t *testing.T) {
	t.Chdir(t.TempDir())
	def := writeFile(t, ".", "ask.asl.json", `{"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[
	  {"StartAt":"Ask","States":{"Ask":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken",
	    "Parameters":{"FunctionName":"${ConfirmFunctionArn}","Payload":{"task_token.$":"$$.Task.Token","key":"demo/ask",
	      "execution.$":"$$.Execution.Id","tenant.$":"$.tenant","toolName":"send_report","category":"external",
	      "sensitivity":"high","undoable":false,"preview":{"what":"demo"},"timeout_seconds":3600}},"End":true}}},
	  {"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":1,"Next":"F"},"F":{"Type":"Fail","Error":"Demo.Stop"}}}]}}}`)
	in := writeFile(t, ".", "in.json", `{"tenant":"acme"}`)
	if code, _, errs := runCLI(t, "", "states", "run", def, "--input", in); code != exitFailed || !strings.Contains(errs, "Demo.Stop") {
		t.Fatalf("exit %d, stderr %s; want the sibling's failure", code, errs)
	}
	code, out, errs := runCLI(t, "", "confirm", "list", "--json", "--data", ".veredicto-local", "--tenant", "acme")
	if code != exitOK {
		t.Fatalf("confirm list: exit %d, %s", code, errs)
	}
	if strings.TrimSpace(out) != "[]" {
		t.Errorf("a question of the ended execution is still open: %s", out)
	}
}

// TestStatesRunDistributedMapOverTheLocalBuckets: with --data, a
// Distributed Map lists a prefix of the local inputs bucket, its tenant's
// only.
func TestStatesRunDistributedMapOverTheLocalBuckets(t *testing.T) {
	data := t.TempDir()
	for _, k := range []string{"searches/acme/run/a.json", "searches/acme/run/b.json", "searches/bravo/run/c.json"} {
		writeFile(t, filepath.Join(data, "inputs", filepath.Dir(k)), filepath.Base(k), `{}`)
	}
	def := writeFile(t, t.TempDir(), "keys.asl.json", `{"StartAt":"Each","States":{"Each":{"Type":"Map",
	  "ItemReader":{"Resource":"arn:aws:states:::s3:listObjectsV2","Parameters":{"Bucket":"veredicto-inputs","Prefix.$":"$.prefix"}},
	  "ItemSelector":{"key.$":"$$.Map.Item.Value.Key"},
	  "ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"EXPRESS"},"StartAt":"P","States":{"P":{"Type":"Pass","OutputPath":"$.key","End":true}}},
	  "End":true}}}`)
	in := writeFile(t, t.TempDir(), "in.json", `{"tenant":"acme","prefix":"searches/acme/run/"}`)
	code, out, errs := runCLI(t, "", "states", "run", def, "--input", in, "--data", data)
	var keys []string
	if code != exitOK || json.Unmarshal([]byte(out), &keys) != nil || strings.Join(keys, " ") != "searches/acme/run/a.json searches/acme/run/b.json" {
		t.Errorf("exit %d: %s %s", code, out, errs)
	}
	other := writeFile(t, t.TempDir(), "other.json", `{"tenant":"acme","prefix":"searches/bravo/run/"}`)
	code, _, errs = runCLI(t, "", "states", "run", def, "--input", other, "--data", data)
	if code != exitFailed || !strings.Contains(errs, "States.ItemReaderFailed") || !strings.Contains(errs, "Access Denied") {
		t.Errorf("another tenant's prefix: exit %d: %s", code, errs)
	}
}
