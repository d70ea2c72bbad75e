package asl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"testing"
)

// referenceJSON is what marshalJSON produced before appendJSON: encoding/json
// without HTML escaping.
func referenceJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func TestEncodeJSONMatchesEncodingJSON(t *testing.T) {
	values := []any{
		nil, true, false, "", "plain", `q"b\s`, "\n\r\t\b\f\x00\x1f\x7f", "<a&b>", "é ñ 日本 😀",
		"bad \xff utf8 \xc3", "line\u2028para\u2029", int64(0), int64(-9223372036854775808), int64(9223372036854775807), 42,
		0.0, math.Copysign(0, -1), 1.5, -2.25, 1e20, 1e21, 123456789e15, 1e-6, 9.99e-7, 1e-7, 5e-324, math.MaxFloat64, 0.1 + 0.2, 100.0,
		[]any{}, []any(nil), map[string]any{}, map[string]any(nil),
		map[string]any{"b": int64(1), "a": []any{"x", nil, map[string]any{"z": 1.5, "y": false}}, "": "empty", "B": "upper", "é": "accent"},
		[]any{map[string]any{"k2": map[string]any{"d": int64(4), "c": int64(3)}, "k1": "v"}, []any{[]any{}}},
	}
	for _, v := range values {
		want, err := referenceJSON(v)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := encodeJSON(v)
		if !ok {
			t.Errorf("encodeJSON(%#v) declined", v)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("encodeJSON(%#v) = %s, want %s", v, got, want)
		}
		if n := jsonSize(v); n != len(want) {
			t.Errorf("jsonSize(%#v) = %d, want %d", v, n, len(want))
		}
	}
}

func TestEncodeJSONDeclinesWhatEncodingJSONRefuses(t *testing.T) {
	for _, v := range []any{math.NaN(), math.Inf(1), []any{math.Inf(-1)}, map[string]any{"a": struct{}{}}, int32(3)} {
		if _, ok := encodeJSON(v); ok {
			t.Errorf("encodeJSON(%#v) accepted", v)
		}
	}
	if _, err := marshalJSON(map[string]any{"n": math.NaN()}); err == nil {
		t.Error("marshalJSON accepted NaN")
	}
	b, err := marshalJSON(map[string]any{"t": struct {
		A int `json:"a"`
	}{7}})
	if err != nil || string(b) != `{"t":{"a":7}}` {
		t.Errorf("fallback: %s, %v", b, err)
	}
}

// FuzzEncodeJSON checks appendJSON against encoding/json on every value the
// engine's parser produces.
func FuzzEncodeJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5,"x\u2028"],"b":null}`, `"\u0000<>&"`, `[1e300,-0.0000001,12345678901234567890]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := parseJSON(b)
		if err != nil {
			return
		}
		want, werr := referenceJSON(v)
		got, ok := encodeJSON(v)
		if werr != nil {
			if ok {
				t.Fatalf("encodeJSON accepted what encoding/json refuses (%v): %s", werr, got)
			}
			return
		}
		if ok && !bytes.Equal(got, want) {
			t.Fatalf("encodeJSON = %s, want %s", got, want)
		}
		if m, err := marshalJSON(v); err != nil || !bytes.Equal(m, want) { // json.Number falls back
			t.Fatalf("marshalJSON = %s (%v), want %s", m, err, want)
		}
		if n := jsonSize(v); n != len(want) {
			t.Fatalf("jsonSize = %d, want %d (%s)", n, len(want), want)
		}
	})
}

// A Task's Parameters object is written straight to text: it must be the
// text marshalJSON gives for the object eval builds, whatever the keys'
// order, and fail with eval's error when a path is missing.
func TestEncodeObjectMatchesEvalThenMarshal(t *testing.T) {
	wide := map[string]any{}
	for i := range maxEncodedFields + 3 {
		wide[fmt.Sprintf("k%02d.$", i)] = "$.n"
	}
	templates := []map[string]any{
		{"v.$": "$.v", "step": int64(7)},
		// stripping ".$" changes the keys' order: "a-b" < "a.$" but "a" < "a-b"
		{"a.$": "$.n", "a-b": "lit", "a_c.$": "$.s", "é": true, "A": nil, "": 1.5},
		{"nested": map[string]any{"x.$": "$.v.name", "y": []any{int64(1), "two"}}, "arr": []any{"$.n"}, "n.$": "$.n"},
		{"sum.$": "States.MathAdd($.n, 2)", "fmt.$": "States.Format('{} y {}', $.s, $.n)", "ctx.$": "$$.State.Name"},
		{"big.$": "$.big", "f.$": "$.f"},
		wide,
	}
	input := map[string]any{"v": map[string]any{"name": "c-001", "score": int64(7)}, "n": int64(300), "s": `q"uote`,
		"big": json.Number("123456789012345678901234567890"), "f": 2.5}
	for i, raw := range templates {
		tmpl, err := compileTemplate(raw, "Parameters")
		if err != nil {
			t.Fatalf("template %d: %v", i, err)
		}
		if tmpl.kind != tmplObject {
			t.Fatalf("template %d compiled to kind %d", i, tmpl.kind)
		}
		r := &stateRun{st: &State{Name: "S"}, x: &Execution{engine: &Engine{}}}
		v, err := tmpl.eval(r.scope(input))
		if err != nil {
			t.Fatalf("template %d: eval: %v", i, err)
		}
		want, err := marshalJSON(v)
		if err != nil {
			t.Fatalf("template %d: %v", i, err)
		}
		for copies := 1; copies <= 2; copies++ {
			text, obj, err := tmpl.encodeObject(r.scope(input), copies)
			if err != nil {
				t.Fatalf("template %d: encodeObject: %v", i, err)
			}
			if text == nil { // declined: the object for the general path
				got, err := marshalJSON(obj)
				if err != nil || !bytes.Equal(got, want) {
					t.Errorf("template %d declined with %s (%v), want %s", i, got, err, want)
				}
				continue
			}
			if !bytes.Equal(text, bytes.Repeat(want, copies)) {
				t.Errorf("template %d ×%d:\n got  %s\n want %s", i, copies, text, want)
			}
		}
	}
	// Two missing paths: the error names the field eval reports first.
	tmpl, err := compileTemplate(map[string]any{"z.$": "$.missing1", "a-b.$": "$.missing2"}, "Parameters")
	if err != nil {
		t.Fatal(err)
	}
	r := &stateRun{st: &State{Name: "S"}, x: &Execution{engine: &Engine{}}}
	_, wantErr := tmpl.eval(r.scope(input))
	_, _, gotErr := tmpl.encodeObject(r.scope(input), 1)
	if wantErr == nil || gotErr == nil || gotErr.Error() != wantErr.Error() {
		t.Errorf("error %v, want %v", gotErr, wantErr)
	}
}
