package jsonata

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
)

// formatNumber writes f as JavaScript's Number.prototype.toString does:
// the shortest round-tripping digits, in fixed notation for exponents from
// -7 to 20 and in exponent notation otherwise.
func formatNumber(f float64) string {
	if f == 0 {
		return "0"
	}
	if math.IsNaN(f) {
		return "NaN"
	}
	if math.IsInf(f, 1) {
		return "Infinity"
	}
	if math.IsInf(f, -1) {
		return "-Infinity"
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // d.ddddde±xx
	neg := false
	if s[0] == '-' {
		neg = true
		s = s[1:]
	}
	mant, expStr, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(expStr)
	digits := strings.Replace(mant, ".", "", 1)
	var out string
	n := exp + 1 // position of the decimal point
	switch {
	case n > 21 || n < -5:
		out = digits[:1]
		if len(digits) > 1 {
			out += "." + digits[1:]
		}
		if exp >= 0 {
			out += "e+" + strconv.Itoa(exp)
		} else {
			out += "e-" + strconv.Itoa(-exp)
		}
	case n <= 0:
		out = "0." + strings.Repeat("0", -n) + digits
	case n >= len(digits):
		out = digits + strings.Repeat("0", n-len(digits))
	default:
		out = digits[:n] + "." + digits[n:]
	}
	if neg {
		return "-" + out
	}
	return out
}

// toPrecision15 rounds to 15 significant digits, as $string does to hide
// binary floating-point noise (0.1+0.2 is "0.3").
func toPrecision15(f float64) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(f, 'g', 15, 64), 64)
	if err != nil {
		return f
	}
	return r
}

// toJSONString is $string: strings as they are, other values as JSON with
// numbers rounded to 15 significant digits and functions as "".
func (ev *evaluator) toJSONString(v any, pretty bool, pos int) (string, error) {
	if s, ok := v.(string); ok {
		return s, nil
	}
	if isFunc(v) {
		return "", nil
	}
	if f, ok := toNumber(v); ok && (math.IsInf(f, 0) || math.IsNaN(f)) {
		return "", newErr("D3001", pos, "attempting to invoke string function on Infinity or NaN")
	}
	if s, ok := v.(*sequence); ok && s.outerWrapper && len(s.items) > 0 {
		v = s.items[0]
	}
	var b strings.Builder
	ev.writeJSON(&b, v, pretty, "")
	return b.String(), nil
}

func (ev *evaluator) writeJSON(b *strings.Builder, v any, pretty bool, indent string) {
	ev.count()
	if ev != nil && b.Len() > ev.cfg.maxString {
		panic(budgetExceeded{ev.tooLarge(0, "string")})
	}
	if f, ok := toNumber(v); ok {
		if math.IsInf(f, 0) || math.IsNaN(f) {
			b.WriteString("null")
			return
		}
		b.WriteString(formatNumber(toPrecision15(f)))
		return
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case string:
		writeJSONString(b, x)
	case map[string]any:
		keys := ev.keys(x)
		b.WriteByte('{')
		first := true
		inner := indent + "  "
		for _, k := range keys {
			val := x[k]
			if val == Undefined {
				continue
			}
			if !first {
				b.WriteByte(',')
			}
			first = false
			if pretty {
				b.WriteString("\n" + inner)
			}
			writeJSONString(b, k)
			b.WriteByte(':')
			if pretty {
				b.WriteByte(' ')
			}
			if isFunc(val) {
				b.WriteString(`""`)
			} else {
				ev.writeJSON(b, val, pretty, inner)
			}
		}
		if pretty && !first {
			b.WriteString("\n" + indent)
		}
		b.WriteByte('}')
	default:
		if items, ok := asArray(v); ok {
			b.WriteByte('[')
			inner := indent + "  "
			for i, it := range items {
				if i > 0 {
					b.WriteByte(',')
				}
				if pretty {
					b.WriteString("\n" + inner)
				}
				if it == Undefined {
					b.WriteString("null")
				} else if isFunc(it) {
					b.WriteString(`""`)
				} else {
					ev.writeJSON(b, it, pretty, inner)
				}
			}
			if pretty && len(items) > 0 {
				b.WriteString("\n" + indent)
			}
			b.WriteByte(']')
			return
		}
		if isFunc(v) {
			b.WriteString(`""`)
			return
		}
		b.WriteString("null")
	}
}

// writeJSONString quotes s as JSON.stringify does (no HTML escaping).
func writeJSONString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte("0123456789abcdef"[r>>4])
				b.WriteByte("0123456789abcdef"[r&0xF])
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

// compareUTF16 orders strings by UTF-16 code units, as JavaScript does.
func compareUTF16(a, b string) int {
	if isASCII(a) && isASCII(b) {
		return strings.Compare(a, b)
	}
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			if ua[i] < ub[i] {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(ua) < len(ub):
		return -1
	case len(ua) > len(ub):
		return 1
	}
	return 0
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
