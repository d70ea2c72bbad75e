package jsonata

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"testing"
)

type corpusCase struct {
	Name     string         `json:"name"`
	Expr     string         `json:"expr"`
	Input    any            `json:"input"`
	Bindings map[string]any `json:"bindings"`
	// HasInput distinguishes an absent input (undefined) from null.
	HasInput bool `json:"-"`
}

type outcome struct {
	Name      string `json:"name"`
	Expr      string `json:"expr"`
	Result    any    `json:"result"`
	HasResult bool   `json:"-"`
	Undefined bool   `json:"undefined"`
	Function  bool   `json:"function"`
	Error     string `json:"error"`
}

// deliberateDifferences lists corpus cases where this evaluator knowingly
// differs from jsonata@2.0.6, with the reason. Keep it short.
var deliberateDifferences = map[string]string{
	"lambdas/215":    "the reference rejects calling a partial application directly, $f(?)(x), with a misleading S0208; this evaluator calls it",
	"strings/304":    "the reference fails with a JavaScript RangeError (no JSONata code) for a non-integer $pad width; this evaluator truncates it as the documentation says",
	"regex-misc/565": "look-ahead is not in Go's RE2 syntax: the regex literal is a compile error S0303",
}

func loadCorpus(t *testing.T) ([]corpusCase, []outcome) {
	t.Helper()
	var raw []map[string]json.RawMessage
	data, err := os.ReadFile("testdata/corpus.json")
	if err != nil {
		t.Fatalf("read corpus: %v", err)
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatalf("parse corpus: %v", err)
	}
	cases := make([]corpusCase, len(raw))
	for i, r := range raw {
		if err := json.Unmarshal(data[0:0], &struct{}{}); err != nil && false {
			t.Fatal(err)
		}
		b, _ := json.Marshal(r)
		if err := json.Unmarshal(b, &cases[i]); err != nil {
			t.Fatalf("corpus case %d: %v", i, err)
		}
		_, cases[i].HasInput = r["input"]
	}
	var rawOut []map[string]json.RawMessage
	data, err = os.ReadFile("testdata/expected.json")
	if err != nil {
		t.Fatalf("read expected outcomes (make jsonata-expected): %v", err)
	}
	if err := json.Unmarshal(data, &rawOut); err != nil {
		t.Fatalf("parse expected outcomes: %v", err)
	}
	outs := make([]outcome, len(rawOut))
	for i, r := range rawOut {
		b, _ := json.Marshal(r)
		if err := json.Unmarshal(b, &outs[i]); err != nil {
			t.Fatalf("expected outcome %d: %v", i, err)
		}
		_, outs[i].HasResult = r["result"]
	}
	if len(outs) != len(cases) {
		t.Fatalf("expected.json has %d outcomes for %d corpus cases: run make jsonata-expected", len(outs), len(cases))
	}
	return cases, outs
}

// evalOutcome runs one case through the Go evaluator and describes the
// outcome the way the crosscheck script records the reference's.
func evalOutcome(c corpusCase) outcome {
	got := outcome{Name: c.Name, Expr: c.Expr}
	e, err := Compile(c.Expr)
	if err == nil {
		var input any = Undefined
		if c.HasInput {
			input = c.Input
		}
		var res any
		res, err = e.Eval(context.Background(), input, c.Bindings)
		if err == nil {
			if IsUndefined(res) {
				got.Undefined = true
				return got
			}
			if isFunc(res) {
				got.Function = true
				return got
			}
			b, merr := json.Marshal(res)
			if merr != nil {
				got.Error = "marshal: " + merr.Error()
				return got
			}
			_ = json.Unmarshal(b, &got.Result)
			got.HasResult = true
			return got
		}
	}
	var je *Error
	if errors.As(err, &je) {
		got.Error = je.Code
	} else {
		got.Error = err.Error()
	}
	return got
}

func sameOutcome(got, want outcome) bool {
	switch {
	case want.Error != "":
		return got.Error == want.Error
	case want.Undefined:
		return got.Undefined && got.Error == ""
	case want.Function:
		return got.Function && got.Error == ""
	}
	return got.HasResult && reflect.DeepEqual(got.Result, want.Result)
}

// TestCorpusMatchesReference compares every corpus case with the outcome
// recorded from jsonata@2.0.6 by scripts/jsonata-crosscheck.mjs.
func TestCorpusMatchesReference(t *testing.T) {
	cases, outs := loadCorpus(t)
	matched := 0
	for i, c := range cases {
		want := outs[i]
		if want.Expr != c.Expr {
			t.Fatalf("case %d: expected.json is for %q, corpus has %q: run make jsonata-expected", i, want.Expr, c.Expr)
		}
		got := evalOutcome(c)
		if sameOutcome(got, want) {
			matched++
			continue
		}
		if reason, ok := deliberateDifferences[c.Name]; ok {
			t.Logf("%s: deliberate difference (%s): %s", c.Name, reason, c.Expr)
			continue
		}
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		t.Errorf("%s: %s\n got  %s\n want %s", c.Name, c.Expr, gb, wb)
	}
	t.Logf("corpus: %d of %d cases match jsonata@2.0.6 (%.1f %%)", matched, len(cases), 100*float64(matched)/float64(len(cases)))
}
