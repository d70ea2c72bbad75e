package jsonata

import (
	"regexp"
	"unicode/utf16"
)

// regexValue is a regular expression literal /pattern/flags. JSONata uses
// JavaScript regular expressions; this evaluator compiles them with Go's
// RE2 syntax, which accepts the common subset (classes, groups, alternation,
// quantifiers, anchors, named groups) but not look-around or back-references:
// such a literal is a compile error S0303.
type regexValue struct {
	src   string
	flags string
	re    *regexp.Regexp
}

func compileRegex(pattern, flags string) (*regexValue, error) {
	prefix := ""
	if flags != "" {
		prefix = "(?" + flags + ")"
	}
	re, err := regexp.Compile(prefix + pattern)
	if err != nil {
		return nil, err
	}
	return &regexValue{src: pattern, flags: flags, re: re}, nil
}

// utf16Len is the length of s in UTF-16 code units, JavaScript's string
// index unit.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += len(utf16.Encode([]rune{r}))
	}
	return n
}

type regexMatch struct {
	match  string
	index  int // UTF-16 offset
	start  int // byte offsets
	end    int
	groups []any
}

// find returns up to limit matches (limit < 0: all). A zero-length match
// after the first is the reference's error D1004, reported by the caller.
func (r *regexValue) find(s string, limit int) ([]regexMatch, bool) {
	idx := r.re.FindAllStringSubmatchIndex(s, limit)
	out := make([]regexMatch, 0, len(idx))
	for i, m := range idx {
		if i > 0 && m[0] == m[1] {
			return out, true
		}
		rm := regexMatch{match: s[m[0]:m[1]], index: utf16Len(s[:m[0]]), start: m[0], end: m[1], groups: []any{}}
		for g := 1; g < len(m)/2; g++ {
			if m[2*g] < 0 {
				rm.groups = append(rm.groups, nil) // a group that did not take part
			} else {
				rm.groups = append(rm.groups, s[m[2*g]:m[2*g+1]])
			}
		}
		out = append(out, rm)
	}
	return out, false
}

func (m regexMatch) object() map[string]any {
	return map[string]any{"match": m.match, "index": float64(m.index), "groups": m.groups}
}

func (r *regexValue) matches(s string, limit int) []any {
	ms, _ := r.find(s, limit)
	out := make([]any, len(ms))
	for i, m := range ms {
		out[i] = m.object()
	}
	return out
}
