package asl

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestParseFastMatchesTheGeneralPath(t *testing.T) {
	accepted := []string{
		`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `7`, `-42`, `123456789012345678`, `-123456789012345678`, `1.5`, `1e2`, `-0.0`, `1234567890123456789`, `[2.5e-7,1E21,0.1]`,
		`""`, `"plain"`, `"esc \" \\ \/ \b \f \n \r \t \u0041 \u00e9 \u65e5 \u0000"`, `"é 日本 😀"`, `"a\u2028b\u2029"`, "\"raw \u2028 \u2029\"", `"\u2028 escaped"`, `"\u007f\u001f"`,
		` { "a" : [ 1 , "x" , { } , [ ] , null ] , "b" : { "c" : false } } `,
		`{"a":1,"a":2}`, `[{"a":1,"a":{"b":2,"b":3}}]`, `{"o":{"a":1,"b":2,"c":3,"d":4},"p":{"a":1,"b":2,"c":3,"d":4,"e":5},"q":{"a":1,"b":2,"c":3,"d":4,"a":0}}`, `[[[[[]]]]]`, "{\"v\":{\"name\":\"c-001\",\"score\":7},\"step\":499}\n",
	}
	for _, s := range accepted {
		got, ok := parseFast([]byte(s))
		if !ok {
			t.Errorf("parseFast(%s) declined", s)
			continue
		}
		want, err := parseJSONGeneral([]byte(s))
		if err != nil {
			t.Fatalf("general path: %s: %v", s, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("parseFast(%s) = %#v, want %#v", s, got, want)
		}
		checkFastSize(t, []byte(s), got)
		checkObjectsMode(t, []byte(s), want)
	}
	declined := []string{
		``, ` `, `1.`, `1e`, `1e+`, `.5`, `-.5`, `1e400`, `-`, `01`, `-01`, `0x1`, `+1`, `"\ud83d\ude00"`, `"\ud800"`, "\"bad \xff\"",
		"\"ctl \x01\"", `"\x"`, `"\u12"`, `{"a":1,}`, `[1,]`, `{"a" 1}`, `{a:1}`, `[1 2]`, `tru`, `nul`, `{"a":1}x`, `"open`,
		strings.Repeat("[", maxFastDepth+2) + strings.Repeat("]", maxFastDepth+2),
	}
	for _, s := range declined {
		if v, ok := parseFast([]byte(s)); ok {
			t.Errorf("parseFast(%q) = %#v, want it declined", s, v)
		}
	}
}

// TestParseJSONNumbers: every valid JSON number is read the same way on
// both paths and on every platform: integers that fit int64 as int64,
// others as the nearest float64 (strconv), and one beyond float64's range
// is refused by name. ojg, used before, refused 0e0, read
// 12345678901234567890e-5 as ...e5, and on arm64 read 0.3 inexactly.
func TestParseJSONNumbers(t *testing.T) {
	for text, want := range map[string]any{
		`0e0`:                                                  float64(0),
		`[0e+5,10e0,-0E-12]`:                                   []any{float64(0), float64(10), math.Copysign(0, -1)},
		`{"0e1":"0e1","n":0.0e1}`:                              map[string]any{"0e1": "0e1", "n": float64(0)},
		`{"s":"\"0e1","n":[-0e1,1]}`:                           map[string]any{"s": `"0e1`, "n": []any{math.Copysign(0, -1), int64(1)}},
		`[0.3,1.5,-0.25,3.141592653589793]`:                    []any{0.3, 1.5, -0.25, 3.141592653589793},
		`12345678901234567890e-5`:                              123456789012345.67890,
		`0.1234567890123456789012345`:                          0.1234567890123456789012345,
		`[9223372036854775807,-9223372036854775808]`:           []any{int64(math.MaxInt64), int64(math.MinInt64)},
		`[9223372036854775808,123456789012345678901234567890]`: []any{9223372036854775808.0, 123456789012345678901234567890.0},
		`1e-400`: float64(0),
	} {
		for name, parse := range map[string]func([]byte) (any, error){"parseJSON": parseJSON, "parseJSONGeneral": parseJSONGeneral} {
			got, err := parse([]byte(text))
			if err != nil {
				t.Errorf("%s(%s): %v", name, text, err)
				continue
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s(%s) = %#v, want %#v", name, text, got, want)
			}
		}
		if _, ok := parseFast([]byte(text)); !ok && !strings.Contains(text, `\"`) {
			t.Errorf("parseFast declined %s", text)
		}
	}
	for _, text := range []string{`1e400`, `{"a":[-1e999]}`} {
		if _, err := parseJSON([]byte(text)); err == nil || !strings.Contains(err.Error(), "is beyond the range of a double") {
			t.Errorf("parseJSON(%s): %v, want the number refused by name", text, err)
		}
	}
}

// FuzzParseFast checks that what parseFast accepts, the general path reads
// as the same value, and that parseJSON refuses no valid JSON but a number
// beyond float64's range.
func FuzzParseFast(f *testing.F) {
	for _, s := range []string{`{"a":[1,-2,"x\n"],"b":null,"c":{"d":true}}`, `"\u00e9\u0000"`, `[123456789012345678,-0]`, `{"a":1,"a":{}}`} {
		f.Add([]byte(s))
	}
	f.Add([]byte(`[0e0,-0E+5,"0e1",{"k":0.0e1}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := parseJSON(b); json.Valid(b) && err != nil && !strings.Contains(err.Error(), "is beyond the range of a double") {
			t.Fatalf("parseJSON refuses valid JSON %q: %v", b, err)
		}
		got, ok := parseFast(b)
		if !ok {
			return
		}
		want, err := parseJSONGeneral(b)
		if err != nil {
			t.Fatalf("parseFast accepted %q, which the general path refuses: %v", b, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("parseFast(%q) = %#v, want %#v", b, got, want)
		}
		checkFastSize(t, b, got)
		checkObjectsMode(t, b, want)
	})
}

// checkObjectsMode checks parseFastMode's objects mode against the plain
// value want: the same value once resolved, the same size, each nested
// object of 1 to maxOverlay distinct members an overlay (and made set
// exactly when there is one), the outermost object a map.
func checkObjectsMode(t *testing.T, b []byte, want any) {
	t.Helper()
	got, n, made, ok := parseFastMode(string(b), true)
	if !ok {
		t.Fatalf("objects mode declined %q", b)
	}
	if !reflect.DeepEqual(deepResolve(got), want) {
		t.Fatalf("objects mode: %q = %#v, want %#v", b, deepResolve(got), want)
	}
	_, plainN, _ := parseFastSized(b)
	if n != plainN {
		t.Errorf("objects mode: %q size %d, plain %d", b, n, plainN)
	}
	if _, isOverlay := got.(*overlay); isOverlay {
		t.Errorf("objects mode: %q: the outermost object is an overlay", b)
	}
	overlays := 0
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		switch x := v.(type) {
		case *overlay:
			overlays++
			if x.base != nil || len(x.set) == 0 || len(x.set) > maxOverlay {
				t.Errorf("objects mode: %q: overlay with base %v and %d members", b, x.base, len(x.set))
			}
			for _, m := range x.set {
				walk(m.val, depth+1)
			}
		case map[string]any:
			if depth > 0 && len(x) >= 1 && len(x) <= maxOverlay {
				t.Errorf("objects mode: %q: nested object of %d members is a map", b, len(x))
			}
			for _, e := range x {
				walk(e, depth+1)
			}
		case []any:
			for _, e := range x {
				walk(e, depth+1)
			}
		}
	}
	walk(got, 0)
	if made != (overlays > 0) {
		t.Errorf("objects mode: %q: made %v with %d overlays", b, made, overlays)
	}
}

// checkFastSize checks the size parseFastSized reports against jsonSize.
func checkFastSize(t *testing.T, b []byte, v any) {
	t.Helper()
	_, n, ok := parseFastSized(b)
	if !ok {
		t.Fatalf("parseFastSized(%q) declined what parseFast accepted", b)
	}
	if n == sizeUnknown {
		if !strings.Contains(string(b), ",") {
			t.Errorf("parseFastSized(%q): size unknown without a repeated key", b)
		}
		return
	}
	if want := jsonSize(v); n != want {
		t.Errorf("parseFastSized(%q) size %d, jsonSize %d", b, n, want)
	}
}
