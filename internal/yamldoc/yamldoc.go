// Package yamldoc decodes the YAML documents people write (search.yaml, the
// interview flags' question sets and transcripts) strictly, with errors a
// person can act on: the file, the field path ("questions[1].max_words")
// and the line, never a Go type name and never the value itself (it may be
// interview text).
package yamldoc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/veredicto/veredicto"
)

// Decode decodes one YAML document into out, rejecting unknown fields. An
// empty document is an error; decoder errors become
// *veredicto.InvalidInputError naming the field path where the line allows
// it.
func Decode(name string, data []byte, out any) error {
	if strings.TrimSpace(string(data)) == "" {
		return &veredicto.InvalidInputError{File: name, Problem: "is empty"}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	err := dec.Decode(out)
	if err == nil {
		// yaml.v3 cuts a fraction decoded into an integer (0.5 → 0) and
		// takes .nan and .inf as numbers, without a word: the document
		// is read again to find them.
		var doc yaml.Node
		if yaml.Unmarshal(data, &doc) == nil {
			if f, ok := badNumber(&doc, reflect.TypeOf(out), ""); ok {
				return &veredicto.InvalidInputError{File: name, Field: f.path,
					Problem: fmt.Sprintf("%s is not %s (line %d)", f.text, f.want, f.line)}
			}
		}
		return nil
	}
	if errors.Is(err, io.EOF) {
		return &veredicto.InvalidInputError{File: name, Problem: "is empty"}
	}
	var te *yaml.TypeError
	if !errors.As(err, &te) || len(te.Errors) == 0 {
		return &veredicto.InvalidInputError{File: name, Problem: "is not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	msg := te.Errors[0]
	more := ""
	switch n := len(te.Errors) - 1; {
	case n == 1:
		more = " (and 1 more problem)"
	case n > 1:
		more = fmt.Sprintf(" (and %d more problems)", n)
	}
	line := 0
	if m := lineRE.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	problem := Explain(msg)
	field := locate(data, line, msg)
	if field == "" {
		return &veredicto.InvalidInputError{File: name, Problem: fmt.Sprintf("line %d: the value %s%s", line, problem, more)}
	}
	return &veredicto.InvalidInputError{File: name, Field: field, Problem: fmt.Sprintf("%s (line %d)%s", problem, line, more)}
}

// found is a number a field cannot take: a fraction where a whole number
// is expected, or a NaN or an infinity.
type found struct {
	path, text, want string
	line             int
}

// badNumber finds, walking node along the Go type t, the first number
// with a fractional part that lands in an integer field, or NaN or an
// infinity in a float one.
func badNumber(node *yaml.Node, t reflect.Type, path string) (found, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch node.Kind {
	case yaml.DocumentNode:
		if len(node.Content) == 0 {
			return found{}, false
		}
		return badNumber(node.Content[0], t, path)
	case yaml.AliasNode:
		if node.Alias == nil {
			return found{}, false
		}
		return badNumber(node.Alias, t, path)
	}
	var f float64 // the node's value when it is a float scalar
	isFloat := node.Kind == yaml.ScalarNode && node.ShortTag() == "!!float" && node.Decode(&f) == nil
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if isFloat && f != math.Trunc(f) && !math.IsNaN(f) {
			return found{path, node.Value, "a whole number", node.Line}, true
		}
	case reflect.Float32, reflect.Float64:
		if isFloat && (math.IsNaN(f) || math.IsInf(f, 0)) {
			return found{path, node.Value, "a finite number", node.Line}, true
		}
	case reflect.Slice, reflect.Array:
		if node.Kind == yaml.SequenceNode {
			for i, e := range node.Content {
				if f, ok := badNumber(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); ok {
					return f, true
				}
			}
		}
	case reflect.Map:
		if node.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(node.Content); i += 2 {
				if f, ok := badNumber(node.Content[i+1], t.Elem(), join(path, node.Content[i].Value)); ok {
					return f, true
				}
			}
		}
	case reflect.Struct:
		if node.Kind == yaml.MappingNode {
			fields := yamlFields(t)
			for i := 0; i+1 < len(node.Content); i += 2 {
				key := node.Content[i].Value
				if ft, ok := fields[key]; ok {
					if f, ok := badNumber(node.Content[i+1], ft, join(path, key)); ok {
						return f, true
					}
				}
			}
		}
	}
	return found{}, false
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// yamlFields maps the YAML keys of struct t to their field types, as
// yaml.v3 names them (the tag's name, else the lower-cased field name;
// inline structs' keys included).
func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if strings.Contains(","+opts+",", ",inline,") {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range yamlFields(ft) {
					out[k] = v
				}
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f.Type
	}
	return out
}

var (
	lineRE         = regexp.MustCompile(`^line (\d+): (.*)$`)
	unknownFieldRE = regexp.MustCompile(`^field (\S+) not found in type`)
	unmarshalRE    = regexp.MustCompile("^cannot unmarshal (!!\\w+)(?: `[^`]*`)? into (\\S+)$")
)

// Explain turns one yaml.v3 decoder message into words for a person:
// "field foo not found in type search.Config" → "is not a known field";
// "cannot unmarshal !!str `x` into float64" → "is text where a number is
// expected". The value is left out.
func Explain(msg string) string {
	if unknownFieldRE.MatchString(msg) {
		return "is not a known field"
	}
	if m := unmarshalRE.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("is %s where %s is expected", yamlKind(m[1]), goKind(m[2]))
	}
	return "is invalid: " + regexp.MustCompile(" ?`[^`]*`").ReplaceAllString(msg, "")
}

func yamlKind(tag string) string {
	switch tag {
	case "!!str":
		return "text"
	case "!!int", "!!float":
		return "a number"
	case "!!bool":
		return "true/false"
	case "!!seq":
		return "a list"
	case "!!map":
		return "a mapping"
	case "!!null":
		return "empty"
	}
	return "a " + strings.TrimPrefix(tag, "!!") + " value"
}

func goKind(t string) string {
	t = strings.TrimLeft(t, "*")
	switch {
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map["):
		return "a mapping"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		return "a whole number"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "string":
		return "text"
	case t == "bool":
		return "true or false"
	case t == "time.Time":
		return "a date"
	}
	return "a mapping"
}

// walkFields visits every mapping member (member: its path, key and
// value nodes) and sequence item (item: its path and node) of n, depth
// first, in document order.
func walkFields(n *yaml.Node, path string, member func(p string, k, v *yaml.Node), item func(p string, parent string, c *yaml.Node)) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			walkFields(c, path, member, item)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := join(path, k.Value)
			member(p, k, v)
			walkFields(v, p, member, item)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			item(p, path, c)
			walkFields(c, p, member, item)
		}
	}
}

// locate names the field a decoder message on line is about. A line of a
// flow mapping or a JSON document holds many fields, so the message's own
// clues decide there: the unknown key it names, or the value it quotes;
// otherwise, and on a line holding one field, it is the line's outermost
// field (fieldPaths).
func locate(data []byte, line int, msg string) string {
	var root yaml.Node
	if yaml.Unmarshal(data, &root) != nil {
		return ""
	}
	type entry struct{ path, key, value string }
	var onLine []entry
	walkFields(&root, "", func(p string, k, v *yaml.Node) {
		if k.Line == line {
			onLine = append(onLine, entry{path: p, key: k.Value})
		}
		if v.Kind == yaml.ScalarNode && v.Line == line {
			onLine = append(onLine, entry{path: p, value: v.Value})
		}
	}, func(p, _ string, c *yaml.Node) {
		if c.Kind == yaml.ScalarNode && c.Line == line {
			onLine = append(onLine, entry{path: p, value: c.Value})
		}
	})
	paths := map[string]bool{}
	for _, e := range onLine {
		paths[e.path] = true
	}
	if len(paths) > 1 {
		if m := unknownFieldRE.FindStringSubmatch(msg); m != nil {
			for _, e := range onLine {
				if e.key == m[1] {
					return e.path
				}
			}
		}
		if m := quotedRE.FindStringSubmatch(msg); m != nil {
			for _, e := range onLine {
				if e.key == "" && e.value == m[1] {
					return e.path
				}
			}
		}
	}
	return fieldPaths(&root)[line] // no clue: the line's outermost field
}

// LineOf is the line of the field at path ("gates.gem2") in a YAML
// document, 0 when it has none: for a check made after decoding to name
// the line as the decoder's errors do.
func LineOf(data []byte, path string) int {
	var root yaml.Node
	if yaml.Unmarshal(data, &root) != nil {
		return 0
	}
	line := 0
	walkFields(&root, "", func(p string, k, _ *yaml.Node) {
		if p == path && line == 0 {
			line = k.Line
		}
	}, func(p, _ string, c *yaml.Node) {
		if p == path && line == 0 {
			line = c.Line
		}
	})
	return line
}

// quotedRE finds the value a yaml.v3 message quotes.
var quotedRE = regexp.MustCompile("`([^`]*)`")

// fieldPaths maps each line of a YAML document that holds a mapping key (or
// a scalar sequence item) to its path: "questions[1].max_words".
func fieldPaths(root *yaml.Node) map[int]string {
	paths := map[int]string{}
	walkFields(root, "", func(p string, k, _ *yaml.Node) {
		if _, ok := paths[k.Line]; !ok { // a flow mapping's line names its outermost key
			paths[k.Line] = p
		}
	}, func(p, parent string, c *yaml.Node) {
		// A root sequence is the document's own error, not its first item's.
		if _, ok := paths[c.Line]; parent != "" && (!ok || c.Kind == yaml.ScalarNode) {
			paths[c.Line] = p
		}
	})
	return paths
}
