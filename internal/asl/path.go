package asl

import (
	"fmt"
	"maps"
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

// bracketNames rewrites dot-notation member names that the JSONPath parser
// does not accept unquoted (such as "$.delivery-partner", which Step
// Functions allows) into bracket notation: "$['delivery-partner']".
// Brackets and filters are copied verbatim.
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
				if c == quote {
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
			depth++
			b.WriteByte(c)
		case c == '.' && i+1 < len(src) && src[i+1] != '.' && src[i+1] != '[':
			j := i + 1
			for j < len(src) && src[j] != '.' && src[j] != '[' {
				j++
			}
			name := src[i+1 : j]
			if plainName(name) {
				b.WriteString(src[i:j])
			} else {
				b.WriteString("['")
				b.WriteString(strings.ReplaceAll(name, "'", "\\'"))
				b.WriteString("']")
			}
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
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
