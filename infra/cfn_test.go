package infra

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// This file reads template.yaml the way CloudFormation sees it before the
// SAM transform: short-form intrinsics (!Ref, !GetAtt, !Sub…) become their
// long forms ({"Ref": …}, {"Fn::GetAtt": […]}), so the checks walk plain
// maps and lists. goformation resolves intrinsics away (a !GetAtt inside
// DefinitionSubstitutions becomes "") and does not merge Globals, and the
// checks below need both, so they use this reader.

// cfnTemplate is the part of a template the checks read.
type cfnTemplate struct {
	Parameters map[string]map[string]any `json:"Parameters"`
	Globals    map[string]map[string]any `json:"Globals"`
	Resources  map[string]cfnResource    `json:"Resources"`
	Outputs    map[string]map[string]any `json:"Outputs"`
}

type cfnResource struct {
	Type       string         `json:"Type"`
	Properties map[string]any `json:"Properties"`
	Metadata   map[string]any `json:"Metadata"`
	DependsOn  any            `json:"DependsOn"`
	// DeletionPolicy and UpdateReplacePolicy: "Retain" on stateful resources.
	DeletionPolicy      string `json:"DeletionPolicy"`
	UpdateReplacePolicy string `json:"UpdateReplacePolicy"`
}

func loadTemplate(t *testing.T, path string) cfnTemplate {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read template: %v", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	v, err := longForm(&doc)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	js, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("re-encode %s: %v", path, err)
	}
	var tpl cfnTemplate
	if err := json.Unmarshal(js, &tpl); err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	return tpl
}

// longForm converts a YAML node to maps, lists and scalars, rewriting
// short-form intrinsic tags to their long form.
func longForm(n *yaml.Node) (any, error) {
	var v any
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return longForm(n.Content[0])
	case yaml.AliasNode:
		return longForm(n.Alias)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			val, err := longForm(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			m[n.Content[i].Value] = val
		}
		v = m
	case yaml.SequenceNode:
		l := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			val, err := longForm(c)
			if err != nil {
				return nil, err
			}
			l = append(l, val)
		}
		v = l
	case yaml.ScalarNode:
		if isIntrinsic(n.Tag) {
			v = n.Value // an intrinsic's scalar argument is a string
		} else if err := n.Decode(&v); err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
	}
	if !isIntrinsic(n.Tag) {
		return v, nil
	}
	switch name := strings.TrimPrefix(n.Tag, "!"); name {
	case "Ref", "Condition":
		return map[string]any{name: v}, nil
	case "GetAtt":
		if s, ok := v.(string); ok { // !GetAtt Res.Attr
			res, attr, _ := strings.Cut(s, ".")
			v = []any{res, attr}
		}
		return map[string]any{"Fn::GetAtt": v}, nil
	default:
		return map[string]any{"Fn::" + name: v}, nil
	}
}

// isIntrinsic reports a local tag such as !Ref; YAML's own tags are !!str,
// !!map…
func isIntrinsic(tag string) bool {
	return strings.HasPrefix(tag, "!") && !strings.HasPrefix(tag, "!!")
}

// ---------------------------------------------------------- value helpers

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }
func asList(v any) []any         { l, _ := v.([]any); return l }
func asString(v any) string      { s, _ := v.(string); return s }

// stringsOf returns a string or a list of strings as a list.
func stringsOf(v any) []string {
	if s, ok := v.(string); ok {
		return []string{s}
	}
	var out []string
	for _, e := range asList(v) {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// refTo reports the logical id v refers to with {"Ref": id}.
func refTo(v any) (string, bool) {
	m := asMap(v)
	if len(m) != 1 {
		return "", false
	}
	s, ok := m["Ref"].(string)
	return s, ok
}

// getAtt reports the resource and attribute of {"Fn::GetAtt": [res, attr]}.
func getAtt(v any) (res, attr string, ok bool) {
	m := asMap(v)
	if len(m) != 1 {
		return "", "", false
	}
	l := stringsOf(m["Fn::GetAtt"])
	if len(l) != 2 {
		return "", "", false
	}
	return l[0], l[1], true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// resourcesOfType returns the logical ids of one resource type, sorted.
func (tpl cfnTemplate) resourcesOfType(typ string) []string {
	var ids []string
	for _, id := range sortedKeys(tpl.Resources) {
		if tpl.Resources[id].Type == typ {
			ids = append(ids, id)
		}
	}
	return ids
}

// functionProperties returns a function's properties with Globals.Function
// merged in as SAM does: maps merge key by key (the function wins), lists
// are concatenated, scalars and intrinsics ({"Ref": …}) are overridden.
func (tpl cfnTemplate) functionProperties(id string) map[string]any {
	return asMap(mergeGlobals(tpl.Globals["Function"], tpl.Resources[id].Properties))
}

func mergeGlobals(global, local any) any {
	switch g := global.(type) {
	case map[string]any:
		l, ok := local.(map[string]any)
		if !ok || isIntrinsicValue(g) || isIntrinsicValue(l) {
			if local != nil {
				return local
			}
			return g
		}
		out := make(map[string]any, len(g)+len(l))
		for k, v := range g {
			out[k] = v
		}
		for k, v := range l {
			out[k] = mergeGlobals(g[k], v)
		}
		return out
	case []any:
		if l, ok := local.([]any); ok {
			return append(append([]any{}, g...), l...)
		}
	}
	if local != nil {
		return local
	}
	return global
}

// isIntrinsicValue reports {"Ref": …} or {"Fn::…": …}.
func isIntrinsicValue(m map[string]any) bool {
	for k := range m {
		return len(m) == 1 && (k == "Ref" || strings.HasPrefix(k, "Fn::"))
	}
	return false
}

// ------------------------------------------------------------ references

var subVar = regexp.MustCompile(`\$\{([^}!][^}]*)\}`)

// refs returns the logical ids v references through Ref, Fn::GetAtt and
// Fn::Sub (parameters and pseudo parameters included; callers filter).
func refs(v any) []string {
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			if id, ok := refTo(x); ok {
				out = append(out, id)
				return
			}
			if res, _, ok := getAtt(x); ok {
				out = append(out, res)
				return
			}
			if sub, ok := x["Fn::Sub"]; ok && len(x) == 1 {
				str, vars := asString(sub), map[string]any(nil)
				if l := asList(sub); len(l) == 2 {
					str, vars = asString(l[0]), asMap(l[1])
					walk(vars)
				}
				for _, m := range subVar.FindAllStringSubmatch(str, -1) {
					name, _, _ := strings.Cut(m[1], ".")
					if _, isVar := vars[name]; !isVar {
						out = append(out, name)
					}
				}
				return
			}
			for _, k := range sortedKeys(x) {
				walk(x[k])
			}
		}
	}
	walk(v)
	return out
}

// dependencyGraph returns, for each resource, the resources it depends on
// once SAM has expanded it: a function depends on what its properties,
// policies and environment (Globals merged) reference; an S3 event makes
// the bucket depend on the function (its notification names the function),
// an HttpApi event makes the API depend on it (its routes integrate it).
func (tpl cfnTemplate) dependencyGraph() map[string][]string {
	g := make(map[string][]string)
	add := func(from string, to ...string) {
		for _, id := range to {
			if _, ok := tpl.Resources[id]; ok && id != from {
				g[from] = append(g[from], id)
			}
		}
	}
	for _, id := range sortedKeys(tpl.Resources) {
		r := tpl.Resources[id]
		add(id, stringsOf(r.DependsOn)...)
		props := r.Properties
		if r.Type != "AWS::Serverless::Function" {
			add(id, refs(props)...)
			continue
		}
		props = tpl.functionProperties(id)
		for k, v := range props {
			if k != "Events" {
				add(id, refs(v)...)
			}
		}
		for _, ev := range asMap(props["Events"]) {
			ev := asMap(ev)
			p := asMap(ev["Properties"])
			switch ev["Type"] {
			case "S3":
				if b, ok := refTo(p["Bucket"]); ok {
					add(b, id)
				}
			case "HttpApi", "Api":
				for _, api := range refs(p) {
					add(api, id)
				}
			default: // event source mappings, rules…: the function's side
				add(id, refs(p)...)
			}
		}
	}
	return g
}

// findCycle returns one dependency cycle (first id repeated at the end),
// or nil.
func findCycle(g map[string][]string) []string {
	const (
		unvisited = iota
		inProgress
		done
	)
	state := map[string]int{}
	var stack []string
	var visit func(string) []string
	visit = func(n string) []string {
		state[n] = inProgress
		stack = append(stack, n)
		for _, m := range g[n] {
			switch state[m] {
			case inProgress:
				for i, s := range stack {
					if s == m {
						return append(append([]string{}, stack[i:]...), m)
					}
				}
			case unvisited:
				if c := visit(m); c != nil {
					return c
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[n] = done
		return nil
	}
	for _, n := range sortedKeys(g) {
		if state[n] == unvisited {
			if c := visit(n); c != nil {
				return c
			}
		}
	}
	return nil
}
