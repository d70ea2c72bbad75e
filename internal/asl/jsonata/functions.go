package jsonata

import (
	"encoding/base64"
	"math"
	"math/rand/v2"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// builtin is a function of the JSONata standard library.
type builtin struct {
	name string
	sig  *signature
	fn   func(ev *evaluator, args []any, pos int) (any, error)
}

var builtins map[string]*builtin

func def(name, sig string, fn func(ev *evaluator, args []any, pos int) (any, error)) {
	builtins[name] = &builtin{name: name, sig: mustSignature(sig), fn: fn}
}

func init() {
	builtins = map[string]*builtin{}
	def("sum", "<a<n>:n>", fnAggregate("sum"))
	def("max", "<a<n>:n>", fnAggregate("max"))
	def("min", "<a<n>:n>", fnAggregate("min"))
	def("average", "<a<n>:n>", fnAggregate("average"))
	def("count", "<a:n>", func(_ *evaluator, a []any, _ int) (any, error) {
		if a[0] == Undefined {
			return 0.0, nil
		}
		items, _ := asArray(a[0])
		return float64(len(items)), nil
	})
	def("string", "<x-b?:s>", func(ev *evaluator, a []any, pos int) (any, error) {
		if a[0] == Undefined {
			return Undefined, nil
		}
		pretty, _ := a[1].(bool)
		return ev.toJSONString(a[0], pretty, pos)
	})
	def("substring", "<s-nn?:s>", fnSubstring)
	def("substringBefore", "<s-s:s>", func(_ *evaluator, a []any, _ int) (any, error) {
		s, ok := a[0].(string)
		if !ok {
			return Undefined, nil
		}
		chars, ok := a[1].(string)
		if !ok {
			return s, nil
		}
		if i := strings.Index(s, chars); i >= 0 {
			return s[:i], nil
		}
		return s, nil
	})
	def("substringAfter", "<s-s:s>", func(_ *evaluator, a []any, _ int) (any, error) {
		s, ok := a[0].(string)
		if !ok {
			return Undefined, nil
		}
		chars, ok := a[1].(string)
		if !ok {
			return s, nil
		}
		if i := strings.Index(s, chars); i >= 0 {
			return s[i+len(chars):], nil
		}
		return s, nil
	})
	def("lowercase", "<s-:s>", strFn(strings.ToLower))
	def("uppercase", "<s-:s>", strFn(strings.ToUpper))
	def("trim", "<s-:s>", strFn(trim))
	def("length", "<s-:n>", func(_ *evaluator, a []any, _ int) (any, error) {
		s, ok := a[0].(string)
		if !ok {
			return Undefined, nil
		}
		return float64(utf8.RuneCountInString(s)), nil
	})
	def("pad", "<s-ns?:s>", fnPad)
	def("match", "<s-f<s:o>n?:a<o>>", fnMatch)
	def("contains", "<s-(sf):b>", fnContains)
	def("replace", "<s-(sf)(sf)n?:s>", fnReplace)
	def("split", "<s-(sf)n?:a<s>>", fnSplit)
	def("join", "<a<s>s?:s>", func(ev *evaluator, a []any, pos int) (any, error) {
		if a[0] == Undefined {
			return Undefined, nil
		}
		items, _ := asArray(a[0])
		sep, _ := a[1].(string)
		parts := make([]string, len(items))
		for i, it := range items {
			parts[i], _ = it.(string)
		}
		total := len(sep) * len(parts)
		for _, p := range parts {
			total += len(p)
		}
		if total > ev.cfg.maxString {
			return nil, ev.tooLarge(pos, "string")
		}
		return strings.Join(parts, sep), nil
	})
	def("formatNumber", "<n-so?:s>", fnFormatNumber)
	def("formatBase", "<n-n?:s>", fnFormatBase)
	def("formatInteger", "<n-s:s>", fnFormatInteger)
	def("parseInteger", "<s-s:n>", fnParseInteger)
	def("number", "<(nsb)-:n>", fnNumber)
	def("floor", "<n-:n>", numFn(math.Floor))
	def("ceil", "<n-:n>", numFn(math.Ceil))
	def("abs", "<n-:n>", numFn(math.Abs))
	def("round", "<n-n?:n>", func(_ *evaluator, a []any, _ int) (any, error) {
		f, ok := toNumber(a[0])
		if !ok {
			return Undefined, nil
		}
		p, _ := toNumber(a[1])
		return roundHalfEven(f, int(p)), nil
	})
	def("sqrt", "<n-:n>", func(_ *evaluator, a []any, pos int) (any, error) {
		f, ok := toNumber(a[0])
		if !ok {
			return Undefined, nil
		}
		if f < 0 {
			return nil, newErr("D3060", pos, "the sqrt function cannot be applied to a negative number: %s", formatNumber(f))
		}
		return math.Sqrt(f), nil
	})
	def("power", "<n-n:n>", func(_ *evaluator, a []any, pos int) (any, error) {
		b, ok := toNumber(a[0])
		if !ok {
			return Undefined, nil
		}
		e, _ := toNumber(a[1])
		r := math.Pow(b, e)
		if math.IsInf(r, 0) || math.IsNaN(r) {
			return nil, newErr("D3061", pos, "the power function has resulted in a value that cannot be represented as a JSON number: base=%s, exponent=%s", formatNumber(b), formatNumber(e))
		}
		return r, nil
	})
	def("random", "<:n>", func(_ *evaluator, _ []any, _ int) (any, error) { return rand.Float64(), nil })
	def("boolean", "<x-:b>", func(ev *evaluator, a []any, _ int) (any, error) {
		if a[0] == Undefined {
			return Undefined, nil
		}
		return ev.toBoolean(a[0]), nil
	})
	def("not", "<x-:b>", func(ev *evaluator, a []any, _ int) (any, error) {
		if a[0] == Undefined {
			return Undefined, nil
		}
		return !ev.toBoolean(a[0]), nil
	})
	def("exists", "<x:b>", func(ev *evaluator, a []any, _ int) (any, error) { return a[0] != Undefined, nil })
	def("map", "<af>", fnMap)
	def("filter", "<af>", fnFilter)
	def("single", "<af?>", fnSingle)
	def("zip", "<a+>", fnZip)
	def("reduce", "<afj?:j>", fnReduce)
	def("sift", "<o-f?:o>", fnSift)
	def("each", "<o-f:a>", fnEach)
	def("keys", "<x-:a<s>>", fnKeys)
	def("lookup", "<x-s:x>", func(ev *evaluator, a []any, _ int) (any, error) {
		k, _ := a[1].(string)
		return ev.lookup(a[0], k), nil
	})
	def("append", "<xx:a>", func(ev *evaluator, a []any, pos int) (any, error) {
		x, _ := asArray(a[0])
		y, _ := asArray(a[1])
		if len(x)+len(y) > ev.cfg.maxItems {
			return nil, ev.tooLarge(pos, "array")
		}
		return appendValues(a[0], a[1]), nil
	})
	def("spread", "<x-:a<o>>", fnSpread)
	def("merge", "<a<o>:o>", func(ev *evaluator, a []any, _ int) (any, error) {
		if a[0] == Undefined {
			return Undefined, nil
		}
		items, _ := asArray(a[0])
		out := map[string]any{}
		var order []string
		for _, it := range items {
			if m, ok := it.(map[string]any); ok {
				for _, k := range ev.keys(m) {
					if _, seen := out[k]; !seen {
						order = append(order, k)
					}
					out[k] = m[k]
				}
			}
		}
		ev.recordOrder(out, order)
		return out, nil
	})
	def("reverse", "<a:a>", func(_ *evaluator, a []any, _ int) (any, error) {
		if a[0] == Undefined {
			return Undefined, nil
		}
		items, _ := asArray(a[0])
		if len(items) <= 1 {
			return a[0], nil
		}
		out := make([]any, len(items))
		for i, it := range items {
			out[len(items)-1-i] = it
		}
		return out, nil
	})
	def("error", "<s?:x>", func(_ *evaluator, a []any, pos int) (any, error) {
		msg, ok := a[0].(string)
		if !ok {
			msg = "$error() function evaluated"
		}
		return nil, &Error{Code: "D3137", Position: pos, Message: msg}
	})
	def("assert", "<bs?:x>", func(_ *evaluator, a []any, pos int) (any, error) {
		if b, _ := a[0].(bool); !b {
			msg, ok := a[1].(string)
			if !ok {
				msg = "$assert() statement failed"
			}
			return nil, &Error{Code: "D3141", Position: pos, Message: msg}
		}
		return Undefined, nil
	})
	def("type", "<x:s>", func(_ *evaluator, a []any, _ int) (any, error) {
		switch typeSymbol(a[0]) {
		case 'm':
			return Undefined, nil
		case 'l':
			return "null", nil
		case 'n':
			return "number", nil
		case 's':
			return "string", nil
		case 'b':
			return "boolean", nil
		case 'a':
			return "array", nil
		case 'f':
			return "function", nil
		}
		return "object", nil
	})
	def("sort", "<af?:a>", fnSort)
	def("shuffle", "<a:a>", func(_ *evaluator, a []any, _ int) (any, error) {
		if a[0] == Undefined {
			return Undefined, nil
		}
		items, _ := asArray(a[0])
		if len(items) <= 1 {
			return a[0], nil
		}
		out := append([]any(nil), items...)
		rand.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
		return out, nil
	})
	def("distinct", "<x:x>", func(ev *evaluator, a []any, _ int) (any, error) {
		items, ok := asArray(a[0])
		if !ok || len(items) <= 1 {
			return a[0], nil
		}
		out := newSeq()
		for _, it := range items {
			dup := false
			for _, o := range out.items {
				if ev.deepEqual(it, o) {
					dup = true
					break
				}
			}
			if !dup {
				out.items = append(out.items, it)
			}
		}
		return out, nil
	})
	// The reference (on Node) encodes each UTF-16 code unit's low byte, as
	// Buffer.from(s, "binary") does, and decodes bytes as Latin-1; kept so.
	def("base64encode", "<s-:s>", strFn(func(s string) string {
		units := utf16.Encode([]rune(s))
		b := make([]byte, len(units))
		for i, u := range units {
			b[i] = byte(u)
		}
		return base64.StdEncoding.EncodeToString(b)
	}))
	def("base64decode", "<s-:s>", func(_ *evaluator, a []any, pos int) (any, error) {
		s, ok := a[0].(string)
		if !ok {
			return Undefined, nil
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			if b, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "=")); err != nil {
				return nil, newErr("D3137", pos, "invalid base64 string")
			}
		}
		r := make([]rune, len(b))
		for i, c := range b {
			r[i] = rune(c)
		}
		return string(r), nil
	})
	def("encodeUrlComponent", "<s-:s>", strFn(func(s string) string { return encodeURI(s, "-_.!~*'()") }))
	def("encodeUrl", "<s-:s>", strFn(func(s string) string { return encodeURI(s, "-_.!~*'();/?:@&=+$,#") }))
	def("decodeUrlComponent", "<s-:s>", fnDecodeURL)
	def("decodeUrl", "<s-:s>", fnDecodeURL)
	def("clone", "<(oa)-:o>", func(ev *evaluator, a []any, _ int) (any, error) {
		if a[0] == Undefined {
			return Undefined, nil
		}
		return ev.deepCopy(a[0]), nil
	})
	def("now", "<s?s?:s>", fnNow)
	def("millis", "<:n>", func(ev *evaluator, _ []any, _ int) (any, error) {
		return float64(ev.clock().UnixMilli()), nil
	})
	def("fromMillis", "<n-s?s?:s>", fnFromMillis)
	def("toMillis", "<s-s?:n>", fnToMillis)
}

func strFn(f func(string) string) func(*evaluator, []any, int) (any, error) {
	return func(_ *evaluator, a []any, _ int) (any, error) {
		s, ok := a[0].(string)
		if !ok {
			return Undefined, nil
		}
		return f(s), nil
	}
}

func numFn(f func(float64) float64) func(*evaluator, []any, int) (any, error) {
	return func(_ *evaluator, a []any, _ int) (any, error) {
		n, ok := toNumber(a[0])
		if !ok {
			return Undefined, nil
		}
		r := f(n)
		if r == 0 {
			r = 0 // no negative zero
		}
		return r, nil
	}
}

func fnAggregate(kind string) func(*evaluator, []any, int) (any, error) {
	return func(_ *evaluator, a []any, _ int) (any, error) {
		if a[0] == Undefined {
			return Undefined, nil
		}
		items, _ := asArray(a[0])
		if len(items) == 0 {
			if kind == "sum" {
				return 0.0, nil
			}
			return Undefined, nil
		}
		var acc float64
		for i, it := range items {
			f, _ := toNumber(it)
			switch {
			case kind == "sum" || kind == "average":
				acc += f
			case i == 0:
				acc = f
			case kind == "max":
				acc = math.Max(acc, f)
			case kind == "min":
				acc = math.Min(acc, f)
			}
		}
		if kind == "average" {
			acc /= float64(len(items))
		}
		return acc, nil
	}
}

func trim(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if r == ' ' || r == '\t' || r == '\n' || r == '\r' {
			space = true
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	if space {
		b.WriteByte(' ')
	}
	return strings.TrimPrefix(strings.TrimSuffix(b.String(), " "), " ")
}

// jsSlice applies JavaScript's Array.prototype.slice bounds to n items.
func jsSlice(n int, start float64, end float64) (int, int) {
	clamp := func(f float64) int {
		f = math.Trunc(f)
		if f < 0 {
			f += float64(n)
			if f < 0 {
				f = 0
			}
		}
		if f > float64(n) {
			f = float64(n)
		}
		return int(f)
	}
	s, e := clamp(start), clamp(end)
	if e < s {
		e = s
	}
	return s, e
}

func fnSubstring(_ *evaluator, a []any, _ int) (any, error) {
	s, ok := a[0].(string)
	if !ok {
		return Undefined, nil
	}
	runes := []rune(s)
	n := len(runes)
	start, _ := toNumber(a[1])
	if float64(n)+start < 0 {
		start = 0
	}
	if a[2] != Undefined {
		length, _ := toNumber(a[2])
		if length <= 0 {
			return "", nil
		}
		var end float64
		if start >= 0 {
			end = start + length
		} else {
			end = float64(n) + start + length
		}
		i, j := jsSlice(n, start, end)
		return string(runes[i:j]), nil
	}
	i, j := jsSlice(n, start, float64(n))
	return string(runes[i:j]), nil
}

func fnPad(ev *evaluator, a []any, pos int) (any, error) {
	s, ok := a[0].(string)
	if !ok {
		return Undefined, nil
	}
	w, _ := toNumber(a[1])
	width := int(math.Trunc(w))
	ch, _ := a[2].(string)
	if ch == "" {
		ch = " "
	}
	abs := width
	if abs < 0 {
		abs = -abs
	}
	padLen := abs - utf8.RuneCountInString(s)
	if padLen <= 0 {
		return s, nil
	}
	if padLen*len(ch) > ev.cfg.maxString {
		return nil, ev.tooLarge(pos, "string")
	}
	padding := []rune(strings.Repeat(ch, padLen))[:padLen]
	if width > 0 {
		return s + string(padding), nil
	}
	return string(padding) + s, nil
}

func fnMatch(_ *evaluator, a []any, pos int) (any, error) {
	s, ok := a[0].(string)
	if !ok {
		return Undefined, nil
	}
	re, ok := a[1].(*regexValue)
	if !ok {
		return nil, newErr("T0410", pos, "argument 2 of function $match does not match function signature")
	}
	limit := -1
	if l, ok := toNumber(a[2]); ok {
		if l < 0 {
			return nil, newErr("D3040", pos, "third argument of $match function must evaluate to a positive number")
		}
		limit = int(l)
		if limit == 0 {
			return newSeq(), nil
		}
	}
	ms, empty := re.find(s, limit)
	if empty {
		return nil, newErr("D1004", pos, "regular expression matches zero length string")
	}
	out := newSeq()
	for _, m := range ms {
		out.items = append(out.items, m.object())
	}
	return out, nil
}

func fnContains(_ *evaluator, a []any, pos int) (any, error) {
	s, ok := a[0].(string)
	if !ok {
		return Undefined, nil
	}
	switch p := a[1].(type) {
	case string:
		return strings.Contains(s, p), nil
	case *regexValue:
		return p.re.MatchString(s), nil
	}
	return nil, newErr("T0410", pos, "argument 2 of function $contains does not match function signature")
}

func fnSplit(_ *evaluator, a []any, pos int) (any, error) {
	s, ok := a[0].(string)
	if !ok {
		return Undefined, nil
	}
	limit := -1
	if l, ok := toNumber(a[2]); ok {
		if l < 0 {
			return nil, newErr("D3020", pos, "third argument of $split function must evaluate to a positive number")
		}
		limit = int(math.Floor(l))
	}
	var parts []string
	switch p := a[1].(type) {
	case string:
		if p == "" {
			for _, r := range s {
				parts = append(parts, string(r))
			}
		} else {
			parts = strings.Split(s, p)
		}
	case *regexValue:
		ms, empty := p.find(s, -1)
		if empty {
			return nil, newErr("D1004", pos, "regular expression matches zero length string")
		}
		start := 0
		for _, m := range ms {
			parts = append(parts, s[start:m.start])
			start = m.end
		}
		parts = append(parts, s[start:])
	default:
		return nil, newErr("T0410", pos, "argument 2 of function $split does not match function signature")
	}
	if limit >= 0 && limit < len(parts) {
		parts = parts[:limit]
	}
	out := make([]any, len(parts))
	for i, p := range parts {
		out[i] = p
	}
	return out, nil
}

func fnReplace(ev *evaluator, a []any, pos int) (any, error) {
	s, ok := a[0].(string)
	if !ok {
		return Undefined, nil
	}
	if p, ok := a[1].(string); ok && p == "" {
		return nil, newErr("D3010", pos, "second argument of $replace function cannot be an empty string")
	}
	limit := -1
	if l, ok := toNumber(a[3]); ok {
		if l < 0 {
			return nil, newErr("D3011", pos, "fourth argument of $replace function must evaluate to a positive number")
		}
		limit = int(l)
	}
	if a[2] == Undefined {
		return nil, newErr("T0410", pos, "argument 3 of function $replace does not match function signature")
	}
	var ms []regexMatch
	switch p := a[1].(type) {
	case string:
		start := 0
		for limit < 0 || len(ms) < limit {
			i := strings.Index(s[start:], p)
			if i < 0 {
				break
			}
			b := start + i
			ms = append(ms, regexMatch{match: p, index: utf16Len(s[:b]), start: b, end: b + len(p), groups: []any{}})
			start = b + len(p)
		}
	case *regexValue:
		var empty bool
		ms, empty = p.find(s, limit)
		if empty || (len(ms) > 0 && ms[0].start == ms[0].end) {
			return nil, newErr("D1004", pos, "regular expression matches zero length string")
		}
	default:
		return nil, newErr("T0410", pos, "argument 2 of function $replace does not match function signature")
	}
	var b strings.Builder
	last := 0
	for _, m := range ms {
		b.WriteString(s[last:m.start])
		switch r := a[2].(type) {
		case string:
			if _, literal := a[1].(string); literal {
				// a string pattern takes the replacement literally
				b.WriteString(r)
			} else {
				b.WriteString(substitute(r, m))
			}
		default:
			v, err := ev.apply(r, []any{m.object()}, Undefined, pos, "")
			if err != nil {
				return nil, err
			}
			str, ok := v.(string)
			if !ok {
				return nil, newErr("D3012", pos, "attempted to replace a matched string with a non-string value")
			}
			b.WriteString(str)
		}
		last = m.end
		if b.Len() > ev.cfg.maxString {
			return nil, ev.tooLarge(pos, "string")
		}
	}
	b.WriteString(s[last:])
	return b.String(), nil
}

// substitute expands $0, $1… and $$ in a replacement string.
func substitute(r string, m regexMatch) string {
	var b strings.Builder
	for i := 0; i < len(r); i++ {
		if r[i] != '$' || i+1 >= len(r) {
			b.WriteByte(r[i])
			continue
		}
		next := r[i+1]
		if next == '$' {
			b.WriteByte('$')
			i++
			continue
		}
		if next == '0' {
			b.WriteString(m.match)
			i++
			continue
		}
		maxDigits := 1
		if len(m.groups) > 0 {
			maxDigits = int(math.Floor(math.Log10(float64(len(m.groups))))) + 1
		}
		end := i + 1 + maxDigits
		if end > len(r) {
			end = len(r)
		}
		digits := leadingDigits(r[i+1 : end])
		idx, err := strconv.Atoi(digits)
		if err == nil && maxDigits > 1 && idx > len(m.groups) && len(digits) > 1 {
			digits = digits[:len(digits)-1]
			idx, err = strconv.Atoi(digits)
		}
		if err != nil {
			b.WriteByte('$')
			continue
		}
		if idx >= 1 && idx <= len(m.groups) {
			g, _ := m.groups[idx-1].(string)
			b.WriteString(g)
		}
		i += len(digits)
	}
	return b.String()
}

func leadingDigits(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}

func fnNumber(_ *evaluator, a []any, pos int) (any, error) {
	switch v := a[0].(type) {
	case bool:
		if v {
			return 1.0, nil
		}
		return 0.0, nil
	case string:
		if f, ok := parseJSNumber(v); ok {
			return f, nil
		}
		return nil, newErr("D3030", pos, "unable to cast value to a number: %q", v)
	}
	if f, ok := toNumber(a[0]); ok {
		return f, nil
	}
	return Undefined, nil
}

// parseJSNumber accepts what $number accepts: a JSON number and 0x/0o/0b
// integers.
func parseJSNumber(s string) (float64, bool) {
	t := s
	if len(t) > 2 && t[0] == '0' {
		base := 0
		switch t[1] {
		case 'x', 'X':
			base = 16
		case 'o', 'O':
			base = 8
		case 'b', 'B':
			base = 2
		}
		if base != 0 {
			n, err := strconv.ParseUint(t[2:], base, 64)
			return float64(n), err == nil
		}
	}
	if !numberLiteral(t) {
		return 0, false
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

func numberLiteral(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	intDigits := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		intDigits++
	}
	if intDigits == 0 {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		frac := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			frac++
		}
		if frac == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			i++
		}
		ed := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			ed++
		}
		if ed == 0 {
			return false
		}
	}
	return i == len(s)
}

// roundHalfEven is $round: round half to even at the given number of decimal
// places, computed on the decimal representation to avoid binary noise.
func roundHalfEven(f float64, precision int) float64 {
	shifted := f
	if precision != 0 {
		shifted = shiftDecimal(f, precision)
	}
	r := math.Floor(shifted + 0.5)
	if diff := r - shifted; math.Abs(diff) == 0.5 && math.Mod(math.Abs(r), 2) == 1 {
		r--
	}
	if precision != 0 {
		r = shiftDecimal(r, -precision)
	}
	if r == 0 {
		r = 0
	}
	return r
}

// shiftDecimal multiplies by 10^n through the decimal text, as the reference
// does with its "e" string trick.
func shiftDecimal(f float64, n int) float64 {
	s := formatNumber(f)
	mant, exp := s, 0
	if i := strings.IndexByte(s, 'e'); i >= 0 {
		mant = s[:i]
		exp, _ = strconv.Atoi(s[i+1:])
	}
	r, err := strconv.ParseFloat(mant+"e"+strconv.Itoa(exp+n), 64)
	if err != nil {
		return f * math.Pow10(n)
	}
	return r
}

func (ev *evaluator) toBoolean(v any) bool {
	ev.count()
	switch x := v.(type) {
	case bool:
		return x
	case string:
		return x != ""
	case nil:
		return false
	case map[string]any:
		return len(x) > 0
	}
	if v == Undefined || isFunc(v) {
		return false
	}
	if items, ok := asArray(v); ok {
		if len(items) == 1 {
			return ev.toBoolean(items[0])
		}
		for _, it := range items {
			if ev.toBoolean(it) {
				return true
			}
		}
		return false
	}
	if f, ok := toNumber(v); ok {
		return f != 0
	}
	return false
}

// arity is the number of arguments a higher-order function passes to fn.
func arity(fn any) int {
	switch f := fn.(type) {
	case *lambda:
		if f.partialOf != nil {
			n := 0
			for _, a := range f.partialArgs {
				if a == placeholder {
					n++
				}
			}
			return n
		}
		if f.first != nil {
			return 1
		}
		return len(f.params)
	case *builtin:
		if f.name == "string" {
			return 1 // the reference's $string declares its second parameter with a default
		}
		return len(f.sig.params)
	case *transformer, *regexValue:
		return 1
	}
	return 3
}

func hofArgs(fn any, item any, index int, arr []any) []any {
	args := []any{item}
	n := arity(fn)
	if n >= 2 {
		args = append(args, float64(index))
	}
	if n >= 3 {
		args = append(args, arr)
	}
	return args
}

func fnMap(ev *evaluator, a []any, pos int) (any, error) {
	if a[0] == Undefined {
		return Undefined, nil
	}
	items, _ := asArray(a[0])
	out := newSeq()
	for i, it := range items {
		v, err := ev.apply(a[1], hofArgs(a[1], it, i, items), Undefined, pos, "")
		if err != nil {
			return nil, err
		}
		if v != Undefined {
			out.items = append(out.items, v)
		}
	}
	return out, nil
}

func fnFilter(ev *evaluator, a []any, pos int) (any, error) {
	if a[0] == Undefined {
		return Undefined, nil
	}
	items, _ := asArray(a[0])
	out := newSeq()
	for i, it := range items {
		v, err := ev.apply(a[1], hofArgs(a[1], it, i, items), Undefined, pos, "")
		if err != nil {
			return nil, err
		}
		if ev.toBoolean(v) {
			out.items = append(out.items, it)
		}
	}
	return out, nil
}

func fnSingle(ev *evaluator, a []any, pos int) (any, error) {
	if a[0] == Undefined {
		return Undefined, nil
	}
	items, _ := asArray(a[0])
	found := false
	var result any = Undefined
	for i, it := range items {
		keep := true
		if a[1] != Undefined {
			v, err := ev.apply(a[1], hofArgs(a[1], it, i, items), Undefined, pos, "")
			if err != nil {
				return nil, err
			}
			keep = ev.toBoolean(v)
		}
		if keep {
			if found {
				return nil, newErr("D3138", pos, "the $single() function expected exactly 1 matching result; instead it matched more")
			}
			found = true
			result = it
		}
	}
	if !found {
		return nil, newErr("D3139", pos, "the $single() function expected exactly 1 matching result; instead it matched 0")
	}
	return result, nil
}

func fnZip(_ *evaluator, a []any, _ int) (any, error) {
	var arrays [][]any
	minLen := -1
	for _, arg := range a {
		items, ok := asArray(arg)
		if !ok {
			items = nil
			if arg != Undefined {
				items = []any{arg}
			}
		}
		arrays = append(arrays, items)
		if minLen < 0 || len(items) < minLen {
			minLen = len(items)
		}
	}
	out := []any{}
	for i := 0; i < minLen; i++ {
		tuple := make([]any, len(arrays))
		for j := range arrays {
			tuple[j] = arrays[j][i]
		}
		out = append(out, tuple)
	}
	return out, nil
}

func fnReduce(ev *evaluator, a []any, pos int) (any, error) {
	if a[0] == Undefined {
		return Undefined, nil
	}
	items, _ := asArray(a[0])
	n := arity(a[1])
	if n < 2 {
		return nil, newErr("D3050", pos, "the second argument of reduce function must be a function with at least two arguments")
	}
	var acc any
	i := 0
	if a[2] == Undefined && len(items) > 0 {
		acc = items[0]
		i = 1
	} else {
		acc = a[2]
	}
	for ; i < len(items); i++ {
		args := []any{acc, items[i]}
		if n >= 3 {
			args = append(args, float64(i))
		}
		if n >= 4 {
			args = append(args, items)
		}
		v, err := ev.apply(a[1], args, Undefined, pos, "")
		if err != nil {
			return nil, err
		}
		acc = v
	}
	return acc, nil
}

func fnSift(ev *evaluator, a []any, pos int) (any, error) {
	m, ok := a[0].(map[string]any)
	if !ok {
		return Undefined, nil
	}
	out := map[string]any{}
	var order []string
	defer func() { ev.recordOrder(out, order) }()
	for _, k := range ev.keys(m) {
		args := []any{m[k]}
		n := arity(a[1])
		if n >= 2 {
			args = append(args, k)
		}
		if n >= 3 {
			args = append(args, m)
		}
		v, err := ev.apply(a[1], args, Undefined, pos, "")
		if err != nil {
			return nil, err
		}
		if ev.toBoolean(v) {
			out[k] = m[k]
			order = append(order, k)
		}
	}
	if len(out) == 0 {
		return Undefined, nil
	}
	return out, nil
}

func fnEach(ev *evaluator, a []any, pos int) (any, error) {
	m, ok := a[0].(map[string]any)
	if !ok {
		return Undefined, nil
	}
	out := newSeq()
	for _, k := range ev.keys(m) {
		args := []any{m[k]}
		n := arity(a[1])
		if n >= 2 {
			args = append(args, k)
		}
		if n >= 3 {
			args = append(args, m)
		}
		v, err := ev.apply(a[1], args, Undefined, pos, "")
		if err != nil {
			return nil, err
		}
		if v != Undefined {
			out.items = append(out.items, v)
		}
	}
	return out, nil
}

func fnKeys(ev *evaluator, a []any, _ int) (any, error) {
	out := newSeq()
	if items, ok := asArray(a[0]); ok {
		seen := map[string]bool{}
		var keys []string
		for _, it := range items {
			if m, ok := it.(map[string]any); ok {
				for _, k := range ev.keys(m) {
					if !seen[k] {
						seen[k] = true
						keys = append(keys, k)
					}
				}
			}
		}
		for _, k := range keys {
			out.items = append(out.items, k)
		}
		return out, nil
	}
	if m, ok := a[0].(map[string]any); ok {
		for _, k := range ev.keys(m) {
			out.items = append(out.items, k)
		}
	}
	return out, nil
}

func fnSpread(ev *evaluator, a []any, _ int) (any, error) {
	var spread func(v any) any
	spread = func(v any) any {
		ev.count()
		if items, ok := asArray(v); ok {
			var acc any = Undefined
			for _, it := range items {
				acc = appendValues(acc, spread(it))
			}
			return acc
		}
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		out := newSeq()
		for _, k := range ev.keys(m) {
			out.items = append(out.items, map[string]any{k: m[k]})
		}
		return out
	}
	return spread(a[0]), nil
}

func fnSort(ev *evaluator, a []any, pos int) (any, error) {
	if a[0] == Undefined {
		return Undefined, nil
	}
	items, _ := asArray(a[0])
	if len(items) <= 1 {
		return a[0], nil
	}
	out := append([]any(nil), items...)
	if a[1] == Undefined {
		allNum, allStr := true, true
		for _, it := range items {
			if _, ok := toNumber(it); !ok {
				allNum = false
			}
			if _, ok := it.(string); !ok {
				allStr = false
			}
		}
		if !allNum && !allStr {
			return nil, newErr("D3070", pos, "the single argument form of the sort function can only be applied to an array of strings or an array of numbers; use the second argument to specify a comparison function")
		}
		sort.SliceStable(out, func(i, j int) bool {
			if allNum {
				x, _ := toNumber(out[i])
				y, _ := toNumber(out[j])
				return x < y
			}
			return compareUTF16(out[i].(string), out[j].(string)) < 0
		})
		return out, nil
	}
	// merge sort that swaps a and b when fn(a, b) is true, as the reference
	var sortErr error
	greater := func(x, y any) bool {
		if sortErr != nil {
			return false
		}
		v, err := ev.apply(a[1], []any{x, y}, Undefined, pos, "")
		if err != nil {
			sortErr = err
			return false
		}
		return ev.toBoolean(v)
	}
	var msort func(s []any) []any
	msort = func(s []any) []any {
		if len(s) <= 1 {
			return s
		}
		mid := len(s) / 2
		l, r := msort(s[:mid]), msort(s[mid:])
		res := make([]any, 0, len(s))
		for len(l) > 0 && len(r) > 0 {
			if greater(l[0], r[0]) {
				res = append(res, r[0])
				r = r[1:]
			} else {
				res = append(res, l[0])
				l = l[1:]
			}
		}
		res = append(res, l...)
		return append(res, r...)
	}
	sorted := msort(out)
	if sortErr != nil {
		return nil, sortErr
	}
	return sorted, nil
}

func encodeURI(s, keep string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x80 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(keep, c) >= 0) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte("0123456789ABCDEF"[c>>4])
		b.WriteByte("0123456789ABCDEF"[c&0xF])
	}
	return b.String()
}

func fnDecodeURL(_ *evaluator, a []any, pos int) (any, error) {
	s, ok := a[0].(string)
	if !ok {
		return Undefined, nil
	}
	r, err := url.PathUnescape(s)
	if err != nil || !utf8.ValidString(r) {
		return nil, newErr("D3140", pos, "malformed URL passed to $decodeUrl(): %q", s)
	}
	return r, nil
}
