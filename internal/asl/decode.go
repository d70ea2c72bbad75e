package asl

import (
	"strconv"
	"unicode/utf8"
)

// parseFast parses JSON (objects, arrays, strings, numbers, true, false,
// null) into the values parseJSONGeneral produces, or declines. Anything
// else (a surrogate escape, invalid UTF-8, deep nesting, a number beyond
// float64's range, any syntax error) makes it decline, and parseJSON takes
// the general path, so values and error messages never differ.
//
// The text is copied once into a string; keys and strings without escapes
// are slices of it, so a payload costs one allocation for its text plus its
// containers (the text lives as long as any of its strings does, at most
// MaxPayloadBytes for a payload that passes the limit).
func parseFast(b []byte) (any, bool) {
	v, _, ok := parseFastSized(b)
	return v, ok
}

// parseFastSized is parseFast that also returns the value's size as
// jsonSize would measure it (sizeUnknown when an object repeats a key).
func parseFastSized(b []byte) (any, int, bool) {
	return parseFastText(string(b))
}

// parseFastText is parseFastSized on text already in a string, whose
// strings the value shares.
func parseFastText(s string) (any, int, bool) {
	v, n, _, ok := parseFastMode(s, false)
	return v, n, ok
}

// parseFastMode is parseFastText that, with objects, returns each nested
// object of 1 to maxOverlay members as an overlay of its members (overlay.go): a
// third of a map's bytes. Only a run's data may hold it (raw.go); made
// reports whether the value holds one.
func parseFastMode(s string, objects bool) (v any, size int, made, ok bool) {
	p := fastParser{s: s, objects: objects}
	p.space()
	if v, ok = p.value(0); !ok {
		return nil, sizeUnknown, false, false
	}
	p.space()
	if p.i != len(p.s) {
		return nil, sizeUnknown, false, false
	}
	if p.repeated {
		return v, sizeUnknown, p.made, true
	}
	return v, p.size, p.made, true
}

// maxFastDepth bounds the nesting parseFast follows; deeper documents go
// to the general path (whose own bound is encoding/json's).
const maxFastDepth = 512

type fastParser struct {
	s string
	i int
	// size is the compact re-encoding's length so far (what jsonSize
	// returns), valid unless an object repeated a key.
	size     int
	repeated bool
	objects  bool // small objects as overlays (parseFastMode)
	made     bool // an overlay was made
}

func (p *fastParser) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *fastParser) literal(word string) bool {
	if len(p.s)-p.i >= len(word) && p.s[p.i:p.i+len(word)] == word {
		p.i += len(word)
		return true
	}
	return false
}

func (p *fastParser) value(depth int) (any, bool) {
	if p.i >= len(p.s) || depth > maxFastDepth {
		return nil, false
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		s, ok := p.str()
		return s, ok
	case c == 't':
		p.size += 4
		return true, p.literal("true")
	case c == 'f':
		p.size += 5
		return false, p.literal("false")
	case c == 'n':
		p.size += 4
		return nil, p.literal("null")
	case c == '-' || ('0' <= c && c <= '9'):
		return p.number()
	}
	return nil, false
}

func (p *fastParser) object(depth int) (any, bool) {
	p.i++ // {
	p.size += 2
	p.space()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return map[string]any{}, true
	}
	// In objects mode the members of a nested object are gathered in few
	// while they fit, and the map made only when they do not. The
	// outermost object stays a map: it is the one ResultPath sets members
	// of, and an overlay over a map sets one without copying the others.
	var (
		m   map[string]any
		few [maxOverlay]member
		n   int // members in few
	)
	if !p.objects || depth == 0 {
		m = map[string]any{}
	}
	for count := 0; ; count++ {
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return nil, false
		}
		k, ok := p.str()
		if !ok {
			return nil, false
		}
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, false
		}
		p.i++
		p.space()
		v, ok := p.value(depth + 1)
		if !ok {
			return nil, false
		}
		if count > 0 {
			p.size++ // comma
		}
		p.size++ // colon
		// A repeated key keeps its last value, as with ojg.
		if m != nil {
			if _, dup := m[k]; dup {
				p.repeated = true
			}
			m[k] = v
		} else if j := memberIndex(few[:n], k); j >= 0 {
			p.repeated = true
			few[j].val = v
		} else if n < len(few) {
			few[n] = member{k, v}
			n++
		} else {
			m = make(map[string]any, 2*len(few))
			for _, f := range few {
				m[f.key] = f.val
			}
			m[k] = v
		}
		p.space()
		if p.i >= len(p.s) {
			return nil, false
		}
		switch p.s[p.i] {
		case ',':
			p.i++
			p.space()
		case '}':
			p.i++
			if m == nil {
				p.made = true
				o := makeOverlay(nil, n)
				o.set = append(o.set, few[:n]...)
				return o, true
			}
			return m, true
		default:
			return nil, false
		}
	}
}

// memberIndex returns the index of the member named key, or -1.
func memberIndex(ms []member, key string) int {
	for i := range ms {
		if ms[i].key == key {
			return i
		}
	}
	return -1
}

func (p *fastParser) array(depth int) (any, bool) {
	p.i++ // [
	a := []any{}
	p.size += 2
	p.space()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return a, true
	}
	for {
		v, ok := p.value(depth + 1)
		if !ok {
			return nil, false
		}
		if len(a) > 0 {
			p.size++ // comma
		}
		a = append(a, v)
		p.space()
		if p.i >= len(p.s) {
			return nil, false
		}
		switch p.s[p.i] {
		case ',':
			p.i++
			p.space()
		case ']':
			p.i++
			return a, true
		default:
			return nil, false
		}
	}
}

// number reads a JSON number: an integer of at most 18 digits directly,
// any other through numberValue. A number beyond float64's range declines
// (the general path names it).
func (p *fastParser) number() (any, bool) {
	start := p.i
	if p.s[p.i] == '-' {
		p.i++
	}
	digits := p.i
	if p.i < len(p.s) && p.s[p.i] == '0' {
		p.i++
	} else {
		p.digits()
	}
	n := p.i - digits
	if n == 0 {
		return nil, false
	}
	whole := true
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		if p.digits() == 0 {
			return nil, false
		}
		whole = false
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if p.digits() == 0 {
			return nil, false
		}
		whole = false
	}
	if !whole || n > 18 {
		v, err := numberValue(p.s[start:p.i])
		if err != nil {
			return nil, false
		}
		p.size += jsonSize(v)
		return v, true
	}
	v, err := strconv.ParseInt(p.s[start:p.i], 10, 64)
	if err != nil {
		return nil, false
	}
	if v == 0 {
		p.size++ // -0 is written 0
	} else {
		p.size += p.i - start
	}
	return boxInt(v), true
}

// digits skips decimal digits and returns how many.
func (p *fastParser) digits() int {
	start := p.i
	for p.i < len(p.s) && '0' <= p.s[p.i] && p.s[p.i] <= '9' {
		p.i++
	}
	return p.i - start
}

// str reads a string literal (a key or a value). Without escapes it is a
// slice of the text.
func (p *fastParser) str() (string, bool) {
	p.i++ // opening quote
	start := p.i
	extra := 0 // U+2028 and U+2029 are written as 6-byte escapes
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			s := p.s[start:p.i]
			p.i++
			p.size += 2 + len(s) + extra
			return s, true
		case c == '\\':
			return p.escaped(start)
		case c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(p.s[p.i:])
			if r == utf8.RuneError && size == 1 {
				return "", false
			}
			if r == '\u2028' || r == '\u2029' {
				extra += 3
			}
			p.i += size
		default:
			p.i++
		}
	}
	return "", false
}

// escaped finishes a string literal that has escapes, from start (just past
// the opening quote); p.i is at the first backslash.
func (p *fastParser) escaped(start int) (string, bool) {
	b := make([]byte, 0, p.i-start+16)
	b = append(b, p.s[start:p.i]...)
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			s := string(b)
			p.size += jsonStringSize(s)
			return s, true
		case c == '\\':
			if p.i+1 >= len(p.s) {
				return "", false
			}
			e := p.s[p.i+1]
			p.i += 2
			switch e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				if p.i+4 > len(p.s) {
					return "", false
				}
				r, err := strconv.ParseUint(p.s[p.i:p.i+4], 16, 32)
				if err != nil || (0xD800 <= r && r <= 0xDFFF) {
					return "", false // surrogates: ojg's own decoding applies
				}
				b = utf8.AppendRune(b, rune(r))
				p.i += 4
			default:
				return "", false
			}
		case c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(p.s[p.i:])
			if r == utf8.RuneError && size == 1 {
				return "", false
			}
			b = append(b, p.s[p.i:p.i+size]...)
			p.i += size
		default:
			b = append(b, c)
			p.i++
		}
	}
	return "", false
}
