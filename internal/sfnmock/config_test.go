package sfnmock

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/veredicto/veredicto/internal/asl"
)

const retryConfig = `{
  "StateMachines": {
    "Orders": {
      "TestCases": {
        "HappyPath": {"Charge": "ChargeOK", "Notify": "Sent"},
        "RetryPath": {"Charge": "ChargeFlaky", "Notify": "Sent"},
        "Partial":   {"Charge": "ChargeOK"}
      }
    }
  },
  "MockedResponses": {
    "ChargeOK":    {"0": {"Return": {"StatusCode": 200, "Payload": {"charged": true}}}},
    "ChargeFlaky": {"0": {"Throw": {"Error": "Lambda.ServiceException", "Cause": "down"}},
                    "1-2": {"Throw": {"Error": "Lambda.TooManyRequestsException", "Cause": "slow down"}},
                    "3": {"Return": {"StatusCode": 200, "Payload": {"charged": true}}}},
    "Sent":        {"0": {"Return": {"MessageId": "m-1"}}},
    "Unused":      {}
  }
}`

func TestTestCaseAnswersByInvocation(t *testing.T) {
	cfg, err := Parse("MockConfigFile.json", []byte(retryConfig))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cfg.TestCases("Orders"), ","); got != "HappyPath,Partial,RetryPath" {
		t.Errorf("TestCases = %s", got)
	}
	if _, ok := cfg.TestCase("Orders", "Nope"); ok {
		t.Error("an unknown test case was found")
	}
	if _, ok := cfg.TestCase("Other", "HappyPath"); ok {
		t.Error("a test case of an unknown machine was found")
	}
	mock, ok := cfg.TestCase("Orders", "RetryPath")
	if !ok {
		t.Fatal("RetryPath not found")
	}
	if !mock.Mocks("Charge") || mock.Mocks("Ship") {
		t.Errorf("Mocks: Charge %v, Ship %v; want true, false", mock.Mocks("Charge"), mock.Mocks("Ship"))
	}
	want := []string{"Lambda.ServiceException", "Lambda.TooManyRequestsException", "Lambda.TooManyRequestsException",
		`{"StatusCode": 200, "Payload": {"charged": true}}`, asl.ErrRuntime}
	for i, w := range want {
		out, err := mock.Next("Charge")
		var se *asl.StatesError
		got := string(out)
		if errors.As(err, &se) {
			got = se.Name
		}
		if got != w {
			t.Errorf("invocation %d: got %s (%v), want %s", i, got, err, w)
		}
		if w == asl.ErrRuntime && (se == nil || !strings.Contains(se.Cause, `has no answer for invocation 4 (it answers "0", "1-2", "3"; mock config MockConfigFile.json)`)) {
			t.Errorf("the cause of a missing answer does not say which: %v", err)
		}
	}
	// Each run counts afresh.
	again, _ := cfg.TestCase("Orders", "RetryPath")
	if _, err := again.Next("Charge"); err == nil {
		t.Error("a new run did not start at invocation 0")
	}
}

func TestConfigProblemsNameTheFileAndThePath(t *testing.T) {
	tests := []struct {
		name, config string
		want         []string // "path: problem", in order
	}{
		{"not JSON", "{\n  \"StateMachines\": {,\n}", []string{`$: not valid JSON at line 2, column 21`}},
		{"not an object", `[]`, []string{`$: must be an object`}},
		{"misspelt section", `{"StateMachines": {}, "MockedResponse": {}}`, []string{
			`$.MockedResponse: unknown field: a mock configuration has StateMachines and MockedResponses`, `$: MockedResponses is missing`}},
		{"machine without test cases", `{"StateMachines": {"M": {"Tests": {}}}, "MockedResponses": {}}`, []string{
			`$.StateMachines.M.Tests: unknown field`, `$.StateMachines.M: TestCases is missing`}},
		{"unknown response", `{"StateMachines": {"M": {"TestCases": {"T": {"S": "Nope", "S2": 3}}}}, "MockedResponses": {}}`, []string{
			`$.StateMachines.M.TestCases.T.S: names the mocked response "Nope", which MockedResponses does not define`,
			`$.StateMachines.M.TestCases.T.S2: must be the name of a mocked response (a string), not a number`}},
		{"duplicate test case", `{"StateMachines": {"M": {"TestCases": {"T": {}, "T": {}}}}, "MockedResponses": {}}`, []string{
			`$.StateMachines.M.TestCases.T: given twice`}},
		{"bad keys", `{"StateMachines": {}, "MockedResponses": {"R": {"first": {"Return": 1}, "3-1": {"Return": 1}, "-1": {"Return": 1}}}}`, []string{
			`$.MockedResponses.R.first: not an invocation number`, `$.MockedResponses.R["3-1"]: the range ends (1) before it starts (3)`, `$.MockedResponses.R["-1"]: not an invocation number`}},
		{"overlap", `{"StateMachines": {}, "MockedResponses": {"R": {"0-2": {"Return": 1}, "2": {"Return": 2}}}}`, []string{
			`$.MockedResponses.R["2"]: invocation 2 is also answered by "0-2"`}},
		{"both and neither", `{"StateMachines": {}, "MockedResponses": {"R": {"0": {"Return": 1, "Throw": {"Error": "E", "Cause": ""}}, "1": {}, "2": {"Retrun": 1}}}}`, []string{
			`$.MockedResponses.R["0"]: must contain exactly one of Return and Throw`, `$.MockedResponses.R["1"]: must contain exactly one of Return and Throw`,
			`$.MockedResponses.R["2"].Retrun: unknown field: an answer is a Return or a Throw`}},
		{"bad throws", `{"StateMachines": {}, "MockedResponses": {"R": {"0": {"Throw": {"Cause": "c"}}, "1": {"Throw": {"Error": 1, "Cause": "c"}}, "2": {"Throw": {"Error": "E"}}, "3": {"Throw": "E"}, "4": {"Throw": {"Error": "", "Cause": ""}}}}}`, []string{
			`$.MockedResponses.R["0"].Throw: Error is missing`, `$.MockedResponses.R["1"].Throw.Error: must be a string, not a number`,
			`$.MockedResponses.R["2"].Throw: Cause is missing`, `$.MockedResponses.R["3"].Throw: must be an object (with Error and Cause), not a string`,
			`$.MockedResponses.R["4"].Throw.Error: must not be empty`}},
		{"odd names quoted", `{"StateMachines": {"my machine": {"TestCases": {"t.1": {"S": "X"}}}}, "MockedResponses": {}}`, []string{
			`$.StateMachines["my machine"].TestCases["t.1"].S: names the mocked response "X"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("cfg.json", []byte(tt.config))
			if err == nil {
				t.Fatal("accepted")
			}
			var got []string
			errs := []error{err}
			if j, ok := err.(interface{ Unwrap() []error }); ok {
				errs = j.Unwrap()
			}
			for _, e := range errs {
				var ce *ConfigError
				if !errors.As(e, &ce) {
					t.Errorf("%v is not a *ConfigError", e)
				}
				got = append(got, e.Error())
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d problems, want %d:\n%s", len(got), len(tt.want), strings.Join(got, "\n"))
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(got[i], "mock config cfg.json: "+w) {
					t.Errorf("problem %d:\n got %s\nwant mock config cfg.json: %s…", i, got[i], w)
				}
			}
		})
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "MockConfigFile.json")
	if err := os.WriteFile(path, []byte(retryConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path)
	if err != nil || cfg.File != path {
		t.Fatalf("Load = %v, %v", cfg, err)
	}
	if _, err := Load(filepath.Join(dir, "missing.json")); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("Load of a missing file = %v, want an error naming it", err)
	}
	// A Return may be any JSON value.
	cfg, err = Parse("f", []byte(`{"StateMachines": {"M": {"TestCases": {"T": {"S": "R"}}}}, "MockedResponses": {"R": {"0": {"Return": "text"}, "1": {"Return": null}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	m, _ := cfg.TestCase("M", "T")
	for _, want := range []string{`"text"`, `null`} {
		if out, err := m.Next("S"); err != nil || string(out) != want {
			t.Errorf("Next = %s, %v; want %s", out, err, want)
		}
	}
}
