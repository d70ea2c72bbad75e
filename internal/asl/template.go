package asl

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// template is a compiled payload template: the value of Parameters,
// ItemSelector or ResultSelector. Fields whose names end in ".$" take their
// value from a path or an intrinsic function; everything else is literal.
type template struct {
	kind      tmplKind
	literal   any
	fields    []tmplField
	order     []int // an object's fields by output key, the order its JSON text has
	size      int   // a literal's JSON size
	items     []*template
	path      *path
	intrinsic *intrinsic
}

type tmplKind int

const (
	tmplLiteral tmplKind = iota
	tmplObject
	tmplArray
	tmplPath
	tmplIntrinsic
)

type tmplField struct {
	key   string
	value *template
	raw   string // the ".$" field name, for error messages
}

// compileTemplate compiles a payload template; where names the field for
// load-time error messages.
func compileTemplate(v any, where string) (*template, error) {
	switch x := v.(type) {
	case map[string]any:
		t := &template{kind: tmplObject, fields: make([]tmplField, 0, len(x))}
		seen := make(map[string]string, len(x))
		for _, k := range sortedKeys(x) {
			e := x[k]
			key := k
			var val *template
			if strings.HasSuffix(k, ".$") {
				key = strings.TrimSuffix(k, ".$")
				s, ok := e.(string)
				if !ok {
					return nil, fmt.Errorf("%s: field %q ends in .$ so its value must be a path or an intrinsic function string, got %s", where, k, typeName(e))
				}
				dyn, err := compileDynamic(s)
				if err != nil {
					return nil, fmt.Errorf("%s: field %q: %v", where, k, err)
				}
				val = dyn
			} else {
				lit, err := compileTemplate(e, where+"."+k)
				if err != nil {
					return nil, err
				}
				val = lit
			}
			if prev, dup := seen[key]; dup {
				return nil, fmt.Errorf("%s: fields %q and %q both produce %q", where, prev, k, key)
			}
			seen[key] = k
			t.fields = append(t.fields, tmplField{key: key, value: val, raw: k})
		}
		if allLiteral(t.fields) {
			return &template{kind: tmplLiteral, literal: x, size: jsonSize(x)}, nil
		}
		t.order = make([]int, len(t.fields))
		for i := range t.order {
			t.order[i] = i
		}
		slices.SortFunc(t.order, func(a, b int) int { return strings.Compare(t.fields[a].key, t.fields[b].key) })
		return t, nil
	case []any:
		t := &template{kind: tmplArray, items: make([]*template, len(x))}
		lit := true
		for i, e := range x {
			it, err := compileTemplate(e, fmt.Sprintf("%s[%d]", where, i))
			if err != nil {
				return nil, err
			}
			t.items[i] = it
			lit = lit && it.kind == tmplLiteral
		}
		if lit {
			return &template{kind: tmplLiteral, literal: x, size: jsonSize(x)}, nil
		}
		return t, nil
	default:
		return &template{kind: tmplLiteral, literal: v, size: jsonSize(v)}, nil
	}
}

func allLiteral(fs []tmplField) bool {
	for _, f := range fs {
		if f.value.kind != tmplLiteral || strings.HasSuffix(f.raw, ".$") {
			return false
		}
	}
	return true
}

// compileDynamic compiles the string value of a ".$" field: a path or an
// intrinsic function call.
func compileDynamic(s string) (*template, error) {
	if isIntrinsic(s) {
		f, err := parseIntrinsic(s)
		if err != nil {
			return nil, err
		}
		return &template{kind: tmplIntrinsic, intrinsic: f}, nil
	}
	p, err := compilePath(s)
	if err != nil {
		return nil, err
	}
	return &template{kind: tmplPath, path: p}, nil
}

// scope is what paths are evaluated against: the state's effective input and
// a lazily built context object.
type scope struct {
	input   any
	context func() any // when run is nil
	vars    *varScope
	// run, when set, builds the context object (once per scope, so that a
	// retry sees its own EnteredTime and RetryCount) without a closure.
	run    *stateRun
	cached any
}

// contextObject returns the context object ($$).
func (s *scope) contextObject() any {
	if s.run == nil {
		return s.context()
	}
	if s.cached == nil {
		s.cached = s.run.context()
	}
	return s.cached
}

// lookup selects p's value for reading: never a lazy value at its top
// level (raw.go).
func (s *scope) lookup(p *path) (any, bool) {
	v, ok := s.find(p)
	return resolve(v), ok
}

// find selects p's value to be placed in a state's data (an output, a
// payload's member): a lazy value stays one.
func (s *scope) find(p *path) (any, bool) {
	if p.context {
		if s.run != nil && s.cached == nil && len(p.simple) >= 2 {
			if v, found, ok := s.run.contextMember(p.simple); ok {
				return v, found
			}
		}
		return p.find(s.contextObject())
	}
	if p.variable != "" {
		if s.vars == nil {
			return nil, false
		}
		v, ok := s.vars.get(p.variable)
		if !ok {
			return nil, false
		}
		return p.find(v)
	}
	return p.find(s.input)
}

// lazy reports whether what the scope's state builds may be lazy values
// (not with Engine.eager, and only in a run, which then knows it holds
// them).
func (s *scope) lazy() bool {
	if s.run == nil || s.run.x.engine.eager {
		return false
	}
	s.run.x.markLazy()
	return true
}

// searched renders the document a missing path was looked up in, for the
// cause Step Functions reports: the context object for "$$" paths, the
// variable's value for "$name" paths, the input otherwise (compact JSON).
func (s *scope) searched(raw string) string {
	var doc any = s.input
	switch {
	case strings.HasPrefix(raw, "$$"):
		doc = s.contextObject()
	default:
		if name, _, ok := variablePrefix(raw); ok && s.vars != nil {
			doc, _ = s.vars.get(name)
		}
	}
	b, err := marshalJSON(doc)
	if err != nil {
		return typeName(doc)
	}
	return string(b)
}

// resolvePath is the resolver handed to intrinsic functions and Choice rules.
func (s *scope) resolvePath(raw string) (any, bool, error) {
	p, err := compilePath(raw)
	if err != nil {
		return nil, false, newError(ErrRuntime, "%v", err)
	}
	v, ok := s.lookup(p)
	return v, ok, nil
}

// missingPathError is a ".$" path that selected nothing; the enclosing
// object turns it into a States.Runtime error naming the field.
type missingPathError struct{ path string }

func (e *missingPathError) Error() string {
	return fmt.Sprintf("The JSONPath '%s' could not be found in the input", e.path)
}

// eval renders the template. A path that selects nothing fails with
// States.Runtime naming the field, as Step Functions does.
func (t *template) eval(s *scope) (any, error) {
	v, err := t.evalInner(s)
	if err == nil {
		return v, nil
	}
	var mp *missingPathError
	if errors.As(err, &mp) {
		return nil, newError(ErrRuntime, "%s", mp.Error())
	}
	return nil, err
}

func (t *template) evalInner(s *scope) (any, error) {
	switch t.kind {
	case tmplLiteral:
		return t.literal, nil
	case tmplPath:
		v, ok := s.find(t.path) // placed in the output, not read: lazy values stay lazy
		if !ok {
			return nil, &missingPathError{path: t.path.raw}
		}
		return v, nil
	case tmplIntrinsic:
		return t.intrinsic.eval(func(raw string, p *path) (any, error) {
			v, ok := s.lookup(p)
			if !ok {
				return nil, newError(ErrRuntime, "The JSONPath '%s' used as an intrinsic function argument could not be found in the input", raw)
			}
			return v, nil
		})
	case tmplArray:
		out := make([]any, len(t.items))
		for i, it := range t.items {
			v, err := it.evalInner(s)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case tmplObject:
		// A small object is an overlay of its members alone: a third of a
		// map's bytes (overlay.go).
		var (
			small *overlay
			m     map[string]any
		)
		if len(t.fields) <= maxOverlay && s.lazy() {
			small = makeOverlay(nil, len(t.fields))
		} else {
			m = make(map[string]any, len(t.fields))
		}
		for i := range t.fields {
			f := &t.fields[i]
			v, err := f.value.evalInner(s)
			if err != nil {
				return nil, f.failed(s, err)
			}
			if small != nil {
				small.set = append(small.set, member{f.key, v})
			} else {
				m[f.key] = v
			}
		}
		if small != nil {
			return small, nil
		}
		return m, nil
	}
	return nil, fmt.Errorf("unknown template kind %d", t.kind)
}

// failed is the error of field f whose value could not be evaluated.
func (f *tmplField) failed(s *scope, err error) error {
	var mp *missingPathError
	if errors.As(err, &mp) {
		// Step Functions fails the state with States.Runtime here (not the
		// States.ParameterPathFailure of the spec text), so States.ALL does
		// not catch it.
		return newError(ErrRuntime, "The JSONPath '%s' specified for the field '%s' could not be found in the input '%s'", mp.path, f.raw, s.searched(mp.path))
	}
	return err
}

// maxEncodedFields bounds the objects encodeObject renders with its values
// on the stack.
const maxEncodedFields = 16

// encodeObject renders an object template straight to its JSON text: the
// bytes marshalJSON(eval(s)) gives and the same errors (fields are
// evaluated in eval's order), without building the object. When a value is
// one appendJSON declines, text is nil and obj is the rendered object, for
// the caller's general path. text holds copies copies of the text, one after
// the other, in one allocation.
func (t *template) encodeObject(s *scope, copies int) (text []byte, obj any, err error) {
	var stack [maxEncodedFields]any
	vals := stack[:0]
	if len(t.fields) <= len(stack) {
		vals = stack[:len(t.fields)]
	} else {
		vals = make([]any, len(t.fields))
	}
	for i := range t.fields {
		f := &t.fields[i]
		v, err := f.value.evalInner(s)
		if err != nil {
			return nil, nil, f.failed(s, err)
		}
		vals[i] = v
	}
	e := encoders.Get().(*encoder)
	b := append(e.buf[:0], '{')
	ok := true
	for n, i := range t.order {
		if n > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, t.fields[i].key)
		b = append(b, ':')
		if b, ok = e.appendJSON(b, vals[i]); !ok {
			break
		}
	}
	if ok {
		b = append(b, '}')
		text = make([]byte, 0, copies*len(b))
		for range copies {
			text = append(text, b...)
		}
	}
	e.release(b)
	if !ok {
		m := make(map[string]any, len(t.fields))
		for i, f := range t.fields {
			m[f.key] = vals[i]
		}
		return nil, m, nil
	}
	return text, nil, nil
}

// bound bounds the size of the template's output (see size.go) when its
// paths select from a document of size at most doc and, in a Map's
// ItemSelector, $$.Map.Item.Value is at most item bytes (sizeUnknown
// elsewhere): a literal is its own size, a path to one subtree of the
// document no more than the document, the item's index at most 20 bytes,
// and objects and arrays add their keys and punctuation. Intrinsic
// functions, other "$$" paths, variables and paths that may select several
// values have no bound (sizeUnknown).
func (t *template) bound(doc, item int) int {
	switch t.kind {
	case tmplLiteral:
		return t.size
	case tmplPath:
		if p := t.path; p.context {
			switch {
			case len(p.simple) >= 3 && p.simple[0] == "Map" && p.simple[1] == "Item" && p.simple[2] == "Value":
				return item // the item or a subtree of it
			case len(p.simple) == 3 && p.simple[0] == "Map" && p.simple[1] == "Item" && p.simple[2] == "Index":
				return len("-9223372036854775808")
			}
			return sizeUnknown
		}
		return selectBound(optPath{p: t.path}, doc)
	case tmplArray:
		n := 2 + max(len(t.items)-1, 0)
		for _, it := range t.items {
			b := it.bound(doc, item)
			if b < 0 {
				return sizeUnknown
			}
			n += b
		}
		return n
	case tmplObject:
		n := 2 + max(len(t.fields)-1, 0)
		for _, f := range t.fields {
			b := f.value.bound(doc, item)
			if b < 0 {
				return sizeUnknown
			}
			n += jsonStringSize(f.key) + 1 + b
		}
		return n
	}
	return sizeUnknown
}
