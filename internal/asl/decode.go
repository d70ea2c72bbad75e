package asl

import (
	"strconv"
	"unicode/utf8"
)

// parseFast parses the JSON handlers usually return (objects, arrays,
// strings, integers of up to 18 digits, true, false, null) into the same
// values ojg produces, or declines. Anything else (a fraction or exponent,
// a longer integer, a surrogate escape, invalid UTF-8, deep nesting, any
// syntax error) makes it decline, and parseJSON takes its usual path, so
// values and error messages never differ from ojg's.
//
// The text is copied once into a string; keys and strings without escapes
// are slices of it, so a payload costs one allocation for its text plus its
// containers (the text lives as long as any of its strings does, at most
// MaxPayloadBytes for a payload that passes the limit).
func parseFast(b []byte) (any, bool) {
	p := fastParser{s: string(b)}
	p.space()
	v, ok := p.value(0)
	if !ok {
		return nil, false
	}
	p.space()
	return v, p.i == len(p.s)
}

// maxFastDepth bounds the nesting parseFast follows; deeper documents go
// to the general path (whose own bound is encoding/json's).
const maxFastDepth = 512

type fastParser struct {
	s string
	i int
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
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	case c == '-' || ('0' <= c && c <= '9'):
		return p.integer()
	}
	return nil, false
}

func (p *fastParser) object(depth int) (any, bool) {
	p.i++ // {
	m := map[string]any{}
	p.space()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return m, true
	}
	for {
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
		m[k] = v // a repeated key keeps its last value, as with ojg
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
			return m, true
		default:
			return nil, false
		}
	}
}

func (p *fastParser) array(depth int) (any, bool) {
	p.i++ // [
	a := []any{}
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

// integer reads an integer of at most 18 digits (ojg's int64 range; longer
// ones become json.Number there).
func (p *fastParser) integer() (any, bool) {
	start := p.i
	if p.s[p.i] == '-' {
		p.i++
	}
	digits := p.i
	if p.i >= len(p.s) {
		return nil, false
	}
	if p.s[p.i] == '0' {
		p.i++
	} else {
		for p.i < len(p.s) && '0' <= p.s[p.i] && p.s[p.i] <= '9' {
			p.i++
		}
	}
	n := p.i - digits
	if n == 0 || n > 18 {
		return nil, false
	}
	if p.i < len(p.s) {
		switch p.s[p.i] {
		case '.', 'e', 'E':
			return nil, false
		}
	}
	v, err := strconv.ParseInt(p.s[start:p.i], 10, 64)
	if err != nil {
		return nil, false
	}
	return v, true
}

// str reads a string literal. Without escapes it is a slice of the text.
func (p *fastParser) str() (string, bool) {
	p.i++ // opening quote
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			s := p.s[start:p.i]
			p.i++
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
			return string(b), true
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
