package search

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// CitationError names an output's citation problems: a source id that is
// not in the sources index, or a claim with no source that does not declare
// itself as unknown ("No informado en fuentes" / "Hipótesis no validada").
type CitationError struct {
	Agent    string
	Problems []string
}

func (e *CitationError) Error() string {
	return fmt.Sprintf("%s: citations: %s", e.Agent, strings.Join(e.Problems, "; "))
}

// declaresGap reports whether an unsourced text declares its uncertainty.
func declaresGap(text string) bool {
	t := strings.TrimSpace(text)
	return strings.HasPrefix(t, NotInSources) || strings.HasPrefix(t, UnvalidatedGuess)
}

// CheckCitations walks an answer (any contract content) and checks every
// `sources` list against index. It returns the sorted set of cited ids.
func CheckCitations(agent string, answer any, index map[string]bool) ([]string, error) {
	c := &citeWalker{index: index, cited: map[string]bool{}}
	c.walk(reflect.ValueOf(answer), "")
	ids := make([]string, 0, len(c.cited))
	for id := range c.cited {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	if len(c.problems) > 0 {
		return ids, &CitationError{Agent: agent, Problems: c.problems}
	}
	return ids, nil
}

type citeWalker struct {
	index    map[string]bool
	cited    map[string]bool
	problems []string
	// collect: record every cited id, check nothing.
	collect bool
}

var stringsType = reflect.TypeOf([]string(nil))

func (c *citeWalker) walk(v reflect.Value, at string) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			c.walk(v.Elem(), at)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			c.walk(v.Index(i), fmt.Sprintf("%s[%d]", at, i))
		}
	case reflect.Struct:
		t := v.Type()
		var sources []string
		hasSources := false
		texts := []string{}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" {
				name = f.Name
			}
			fv := v.Field(i)
			if name == "sources" && f.Type == stringsType {
				hasSources = true
				sources = fv.Interface().([]string)
				continue
			}
			if fv.Kind() == reflect.String {
				texts = append(texts, fv.String())
			}
			c.walk(fv, join(at, name))
		}
		if !hasSources {
			return
		}
		if c.collect {
			for _, s := range sources {
				c.cited[s] = true
			}
			return
		}
		for _, s := range sources {
			if !c.index[s] {
				c.problems = append(c.problems, fmt.Sprintf("%s cites %q, which is not in the sources index", at, s))
				continue
			}
			c.cited[s] = true
		}
		if len(sources) == 0 && !anyDeclaresGap(texts) {
			c.problems = append(c.problems, fmt.Sprintf("%s has no source and does not declare %q or %q", at, NotInSources, UnvalidatedGuess))
		}
	}
}

func anyDeclaresGap(texts []string) bool {
	for _, t := range texts {
		if declaresGap(t) {
			return true
		}
	}
	return false
}

func join(at, name string) string {
	if at == "" {
		return name
	}
	return at + "." + name
}

// CitedIDs lists, sorted, every source id cited anywhere in v (an agent's
// output), valid or not.
func CitedIDs(v any) []string {
	c := &citeWalker{cited: map[string]bool{}, collect: true}
	c.walk(reflect.ValueOf(v), "")
	ids := make([]string, 0, len(c.cited))
	for id := range c.cited {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}
