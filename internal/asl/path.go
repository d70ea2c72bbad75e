package asl

import (
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/ohler55/ojg/jp"
)

// path is a compiled JSONPath as used by InputPath, OutputPath, ItemsPath,
// the values of ".$" fields, Choice variables and the other "…Path" fields.
// Paths starting with "$$" select from the context object instead of the
// state input.
type path struct {
	raw      string
	context  bool    // "$$…": evaluated against the context object
	variable string  // "$name…": evaluated against the workflow variable name
	expr     jp.Expr // compiled expression, rooted at "$"
	simple   []any   // non-nil when the path is only child names and indexes: fast lookup
	definite bool    // selects at most one value (no wildcard, slice, filter, union, descent)
	identity bool    // "$" (or "$$"): the whole document
}

// compilePath parses a JSONPath. The error names the path and the problem.
func compilePath(raw string) (*path, error) {
	p := &path{raw: raw}
	src := raw
	switch {
	case strings.HasPrefix(raw, "$$"):
		p.context = true
		src = raw[1:]
	case strings.HasPrefix(raw, "$"):
		if name, rest, ok := variablePrefix(raw); ok {
			if name == reservedStatesVariable {
				return nil, fmt.Errorf("path %q: $states is reserved for JSONata states and undefined in JSONPath", raw)
			}
			if err := validVariableName(name); err != nil {
				return nil, fmt.Errorf("path %q: %v", raw, err)
			}
			p.variable = name
			src = "$" + rest
		}
	default:
		return nil, fmt.Errorf("path %q must start with $", raw)
	}
	expr, err := jp.ParseString(bracketNames(src))
	if err != nil {
		return nil, fmt.Errorf("path %q: %v", raw, err)
	}
	p.expr = expr
	p.definite = true
	simple := make([]any, 0, len(expr))
	for i, f := range expr {
		switch x := f.(type) {
		case jp.Root:
			if i != 0 {
				return nil, fmt.Errorf("path %q: $ may only start a path", raw)
			}
		case jp.Child:
			simple = append(simple, string(x))
		case jp.Nth:
			simple = append(simple, int(x))
		case jp.Bracket:
			// notation marker only
		default:
			p.definite = false
			simple = nil
		}
		if !p.definite {
			break
		}
	}
	if p.definite {
		p.simple = simple
		p.identity = len(simple) == 0
	}
	return p, nil
}

// variablePrefix splits "$name.rest" into the variable name and ".rest".
func variablePrefix(raw string) (name, rest string, ok bool) {
	if len(raw) < 2 {
		return "", "", false
	}
	switch raw[1] {
	case '.', '[', '$', ' ':
		return "", "", false
	}
	end := len(raw)
	for i, r := range raw[1:] {
		if r == '.' || r == '[' {
			end = i + 1
			break
		}
	}
	return raw[1:end], raw[end:], true
}

// wholeInput reports whether p is "$": the whole state input.
func (p *path) wholeInput() bool { return p.identity && !p.context && p.variable == "" }

// mustReference checks that p is a reference path: it selects a single node
// by names and indexes only (required by ResultPath and by "…Path" fields
// that must point at one value).
func (p *path) mustReference() error {
	if p.simple == nil {
		return fmt.Errorf("path %q must be a reference path (only names and indexes, no wildcards, filters or slices)", p.raw)
	}
	return nil
}

// get selects from doc (the state input, or the context object for "$$"
// paths; the caller passes the right one). found is false when a definite
// path selects nothing. An indefinite path always returns an array.
//
// What it returns is never a lazy value (raw.go), though it may hold some.
func (p *path) get(doc any) (val any, found bool) {
	v, ok := p.find(doc)
	return resolve(v), ok
}

// find is get for a value placed in a state's data, not read: it may be a
// lazy value.
func (p *path) find(doc any) (val any, found bool) {
	if p.identity {
		return doc, true
	}
	if p.simple != nil {
		cur := doc
		for _, step := range p.simple {
			switch s := step.(type) {
			case string:
				var ok bool
				if cur, ok = memberOf(cur, s); !ok {
					return nil, false
				}
			case int:
				a, ok := resolve(cur).([]any)
				if !ok {
					return nil, false
				}
				i := s
				if i < 0 {
					i += len(a)
				}
				if i < 0 || i >= len(a) {
					return nil, false
				}
				cur = a[i]
			}
		}
		return cur, true
	}
	res := p.expr.Get(deepResolve(doc)) // ojg walks plain values only
	if res == nil {
		res = []any{}
	}
	return res, true
}

// set returns doc with val placed at the reference path p, creating
// missing objects along the way. Containers on the path are copied, or,
// with overlays, objects are overlaid (overlay.go); doc itself is never
// modified. It fails when an existing node on the path is not an object
// (or an index is out of range), as ResultPath requires.
func (p *path) set(doc, val any, overlays bool) (any, error) {
	if p.identity {
		return val, nil
	}
	return setAt(doc, p.simple, val, p.raw, overlays)
}

// smallMap is the number of entries a Go map holds before it outgrows its
// first group: a clone of a smaller map can take one more without growing.
const smallMap = 8

func setAt(cur any, steps []any, val any, raw string, overlays bool) (any, error) {
	if len(steps) == 0 {
		return val, nil
	}
	if r, ok := cur.(*rawJSON); ok {
		cur = r.value()
	}
	switch s := steps[0].(type) {
	case string:
		switch c := cur.(type) {
		case *overlay:
			old, _ := c.get(s)
			child, err := setAt(old, steps[1:], val, raw, overlays)
			if err != nil {
				return nil, err
			}
			return c.with(s, child), nil
		case map[string]any:
			child, err := setAt(c[s], steps[1:], val, raw, overlays)
			if err != nil {
				return nil, err
			}
			if overlays && c != nil {
				return newOverlay(c, s, child), nil
			}
			var m map[string]any
			if _, replaced := c[s]; replaced || len(c) < smallMap {
				m = maps.Clone(c) // copies a small map's slots as they are, no rehashing
			} else {
				m = make(map[string]any, len(c)+1)
				maps.Copy(m, c)
			}
			if m == nil { // a nil map (JSON null is nil, not a map)
				m = make(map[string]any, 1)
			}
			m[s] = child
			return m, nil
		case nil:
			child, err := setAt(nil, steps[1:], val, raw, overlays)
			if err != nil {
				return nil, err
			}
			return map[string]any{s: child}, nil
		default:
			return nil, fmt.Errorf("cannot set %q: field %q is inside a %s, not an object", raw, s, typeName(cur))
		}
	case int:
		a, ok := cur.([]any)
		if !ok {
			return nil, fmt.Errorf("cannot set %q: index %d is applied to a %s, not an array", raw, s, typeName(cur))
		}
		i := s
		if i < 0 {
			i += len(a)
		}
		if i < 0 || i >= len(a) {
			return nil, fmt.Errorf("cannot set %q: index %d out of range (length %d)", raw, s, len(a))
		}
		cp := make([]any, len(a))
		copy(cp, a)
		child, err := setAt(a[i], steps[1:], val, raw, overlays)
		if err != nil {
			return nil, err
		}
		cp[i] = child
		return cp, nil
	}
	return nil, fmt.Errorf("cannot set %q", raw)
}

// optPath is an optional path field (InputPath, OutputPath, ResultPath):
// absent means "$", JSON null means "discard".
type optPath struct {
	p    *path // nil when null
	null bool
}

var rootPath = &path{raw: "$", definite: true, identity: true, simple: []any{}}

// bracketNames rewrites a path into the form the JSONPath parser reads,
// as Step Functions' JSONPath (Jayway's) reads it: dot-notation member
// names the parser does not accept unquoted (such as
// "$.delivery-partner") become bracket notation
// ("$['delivery-partner']"); a dot before a bracket ("$.[0]",
// "$.Snapshots.[0].State") is dropped, as Jayway skips it; and quoted
// names in brackets are unescaped as Jayway unescapes them (a backslash
// before any other character than n, t, r, f, b or u keeps that
// character: "$['a\.b']" names "a.b"), then quoted again for the parser.
// Filters are copied verbatim.
func bracketNames(src string) string {
	if !needsBrackets(src) {
		return src
	}
	var b strings.Builder
	depth := 0
	var quote byte
	for i := 0; i < len(src); i++ {
		c := src[i]
		if depth > 0 {
			b.WriteByte(c)
			switch {
			case quote != 0:
				if c == '\\' && i+1 < len(src) {
					i++
					b.WriteByte(src[i])
				} else if c == quote {
					quote = 0
				}
			case c == '\'' || c == '"':
				quote = c
			case c == '[':
				depth++
			case c == ']':
				depth--
			}
			continue
		}
		switch {
		case c == '[':
			if names, end, ok := quotedNames(src, i); ok {
				b.WriteString(names)
				i = end
				continue
			}
			depth++
			b.WriteByte(c)
		case c == '.' && i+1 < len(src) && src[i+1] == '[' && (i == 0 || src[i-1] != '.'):
			// "$.[0]": Jayway reads the bracket after the dot
		case c == '.' && i+1 < len(src) && src[i+1] != '.' && src[i+1] != '[':
			j := i + 1
			for j < len(src) && src[j] != '.' && src[j] != '[' {
				j++
			}
			name := src[i+1 : j]
			if plainName(name) {
				b.WriteString(src[i:j])
			} else {
				b.WriteString(quoteName(name))
			}
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// quotedNames reads the bracket at src[open] when it holds quoted names
// (['a'] or ['a','b']), unescaped as Jayway unescapes them, and writes it
// again for the parser; end is the index of its "]". ok is false for any
// other bracket (an index, a slice, a wildcard, a filter).
func quotedNames(src string, open int) (out string, end int, ok bool) {
	var names []string
	i := open + 1
	for {
		for i < len(src) && src[i] == ' ' {
			i++
		}
		if i >= len(src) || (src[i] != '\'' && src[i] != '"') {
			return "", 0, false
		}
		q := src[i]
		j := i + 1
		for j < len(src) && src[j] != q {
			if src[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(src) {
			return "", 0, false
		}
		names = append(names, jaywayUnescape(src[i+1:j]))
		i = j + 1
		for i < len(src) && src[i] == ' ' {
			i++
		}
		if i < len(src) && src[i] == ',' {
			i++
			continue
		}
		if i < len(src) && src[i] == ']' {
			break
		}
		return "", 0, false
	}
	var b strings.Builder
	b.WriteByte('[')
	for k, n := range names {
		if k > 0 {
			b.WriteByte(',')
		}
		b.WriteString(quoted(n))
	}
	b.WriteByte(']')
	return b.String(), i, true
}

// jaywayUnescape unescapes a quoted name as Jayway's JsonPath does:
// \\, \', \", \r, \f, \t, \n, \b and \uXXXX; a backslash before any other
// character keeps that character, and a trailing one stays.
func jaywayUnescape(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		if i+1 == len(s) {
			b.WriteByte('\\')
			break
		}
		i++
		switch e := s[i]; e {
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'b':
			b.WriteByte('\b')
		case 'u':
			if i+4 < len(s) {
				if r, err := strconv.ParseUint(s[i+1:i+5], 16, 16); err == nil {
					b.WriteRune(rune(r))
					i += 4
					continue
				}
			}
			b.WriteByte(e)
		default:
			b.WriteByte(e)
		}
	}
	return b.String()
}

// quoteName is a member name in bracket notation for the parser.
func quoteName(name string) string { return "[" + quoted(name) + "]" }

// quoted writes name as a single-quoted string the parser reads back as
// name.
func quoted(name string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for _, r := range name {
		switch r {
		case '\'', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		case '\f':
			b.WriteString(`\f`)
		case '\b':
			b.WriteString(`\b`)
		default:
			if r < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('\'')
	return b.String()
}

func needsBrackets(src string) bool {
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c == '[' {
			return true // be safe: let the scanner decide
		}
		if !(c == '$' || c == '.' || c == '_' || c == '*' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
			return true
		}
	}
	return false
}

func plainName(name string) bool {
	if name == "*" || name == "" {
		return true
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
			return false
		}
	}
	return true
}

// normalized writes a reference path in the bracket notation Step
// Functions' causes use: "$.a.b[0]" is "$['a']['b'][0]".
func (p *path) normalized() string {
	if p.simple == nil {
		return p.raw
	}
	var b strings.Builder
	b.WriteString("$")
	for _, s := range p.simple {
		switch x := s.(type) {
		case string:
			b.WriteString("['")
			b.WriteString(x)
			b.WriteString("']")
		case int:
			fmt.Fprintf(&b, "[%d]", x)
		}
	}
	return b.String()
}
