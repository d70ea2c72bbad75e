package asl

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"math"
	mrand "math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// intrinsic is a parsed intrinsic function call such as
// States.Format('{} {}', $.a, States.ArrayLength($.b)).
type intrinsic struct {
	name string
	args []intrinsicArg
	raw  string
}

// intrinsicArg is a literal, a path, or a nested call.
type intrinsicArg struct {
	literal  any
	path     string
	compiled *path // path, compiled once with the definition
	call     *intrinsic
}

// Limits documented for the JSONPath intrinsics.
const (
	maxIntrinsicNesting = 10
	maxArrayRange       = 1000
	maxEncodeLen        = 10000
)

// arity gives the allowed argument counts of each function; -1 is unbounded.
var intrinsicArity = map[string][2]int{
	"States.Format":         {1, -1},
	"States.StringToJson":   {1, 1},
	"States.JsonToString":   {1, 1},
	"States.Array":          {0, -1},
	"States.ArrayPartition": {2, 2},
	"States.ArrayContains":  {2, 2},
	"States.ArrayRange":     {3, 3},
	"States.ArrayGetItem":   {2, 2},
	"States.ArrayLength":    {1, 1},
	"States.ArrayUnique":    {1, 1},
	"States.Base64Encode":   {1, 1},
	"States.Base64Decode":   {1, 1},
	"States.Hash":           {2, 2},
	"States.JsonMerge":      {3, 3},
	"States.MathRandom":     {2, 3},
	"States.MathAdd":        {2, 2},
	"States.StringSplit":    {2, 2},
	"States.UUID":           {0, 0},
}

// isIntrinsic reports whether a ".$" value is an intrinsic call rather than a path.
func isIntrinsic(s string) bool {
	return strings.HasPrefix(strings.TrimSpace(s), "States.")
}

// parseIntrinsic parses an intrinsic call; errors name the expression.
func parseIntrinsic(expr string) (*intrinsic, error) {
	p := &intrinsicParser{src: []rune(expr)}
	p.skipSpace()
	f, err := p.call(1)
	if err != nil {
		return nil, fmt.Errorf("intrinsic %q: %v", expr, err)
	}
	p.skipSpace()
	if p.pos != len(p.src) {
		return nil, fmt.Errorf("intrinsic %q: unexpected %q after the closing parenthesis", expr, string(p.src[p.pos:]))
	}
	f.raw = expr
	return f, nil
}

type intrinsicParser struct {
	src []rune
	pos int
}

func (p *intrinsicParser) skipSpace() {
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t' || p.src[p.pos] == '\n' || p.src[p.pos] == '\r') {
		p.pos++
	}
}

func (p *intrinsicParser) peek() rune {
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

func (p *intrinsicParser) call(depth int) (*intrinsic, error) {
	if depth > maxIntrinsicNesting {
		return nil, fmt.Errorf("more than %d nested intrinsic functions", maxIntrinsicNesting)
	}
	start := p.pos
	for p.pos < len(p.src) && (p.src[p.pos] == '.' || isIdentRune(p.src[p.pos])) {
		p.pos++
	}
	name := string(p.src[start:p.pos])
	arity, ok := intrinsicArity[name]
	if !ok {
		return nil, fmt.Errorf("unknown intrinsic function %q", name)
	}
	p.skipSpace()
	if p.peek() != '(' {
		return nil, fmt.Errorf("%s: expected '(' after the function name", name)
	}
	p.pos++
	f := &intrinsic{name: name}
	p.skipSpace()
	if p.peek() == ')' {
		p.pos++
	} else {
		for {
			p.skipSpace()
			arg, err := p.arg(depth)
			if err != nil {
				return nil, fmt.Errorf("%s: argument %d: %v", name, len(f.args)+1, err)
			}
			f.args = append(f.args, arg)
			p.skipSpace()
			switch p.peek() {
			case ',':
				p.pos++
				continue
			case ')':
				p.pos++
			default:
				return nil, fmt.Errorf("%s: expected ',' or ')' after argument %d", name, len(f.args))
			}
			break
		}
	}
	if len(f.args) < arity[0] || (arity[1] >= 0 && len(f.args) > arity[1]) {
		return nil, fmt.Errorf("%s takes %s, got %d", name, arityText(arity), len(f.args))
	}
	return f, nil
}

func arityText(a [2]int) string {
	switch {
	case a[0] == a[1]:
		return fmt.Sprintf("%d argument(s)", a[0])
	case a[1] < 0:
		return fmt.Sprintf("at least %d argument(s)", a[0])
	default:
		return fmt.Sprintf("%d to %d arguments", a[0], a[1])
	}
}

func isIdentRune(r rune) bool {
	return r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
}

func (p *intrinsicParser) arg(depth int) (intrinsicArg, error) {
	c := p.peek()
	switch {
	case c == '\'':
		s, err := p.stringLit()
		return intrinsicArg{literal: s}, err
	case c == '$':
		return p.pathArg()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case strings.HasPrefix(string(p.src[p.pos:]), "States."):
		f, err := p.call(depth + 1)
		return intrinsicArg{call: f}, err
	}
	for _, kw := range []struct {
		word string
		val  any
	}{{"true", true}, {"false", false}, {"null", nil}} {
		if strings.HasPrefix(string(p.src[p.pos:]), kw.word) {
			end := p.pos + len(kw.word)
			if end == len(p.src) || !isIdentRune(p.src[end]) {
				p.pos = end
				return intrinsicArg{literal: kw.val}, nil
			}
		}
	}
	if c == 0 {
		return intrinsicArg{}, fmt.Errorf("unexpected end of expression")
	}
	return intrinsicArg{}, fmt.Errorf("unexpected %q: an argument is a 'string', a number, true, false, null, a path or an intrinsic call", string(c))
}

// stringLit reads a single-quoted literal. Inside it, \' \{ \} and \\ are
// escapes; a lone backslash is an error. Escaped braces are kept escaped so
// States.Format can tell them from placeholders; unescapeBraces removes them.
func (p *intrinsicParser) stringLit() (string, error) {
	p.pos++ // opening quote
	var b strings.Builder
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch c {
		case '\\':
			if p.pos+1 >= len(p.src) {
				return "", fmt.Errorf("unterminated escape at end of string literal")
			}
			n := p.src[p.pos+1]
			switch n {
			case '\'':
				b.WriteRune('\'')
			case '\\':
				b.WriteString(`\\`)
			case '{', '}':
				b.WriteRune('\\')
				b.WriteRune(n)
			default:
				return "", fmt.Errorf("invalid escape \\%c in string literal (only \\' \\{ \\} \\\\ are allowed)", n)
			}
			p.pos += 2
		case '\'':
			p.pos++
			return b.String(), nil
		default:
			b.WriteRune(c)
			p.pos++
		}
	}
	return "", fmt.Errorf("unterminated string literal")
}

func (p *intrinsicParser) pathArg() (intrinsicArg, error) {
	start := p.pos
	depth := 0
	inQuote := rune(0)
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if inQuote != 0 {
			if c == inQuote {
				inQuote = 0
			}
			p.pos++
			continue
		}
		switch c {
		case '\'', '"':
			inQuote = c
		case '[', '(':
			depth++
		case ']':
			depth--
		case ')':
			if depth == 0 {
				goto done
			}
			depth--
		case ',':
			if depth == 0 {
				goto done
			}
		}
		p.pos++
	}
done:
	raw := strings.TrimSpace(string(p.src[start:p.pos]))
	compiled, err := compilePath(raw)
	if err != nil {
		return intrinsicArg{}, err
	}
	return intrinsicArg{path: raw, compiled: compiled}, nil
}

func (p *intrinsicParser) number() (intrinsicArg, error) {
	start := p.pos
	if p.peek() == '-' {
		p.pos++
	}
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || (c == '-' && p.pos > start) {
			p.pos++
			continue
		}
		break
	}
	s := string(p.src[start:p.pos])
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return intrinsicArg{literal: i}, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return intrinsicArg{}, fmt.Errorf("invalid number %q", s)
	}
	return intrinsicArg{literal: f}, nil
}

// unescapeBraces turns the kept escapes \{ \} \\ of a string literal into
// their characters.
func unescapeBraces(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			b.WriteByte(s[i+1])
			i++
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// eval runs the call. lookup returns the value a path selects (or an error
// when it selects nothing), given its text and its compiled form. Failures
// are States.IntrinsicFailure.
func (f *intrinsic) eval(lookup func(raw string, p *path) (any, error)) (any, error) {
	args := make([]any, len(f.args))
	// rawLit marks string literals whose brace escapes are still in place.
	rawLit := make([]bool, len(f.args))
	for i, a := range f.args {
		switch {
		case a.call != nil:
			v, err := a.call.eval(lookup)
			if err != nil {
				return nil, err
			}
			args[i] = resolve(v) // an element a call returned may be lazy (raw.go)
		case a.path != "":
			v, err := lookup(a.path, a.compiled)
			if err != nil {
				return nil, err
			}
			args[i] = v
		default:
			args[i] = a.literal
			_, rawLit[i] = a.literal.(string)
		}
	}
	for i := range args {
		if rawLit[i] && !(f.name == "States.Format" && i == 0) {
			args[i] = unescapeBraces(args[i].(string))
		}
	}
	v, err := f.apply(args, rawLit)
	if err != nil {
		return nil, newError(ErrIntrinsicFailure, "%s: %v", f.name, err)
	}
	return v, nil
}

func (f *intrinsic) apply(args []any, rawLit []bool) (any, error) {
	switch f.name {
	case "States.Format":
		return format(args, rawLit[0])
	case "States.StringToJson":
		s, err := argString(args, 0)
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(s) == "" {
			return nil, nil // an empty or blank string is null on Step Functions
		}
		v, err := parseJSON([]byte(s))
		if err != nil {
			return nil, fmt.Errorf("the argument is not valid JSON text: %v", err)
		}
		return v, nil
	case "States.JsonToString":
		b, err := marshalJSON(args[0])
		if err != nil {
			return nil, err
		}
		return string(b), nil
	case "States.Array":
		out := make([]any, len(args))
		copy(out, args)
		return out, nil
	case "States.ArrayPartition":
		arr, err := argArray(args, 0)
		if err != nil {
			return nil, err
		}
		size, err := argInt(args, 1)
		if err != nil {
			return nil, err
		}
		if size <= 0 {
			return nil, fmt.Errorf("chunk size must be a positive integer, got %d", size)
		}
		out := make([]any, 0, (len(arr)+int(size)-1)/int(size))
		for i := 0; i < len(arr); i += int(size) {
			end := min(i+int(size), len(arr))
			chunk := make([]any, end-i)
			copy(chunk, arr[i:end])
			out = append(out, chunk)
		}
		return out, nil
	case "States.ArrayContains":
		arr, err := argArray(args, 0)
		if err != nil {
			return nil, err
		}
		for _, e := range arr {
			if jsonEqual(e, args[1]) {
				return true, nil
			}
		}
		return false, nil
	case "States.ArrayRange":
		start, err := argInt(args, 0)
		if err != nil {
			return nil, err
		}
		end, err := argInt(args, 1)
		if err != nil {
			return nil, err
		}
		step, err := argInt(args, 2)
		if err != nil {
			return nil, err
		}
		if step == 0 {
			return nil, fmt.Errorf("step must not be 0")
		}
		out := []any{}
		for i := start; (step > 0 && i <= end) || (step < 0 && i >= end); i += step {
			if len(out) == maxArrayRange {
				return nil, fmt.Errorf("the range has more than %d elements", maxArrayRange)
			}
			out = append(out, i)
		}
		return out, nil
	case "States.ArrayGetItem":
		arr, err := argArray(args, 0)
		if err != nil {
			return nil, err
		}
		idx, err := argInt(args, 1)
		if err != nil {
			return nil, err
		}
		if idx < 0 || idx >= int64(len(arr)) {
			return nil, fmt.Errorf("index %d is out of range for an array of length %d", idx, len(arr))
		}
		return arr[idx], nil
	case "States.ArrayLength":
		arr, err := argArray(args, 0)
		if err != nil {
			return nil, err
		}
		return int64(len(arr)), nil
	case "States.ArrayUnique":
		arr, err := argArray(args, 0)
		if err != nil {
			return nil, err
		}
		out := make([]any, 0, len(arr))
	next:
		for _, e := range arr {
			for _, seen := range out {
				if jsonEqual(e, seen) {
					continue next
				}
			}
			out = append(out, e)
		}
		return out, nil
	case "States.Base64Encode":
		s, err := argString(args, 0)
		if err != nil {
			return nil, err
		}
		if utf8.RuneCountInString(s) > maxEncodeLen {
			return nil, fmt.Errorf("the input has more than %d characters", maxEncodeLen)
		}
		return base64.StdEncoding.EncodeToString([]byte(s)), nil
	case "States.Base64Decode":
		s, err := argString(args, 0)
		if err != nil {
			return nil, err
		}
		if utf8.RuneCountInString(s) > maxEncodeLen {
			return nil, fmt.Errorf("the input has more than %d characters", maxEncodeLen)
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("the input is not valid base64: %v", err)
		}
		return string(b), nil
	case "States.Hash":
		return hashOf(args)
	case "States.JsonMerge":
		a, ok1 := args[0].(map[string]any)
		b, ok2 := args[1].(map[string]any)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("both arguments must be objects, got %s and %s", typeName(args[0]), typeName(args[1]))
		}
		deep, ok := args[2].(bool)
		if !ok {
			return nil, fmt.Errorf("the third argument must be a boolean")
		}
		if deep {
			return nil, fmt.Errorf("deep merge (true) is not supported; pass false for a shallow merge")
		}
		out := make(map[string]any, len(a)+len(b))
		for k, v := range a {
			out[k] = v
		}
		for k, v := range b {
			out[k] = v
		}
		return out, nil
	case "States.MathRandom":
		start, err := argInt(args, 0)
		if err != nil {
			return nil, err
		}
		end, err := argInt(args, 1)
		if err != nil {
			return nil, err
		}
		if end <= start {
			return nil, fmt.Errorf("the end (%d) must be greater than the start (%d)", end, start)
		}
		var r *mrand.Rand
		if len(args) == 3 {
			seed, err := argInt(args, 2)
			if err != nil {
				return nil, err
			}
			r = mrand.New(mrand.NewPCG(uint64(seed), 0))
		} else {
			r = mrand.New(mrand.NewPCG(mrand.Uint64(), mrand.Uint64()))
		}
		return start + r.Int64N(end-start), nil
	case "States.MathAdd":
		// Step Functions rounds each argument half up before adding:
		// MathAdd(1.49, 1.5) is 1 + 2, and -1.5 counts as -1.
		a, err := argRounded(args, 0)
		if err != nil {
			return nil, err
		}
		b, err := argRounded(args, 1)
		if err != nil {
			return nil, err
		}
		for _, x := range []int64{a, b} {
			if x < math.MinInt32 || x > math.MaxInt32 {
				return nil, fmt.Errorf("%d is outside the 32-bit integer range", x)
			}
		}
		return boxInt(a + b), nil
	case "States.StringSplit":
		s, err := argString(args, 0)
		if err != nil {
			return nil, err
		}
		delims, err := argString(args, 1)
		if err != nil {
			return nil, err
		}
		parts := strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(delims, r) })
		out := make([]any, len(parts))
		for i, p := range parts {
			out[i] = p
		}
		return out, nil
	case "States.UUID":
		return newUUID(), nil
	}
	return nil, fmt.Errorf("unknown function")
}

// format implements States.Format. The template's {} placeholders are
// replaced in order; \{ and \} are literal braces.
func format(args []any, escaped bool) (any, error) {
	tmpl, ok := args[0].(string)
	if !ok {
		return nil, fmt.Errorf("the first argument must be a string, got %s", typeName(args[0]))
	}
	var b strings.Builder
	used := 1
	for i := 0; i < len(tmpl); i++ {
		c := tmpl[i]
		if escaped && c == '\\' && i+1 < len(tmpl) {
			b.WriteByte(tmpl[i+1])
			i++
			continue
		}
		if c == '{' && i+1 < len(tmpl) && tmpl[i+1] == '}' {
			if used >= len(args) {
				return nil, fmt.Errorf("the template has more {} placeholders than arguments (%d)", len(args)-1)
			}
			s, err := formatValue(args[used])
			if err != nil {
				return nil, fmt.Errorf("argument %d: %v", used+1, err)
			}
			b.WriteString(s)
			used++
			i++
			continue
		}
		b.WriteByte(c)
	}
	if used != len(args) {
		return nil, fmt.Errorf("the template has %d {} placeholder(s) but %d value argument(s)", used-1, len(args)-1)
	}
	return b.String(), nil
}

// formatValue prints one States.Format argument: a string as is, an
// object or array as javaString does, any other value as its JSON.
func formatValue(v any) (string, error) {
	switch x := resolve(v).(type) {
	case string:
		return x, nil
	case nil:
		return "null", nil
	case map[string]any, []any:
		return javaString(x), nil
	default:
		b, err := marshalJSON(x)
		return string(b), err
	}
}

// javaString prints an object or array argument of States.Format the way
// Step Functions does, as Java's Map and List print: {Arg1=1, Arg2=[a, b]}
// (strings unquoted, keys in the engine's sorted order).
func javaString(v any) string {
	var b strings.Builder
	var walk func(v any)
	walk = func(v any) {
		switch x := resolve(v).(type) { // lazy values inside arguments (raw.go)
		case map[string]any:
			b.WriteByte('{')
			for i, k := range sortedKeys(x) {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString(k)
				b.WriteByte('=')
				walk(x[k])
			}
			b.WriteByte('}')
		case []any:
			b.WriteByte('[')
			for i, e := range x {
				if i > 0 {
					b.WriteString(", ")
				}
				walk(e)
			}
			b.WriteByte(']')
		default:
			s, _ := formatValue(x)
			b.WriteString(s)
		}
	}
	walk(v)
	return b.String()
}

// argRounded reads a number argument rounded half up (Java's Math.round).
func argRounded(args []any, i int) (int64, error) {
	f, ok := asFloat(args[i])
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("argument %d must be a number, got %s", i+1, typeName(args[i]))
	}
	if n, isInt := args[i].(int64); isInt {
		return n, nil
	}
	return int64(math.Floor(f + 0.5)), nil
}

func hashOf(args []any) (any, error) {
	data, err := argString(args, 0)
	if err != nil {
		return nil, err
	}
	if utf8.RuneCountInString(data) > maxEncodeLen {
		return nil, fmt.Errorf("the input has more than %d characters", maxEncodeLen)
	}
	alg, err := argString(args, 1)
	if err != nil {
		return nil, err
	}
	var h hash.Hash
	switch alg {
	case "MD5":
		h = md5.New()
	case "SHA-1":
		h = sha1.New()
	case "SHA-256":
		h = sha256.New()
	case "SHA-384":
		h = sha512.New384()
	case "SHA-512":
		h = sha512.New()
	default:
		return nil, fmt.Errorf("unknown algorithm %q (use MD5, SHA-1, SHA-256, SHA-384 or SHA-512)", alg)
	}
	h.Write([]byte(data))
	return hex.EncodeToString(h.Sum(nil)), nil
}

func argString(args []any, i int) (string, error) {
	s, ok := args[i].(string)
	if !ok {
		return "", fmt.Errorf("argument %d must be a string, got %s", i+1, typeName(args[i]))
	}
	return s, nil
}

func argArray(args []any, i int) ([]any, error) {
	a, ok := args[i].([]any)
	if !ok {
		return nil, fmt.Errorf("argument %d must be an array, got %s", i+1, typeName(args[i]))
	}
	return a, nil
}

func argInt(args []any, i int) (int64, error) {
	switch x := args[i].(type) {
	case int64:
		return x, nil
	case int:
		return int64(x), nil
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x), nil
		}
	}
	return 0, fmt.Errorf("argument %d must be an integer, got %s", i+1, typeName(args[i]))
}

// jsonEqual compares two engine values as JSON (numbers by value).
func jsonEqual(a, b any) bool {
	a, b = resolve(a), resolve(b) // lazy values inside arguments (raw.go)
	ra, ok1 := toRat(a)
	rb, ok2 := toRat(b)
	if ok1 || ok2 {
		return ok1 && ok2 && ra.Cmp(rb) == 0
	}
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !jsonEqual(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// newUUID returns a random version 4 UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = (b[6] & 0x0f) | 0x40
	b[8] = (b[8] & 0x3f) | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
