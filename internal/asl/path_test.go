package asl

import (
	"fmt"
	"testing"
)

// TestPathsAsJaywayReadsThem: Step Functions' JSONPath is Jayway's, which
// reads a dot before a bracket ("$.[0]", "$.Snapshots.[0].State") as the
// bracket alone and unescapes quoted names its own way: \n, \t, \r, \f, \b
// and \uXXXX, and a backslash before any other character keeps that
// character.
func TestPathsAsJaywayReadsThem(t *testing.T) {
	tests := []struct {
		path string
		want []any
	}{
		{`$.[0]`, []any{0}},
		{`$.Snapshots.[0].State`, []any{"Snapshots", 0, "State"}},
		{`$.['a.b'].c`, []any{"a.b", "c"}},
		{`$['a\.b']`, []any{"a.b"}},
		{`$['a\zb']`, []any{"azb"}},
		{`$['a\/b']`, []any{"a/b"}},
		{`$['it\'s']`, []any{"it's"}},
		{`$["it\'s"]`, []any{"it's"}},
		{`$['say \"hi\"']`, []any{`say "hi"`}},
		{`$['back\\slash']`, []any{`back\slash`}},
		{`$['tab\there']`, []any{"tab\there"}},
		{`$['\u00e9t\u00e9']`, []any{"été"}},
		{`$.a[0]['b c']`, []any{"a", 0, "b c"}},
		{`$.delivery-partner`, []any{"delivery-partner"}},
	}
	for _, tt := range tests {
		p, err := compilePath(tt.path)
		if err != nil {
			t.Errorf("%s: %v", tt.path, err)
			continue
		}
		if fmt.Sprintf("%#v", p.simple) != fmt.Sprintf("%#v", tt.want) {
			t.Errorf("%s selects %#v, want %#v", tt.path, p.simple, tt.want)
		}
	}
	p, err := compilePath(`$..[0]`)
	if err != nil || p.definite {
		t.Errorf("$..[0] is a descent: %v %v", p, err)
	}
	res := run(t, NewRegistry(), `{"StartAt":"P","States":{"P":{"Type":"Pass","Parameters":{"s.$":"$.Snapshots.[0].State","k.$":"$['odd\\.key']"},"End":true}}}`,
		`{"Snapshots":[{"State":"completed"}],"odd.key":1}`)
	if string(res.Output) != `{"k":1,"s":"completed"}` {
		t.Errorf("run: %s %s %s", res.Output, res.Error, res.Cause)
	}
}

// TestMapItemsNotAnArray: a Map whose items are not an array fails with
// Step Functions' cause. In JSONPath it is States.Runtime naming the
// ItemsPath, a context path with one "$" ("Reference path
// \"$.Execution.Input\" must point to array.", and "$" for "$$"), as
// recorded on AWS through TestState (LocalStack snapshot
// test_state/test_state_context_object.snapshot.json,
// test_state_map_context_object); an execution prefixes the state, as it
// does every States.Runtime. In JSONata it is
// States.QueryEvaluationError with its EvaluationFailed event, as
// recorded on AWS (LocalStack snapshot
// scenarios/test_base_scenarios.snapshot.json,
// test_map_state_items_input_types).
func TestMapItemsNotAnArray(t *testing.T) {
	const proc = `"ItemProcessor":{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true`
	for _, tt := range []struct {
		itemsPath, input, shown string
	}{
		{`"ItemsPath":"$.items",`, `{"items":{"foo":"bar"}}`, "$.items"},
		{`"ItemsPath":"$.items",`, `{"items":"string"}`, "$.items"},
		{`"ItemsPath":"$.items",`, `{"items":1}`, "$.items"},
		{`"ItemsPath":"$.items",`, `{"items":null}`, "$.items"},
		{"", `{"items":[]}`, "$"},
		{`"ItemsPath":"$$.Execution.Input",`, `{"items":[]}`, "$.Execution.Input"},
		{`"ItemsPath":"$$",`, `["a"]`, "$"},
	} {
		res := run(t, NewRegistry(), `{"StartAt":"M","States":{"M":{"Type":"Map",`+tt.itemsPath+proc+`}}}`, tt.input)
		want := `An error occurred while executing the state 'M' (entered at the event id #2). Reference path "` + tt.shown + `" must point to array.`
		if res.Error != ErrRuntime || res.Cause != want {
			t.Errorf("JSONPath %s on %s: %s: %s\nwant %s: %s", tt.itemsPath, tt.input, res.Error, res.Cause, ErrRuntime, want)
		}
	}
	res := run(t, NewRegistry(), `{"QueryLanguage":"JSONata","StartAt":"S","States":{"S":{"Type":"Pass","Output":"{% $states.input.items %}","Next":"M"},"M":{"Type":"Map",`+proc+`}}}`, `{"items":1}`)
	want := `An error occurred while executing the state 'M' (entered at the event id #4). Map state input must be an array but was: 1`
	if res.Error != ErrQueryEvaluationError || res.Cause != want {
		t.Errorf("JSONata: %s: %s\nwant %s: %s", res.Error, res.Cause, ErrQueryEvaluationError, want)
	}
	lines := eventLines(res.History())
	if !hasLine(lines, "EvaluationFailed M  "+ErrQueryEvaluationError) || !hasLine(lines, "MapStateFailed M") {
		t.Errorf("history %v", lines)
	}
}

// TestMaxConcurrencyPathReadsAVariable: MaxConcurrencyPath may name a
// variable, inline and distributed.
func TestMaxConcurrencyPathReadsAVariable(t *testing.T) {
	for _, mode := range []string{`"ProcessorConfig":{"Mode":"INLINE"},`, `"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"EXPRESS"},`} {
		def := `{"StartAt":"Set","States":{"Set":{"Type":"Pass","Assign":{"limit":2},"Next":"M"},
		  "M":{"Type":"Map","ItemsPath":"$.items","MaxConcurrencyPath":"$limit","ItemProcessor":{` + mode + `"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`
		if res := run(t, NewRegistry(), def, `{"items":[1,2,3]}`); string(res.Output) != `[1,2,3]` {
			t.Errorf("%s: %s %s %s", mode, res.Output, res.Error, res.Cause)
		}
		bad := `{"StartAt":"Set","States":{"Set":{"Type":"Pass","Assign":{"limit":"x"},"Next":"M"},
		  "M":{"Type":"Map","ItemsPath":"$.items","MaxConcurrencyPath":"$limit","ItemProcessor":{` + mode + `"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`
		want := `An error occurred while executing the state 'M' (entered at the event id #4). The MaxConcurrencyPath field refers to value "x" which is not a valid integer: $limit`
		if res := run(t, NewRegistry(), bad, `{"items":[1]}`); res.Error != ErrRuntime || res.Cause != want {
			t.Errorf("%s: %s: %s", mode, res.Error, res.Cause)
		}
	}
}
