package asl

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// The engine encodes a payload at every Task boundary (the handler's input)
// and for every execution's output. encoding/json reaches map[string]any
// values through reflection, boxing and sorting their keys: most of a Task's
// allocations. appendJSON writes the engine's own value kinds directly, with
// exactly encoding/json's output (sorted keys, no HTML escaping, its
// escapes and float format); anything else makes it decline, and the caller
// falls back to encoding/json, so the bytes and the errors never differ.

// encoder is reusable scratch space: the output buffer and a stack of the
// members of the maps being written (collected in one pass over each map,
// then sorted by key, so that no value is looked up again).
type encoder struct {
	buf     []byte
	members []member
	used    int // the most members held at once, cleared before reuse
}

type member struct {
	key string
	val any
}

var encoders = sync.Pool{New: func() any { return &encoder{buf: make([]byte, 0, 1024)} }}

// maxPooledEncoder bounds the buffers kept for reuse, so that one huge
// payload does not stay pinned in the pool.
const maxPooledEncoder = 1 << 20

// encodeJSON returns v's compact JSON text (a new slice the caller owns),
// or false when v holds something appendJSON does not write.
func encodeJSON(v any) ([]byte, bool) {
	e := encoders.Get().(*encoder)
	var out []byte
	b, ok := e.appendJSON(e.buf[:0], v)
	if ok {
		out = slices.Clone(b)
	}
	e.release(b)
	return out, ok
}

// release returns e to the pool with buf as its buffer, unless it grew too
// big to keep.
func (e *encoder) release(buf []byte) {
	if cap(buf) > maxPooledEncoder {
		return
	}
	e.buf = buf
	clear(e.members[:e.used]) // drop the references to the values written
	e.members, e.used = e.members[:0], 0
	encoders.Put(e)
}

func (e *encoder) appendJSON(b []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), true
	case bool:
		return strconv.AppendBool(b, x), true
	case string:
		return appendJSONString(b, x), true
	case int64:
		return strconv.AppendInt(b, x, 10), true
	case int:
		return strconv.AppendInt(b, int64(x), 10), true
	case float64:
		return appendJSONFloat(b, x)
	case *rawJSON:
		return append(b, x.text...), true
	case []any:
		if x == nil {
			return append(b, "null"...), true
		}
		b = append(b, '[')
		for i, el := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = e.appendJSON(b, el); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	case map[string]any:
		if x == nil {
			return append(b, "null"...), true
		}
		base := len(e.members)
		for k, v := range x {
			e.members = append(e.members, member{k, v})
		}
		return e.appendMembers(b, base)
	case *overlay:
		base := len(e.members)
		for k, v := range x.base {
			if !x.overrides(k) {
				e.members = append(e.members, member{k, v})
			}
		}
		e.members = append(e.members, x.set...)
		return e.appendMembers(b, base)
	}
	return b, false
}

// appendMembers writes the object whose members were collected in
// e.members from base on, sorted by key, and drops them from e.members.
func (e *encoder) appendMembers(b []byte, base int) ([]byte, bool) {
	e.used = max(e.used, len(e.members))
	n := len(e.members) - base
	sortMembers(e.members[base:])
	b = append(b, '{')
	for i := range n {
		m := e.members[base+i] // e.members may grow (and move) while nested objects are written
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, m.key)
		b = append(b, ':')
		var ok bool
		if b, ok = e.appendJSON(b, m.val); !ok {
			e.members = e.members[:base]
			return b, false
		}
	}
	e.members = e.members[:base]
	return append(b, '}'), true
}

// sortMembers sorts members by key: by insertion when they are few (most
// objects), which is several times faster there than the general sort.
func sortMembers(ms []member) {
	if len(ms) > 12 {
		slices.SortFunc(ms, func(a, b member) int { return strings.Compare(a.key, b.key) })
		return
	}
	for i := 1; i < len(ms); i++ {
		for j := i; j > 0 && ms[j].key < ms[j-1].key; j-- {
			ms[j], ms[j-1] = ms[j-1], ms[j]
		}
	}
}

// appendJSONFloat writes f as encoding/json does; NaN and infinities are
// declined (encoding/json reports them as errors).
func appendJSONFloat(b []byte, f float64) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' { // 1e-07 -> 1e-7
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}

const hexDigits = "0123456789abcdef"

// appendJSONString writes s as a JSON string the way encoding/json does
// with HTML escaping off (jsonStringSize counts the same bytes).
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	i := 0
	for i < len(s) && plainASCII[s[i]] {
		i++
	}
	if i == len(s) { // nothing to escape, the usual case
		b = append(b, s...)
		return append(b, '"')
	}
	start := 0
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
