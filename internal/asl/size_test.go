package asl

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"reflect"
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

// A template's bound is never short of what it renders, whatever the
// document's size (verifySizeBounds checks the bounds of every run; this
// checks the templates directly, with the document's exact size).
func TestTemplateBoundCoversItsOutput(t *testing.T) {
	doc := map[string]any{"v": map[string]any{"name": "c-001", "tags": []any{"a", `q"x`, 1.5}}, "n": int64(-12), "s": "é\u2028"}
	for _, raw := range []any{
		map[string]any{"v.$": "$.v", "step": int64(7)},
		map[string]any{"all.$": "$", "list": []any{"lit", map[string]any{"x.$": "$.s"}}, "nested": map[string]any{"n.$": "$.n", "k": nil}},
		[]any{map[string]any{"a.$": "$.v.tags[1]"}, "b"},
		map[string]any{"many.$": "$.v.tags[*]"},
		map[string]any{"sum.$": "States.MathAdd($.n, 1)"},
		map[string]any{"ctx.$": "$$.State.Name"},
	} {
		tmpl, err := compileTemplate(raw, "Parameters")
		if err != nil {
			t.Fatal(err)
		}
		r := &stateRun{st: &State{Name: "S"}, x: &Execution{engine: &Engine{}}}
		out, err := tmpl.eval(r.scope(doc))
		if err != nil {
			t.Fatal(err)
		}
		b := tmpl.bound(jsonSize(doc), sizeUnknown)
		if b != sizeUnknown && b < jsonSize(out) {
			t.Errorf("%v: bound %d under the output's %d bytes", raw, b, jsonSize(out))
		}
		if tmpl.bound(sizeUnknown, sizeUnknown) != sizeUnknown && tmpl.kind != tmplLiteral {
			t.Errorf("%v: bounded without a bound on the document", raw)
		}
	}
}

// In a Map's ItemSelector, $$.Map.Item.Value is bounded by the item's bound.
func TestItemSelectorBoundCoversItsOutput(t *testing.T) {
	item := map[string]any{"v": map[string]any{"name": "c-001"}, "n": int64(-3)}
	tmpl, err := compileTemplate(map[string]any{"item.$": "$$.Map.Item.Value", "i.$": "$$.Map.Item.Index",
		"deep.$": "$$.Map.Item.Value.v", "top.$": "$.top"}, "ItemSelector")
	if err != nil {
		t.Fatal(err)
	}
	doc := map[string]any{"top": []any{item, item}}
	r := &stateRun{st: &State{Name: "M"}, x: &Execution{engine: &Engine{}}, mapItem: &mapItem{index: -9223372036854775807 - 1, value: item}}
	out, err := tmpl.eval(r.scope(doc))
	if err != nil {
		t.Fatal(err)
	}
	if b := tmpl.bound(jsonSize(doc), jsonSize(item)); b < jsonSize(out) {
		t.Errorf("bound %d under the output's %d bytes", b, jsonSize(out))
	}
	if b := tmpl.bound(jsonSize(doc), sizeUnknown); b != sizeUnknown {
		t.Errorf("bounded (%d) without a bound on the item", b)
	}
}

// The context members resolved without building the context object are the
// ones the object holds.
func TestContextMembersMatchTheContextObject(t *testing.T) {
	x := &Execution{ID: "arn:x", Name: "x", smName: "m", smID: "arn:m"}
	paths := []string{"$$.Map.Item.Value", "$$.Map.Item.Index", "$$.Map.Item.Other", "$$.Task.Token",
		"$$.State.Name", "$$.State.RetryCount", "$$.State.EnteredTime", "$$.Execution.Id"}
	runs := []*stateRun{
		{x: x, st: &State{Name: "Plain"}},
		{x: x, st: &State{Name: "Item"}, retry: 2, mapItem: &mapItem{index: 3, value: map[string]any{"id": "c-3"}}},
		{x: x, st: &State{Name: "Waiting"}, token: "tok"},
	}
	for _, r := range runs {
		for _, raw := range paths {
			p, err := compilePath(raw)
			if err != nil {
				t.Fatal(err)
			}
			want, wantFound := p.get(r.context())
			got, found := r.scope(nil).lookup(p)
			if found != wantFound || !reflect.DeepEqual(got, want) {
				t.Errorf("state %s, %s: got %v (%v), want %v (%v)", r.st.Name, raw, got, found, want, wantFound)
			}
		}
	}
}
