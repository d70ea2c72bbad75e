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
	field := fieldPaths(data)[line]
	if field == "" {
		return &veredicto.InvalidInputError{File: name, Problem: fmt.Sprintf("line %d: the value %s%s", line, problem, more)}
	}
	return &veredicto.InvalidInputError{File: name, Field: field, Problem: fmt.Sprintf("%s (line %d)%s", problem, line, more)}
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

// fieldPaths maps each line of a YAML document that holds a mapping key (or
// a scalar sequence item) to its path: "questions[1].max_words".
func fieldPaths(data []byte) map[int]string {
	paths := map[int]string{}
	var root yaml.Node
	if yaml.Unmarshal(data, &root) != nil {
		return paths
	}
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				p := k.Value
				if path != "" {
					p = path + "." + k.Value
				}
				if _, ok := paths[k.Line]; !ok { // a flow mapping's line names its outermost key
					paths[k.Line] = p
				}
				walk(v, p)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				p := fmt.Sprintf("%s[%d]", path, i)
				// A root sequence is the document's own error, not its first item's.
				if _, ok := paths[c.Line]; path != "" && (!ok || c.Kind == yaml.ScalarNode) {
					paths[c.Line] = p
				}
				walk(c, p)
			}
		}
	}
	walk(&root, "")
	return paths
}
