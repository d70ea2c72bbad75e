package asl

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestMain runs every test of the package (the conformance corpus among
// them) with each state's size bound checked against its exact size; not
// the benchmarks, whose figures must not include that check.
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		verifySizeBounds = true
	}
	os.Exit(m.Run())
}

// TestDataLimitIsFoundWhereTheBoundStopsProving grows a payload by about a
// third of the limit per state, through Task results, Pass Parameters and
// Results, Choice and OutputPath, and checks the state whose output first
// exceeds MaxPayloadBytes fails with States.DataLimitExceeded — never a
// later one, never one that fits.
func TestDataLimitIsFoundWhereTheBoundStopsProving(t *testing.T) {
	third := strings.Repeat("x", MaxPayloadBytes/3)
	reg := NewRegistry()
	reg.Register("Third", func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return json.Marshal(third)
	})
	reg.Register("Small", func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"ok":true}`), nil
	})
	task := func(name, fn, resultPath, next string) string {
		return fmt.Sprintf(`%q:{"Type":"Task","Resource":"${%sArn}","ResultPath":%q,"Next":%q}`, name, fn, resultPath, next)
	}
	tests := []struct {
		name   string
		states []string
		failAt string // "" when it succeeds
	}{
		{"three thirds fit, the fourth does not", []string{
			task("A", "Third", "$.a", "B"), task("B", "Third", "$.b", "C"), `"C":{"Type":"Choice","Choices":[{"Variable":"$.a","IsPresent":true,"Next":"D"}]}`,
			task("D", "Small", "$.s", "E"), task("E", "Third", "$.c", "F"), `"F":{"Type":"Succeed"}`,
		}, "E"},
		{"a replaced field does not grow the payload", []string{
			task("A", "Third", "$.a", "B"), task("B", "Third", "$.a", "C"), task("C", "Third", "$.a", "D"), task("D", "Third", "$.b", "E"), `"E":{"Type":"Succeed"}`,
		}, ""},
		{"Parameters copying the input twice", []string{
			task("A", "Third", "$.a", "B"), `"B":{"Type":"Pass","Parameters":{"x.$":"$.a","y.$":"$.a"},"ResultPath":"$.p","Next":"C"}`, `"C":{"Type":"Succeed"}`,
		}, "B"},
		{"OutputPath keeps the payload small", []string{
			task("A", "Third", "$.a", "B"), task("B", "Third", "$.b", "C"), `"C":{"Type":"Pass","OutputPath":"$.a","Next":"D"}`,
			`"D":{"Type":"Pass","Parameters":{"x.$":"$","y.$":"$"},"Next":"E"}`, `"E":{"Type":"Pass","Parameters":{"x.$":"$","y.$":"$"},"Next":"F"}`, `"F":{"Type":"Succeed"}`,
		}, "E"},
		{"a Result literal", []string{
			task("A", "Third", "$.a", "B"), task("B", "Third", "$.b", "C"), `"C":{"Type":"Pass","Result":{"k":"` + strings.Repeat("y", MaxPayloadBytes/3) + `"},"ResultPath":"$.r","Next":"D"}`, `"D":{"Type":"Succeed"}`,
		}, "C"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := strings.Split(tt.states[0], `"`)[1]
			def := fmt.Sprintf(`{"StartAt":%q,"States":{%s}}`, start, strings.Join(tt.states, ","))
			res := run(t, reg, def, `{}`)
			if tt.failAt == "" {
				if res.Status != StatusSucceeded {
					t.Fatalf("got %s %s: %s, want SUCCEEDED", res.Status, res.Error, res.Cause)
				}
				if n := len(res.Output); n > MaxPayloadBytes {
					t.Errorf("output of %d bytes passed", n)
				}
				return
			}
			if res.Status != StatusFailed || res.Error != ErrDataLimitExceeded || !strings.Contains(res.Cause, "'"+tt.failAt+"'") {
				t.Errorf("got %s %s: %.200s, want States.DataLimitExceeded at state %s", res.Status, res.Error, res.Cause, tt.failAt)
			}
		})
	}
}

func TestSizeBounds(t *testing.T) {
	must := func(raw string) *path {
		p, err := compilePath(raw)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if got := selectBound(optPath{null: true}, 100); got != 2 {
		t.Errorf("null path: %d, want 2", got)
	}
	for _, raw := range []string{"$", "$.a.b", "$.a[0]"} {
		if got := selectBound(optPath{p: must(raw)}, 100); got != 100 {
			t.Errorf("%s: %d, want 100", raw, got)
		}
	}
	for _, raw := range []string{"$$.Execution.Input", "$..a", "$.a[*]", "$var.a"} {
		if got := selectBound(optPath{p: must(raw)}, 100); got != sizeUnknown {
			t.Errorf("%s: %d, want unknown", raw, got)
		}
	}
	if got := selectBound(optPath{p: must("$.a")}, sizeUnknown); got != sizeUnknown {
		t.Errorf("unknown document: %d", got)
	}
	if got := resultPathBound(optPath{p: must("$.ab.c")}, 100, 10); got != 100+10+(4+4)+(3+4) {
		t.Errorf("ResultPath $.ab.c: %d", got)
	}
	if got := resultPathBound(optPath{p: must("$")}, sizeUnknown, 10); got != 10 {
		t.Errorf("ResultPath $: %d", got)
	}
	if got := resultPathBound(optPath{null: true}, 7, sizeUnknown); got != 7 {
		t.Errorf("ResultPath null: %d", got)
	}
	if got := resultPathBound(optPath{p: must("$.a")}, sizeUnknown, 10); got != sizeUnknown {
		t.Errorf("unknown input: %d", got)
	}
}

// TestCheckRemembersOnlyItsOwnRegistry: a machine found bound in one
// registry is not taken as bound in another.
func TestCheckRemembersOnlyItsOwnRegistry(t *testing.T) {
	sm, err := Parse([]byte(`{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"${FnArn}","End":true}}}`))
	if err != nil {
		t.Fatal(err)
	}
	bound := NewRegistry()
	bound.Register("Fn", func(_ context.Context, in json.RawMessage) (json.RawMessage, error) { return in, nil })
	for i := 0; i < 2; i++ {
		if err := New(bound).Check(sm); err != nil {
			t.Fatalf("bound registry, check %d: %v", i+1, err)
		}
	}
	var ue *UnboundError
	if err := New(NewRegistry()).Check(sm); !errors.As(err, &ue) {
		t.Fatalf("empty registry after the bound one: %v, want *UnboundError", err)
	}
	if err := New(bound).Check(sm); err != nil {
		t.Fatalf("bound registry again: %v", err)
	}
}
