package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStatesValidateProjectDefinitions(t *testing.T) {
	files, err := filepath.Glob("../../statemachines/*.asl.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no definitions found: %v", err)
	}
	code, out, errs := runCLI(t, "", append([]string{"states", "validate"}, files...)...)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, errs)
	}
	for _, f := range files {
		if !strings.Contains(out, f+": valid") {
			t.Errorf("stdout %q does not report %s valid", out, f)
		}
	}
}

func TestStatesValidateRejectsWhatAWSRejects(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, dir, "good.asl.json", `{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Pass","Assign":{"x":"{% $states.input.a %}"},"Output":{"b":"{% $states.input.b %}"},"End":true}}}`)
	tests := []struct {
		name, def string
		want      []string
	}{
		{"JSONPath field in a JSONata state", `{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Pass","Parameters":{"a":1},"End":true}}}`,
			[]string{`state "A": field "Parameters": the QueryLanguage is set to 'JSONata', but field 'Parameters' is only supported for the 'JSONPath' QueryLanguage`}},
		{".$ key in JSONata", `{"StartAt":"A","States":{"A":{"Type":"Pass","QueryLanguage":"JSONata","Output":{"a":1},"Assign":{"v.$":"$.a"},"End":true}}}`,
			[]string{`state "A": Assign: field "v.$"`}},
		{"undefined reserved name", `{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Pass","Output":"{% $states.nope %}","End":true}}}`,
			[]string{`state "A": Output: $states.nope is not defined`}},
		{"bare name at the top level", `{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Pass","Output":{"v":"{% phone %}"},"End":true}}}`,
			[]string{`state "A": Output.v: Reference to 'phone' at the top level is not supported`}},
		{"errorOutput outside a Catch", `{"QueryLanguage":"JSONata","StartAt":"T","States":{"T":{"Type":"Task","Resource":"x","Output":"{% $states.errorOutput %}","End":true}}}`,
			[]string{`state "T": Output: $states.errorOutput is only accessible`}},
		{"Assign in a Fail state", `{"StartAt":"F","States":{"F":{"Type":"Fail","Assign":{"x":1}}}}`,
			[]string{`state "F": field "Assign" is not allowed in a Fail state`}},
		{"two problems in two states", `{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Pass","ResultPath":"$.x","Next":"B"},"B":{"Type":"Choice","Choices":[{"Variable":"$.a","StringEquals":"x","Next":"A"}]}}}`,
			[]string{`state "A": field "ResultPath"`, `state "B": choice rule 1: field "StringEquals" is not allowed in a JSONata choice rule`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := writeFile(t, dir, "bad.asl.json", tt.def)
			code, out, errs := runCLI(t, "", "states", "validate", good, bad)
			if code != exitFailed {
				t.Fatalf("exit %d, want %d; stderr %s", code, exitFailed, errs)
			}
			if !strings.Contains(out, good+": valid") || strings.Contains(out, bad+": valid") {
				t.Errorf("stdout %q", out)
			}
			if !strings.Contains(errs, bad+": invalid") {
				t.Errorf("stderr %q does not name the file", errs)
			}
			for _, w := range tt.want {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr %q does not mention %q", errs, w)
				}
			}
		})
	}
	if code, _, errs := runCLI(t, "", "states", "validate"); code != exitUsage || !strings.Contains(errs, "Usage") {
		t.Errorf("no file: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := runCLI(t, "", "states", "validate", filepath.Join(dir, "nope.json")); code != exitUsage || !strings.Contains(errs, "nope.json") {
		t.Errorf("missing file: exit %d, stderr %q", code, errs)
	}
}

// TestStatesRunJSONataFromAWSDocs runs the "Input and Output" example of
// AWS's "Transforming data with JSONata in Step Functions" page, unchanged
// (kept in the conformance corpus), through `veredicto states run`.
func TestStatesRunJSONataFromAWSDocs(t *testing.T) {
	data, err := os.ReadFile("../../testdata/conformance/jsonata-input-output.json")
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Definition json.RawMessage `json:"definition"`
		Input      json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	def := writeFile(t, dir, "io.asl.json", string(c.Definition))
	in := writeFile(t, dir, "in.json", string(c.Input))
	code, out, errs := runCLI(t, "", "states", "run", def, "--input", in)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, errs)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("stdout %q: %v", out, err)
	}
	if got["lastName"] != "Last=>Rivera" || got["orderValue"] != 27.91 || len(got) != 2 {
		t.Errorf("output %v, want lastName Last=>Rivera and orderValue 27.91 (the page's output)", got)
	}
}

// TestStatesValidateAWSSamples: every definition of AWS's published
// samples committed under testdata/aws-samples is valid, with no warning
// that the engine cannot run it, and is the file its source names.
func TestStatesValidateAWSSamples(t *testing.T) {
	root := "../../testdata/aws-samples"
	var sources struct {
		Definitions []struct {
			File, Repository, Path, Commit, Licence, SHA256 string
		}
	}
	b, err := os.ReadFile(filepath.Join(root, "SOURCES.json"))
	if err != nil || json.Unmarshal(b, &sources) != nil || len(sources.Definitions) < 80 {
		t.Fatalf("SOURCES.json: %v (%d definitions)", err, len(sources.Definitions))
	}
	files := make([]string, 0, len(sources.Definitions))
	for _, d := range sources.Definitions {
		p := filepath.Join(root, d.File)
		body, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if sum := sha256.Sum256(body); hex.EncodeToString(sum[:]) != d.SHA256 || d.Licence != "MIT-0" || len(d.Commit) != 40 {
			t.Errorf("%s is not the file SOURCES.json names (%s at %s)", d.File, d.Path, d.Commit)
		}
		files = append(files, p)
	}
	listed := map[string]bool{}
	for _, f := range files {
		listed[f] = true
	}
	filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() && strings.HasSuffix(p, ".json") && filepath.Base(p) != "SOURCES.json" && !listed[p] {
			t.Errorf("%s is not in SOURCES.json", p)
		}
		return nil
	})
	code, out, errs := runCLI(t, "", append([]string{"states", "validate"}, files...)...)
	if code != exitOK || errs != "" {
		t.Fatalf("exit %d, stderr:\n%s", code, errs)
	}
	if n := strings.Count(out, ": valid\n"); n != len(files) {
		t.Errorf("%d of %d reported valid", n, len(files))
	}
}

// TestStatesValidateWarnsOfWhatCannotRun: a valid definition the engine
// cannot run is valid (exit 0), with a warning naming what; an invalid
// one is exit 1.
func TestStatesValidateWarnsOfWhatCannotRun(t *testing.T) {
	dir := t.TempDir()
	manifest := writeFile(t, dir, "manifest.asl.json", `{"StartAt":"M","States":{"M":{"Type":"Map",
	  "ItemReader":{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"MANIFEST"},"Parameters":{"Bucket":"b","Key":"manifest.json"}},
	  "ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`)
	code, out, errs := runCLI(t, "", "states", "validate", manifest)
	if code != exitOK || !strings.Contains(out, manifest+": valid") || !strings.Contains(errs, "warning: valid, but this engine cannot run it") || !strings.Contains(errs, "InputType MANIFEST") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	inline := writeFile(t, dir, "inline.asl.json", `{"StartAt":"M","States":{"M":{"Type":"Map","ToleratedFailureCount":1,
	  "ItemProcessor":{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`)
	if code, _, errs := runCLI(t, "", "states", "validate", inline); code != exitFailed || !strings.Contains(errs, `field "ToleratedFailureCount" is only supported by a Map in DISTRIBUTED mode`) {
		t.Errorf("an inline Map with a tolerance: exit %d, %s", code, errs)
	}
}
