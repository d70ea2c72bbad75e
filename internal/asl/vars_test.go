package asl

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestVariableSizeLimits(t *testing.T) {
	// $.h is 100 KiB; Format doubles or triples it inside the Assign.
	two, three := "States.Format('{}{}', $.h, $.h)", "States.Format('{}{}{}', $.h, $.h, $.h)"
	tests := []struct {
		name   string
		states string
		status string
		cause  string
	}{
		{"one variable under the limit", `"A":{"Type":"Pass","Assign":{"x.$":"` + two + `"},"End":true}`, StatusSucceeded, ""},
		{"one variable over the limit", `"A":{"Type":"Pass","Assign":{"x.$":"` + three + `"},"End":true}`, StatusFailed, "for a single variable"},
		{"one Assign over the combined limit", `"A":{"Type":"Pass","Assign":{"x.$":"` + two + `","y.$":"$.h"},"End":true}`, StatusFailed, "in one Assign field"},
		{"two Assigns each within the limits", `"A":{"Type":"Pass","Assign":{"x.$":"` + two + `"},"Next":"B"},"B":{"Type":"Pass","Assign":{"y.$":"` + two + `"},"End":true}`, StatusSucceeded, ""},
	}
	input := fmt.Sprintf(`{"h":"%s"}`, strings.Repeat("x", 100*1024))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, NewRegistry(), `{"StartAt":"A","States":{`+tt.states+`}}`, input)
			if res.Status != tt.status {
				t.Fatalf("status %s (%s: %.200s), want %s", res.Status, res.Error, res.Cause, tt.status)
			}
			if tt.status == StatusFailed && (res.Error != ErrDataLimitExceeded || !strings.Contains(res.Cause, tt.cause) || !strings.Contains(res.Cause, "state 'A' (entered at the event id #2)")) {
				t.Errorf("error %s: %s, want %s mentioning %q", res.Error, res.Cause, ErrDataLimitExceeded, tt.cause)
			}
		})
	}
}

func TestVariableTotalLimit(t *testing.T) {
	vs := newVarScope(nil)
	chunk := strings.Repeat("y", 200*1024)
	n := 0
	var err error
	for i := 0; i < 100 && err == nil; i++ {
		err = vs.assign(map[string]any{fmt.Sprintf("v%d", i): chunk})
		if err == nil {
			n++
		}
	}
	if err == nil || !strings.Contains(err.Error(), "total size") {
		t.Fatalf("after %d variables: %v, want the 10 MiB total limit", n, err)
	}
	if want := MaxExecutionVarBytes / jsonSize(chunk); n != want {
		t.Errorf("%d variables fit, want %d", n, want)
	}
	// Re-assigning a variable replaces its bytes instead of adding to them.
	if err := vs.assign(map[string]any{"v0": "small"}); err != nil {
		t.Fatal(err)
	}
	if err := vs.assign(map[string]any{"again": chunk}); err != nil {
		t.Errorf("after shrinking v0, a new variable should fit: %v", err)
	}
	// An inner scope's bytes are given back when it ends.
	inner := newVarScope(vs)
	before := vs.total.bytes
	if err := inner.assign(map[string]any{"tmp": "abc"}); err != nil {
		t.Fatal(err)
	}
	inner.release()
	if vs.total.bytes != before {
		t.Errorf("total %d after release, want %d", vs.total.bytes, before)
	}
}

// Map iterations run concurrently, each assigning the same inner name in
// its own scope while reading an outer variable (go test -race).
func TestMapIterationsHaveTheirOwnScope(t *testing.T) {
	def := `{"StartAt":"Init","States":{
	 "Init":{"Type":"Pass","Assign":{"k":10},"Next":"M"},
	 "M":{"Type":"Map","ItemsPath":"$.items","MaxConcurrency":8,"ItemProcessor":{"StartAt":"A","States":{
	   "A":{"Type":"Pass","Assign":{"mine.$":"$"},"Next":"B"},
	   "B":{"Type":"Pass","Parameters":{"v.$":"States.MathAdd($mine, $k)"},"End":true}}},"Next":"After"},
	 "After":{"Type":"Pass","Parameters":{"out.$":"$","k.$":"$k"},"End":true}}}`
	items := make([]string, 50)
	for i := range items {
		items[i] = fmt.Sprint(i)
	}
	res := run(t, NewRegistry(), def, `{"items":[`+strings.Join(items, ",")+`]}`)
	if res.Status != StatusSucceeded {
		t.Fatalf("%s %s: %s", res.Status, res.Error, res.Cause)
	}
	var got struct {
		Out []struct{ V int }
		K   int
	}
	if err := json.Unmarshal(res.Output, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Out) != 50 || got.K != 10 {
		t.Fatalf("output %s", res.Output)
	}
	for i, o := range got.Out {
		if o.V != i+10 {
			t.Errorf("item %d = %d, want %d", i, o.V, i+10)
		}
	}
}

func TestJSONataErrorsNameStateAndEvent(t *testing.T) {
	def := `{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Pass","Next":"B"},"B":{"Type":"Pass","Output":{"x":"{% $states.input.nope %}"},"End":true}}}`
	res := run(t, NewRegistry(), def, `{}`)
	want := "An error occurred while executing the state 'B' (entered at the event id #4). The JSONata expression '$states.input.nope' specified for the field 'Output/x' returned nothing (undefined)."
	if res.Error != ErrQueryEvaluationError || res.Cause != want {
		t.Errorf("got %s: %q\nwant %s: %q", res.Error, res.Cause, ErrQueryEvaluationError, want)
	}
	def = `{"QueryLanguage":"JSONata","StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Condition":"{% $states.input.n %}","Next":"D"}],"Default":"D"},"D":{"Type":"Succeed"}}}`
	res = run(t, NewRegistry(), def, `{"n":1}`)
	if res.Error != ErrQueryEvaluationError || !strings.Contains(res.Cause, "Expected 'boolean', but was 'number'") {
		t.Errorf("non-boolean Condition: %s: %s", res.Error, res.Cause)
	}
}

func TestJSONataLambdaInvokeBindsFunctionName(t *testing.T) {
	reg := NewRegistry()
	reg.Register("DoubleFunction", func(_ context.Context, in json.RawMessage) (json.RawMessage, error) {
		var v struct{ N int }
		if err := json.Unmarshal(in, &v); err != nil {
			return nil, err
		}
		return json.RawMessage(fmt.Sprintf(`{"n":%d}`, 2*v.N)), nil
	})
	def := `{"QueryLanguage":"JSONata","StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke",
	  "Arguments":{"FunctionName":"${DoubleFunctionArn}","Payload":{"N":"{% $states.input.n %}"}},
	  "Output":"{% $states.result.Payload.n %}","TimeoutSeconds":"{% 5 %}","End":true}}}`
	res := run(t, reg, def, `{"n":21}`)
	if res.Status != StatusSucceeded || string(res.Output) != "42" {
		t.Fatalf("%s %s %s: output %s", res.Status, res.Error, res.Cause, res.Output)
	}
	unbound := strings.Replace(def, "DoubleFunction", "NopeFunction", 1)
	if err := New(reg).Check(mustParse(t, unbound)); err == nil || !strings.Contains(err.Error(), "NopeFunction") {
		t.Errorf("Check of an unbound JSONata lambda:invoke: %v", err)
	}
}

func TestJSONataParallelArgumentsAndRetry(t *testing.T) {
	def := `{"QueryLanguage":"JSONata","StartAt":"P","States":{"P":{"Type":"Parallel","Arguments":{"v":"{% $states.input.a %}"},
	  "Branches":[{"StartAt":"B1","States":{"B1":{"Type":"Pass","Output":"{% $states.input.v + 1 %}","End":true}}},
	              {"StartAt":"B2","States":{"B2":{"Type":"Pass","Output":"{% $states.input.v * 3 %}","End":true}}}],
	  "Output":{"sum":"{% $sum($states.result) %}"},"End":true}}}`
	res := run(t, NewRegistry(), def, `{"a":2}`)
	if res.Status != StatusSucceeded || string(res.Output) != `{"sum":9}` {
		t.Fatalf("%s %s %s: output %s", res.Status, res.Error, res.Cause, res.Output)
	}
}

func TestStateExitedListsAssignedVariables(t *testing.T) {
	def := `{"StartAt":"A","States":{"A":{"Type":"Pass","Assign":{"x":{"k":[1,"a"]},"n.$":"$.n"},"Next":"B"},"B":{"Type":"Pass","End":true}}}`
	res := run(t, NewRegistry(), def, `{"n":3}`)
	var exits []Event
	for _, e := range res.History() {
		if e.Type == "PassStateExited" {
			exits = append(exits, e)
		}
	}
	if len(exits) != 2 {
		t.Fatalf("%d PassStateExited events", len(exits))
	}
	if got := exits[0].AssignedVariables; len(got) != 2 || got["x"] != `{"k":[1,"a"]}` || got["n"] != "3" {
		t.Errorf("state A assigned %v", got)
	}
	if exits[1].AssignedVariables != nil {
		t.Errorf("state B assigned nothing, event says %v", exits[1].AssignedVariables)
	}
}

func TestJSONataBoundsAreQueryEvaluationErrors(t *testing.T) {
	tests := []struct{ expr, want string }{
		{`($f := function($n){ $f($n + 1) }; $f(0))`, "Stack overflow error"},
		{`$reduce([1..40], function($a, $b){ $a & $a }, 'x')`, "Expression evaluation memory limit exceeded"},
		{`function($x){ $x }`, "returned an unsupported result type"},
	}
	for _, tt := range tests {
		def := `{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Pass","Output":"{% ` + tt.expr + ` %}","End":true}}}`
		res := run(t, NewRegistry(), def, `{}`)
		if res.Error != ErrQueryEvaluationError || !strings.Contains(res.Cause, tt.want) {
			t.Errorf("%s: %s: %s, want %s mentioning %q", tt.expr, res.Error, res.Cause, ErrQueryEvaluationError, tt.want)
		}
	}
}

func TestMissingParameterPathCauseQuotesTheInput(t *testing.T) {
	def := `{"StartAt":"S","States":{"S":{"Type":"Pass","Parameters":{"x.$":"$.nope"},"End":true}}}`
	res := run(t, NewRegistry(), def, `{"Comment":"Insert your JSON here"}`)
	want := `An error occurred while executing the state 'S' (entered at the event id #2). The JSONPath '$.nope' specified for the field 'x.$' could not be found in the input '{"Comment":"Insert your JSON here"}'`
	if res.Error != ErrRuntime || res.Cause != want {
		t.Errorf("got %s: %q\nwant %q", res.Error, res.Cause, want)
	}
}

func TestJSONataInputOnlyThroughStates(t *testing.T) {
	def := `{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Pass","Output":{"ok":"{% $states.input.a %}","items":"{% $states.input.list[v > 1].v %}"},"End":true}}}`
	res := run(t, NewRegistry(), def, `{"a":1,"list":[{"v":1},{"v":2},{"v":3}]}`)
	if res.Status != StatusSucceeded || string(res.Output) != `{"items":[2,3],"ok":1}` {
		t.Errorf("%s %s %s: %s", res.Status, res.Error, res.Cause, res.Output)
	}
	_, err := Parse([]byte(`{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Pass","Output":{"bare":"{% $exists(a) %}"},"End":true}}}`))
	if err == nil || !strings.Contains(err.Error(), `state "A": Output.bare: Reference to 'a' at the top level is not supported`) {
		t.Errorf("a bare name at the top level: %v", err)
	}
}

// The cause Step Functions recorded for an undefined expression deep in a
// Task's Arguments: the field is written as a path with '/'.
func TestJSONataUndefinedCauseNamesTheFieldPath(t *testing.T) {
	reg := NewRegistry()
	reg.Register("EchoFunction", func(_ context.Context, in json.RawMessage) (json.RawMessage, error) { return in, nil })
	def := `{"QueryLanguage":"JSONata","StartAt":"Run S3 Data Push","States":{"Run S3 Data Push":{"Type":"Task","Resource":"${EchoFunctionArn}",
	  "Arguments":{"Input":{"pushLocation":"{% $states.input.pushLocation %}"}},"End":true}}}`
	res := run(t, reg, def, `{}`)
	want := "An error occurred while executing the state 'Run S3 Data Push' (entered at the event id #2). The JSONata expression '$states.input.pushLocation' specified for the field 'Arguments/Input/pushLocation' returned nothing (undefined)."
	if res.Error != ErrQueryEvaluationError || res.Cause != want {
		t.Errorf("got %s: %q\nwant %q", res.Error, res.Cause, want)
	}
	def = `{"QueryLanguage":"JSONata","StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Condition":"{% true %}","Output":{"a":["{% $nope %}"]},"Next":"D"}]},"D":{"Type":"Succeed"}}}`
	res = run(t, reg, def, `{}`)
	if !strings.Contains(res.Cause, "specified for the field 'Choices[0]/Output/a[0]' returned nothing") {
		t.Errorf("choice rule Output: %s", res.Cause)
	}
}

func TestStepFunctionsJSONataFunctions(t *testing.T) {
	tests := []struct {
		expr string
		want any // nil: the expression returns nothing
	}{
		{`$range(-1.7, 2, 1)`, []any{-1.0, 0.0, 1.0, 2.0}},
		{`$range(3, 3, 1)`, 3.0},
		{`$range(1, 5)`, nil},
		{`$range(5, 1, 1)`, nil},
		{`$partition([1,2,3,4,5], 2.9)`, []any{[]any{1.0, 2.0}, []any{3.0, 4.0}, []any{5.0}}},
		{`$partition([1,2], 0)`, nil},
		{`$partition([], 2)`, nil},
		{`$hash('input data')`, nil},
		{`$hash('input data', 'SHA-1')`, "aaff4a450a104cd177d28d18d74485e8cae074b7"},
		{`$parse('{"a":[1,null]}')`, map[string]any{"a": []any{1.0, nil}}},
	}
	for _, tt := range tests {
		def := `{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Pass","Output":{"v":"{% ` + strings.ReplaceAll(tt.expr, `"`, `\"`) + ` %}"},"End":true}}}`
		res := run(t, NewRegistry(), def, `{}`)
		if tt.want == nil {
			if res.Error != ErrQueryEvaluationError || !strings.Contains(res.Cause, "returned nothing (undefined)") {
				t.Errorf("%s: %s %s: %s %s, want undefined", tt.expr, res.Status, res.Output, res.Error, res.Cause)
			}
			continue
		}
		var got struct{ V any }
		if res.Status != StatusSucceeded || json.Unmarshal(res.Output, &got) != nil {
			t.Errorf("%s: %s %s: %s", tt.expr, res.Status, res.Error, res.Cause)
			continue
		}
		if fmt.Sprint(got.V) != fmt.Sprint(tt.want) {
			t.Errorf("%s = %v, want %v", tt.expr, got.V, tt.want)
		}
	}
}

func TestJSONataMemoryBoundIsStepFunctions(t *testing.T) {
	for _, tt := range []struct {
		expr string
		ok   bool
	}{{`$count([1..873782])`, true}, {`$count([1..873783])`, false}, {`$count($range(1, 360145, 1))`, true}, {`$count($range(1, 360146, 1))`, false}} {
		def := `{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Pass","Output":"{% ` + tt.expr + ` %}","End":true}}}`
		res := run(t, NewRegistry(), def, `{}`)
		if ok := res.Status == StatusSucceeded; ok != tt.ok {
			t.Errorf("%s: %s %s %s", tt.expr, res.Status, res.Error, res.Cause)
		}
		if !tt.ok && !strings.Contains(res.Cause, "Expression evaluation memory limit exceeded") {
			t.Errorf("%s: cause %s", tt.expr, res.Cause)
		}
	}
}

func TestJSONataChecksReadCodeNotStrings(t *testing.T) {
	for _, src := range []string{`{% 'costs $$' %}`, `{% "$states.nope" & $states.input.a %}`, `{% 'it\'s $$' %}`} {
		if _, err := compileJValue(src, "Output", jsonataAccess{}); err != nil {
			t.Errorf("%s: %v", src, err)
		}
	}
	if _, err := compileJValue(`{% 'a' & $states.nope %}`, "Output", jsonataAccess{}); err == nil {
		t.Error("$states.nope outside a string was accepted")
	}
}
