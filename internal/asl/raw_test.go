package asl

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestCanonicalJSON(t *testing.T) {
	canonical := []string{
		`{}`, `[]`, `{"a":1}`, `{"a":1,"b":[true,false,null]}`, `[{"x":"y"},[],{}]`,
		`{"A":1,"a":2,"b":-3,"c":0}`, `{"s":"line\nnext\t\"q\" \\ \u0001 \u001f \u2028"}`,
		`{"z":"日本","ñ":"é"}`, `[123456789012345678,-123456789012345678]`,
		`{"":0,"a":{"":{}}}`,
	}
	for _, s := range canonical {
		if !canonicalJSON([]byte(s)) {
			t.Errorf("canonicalJSON(%s) = false, want true", s)
			continue
		}
		v, err := parseJSON([]byte(s))
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if b, err := marshalJSON(v); err != nil || string(b) != s {
			t.Errorf("%s is re-encoded as %s (%v)", s, b, err)
		}
	}
	other := []string{
		``, ` {}`, `{} `, `{ }`, `{"a": 1}`, `{"b":1,"a":2}`, `{"a":1,"a":2}`, `[1 ,2]`,
		`{"a":1.5}`, `{"a":1e3}`, `{"a":01}`, `{"a":-0}`, `{"a":1234567890123456789}`,
		`{"a":"\/"}`, `{"a":"\u000a"}`, `{"a":"\u001F"}`, `{"a":"\u0041"}`, `{"a":"\ud83d\ude00"}`,
		"{\"a\":\"\u2028\"}", "{\"a\":\"\xff\"}", "{\"a\":\"\x01\"}", `{"a\n":1}`,
		`{"a":tru}`, `{"a":1`, `[1,]`, `{"a":1,}`, `{"a"}`, `["x"]]`, `{"a":"x`,
		strings.Repeat("[", maxFastDepth+2) + strings.Repeat("]", maxFastDepth+2),
	}
	for _, s := range other {
		if canonicalJSON([]byte(s)) {
			t.Errorf("canonicalJSON(%q) = true, want false", s)
		}
	}
}

// FuzzCanonicalJSON: text canonicalJSON accepts is JSON that the engine
// writes back byte for byte.
func FuzzCanonicalJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,"x\n",{"b":null}]}`, `[true,-5,"\u2029"]`, `{"a":1,"b":2}`, `{"b":1,"a":2}`, `"x"`, `0`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !canonicalJSON(b) {
			return
		}
		v, err := parseJSON(b)
		if err != nil {
			t.Fatalf("%q accepted but does not parse: %v", b, err)
		}
		out, err := marshalJSON(v)
		if err != nil || string(out) != string(b) {
			t.Fatalf("%q accepted but re-encoded as %q (%v)", b, out, err)
		}
		if n := jsonSize(v); n != len(b) {
			t.Fatalf("%q: jsonSize %d, length %d", b, n, len(b))
		}
	})
}

func TestDeepResolveCopiesOnlyWhatHoldsRaws(t *testing.T) {
	plain := map[string]any{"a": []any{int64(1), map[string]any{"b": "c"}}}
	if got, changed := deepResolved(plain); changed || !reflect.DeepEqual(got, plain) {
		t.Fatalf("plain value changed: %v", got)
	}
	raw := newRaw([]byte(`{"k":[1,2]}`))
	doc := map[string]any{"keep": plain, "list": []any{"x", raw}}
	got := deepResolve(doc).(map[string]any)
	want := map[string]any{"keep": plain, "list": []any{"x", map[string]any{"k": []any{int64(1), int64(2)}}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("deepResolve = %#v", got)
	}
	if _, still := doc["list"].([]any)[1].(*rawJSON); !still {
		t.Error("deepResolve modified its argument")
	}
	if reflect.ValueOf(got["keep"]).UnsafePointer() != reflect.ValueOf(plain).UnsafePointer() {
		t.Error("a member without raws was copied")
	}
}

// runBoth runs def with input twice — with lazy values (Task results kept
// as text, objects overlaid by ResultPath) and with none (Engine.eager) —
// and fails unless both runs end alike and record the same history.
func runBoth(t *testing.T, name string, def, input json.RawMessage, reg func() *Registry) {
	t.Helper()
	sm, err := Parse(def)
	if err != nil {
		t.Fatalf("%s: Parse: %v", name, err)
	}
	run := func(eager bool) (*Result, []Event, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		eng := New(reg())
		eng.eager = eager
		res, err := eng.Run(ctx, sm, input, StartOptions{Name: "raw"})
		if err != nil {
			return nil, nil, err
		}
		return res, res.History(), nil
	}
	lazy, lazyHist, lerr := run(false)
	eager, eagerHist, eerr := run(true)
	switch {
	case lerr != nil && eerr != nil && lerr.Error() == eerr.Error():
		return // an input both refuse alike (a number beyond a double's range)
	case lerr != nil || eerr != nil:
		t.Fatalf("%s: Run: kept as text %v, parsed %v", name, lerr, eerr)
	}
	if lazy.Status != eager.Status || lazy.Error != eager.Error || lazy.Cause != eager.Cause || string(lazy.Output) != string(eager.Output) {
		t.Errorf("%s: results differ:\n kept as text: %s %s %s %s\n parsed:       %s %s %s %s", name,
			lazy.Status, lazy.Error, lazy.Cause, lazy.Output, eager.Status, eager.Error, eager.Cause, eager.Output)
	}
	for i := range lazyHist {
		for _, v := range []any{lazyHist[i].Input, lazyHist[i].Output} {
			if holdsRaw(v) {
				t.Errorf("%s: event %d hands out a *rawJSON", name, i+1)
			}
		}
	}
	// A failing branch or item cancels the others wherever they are: how
	// far they got differs from run to run, whatever the results are.
	if fanoutFailed(lazyHist) || fanoutFailed(eagerHist) {
		return
	}
	if len(lazyHist) != len(eagerHist) {
		t.Fatalf("%s: %d events kept as text, %d parsed", name, len(lazyHist), len(eagerHist))
	}
	// Map iterations and Parallel branches interleave differently from run
	// to run: the histories are compared as sets of events without ids and
	// times.
	a, b := eventTexts(t, lazyHist), eventTexts(t, eagerHist)
	for i := range a {
		if a[i] != b[i] {
			t.Errorf("%s: histories differ:\n kept as text: %s\n parsed:       %s", name, a[i], b[i])
			return
		}
	}
}

func fanoutFailed(evs []Event) bool {
	for _, ev := range evs {
		switch ev.Type {
		case "ParallelStateFailed", "MapStateFailed", "MapIterationFailed":
			return true
		}
	}
	return false
}

func eventTexts(t *testing.T, evs []Event) []string {
	t.Helper()
	out := make([]string, len(evs))
	for i, ev := range evs {
		ev.ID, ev.Timestamp = 0, time.Time{}
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = string(b)
	}
	sort.Strings(out)
	return out
}

func holdsRaw(v any) bool {
	_, changed := deepResolved(v)
	return changed
}

// TestRawResultsChangeNothingOnTheCorpus runs the conformance corpus both
// ways, the cases side by side as TestConformance runs them: several wait
// on the real clock (Retry intervals, Wait states, task timeouts).
func TestRawResultsChangeNothingOnTheCorpus(t *testing.T) {
	for _, c := range corpus(t) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			runBoth(t, c.name, c.Definition, c.Input, corpusRegistry)
		})
	}
}

// TestRawResultsChangeNothing reads Task results every way a workflow can:
// paths into them, ResultSelector, Choice, intrinsics, variables, JSONata
// states, Map and Parallel over them, Catch into a result-shaped input,
// each with handler outputs that are kept as text and outputs that are not.
func TestRawResultsChangeNothing(t *testing.T) {
	outputs := []string{
		`{"a":{"b":[1,2,{"c":"x"}]},"n":3,"s":"línea\nnueva"}`, // canonical
		`{"n":3, "a":{"b":[1,2,{"c":"x"}]},"s":"l\u00ednea"}`,  // spaces, order, escapes
		`{"a":{"b":[1.5,2e3]},"n":3,"s":"x"}`,                  // fractions
		`[{"a":{"b":[1]},"n":1},{"a":{"b":[2]},"n":2}]`,        // an array
		`{"a":{"b":[]},"n":-0,"s":""}`,                         // -0
	}
	defs := map[string]string{
		"paths": `{"StartAt":"T","States":{
			"T":{"Type":"Task","Resource":"${OutArn}","ResultPath":"$.r","Next":"P"},
			"P":{"Type":"Pass","Parameters":{"b.$":"$.r.a.b","whole.$":"$.r","c.$":"$.r..c","first.$":"$.r.a.b[0]"},"ResultPath":"$.p","Next":"T2"},
			"T2":{"Type":"Task","Resource":"${OutArn}","ResultSelector":{"n.$":"$.n","a.$":"$.a"},"ResultPath":"$.r.sel","OutputPath":"$.r","End":true}}}`,
		"root": `{"StartAt":"T","States":{
			"T":{"Type":"Task","Resource":"${OutArn}","Next":"C"},
			"C":{"Type":"Choice","Choices":[{"Variable":"$.n","NumericEquals":3,"Next":"Y"},{"Variable":"$[0].n","IsPresent":true,"Next":"Y"}],"Default":"N"},
			"Y":{"Type":"Pass","Parameters":{"len.$":"States.ArrayLength($.a.b)","json.$":"States.JsonToString($)","has.$":"States.ArrayContains($.a.b, 2)"},"ResultPath":"$.i","End":true},
			"N":{"Type":"Pass","Parameters":{"json.$":"States.JsonToString($)","len.$":"States.ArrayLength($)"},"End":true}}}`,
		"assign-and-jsonata": `{"StartAt":"T","States":{
			"T":{"Type":"Task","Resource":"${OutArn}","Assign":{"saved.$":"$","inner.$":"$"},"ResultPath":"$.r","Next":"A"},
			"A":{"Type":"Pass","Assign":{"held.$":"$"},"Next":"J"},
			"J":{"Type":"Pass","QueryLanguage":"JSONata","Output":{"in":"{% $states.input %}","saved":"{% $saved %}","held":"{% $type($held.r) %}","t":"{% $type($states.input.r) %}","s":"{% $string($states.input.r) %}"},"Next":"K"},
			"K":{"Type":"Pass","Parameters":{"again.$":"$saved","len.$":"States.JsonToString($inner)"},"End":true}}}`,
		"map-parallel": `{"StartAt":"T","States":{
			"T":{"Type":"Task","Resource":"${OutArn}","Next":"L"},
			"L":{"Type":"Pass","Parameters":{"list.$":"States.Array($, $)"},"Next":"M"},
			"M":{"Type":"Map","ItemsPath":"$.list","ItemSelector":{"v.$":"$$.Map.Item.Value"},
				"ItemProcessor":{"StartAt":"E","States":{"E":{"Type":"Task","Resource":"${EchoArn}","End":true}}},"ResultPath":"$.m","Next":"I"},
			"I":{"Type":"Pass","Parameters":{"unique.$":"States.ArrayUnique($.m)","merged.$":"States.JsonMerge($.m[0], $.m[1], false)","same.$":"States.ArrayContains($.m, $.m[1])","text.$":"States.Format('x {}', $.m)"},"ResultPath":"$.i","Next":"F"},
			"F":{"Type":"Parallel","Branches":[
				{"StartAt":"B1","States":{"B1":{"Type":"Task","Resource":"${OutArn}","End":true}}},
				{"StartAt":"B2","States":{"B2":{"Type":"Pass","InputPath":"$.m[0].v","End":true}}}],"Next":"G"},
			"G":{"Type":"Map","QueryLanguage":"JSONata","Items":"{% $states.input %}","ItemProcessor":{"StartAt":"H","States":{"H":{"Type":"Pass","End":true}}},"End":true}}}`,
		"map-over-result": `{"StartAt":"T","States":{
			"T":{"Type":"Task","Resource":"${OutArn}","ResultPath":"$.r","Next":"M"},
			"M":{"Type":"Map","ItemsPath":"$.r","ItemProcessor":{"StartAt":"P","States":{"P":{"Type":"Pass","Parameters":{"n.$":"$.n"},"End":true}}},"End":true}}}`,
		"overlays": `{"StartAt":"P1","States":{
			"P1":{"Type":"Pass","Result":1,"ResultPath":"$.k1","Next":"P2"},
			"P2":{"Type":"Pass","Result":{"x":{"y":2}},"ResultPath":"$.k2","Next":"P3"},
			"P3":{"Type":"Pass","Parameters":{"got.$":"$.k2.x.y"},"ResultPath":"$.k2.x.z","Next":"P4"},
			"P4":{"Type":"Pass","Result":"again","ResultPath":"$.k1","Next":"T"},
			"T":{"Type":"Task","Resource":"${OutArn}","ResultPath":"$.k3","Next":"C"},
			"C":{"Type":"Choice","Choices":[{"Variable":"$.k2.x.z.got","NumericEquals":2,"Next":"P5"}],"Default":"P5"},
			"P5":{"Type":"Pass","Result":[1,2],"ResultPath":"$.k4","Next":"P6"},
			"P6":{"Type":"Pass","Result":true,"ResultPath":"$.k5","Next":"P7"},
			"P7":{"Type":"Pass","Result":null,"ResultPath":"$.k6","Next":"I"},
			"I":{"Type":"Pass","Parameters":{"whole.$":"$","merged.$":"States.JsonMerge($, $.k2, false)","json.$":"States.JsonToString($.k2)","n.$":"States.ArrayLength($.k4)"},"ResultPath":"$.i","Next":"J"},
			"J":{"Type":"Pass","QueryLanguage":"JSONata","Output":{"in":"{% $states.input %}","keys":"{% $keys($states.input) %}","y":"{% $states.input.k2.x %}"},"Next":"M"},
			"M":{"Type":"Map","ItemsPath":"$.in.k4","ItemSelector":{"n.$":"$$.Map.Item.Value","k2.$":"$.in.k2"},"ItemProcessor":{"StartAt":"E","States":{"E":{"Type":"Pass","Result":"e","ResultPath":"$.e","End":true}}},"ResultPath":"$.m","Next":"W"},
			"W":{"Type":"Pass","OutputPath":"$.in","End":true}}}`,
		"catch": `{"StartAt":"T","States":{
			"T":{"Type":"Task","Resource":"${OutArn}","ResultPath":"$","Next":"X"},
			"X":{"Type":"Task","Resource":"${FailArn}","Catch":[{"ErrorEquals":["States.ALL"],"ResultPath":"$.err","Next":"D"}],"End":true},
			"D":{"Type":"Pass","ResultPath":"$.a.added","Result":{"ok":true},"Next":"W"},
			"W":{"Type":"Wait","Seconds":0,"OutputPath":"$.a","End":true}}}`,
		"lambda-invoke": `{"StartAt":"T","States":{
			"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"Out","Payload.$":"$"},"ResultSelector":{"p.$":"$.Payload"},"Next":"U"},
			"U":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"Out","Payload.$":"$"},"End":true}}}`,
	}
	for i, out := range outputs {
		reg := func() *Registry {
			r := NewRegistry()
			r.Register("Out", func(context.Context, json.RawMessage) (json.RawMessage, error) { return json.RawMessage(out), nil })
			r.Register("Echo", func(_ context.Context, in json.RawMessage) (json.RawMessage, error) { return in, nil })
			r.Register("Fail", func(context.Context, json.RawMessage) (json.RawMessage, error) {
				return nil, &StatesError{Name: "Boom", Cause: "no"}
			})
			return r
		}
		names := make([]string, 0, len(defs))
		for n := range defs {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			runBoth(t, fmt.Sprintf("%s/output %d", n, i), json.RawMessage(defs[n]), json.RawMessage(`{"in":1}`), reg)
		}
	}
}

// FuzzLazyInputsChangeNothing: whatever the execution input, a machine
// without JSONata states, whose input is parsed with its small objects as
// overlays, ends and records exactly as the eager engine does, while its
// states read the input every way a JSONPath workflow can.
func FuzzLazyInputsChangeNothing(f *testing.F) {
	for _, s := range []string{
		`{"items":[{"id":"c-1","score":7},{"id":"c-2","score":3,"x":{"y":[1,{"z":null}]}}],"v":{"name":"a","n":1},"k":{"a":1,"b":2,"c":3,"d":4,"e":5}}`,
		`{"items":[],"v":{"name":"b","n":-0,"n":2},"k":{}}`,
		`{"items":[1,"two",[3],{"four":4}],"v":{"n":1.5e3},"k":null}`,
		`{"v":{"name":"c"}}`, `{}`, `[1,2]`, `{"v":{"n":0e0},"items":[-0E1]}`,
	} {
		f.Add([]byte(s), uint8(0))
	}
	defs := []string{
		`{"StartAt":"M","States":{
			"M":{"Type":"Map","ItemsPath":"$.items","ItemSelector":{"item.$":"$$.Map.Item.Value","i.$":"$$.Map.Item.Index","v.$":"$.v"},
				"ItemProcessor":{"StartAt":"A","States":{
					"A":{"Type":"Pass","Parameters":{"whole.$":"$.item","i.$":"$.i","json.$":"States.JsonToString($.item)"},"ResultPath":"$.r","Next":"B"},
					"B":{"Type":"Pass","OutputPath":"$.r","End":true}}},"ResultPath":"$.m","Next":"C"},
			"C":{"Type":"Choice","Choices":[{"Variable":"$.v.name","StringEquals":"a","Next":"D"},{"Variable":"$.v","IsPresent":true,"Next":"E"}],"Default":"E"},
			"D":{"Type":"Pass","Parameters":{"v.$":"$.v","k.$":"$.k","same.$":"States.ArrayContains($.m, $.m[0])","merged.$":"States.JsonMerge($.v, $.v, false)"},"ResultPath":"$.d","Next":"E"},
			"E":{"Type":"Pass","InputPath":"$.v","ResultPath":"$.again","Next":"T"},
			"T":{"Type":"Task","Resource":"${EchoArn}","Parameters":{"v.$":"$.v","all.$":"$"},"ResultSelector":{"v.$":"$.v"},"ResultPath":"$.v.echo","Next":"U"},
			"U":{"Type":"Task","Resource":"${OutArn}","ResultPath":"$.v.out","Next":"F"},
			"F":{"Type":"Pass","Assign":{"saved.$":"$.v"},"OutputPath":"$.v","Next":"G"},
			"G":{"Type":"Pass","Parameters":{"saved.$":"$saved","text.$":"States.Format('{}', $saved)"},"End":true}}}`,
	}
	f.Fuzz(func(t *testing.T, input []byte, out uint8) {
		if !json.Valid(input) {
			return
		}
		outputs := []string{`{"a":{"b":1},"n":3}`, `{"n":3, "a":{"b":1}}`, `[{"a":{"b":1}}]`}
		result := outputs[int(out)%len(outputs)]
		reg := func() *Registry {
			r := NewRegistry()
			r.Register("Out", func(context.Context, json.RawMessage) (json.RawMessage, error) { return json.RawMessage(result), nil })
			r.Register("Echo", func(_ context.Context, in json.RawMessage) (json.RawMessage, error) { return in, nil })
			return r
		}
		for i, def := range defs {
			runBoth(t, fmt.Sprintf("def %d", i), json.RawMessage(def), input, reg)
		}
	})
}
