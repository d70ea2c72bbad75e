package asl

import (
	"fmt"
	"maps"
	"sync/atomic"
	"unicode/utf8"
)

// A JSONPath Task's result is mostly passed along without being read:
// ResultPath places it in the state's output, the next Task's Parameters
// send it on, the history keeps it, the execution's output writes it.
// Parsing it into maps only to write the same text again made most of a
// Task's allocations (a small object is a 336-byte Go map). So a result
// whose text is canonical — exactly the text the engine's encoder would
// write for its value (compact, keys sorted, the encoder's escapes and
// integers) — is kept as a *rawJSON, and parsed the first time a state
// reads into it.
//
// Where a *rawJSON (or an *overlay, overlay.go: together, the lazy values)
// may stand: anywhere in a state's data (the whole of it, or a member or
// element at any depth), in a Map item, in a kept history event's data.
// So a value selected to be placed in data (InputPath, OutputPath, a
// payload template's ".$" field: path.find) stays lazy. Where it may not:
// in what a lookup that reads returns at its top level (path.get reads
// through the objects it descends into and resolves the value it selects:
// Choice rules, ItemsPath, intrinsic arguments, the "…Path" fields that
// give a number or a time), in JSONata bindings and assigned variables
// (Execution.plain), and in the Events the engine hands out
// (histEvent.event). Intrinsic functions get their arguments resolved at
// the top level and resolve deeper where they look (jsonEqual,
// javaString). The encoder writes it, jsonSize measures it.

// rawJSON is a canonical JSON object or array kept as text. Its value is
// parsed when first needed and kept; values are never mutated, so every
// reader shares it. (24 bytes: a sync.Once would double that.)
type rawJSON struct {
	text string
	v    atomic.Pointer[any] // the value, once parsed
}

// newRaw returns b as a *rawJSON when b is a canonical object or array (it
// copies b), or nil.
func newRaw(b []byte) *rawJSON {
	if len(b) == 0 || (b[0] != '{' && b[0] != '[') || !canonicalJSON(b) {
		return nil
	}
	return &rawJSON{text: string(b)}
}

// value returns the parsed value (never holding a *rawJSON).
func (r *rawJSON) value() any {
	if p := r.v.Load(); p != nil {
		return *p
	}
	v, _, ok := parseFastText(r.text)
	if !ok { // never: canonical text is within parseFast's language
		panic(fmt.Sprintf("asl: canonical JSON of %d bytes declined by the parser", len(r.text)))
	}
	// Readers racing here parse alike; all keep the first value stored.
	if !r.v.CompareAndSwap(nil, &v) {
		return *r.v.Load()
	}
	return v
}

// MarshalJSON writes the text, for encoding/json (the engine's own encoder
// does the same).
func (r *rawJSON) MarshalJSON() ([]byte, error) { return []byte(r.text), nil }

// resolve returns v's value when v is lazy (a *rawJSON or an *overlay),
// otherwise v.
func resolve(v any) any {
	switch x := v.(type) {
	case *rawJSON:
		return x.value()
	case *overlay:
		return x.value()
	}
	return v
}

// memberOf returns member key of object v (a map or a lazy object), without
// making an overlay a map.
func memberOf(v any, key string) (any, bool) {
	switch x := v.(type) {
	case map[string]any:
		e, ok := x[key]
		return e, ok
	case *overlay:
		return x.get(key)
	case *rawJSON:
		return memberOf(x.value(), key) // a plain value
	}
	return nil, false
}

// deepResolve returns v with every lazy value in it replaced by its value:
// v itself when it holds none, otherwise copies of the containers on the
// way to them (v is never modified).
func deepResolve(v any) any {
	out, _ := deepResolved(v)
	return out
}

func deepResolved(v any) (any, bool) {
	switch x := v.(type) {
	case *rawJSON:
		return x.value(), true
	case *overlay:
		out, _ := deepResolved(x.value())
		return out, true
	case map[string]any:
		var cp map[string]any
		for k, e := range x {
			r, changed := deepResolved(e)
			if !changed {
				continue
			}
			if cp == nil {
				cp = maps.Clone(x)
			}
			cp[k] = r
		}
		if cp == nil {
			return v, false
		}
		return cp, true
	case []any:
		var cp []any
		for i, e := range x {
			r, changed := deepResolved(e)
			if !changed {
				continue
			}
			if cp == nil {
				cp = make([]any, len(x))
				copy(cp, x)
			}
			cp[i] = r
		}
		if cp == nil {
			return v, false
		}
		return cp, true
	}
	return v, false
}

// canonicalJSON reports whether b is exactly the text marshalJSON writes
// for the value parseJSON reads from it: no whitespace, each object's keys
// in strictly increasing byte order (so none repeats) and free of escapes,
// strings escaped as appendJSONString escapes them, integers of at most 18
// digits without leading zeros or "-0", no fractions or exponents, nesting
// within parseFast's bound. It allocates nothing; text it rejects is
// simply parsed.
func canonicalJSON(b []byte) bool {
	c := canonScanner{b: b}
	return c.value(0) && c.i == len(b)
}

type canonScanner struct {
	b []byte
	i int
}

func (c *canonScanner) value(depth int) bool {
	if c.i >= len(c.b) || depth > maxFastDepth {
		return false
	}
	switch ch := c.b[c.i]; {
	case ch == '{':
		return c.object(depth)
	case ch == '[':
		return c.array(depth)
	case ch == '"':
		_, _, ok := c.str()
		return ok
	case ch == 't':
		return c.word("true")
	case ch == 'f':
		return c.word("false")
	case ch == 'n':
		return c.word("null")
	case ch == '-' || ('0' <= ch && ch <= '9'):
		return c.integer()
	}
	return false
}

func (c *canonScanner) word(w string) bool {
	if len(c.b)-c.i < len(w) || string(c.b[c.i:c.i+len(w)]) != w {
		return false
	}
	c.i += len(w)
	return true
}

func (c *canonScanner) object(depth int) bool {
	c.i++ // {
	if c.i < len(c.b) && c.b[c.i] == '}' {
		c.i++
		return true
	}
	var prev []byte
	for n := 0; ; n++ {
		if c.i >= len(c.b) || c.b[c.i] != '"' {
			return false
		}
		key, plain, ok := c.str()
		if !ok || !plain || (n > 0 && string(key) <= string(prev)) {
			return false // an escaped key, or keys out of order or repeated
		}
		prev = key
		if c.i >= len(c.b) || c.b[c.i] != ':' {
			return false
		}
		c.i++
		if !c.value(depth + 1) {
			return false
		}
		if more, ok := c.separator('}'); !ok || !more {
			return ok
		}
	}
}

func (c *canonScanner) array(depth int) bool {
	c.i++ // [
	if c.i < len(c.b) && c.b[c.i] == ']' {
		c.i++
		return true
	}
	for {
		if !c.value(depth + 1) {
			return false
		}
		if more, ok := c.separator(']'); !ok || !more {
			return ok
		}
	}
}

// separator reads what follows a member or an element: a comma (more
// follow) or end, which closes the container.
func (c *canonScanner) separator(end byte) (more, ok bool) {
	if c.i >= len(c.b) {
		return false, false
	}
	switch c.b[c.i] {
	case ',':
		c.i++
		return true, true
	case end:
		c.i++
		return false, true
	}
	return false, false
}

// integer accepts what strconv.AppendInt writes for an int64 of at most
// 18 digits (parseFast's integers).
func (c *canonScanner) integer() bool {
	neg := c.b[c.i] == '-'
	if neg {
		c.i++
	}
	start := c.i
	for c.i < len(c.b) && '0' <= c.b[c.i] && c.b[c.i] <= '9' {
		c.i++
	}
	n := c.i - start
	switch {
	case n == 0 || n > 18:
		return false
	case c.b[start] == '0' && (n > 1 || neg): // a leading zero, or -0
		return false
	}
	if c.i < len(c.b) {
		switch c.b[c.i] {
		case '.', 'e', 'E':
			return false
		}
	}
	return true
}

// str accepts a string literal as appendJSONString writes it (ok) and
// returns its bytes between the quotes; plain is whether it has no escapes.
func (c *canonScanner) str() (body []byte, plain, ok bool) {
	b := c.b
	i := c.i + 1 // past the opening quote
	start := i
	escaped := false
	for i < len(b) {
		ch := b[i]
		if plainASCII[ch] {
			i++
			continue
		}
		switch {
		case ch == '"':
			c.i = i + 1
			return b[start:i], !escaped, true
		case ch == '\\':
			c.i = i
			if !c.escape() {
				return nil, false, false
			}
			i, escaped = c.i, true
		case ch < 0x20:
			return nil, false, false
		default: // ch >= utf8.RuneSelf
			r, size := utf8.DecodeRune(b[i:])
			if (r == utf8.RuneError && size == 1) || r == '\u2028' || r == '\u2029' {
				return nil, false, false // the encoder escapes these
			}
			i += size
		}
	}
	return nil, false, false
}

// plainASCII marks the bytes a string literal holds as they are: ASCII
// from space on, but the quote and the backslash.
var plainASCII = func() (t [256]bool) {
	for ch := 0x20; ch < utf8.RuneSelf; ch++ {
		t[ch] = ch != '"' && ch != '\\'
	}
	return t
}()

// escape accepts one escape as appendJSONString writes it: \" \\ \n \r \t
// \b \f, \u00xx (lower-case hex) for the other control characters,
// \u2028 and \u2029.
func (c *canonScanner) escape() bool {
	if c.i+1 >= len(c.b) {
		return false
	}
	switch c.b[c.i+1] {
	case '"', '\\', 'n', 'r', 't', 'b', 'f':
		c.i += 2
		return true
	case 'u':
		if c.i+6 > len(c.b) {
			return false
		}
		h := string(c.b[c.i+2 : c.i+6])
		switch {
		case h == "2028" || h == "2029":
		case h[0] == '0' && h[1] == '0' && (h[2] == '0' || h[2] == '1') && isLowerHex(h[3]):
			switch ctl := unhex(h[2])<<4 | unhex(h[3]); ctl {
			case '\n', '\r', '\t', '\b', '\f':
				return false // written with its short form
			}
		default:
			return false
		}
		c.i += 6
		return true
	}
	return false
}

func isLowerHex(ch byte) bool { return ('0' <= ch && ch <= '9') || ('a' <= ch && ch <= 'f') }

func unhex(ch byte) byte {
	if ch <= '9' {
		return ch - '0'
	}
	return ch - 'a' + 10
}
