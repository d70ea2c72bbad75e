package asl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/ohler55/ojg/oj"
)

// JSON values inside the engine are plain Go values: map[string]any, []any,
// string, int64, float64, bool and nil, and inside a state's data two lazy
// ones (raw.go): a Task result kept as its text, and an overlay (an object
// ResultPath set a member of, or a small object held as its members). They
// are parsed once (with ojg, which keeps integers as int64) and passed
// between states without re-marshalling. Values are never
// mutated in place: a state that changes a value copies the containers
// along the changed path, or overlays the object it sets a member of.

// parseJSON parses JSON text into an engine value. parseFast reads the
// common documents; parseJSONGeneral gives every other one ojg's value or
// the error. The text is checked with
// encoding/json first: ojg v1.28.5 panics on some malformed documents
// (`{"a":{"b":},"":1}`, found by FuzzParse), and the text comes from
// definitions, execution input and handler output alike.
func parseJSON(b []byte) (any, error) {
	if v, ok := parseFast(b); ok {
		return v, nil
	}
	return parseJSONGeneral(b)
}

// parseJSONGeneral is parseJSON without parseFast: encoding/json's check,
// then ojg.
func parseJSONGeneral(b []byte) (v any, err error) {
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
	defer func() {
		if p := recover(); p != nil {
			v, err = nil, fmt.Errorf("parse JSON: %v", p)
		}
	}()
	if v, err = oj.Parse(b); err != nil {
		if fixed, ok := dropZeroExponents(b); ok {
			return oj.Parse(fixed)
		}
	}
	return v, err
}

// dropZeroExponents rewrites valid JSON text whose numbers include a zero
// with an exponent and no fraction (0e5, -0E-1), which ojg v1.28.5 rejects
// ("invalid number", found by FuzzLazyInputsChangeNothing), as the same
// numbers without the exponent: zero times any power of ten is zero, and ojg
// reads an integer with an exponent (10e0) as an integer, so 0e5 is 0 as
// it would be. ok is false when the text has no such number. Strings are
// skipped; b has passed json.Valid.
func dropZeroExponents(b []byte) (fixed []byte, ok bool) {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '"':
			j := i + 1
			for j < len(b) && b[j] != '"' {
				if b[j] == '\\' {
					j++
				}
				j++
			}
			out = append(out, b[i:j+1]...)
			i = j + 1
		case c == '-' || c >= '0' && c <= '9':
			j := i
			for j < len(b) && bytes.IndexByte([]byte("+-.0123456789eE"), b[j]) >= 0 {
				j++
			}
			num := b[i:j]
			digits := bytes.TrimPrefix(num, []byte("-"))
			if len(digits) > 1 && digits[0] == '0' && (digits[1] == 'e' || digits[1] == 'E') {
				num, ok = num[:len(num)-len(digits)+1], true
			}
			out = append(out, num...)
			i = j
		default:
			out = append(out, c)
			i++
		}
	}
	return out, ok
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
