package asl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// JSON values inside the engine are plain Go values: map[string]any, []any,
// string, int64, float64, bool and nil, and inside a state's data two lazy
// ones (raw.go): a Task result kept as its text, and an overlay (an object
// ResultPath set a member of, or a small object held as its members). They
// are parsed once (integers that fit as int64, other numbers as the
// nearest float64: numberValue) and passed between states without
// re-marshalling. Values are never mutated in place: a state that changes
// a value copies the containers along the changed path, or overlays the
// object it sets a member of.

// parseJSON parses JSON text into an engine value. parseFast reads nearly
// every document; parseJSONGeneral gives every other one (deep nesting,
// surrogate escapes, invalid UTF-8) the same values through encoding/json,
// or the error. The text comes from definitions, execution input and
// handler output alike.
func parseJSON(b []byte) (any, error) {
	if v, ok := parseFast(b); ok {
		return v, nil
	}
	return parseJSONGeneral(b)
}

// CheckJSON reports whether the engine reads b (an execution input, a
// task's output) as a JSON value: valid JSON whose numbers are in
// float64's range. Its error says what is wrong.
func CheckJSON(b []byte) error {
	_, err := parseJSON(b)
	return err
}

// parseJSONGeneral is parseJSON without parseFast: encoding/json with its
// numbers read by numberValue. (ojg, used here before, rejects 0e0, writes
// 1e-5 with a long mantissa as 1e5, and on arm64 computes fractions
// inexactly: 0.3 became 0.30000000000000004.)
func parseJSONGeneral(b []byte) (any, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, fmt.Errorf("empty JSON document")
	}
	if !json.Valid(b) {
		var probe any
		if err := json.Unmarshal(b, &probe); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("invalid JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return engineNumbers(v)
}

// engineNumbers replaces, in a value encoding/json just decoded (so its
// containers are its own), every json.Number by its numberValue.
func engineNumbers(v any) (any, error) {
	switch x := v.(type) {
	case json.Number:
		return numberValue(string(x))
	case map[string]any:
		for k, e := range x {
			n, err := engineNumbers(e)
			if err != nil {
				return nil, err
			}
			x[k] = n
		}
	case []any:
		for i, e := range x {
			n, err := engineNumbers(e)
			if err != nil {
				return nil, err
			}
			x[i] = n
		}
	}
	return v, nil
}

// numberValue is the engine's value of a JSON number's text: an integer
// that fits int64 as int64, any other number as the nearest float64 (an
// integer beyond int64 keeps its first 17 significant digits). A number
// beyond float64's range is an error, not an infinity no encoder writes.
func numberValue(text string) (any, error) {
	if !strings.ContainsAny(text, ".eE") {
		if n, err := strconv.ParseInt(text, 10, 64); err == nil {
			return boxInt(n), nil
		}
	}
	f, err := strconv.ParseFloat(text, 64)
	if math.IsInf(f, 0) {
		if len(text) > 40 {
			text = text[:40] + "…"
		}
		return nil, fmt.Errorf("number %s is beyond the range of a double (±1.8e308)", text)
	}
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return nil, fmt.Errorf("invalid number %s", text)
	}
	return f, nil
}

// marshalJSON renders an engine value as compact JSON without HTML escaping,
// the way Step Functions shows payloads.
func marshalJSON(v any) ([]byte, error) {
	if b, ok := encodeJSON(v); ok {
		return b, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// jsonSize returns the length in bytes of v's compact JSON encoding, as
// marshalJSON would produce it, without allocating the encoding. It is used to
// enforce the 256 KiB payload limit on every state transition.
func jsonSize(v any) int {
	switch x := v.(type) {
	case nil:
		return 4
	case bool:
		if x {
			return 4
		}
		return 5
	case string:
		return jsonStringSize(x)
	case int64:
		var buf [24]byte
		return len(strconv.AppendInt(buf[:0], x, 10))
	case int:
		var buf [24]byte
		return len(strconv.AppendInt(buf[:0], int64(x), 10))
	case float64:
		return floatSize(x)
	case *rawJSON:
		return len(x.text) // canonical: its own encoding
	case *overlay:
		return x.size()
	case map[string]any:
		if x == nil {
			return 4 // null
		}
		n := 2 // braces
		first := true
		for k, e := range x {
			if !first {
				n++ // comma
			}
			first = false
			n += jsonStringSize(k) + 1 + jsonSize(e)
		}
		return n
	case []any:
		if x == nil {
			return 4 // null
		}
		n := 2
		for i, e := range x {
			if i > 0 {
				n++
			}
			n += jsonSize(e)
		}
		return n
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return 0
		}
		return len(b)
	}
}

func floatSize(f float64) int {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return 4
	}
	b, _ := json.Marshal(f)
	return len(b)
}

// jsonStringSize is the encoded size of s as a JSON string literal, matching
// encoding/json with HTML escaping off.
func jsonStringSize(s string) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
				n += 2
			case c < 0x20:
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += 6 // \ufffd
		case r == '\u2028' || r == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}

// typeName names a value's JSON type for error messages.
func typeName(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case int64, int, float64:
		return "number"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case *rawJSON:
		return typeName(x.value())
	case *overlay:
		return "object"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// smallInts holds the integers 0…1023 already boxed: parsing or computing a
// small integer (an index, a counter, a score) allocates nothing, where Go
// boxes only 0…255 without allocating. Values are never mutated, so one box
// serves every use.
var smallInts = func() *[1024]any {
	var a [1024]any
	for i := range a {
		a[i] = int64(i)
	}
	return &a
}()

// boxInt returns n as an any, from smallInts when it is there.
func boxInt(n int64) any {
	if n >= 0 && n < int64(len(smallInts)) {
		return smallInts[n]
	}
	return n
}

// ParseValue parses JSON text into the engine's values (integers as
// int64), as an execution's input is read: for values handed to
// StartOptions (Variables, Context, a TestState mock).
func ParseValue(b []byte) (any, error) { return parseJSON(b) }
