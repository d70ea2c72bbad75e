package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
