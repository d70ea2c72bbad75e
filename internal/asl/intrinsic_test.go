package asl

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

func evalIntrinsic(t *testing.T, expr string, input map[string]any) (any, error) {
	t.Helper()
	f, err := parseIntrinsic(expr)
	if err != nil {
		t.Fatalf("parse %s: %v", expr, err)
	}
	sc := &scope{input: input, context: func() any { return map[string]any{"State": map[string]any{"Name": "S"}} }}
	return f.eval(func(raw string, _ *path) (any, error) {
		v, ok, err := sc.resolvePath(raw)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, newError(ErrRuntime, "missing %s", raw)
		}
		return v, nil
	})
}

func TestIntrinsicParseErrors(t *testing.T) {
	tests := []struct{ expr, want string }{
		{"States.Nope()", `unknown intrinsic function "States.Nope"`},
		{"States.Format", "expected '('"},
		{"States.Format('a'", "expected ',' or ')'"},
		{"States.Format('a) ", "unterminated string literal"},
		{`States.Format('a\x')`, `invalid escape \x`},
		{"States.ArrayLength()", "takes 1 argument(s), got 0"},
		{"States.UUID(1)", "takes 0 argument(s), got 1"},
		{"States.MathRandom(1)", "takes 2 to 3 arguments"},
		{"States.Array(1) extra", "unexpected"},
		{"States.Array(@)", "unexpected \"@\""},
		{"States.Array($.a[)", "path"},
		{strings.Repeat("States.Array(", 11) + strings.Repeat(")", 11), "more than 10 nested"},
	}
	for _, tt := range tests {
		_, err := parseIntrinsic(tt.expr)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want it to mention %q", tt.expr, err, tt.want)
		}
	}
}

func TestIntrinsicFailures(t *testing.T) {
	in := map[string]any{"s": "x", "a": []any{int64(1)}, "o": map[string]any{}, "big": int64(1) << 40}
	for _, expr := range []string{
		"States.StringToJson('{nope')",
		"States.ArrayPartition($.a, 0)",
		"States.ArrayRange(1, 2000, 1)",
		"States.ArrayRange(1, 5, 0)",
		"States.ArrayGetItem($.a, -1)",
		"States.ArrayLength($.s)",
		"States.Base64Decode('***')",
		"States.JsonMerge($.o, $.o, true)",
		"States.JsonMerge($.o, $.a, false)",
		"States.MathAdd($.big, 1)",
		"States.MathAdd('1', 1)",
		"States.MathRandom(5, 5)",
		"States.Hash($.a, 'MD5')",
	} {
		_, err := evalIntrinsic(t, expr, in)
		var se *StatesError
		if !asStatesError(err, &se) || se.Name != ErrIntrinsicFailure {
			t.Errorf("%s: error %v, want %s", expr, err, ErrIntrinsicFailure)
		}
	}
}

func TestIntrinsicValues(t *testing.T) {
	in := map[string]any{"start": int64(1), "end": int64(999), "d": "input data"}
	hashes := map[string]string{
		"MD5":     "812f45842bc6d66ee14572ce20db8e86",
		"SHA-256": "b4a697a057313163aee33cd8d40c66e9f0f177e00cac2de32475ffff6169c3e3",
		"SHA-512": "6ce4adb348546d4f449c4d25aad9a7c9cb711d9e91982d3f0b29ca2f3f47d4ce2deba23bf2954f0f1d593fc50283731a533d30d425402d4f91316d871303aac4",
	}
	for alg, want := range hashes {
		got, err := evalIntrinsic(t, "States.Hash($.d, '"+alg+"')", in)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s = %v, want %v", alg, got, want)
		}
	}
	for range 50 {
		v, err := evalIntrinsic(t, "States.MathRandom($.start, $.end)", in)
		if err != nil {
			t.Fatal(err)
		}
		n := v.(int64)
		if n < 1 || n >= 999 {
			t.Fatalf("MathRandom(1, 999) = %d, out of [1, 999)", n)
		}
	}
	a, _ := evalIntrinsic(t, "States.MathRandom(1, 1000000, 7)", in)
	b, _ := evalIntrinsic(t, "States.MathRandom(1, 1000000, 7)", in)
	if a != b {
		t.Errorf("seeded MathRandom differs: %v, %v", a, b)
	}
	u, _ := evalIntrinsic(t, "States.UUID()", in)
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(u.(string)) {
		t.Errorf("UUID %v is not a version 4 UUID", u)
	}
	s, err := evalIntrinsic(t, `States.Format('a\\b {} \{x\}', $$.State.Name)`, in)
	if err != nil || s != `a\b S {x}` {
		t.Errorf("Format with escapes = %q, %v", s, err)
	}
}

// The behaviours the issue lists as recorded on AWS: MathAdd rounds each
// argument half up, StringToJson of a blank string is null, Format prints
// an object as a Java map.
func TestIntrinsicAWSBehaviours(t *testing.T) {
	in := map[string]any{"o": map[string]any{"Arg1": int64(1), "Arg2": []any{}}, "l": []any{"a", int64(2), nil}}
	tests := []struct {
		expr string
		want any
	}{
		{"States.MathAdd(1.49, 1.5)", int64(3)},
		{"States.MathAdd(-1.5, 0)", int64(-1)},
		{"States.MathAdd(-1.51, 0)", int64(-2)},
		{"States.MathAdd(2, 3)", int64(5)},
		{"States.StringToJson('')", nil},
		{"States.StringToJson('  ')", nil},
		{"States.Format('{}', $.o)", "{Arg1=1, Arg2=[]}"},
		{"States.Format('v={}', $.l)", "v=[a, 2, null]"},
	}
	for _, tt := range tests {
		got, err := evalIntrinsic(t, tt.expr, in)
		if err != nil {
			t.Errorf("%s: %v", tt.expr, err)
			continue
		}
		if got != tt.want {
			t.Errorf("%s = %#v, want %#v", tt.expr, got, tt.want)
		}
	}
}

// TestFormatLargeAndOddNumbers: States.Format prints numbers from any
// input as JSON. A 30-digit integer in the input once reached it as a
// json.Number, which formatValue and javaString handed to each other until
// the stack overflowed and the process died.
func TestFormatLargeAndOddNumbers(t *testing.T) {
	sm, err := Parse(json.RawMessage(`{"StartAt":"P","States":{"P":{"Type":"Pass",
		"Parameters":{"s.$":"States.Format('{} {} {}', $.n, $.o, $.f)"},"End":true}}}`))
	if err != nil {
		t.Fatal(err)
	}
	in := `{"n":123456789012345678901234567890,"o":{"big":98765432109876543210,"x":[0.1234567890123456789012]},"f":12345678901234567890e-5}`
	res, err := New(NewRegistry()).Run(t.Context(), sm, json.RawMessage(in), StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"s":"1.2345678901234568e+29 {big=98765432109876540000, x=[0.12345678901234568]} 123456789012345.67"}`; res.Status != "SUCCEEDED" || string(res.Output) != want {
		t.Errorf("got %s %s %s %s, want %s", res.Status, res.Error, res.Cause, res.Output, want)
	}
}
