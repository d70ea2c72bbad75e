package asl

import (
	"strings"
	"testing"
)

func TestWildcardMatch(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", true},
		{"*", "anything", true},
		{"log-*.txt", "log-2024.txt", true},
		{"log-*.txt", "log-.txt", true},
		{"log-*.txt", "log-2024.txt.bak", false},
		{"a*b*c", "aXXbYYc", true},
		{"a*b*c", "aXXcYYb", false},
		{`a\*b`, "a*b", true},
		{`a\*b`, "aXb", false},
		{`a\\b`, `a\b`, true},
		{`*\*`, "price*", true},
		{`*\*`, "price", false},
		{"ñ*", "ñandú", true},
		{"", "", true},
		{"", "x", false},
	}
	for _, tt := range tests {
		if got := wildcardMatch(tt.pattern, tt.s); got != tt.want {
			t.Errorf("wildcardMatch(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}

func TestChoiceRuleCompare(t *testing.T) {
	input := map[string]any{
		"i": int64(3), "f": 3.0, "big": 1e300, "s": "b", "b": true, "n": nil,
		"ts": "2024-05-01T10:00:00Z", "tsOff": "2024-05-01T12:00:00+02:00", "bad": "2024-05-01 10:00",
		"arr": []any{int64(1)},
	}
	tests := []struct {
		rule string
		want bool
	}{
		{`{"Variable":"$.i","NumericEquals":3}`, true},
		{`{"Variable":"$.f","NumericEquals":3}`, true},
		{`{"Variable":"$.i","NumericEqualsPath":"$.f"}`, true},
		{`{"Variable":"$.i","NumericGreaterThan":2.999}`, true},
		{`{"Variable":"$.i","NumericLessThanEquals":3}`, true},
		{`{"Variable":"$.i","NumericLessThan":3}`, false},
		{`{"Variable":"$.big","NumericGreaterThanEquals":1}`, true},
		{`{"Variable":"$.s","NumericEquals":1}`, false},
		{`{"Variable":"$.s","StringGreaterThan":"a"}`, true},
		{`{"Variable":"$.s","StringLessThanEquals":"b"}`, true},
		{`{"Variable":"$.i","StringEquals":"3"}`, false},
		{`{"Variable":"$.b","BooleanEquals":true}`, true},
		{`{"Variable":"$.s","BooleanEquals":true}`, false},
		{`{"Variable":"$.ts","TimestampEqualsPath":"$.tsOff"}`, true},
		{`{"Variable":"$.ts","TimestampGreaterThan":"2024-05-01T09:59:59.999Z"}`, true},
		{`{"Variable":"$.bad","TimestampEquals":"2024-05-01T10:00:00Z"}`, false},
		{`{"Variable":"$.ts","TimestampLessThanPath":"$.bad"}`, false},
		{`{"Variable":"$.n","IsNull":true}`, true},
		{`{"Variable":"$.s","IsNull":false}`, true},
		{`{"Variable":"$.f","IsNumeric":true}`, true},
		{`{"Variable":"$.s","IsNumeric":false}`, true},
		{`{"Variable":"$.s","IsString":true}`, true},
		{`{"Variable":"$.b","IsBoolean":true}`, true},
		{`{"Variable":"$.ts","IsTimestamp":true}`, true},
		{`{"Variable":"$.bad","IsTimestamp":true}`, false},
		{`{"Variable":"$.nope","IsPresent":false}`, true},
		{`{"Variable":"$.n","IsPresent":true}`, true},
		{`{"Variable":"$.arr[5]","IsPresent":true}`, false},
		{`{"And":[{"Variable":"$.i","NumericEquals":3},{"Variable":"$.s","StringEquals":"b"}]}`, true},
		{`{"And":[{"Variable":"$.i","NumericEquals":3},{"Variable":"$.s","StringEquals":"c"}]}`, false},
		{`{"Or":[{"Variable":"$.i","NumericEquals":4},{"Variable":"$.s","StringEquals":"b"}]}`, true},
		{`{"Not":{"Variable":"$.i","NumericEquals":4}}`, true},
	}
	sc := &scope{input: input, context: func() any { return map[string]any{} }}
	for _, tt := range tests {
		m, err := parseJSON([]byte(tt.rule))
		if err != nil {
			t.Fatal(err)
		}
		r, err := parseChoiceRule(m.(map[string]any), false, "rule")
		if err != nil {
			t.Errorf("%s: %v", tt.rule, err)
			continue
		}
		got, err := r.match(sc)
		if err != nil {
			t.Errorf("%s: %v", tt.rule, err)
			continue
		}
		if got != tt.want {
			t.Errorf("%s = %v, want %v", tt.rule, got, tt.want)
		}
	}
}

func TestChoiceMissingVariableIsRuntimeError(t *testing.T) {
	for _, rule := range []string{
		`{"Variable":"$.nope","StringEquals":"x"}`,
		`{"Variable":"$.nope","IsNull":true}`,
		`{"Variable":"$.s","StringEqualsPath":"$.nope"}`,
		`{"Not":{"Variable":"$.nope","NumericEquals":1}}`,
	} {
		m, _ := parseJSON([]byte(rule))
		r, err := parseChoiceRule(m.(map[string]any), false, "rule")
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.match(&scope{input: map[string]any{"s": "x"}})
		var se *StatesError
		if !asStatesError(err, &se) || se.Name != ErrRuntime {
			t.Errorf("%s: error %v, want %s", rule, err, ErrRuntime)
		}
	}
}

func TestParseChoiceRuleErrors(t *testing.T) {
	tests := []struct {
		rule string
		top  bool
		want string
	}{
		{`{"Variable":"$.a","StringEquals":"x"}`, true, "Next is required"},
		{`{"Variable":"$.a","StringEquals":"x","Next":"B"}`, false, "must not have Next"},
		{`{"Variable":"$.a","Next":"B"}`, true, "needs a comparison operator"},
		{`{"Variable":"$.a","StringEquals":"x","NumericEquals":1,"Next":"B"}`, true, "more than one operator"},
		{`{"Variable":"$.a","NumericEquals":"1","Next":"B"}`, true, "operand must be a number"},
		{`{"Variable":"$.a","TimestampEquals":"yesterday","Next":"B"}`, true, "not an RFC3339 timestamp"},
		{`{"Variable":"$.a","IsNull":"yes","Next":"B"}`, true, "operand must be a boolean"},
		{`{"Variable":"$.a","IsNullPath":"$.b","Next":"B"}`, true, `unknown field "IsNullPath"`},
		{`{"Variable":"a","StringEquals":"x","Next":"B"}`, true, "must start with $"},
		{`{"Variable":"$.a","StringEqualsPath":"b","Next":"B"}`, true, "must start with $"},
		{`{"And":[],"Next":"B"}`, true, "non-empty array"},
		{`{"Not":{"Variable":"$.a","StringEquals":"x","Next":"C"},"Next":"B"}`, true, "must not have Next"},
		{`{"Condition":"{% true %}","Next":"B"}`, true, "JSONata"},
	}
	for _, tt := range tests {
		m, _ := parseJSON([]byte(tt.rule))
		_, err := parseChoiceRule(m.(map[string]any), tt.top, "rule")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want it to mention %q", tt.rule, err, tt.want)
		}
	}
}
