package asl

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestParseFastMatchesOjg(t *testing.T) {
	accepted := []string{
		`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `7`, `-42`, `123456789012345678`, `-123456789012345678`,
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
			t.Fatalf("ojg: %s: %v", s, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("parseFast(%s) = %#v, want %#v", s, got, want)
		}
		checkFastSize(t, []byte(s), got)
		checkObjectsMode(t, []byte(s), want)
	}
	declined := []string{
		``, ` `, `1.5`, `1e2`, `-0.0`, `1234567890123456789`, `-`, `01`, `"\ud83d\ude00"`, `"\ud800"`, "\"bad \xff\"",
		"\"ctl \x01\"", `"\x"`, `"\u12"`, `{"a":1,}`, `[1,]`, `{"a" 1}`, `{a:1}`, `[1 2]`, `tru`, `nul`, `{"a":1}x`, `"open`,
		strings.Repeat("[", maxFastDepth+2) + strings.Repeat("]", maxFastDepth+2),
	}
	for _, s := range declined {
		if v, ok := parseFast([]byte(s)); ok {
			t.Errorf("parseFast(%q) = %#v, want it declined", s, v)
		}
	}
}

// FuzzParseFast checks that what parseFast accepts, ojg reads as the same
// value, and that parseFast accepts no text the general path refuses.
// TestParseJSONZeroWithExponent: ojg v1.28.5 refuses a zero with an
// exponent and no fraction; parseJSON reads it as zero, and leaves strings
// that look like one alone.
func TestParseJSONZeroWithExponent(t *testing.T) {
	for text, want := range map[string]any{
		`0e0`:                        int64(0),
		`-0E-12`:                     int64(0),
		`[0e+5,10e0]`:                []any{int64(0), int64(10)},
		`{"0e1":"0e1","n":0.0e1}`:    map[string]any{"0e1": "0e1", "n": float64(0)},
		`{"s":"\"0e1","n":[-0e1,1]}`: map[string]any{"s": `"0e1`, "n": []any{int64(0), int64(1)}},
	} {
		got, err := parseJSON([]byte(text))
		if err != nil {
			t.Errorf("parseJSON(%s): %v", text, err)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("parseJSON(%s) = %#v, want %#v", text, got, want)
		}
	}
	if _, ok := dropZeroExponents([]byte(`{"a":"0e1","b":1e5,"c":0.5e1}`)); ok {
		t.Error("dropZeroExponents rewrote a document without a zero with an exponent")
	}
}

func FuzzParseFast(f *testing.F) {
	for _, s := range []string{`{"a":[1,-2,"x\n"],"b":null,"c":{"d":true}}`, `"\u00e9\u0000"`, `[123456789012345678,-0]`, `{"a":1,"a":{}}`} {
		f.Add([]byte(s))
	}
	f.Add([]byte(`[0e0,-0E+5,"0e1",{"k":0.0e1}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := parseJSON(b); json.Valid(b) && err != nil {
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
