package search

import (
	"fmt"
	"reflect"
	"strings"
	"unicode"
)

// A quoted fragment is text between «», “” or straight double quotes. When
// a claim quotes, the quotation must be found in one of the sources the
// claim cites: "the cited source does not say this" is then a code check,
// not a matter of trust. Fragments shorter than minQuoteWords words are
// not checked (a quoted term, not a quotation), and "…" or "..." inside a
// quotation marks an elision: each piece is checked on its own.
const minQuoteWords = 3

var quotePairs = [][2]rune{{'«', '»'}, {'“', '”'}, {'"', '"'}}

// quotations returns the quoted fragments of text.
func quotations(text string) []string {
	var out []string
	for _, p := range quotePairs {
		rest := text
		for {
			i := strings.IndexRune(rest, p[0])
			if i < 0 {
				break
			}
			rest = rest[i+len(string(p[0])):]
			j := strings.IndexRune(rest, p[1])
			if j < 0 {
				break
			}
			out = append(out, rest[:j])
			rest = rest[j+len(string(p[1])):]
		}
	}
	return out
}

// foldRune maps a letter with a diacritic to its base letter (the Latin-1
// and Latin Extended-A letters Spanish, Portuguese and Catalan use).
var foldTable = map[rune]rune{
	'á': 'a', 'à': 'a', 'â': 'a', 'ä': 'a', 'ã': 'a', 'å': 'a',
	'é': 'e', 'è': 'e', 'ê': 'e', 'ë': 'e',
	'í': 'i', 'ì': 'i', 'î': 'i', 'ï': 'i',
	'ó': 'o', 'ò': 'o', 'ô': 'o', 'ö': 'o', 'õ': 'o',
	'ú': 'u', 'ù': 'u', 'û': 'u', 'ü': 'u',
	'ñ': 'n', 'ç': 'c', 'ý': 'y', 'ÿ': 'y',
}

// normalizeForQuote lowercases, folds accents, drops Markdown emphasis and
// punctuation and collapses whitespace, so a quotation matches its source
// however it was typeset.
func normalizeForQuote(s string) string {
	var b strings.Builder
	space := true
	for _, r := range strings.ToLower(s) {
		if f, ok := foldTable[r]; ok {
			r = f
		}
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
			space = false
		case r == '%' || r == '€' || r == '$':
			b.WriteRune(r)
			space = false
		default: // whitespace, punctuation, Markdown marks: a word break
			if !space {
				b.WriteByte(' ')
				space = true
			}
		}
	}
	return strings.TrimSpace(b.String())
}

// quotePieces splits a quotation at elisions and keeps the pieces long
// enough to check, normalised.
func quotePieces(q string) []string {
	q = strings.NewReplacer("[…]", "…", "(…)", "…", "[...]", "…", "(...)", "…", "...", "…").Replace(q)
	var out []string
	for _, p := range strings.Split(q, "…") {
		n := normalizeForQuote(p)
		if len(strings.Fields(n)) >= minQuoteWords {
			out = append(out, n)
		}
	}
	return out
}

// QuoteError names the claims whose quotations none of their cited
// sources contain. It names locations only, never the quoted text (it may
// be personal data and errors reach logs).
type QuoteError struct {
	Agent    string
	Problems []string
}

func (e *QuoteError) Error() string {
	return fmt.Sprintf("%s: quotations: %s", e.Agent, strings.Join(e.Problems, "; "))
}

// CheckQuotes walks an answer like CheckCitations and checks every
// quotation in a claim against the texts (source id → text) of the sources
// the claim cites. Sources whose text is not in texts are not evidence
// either way; a claim citing none with a known text is not checked.
func CheckQuotes(agent string, answer any, texts map[string]string) error {
	q := &quoteWalker{texts: texts, norm: map[string]string{}}
	q.walk(reflect.ValueOf(answer), "")
	if len(q.problems) > 0 {
		return &QuoteError{Agent: agent, Problems: q.problems}
	}
	return nil
}

type quoteWalker struct {
	texts    map[string]string
	norm     map[string]string
	problems []string
}

func (q *quoteWalker) normalized(id string) (string, bool) {
	if n, ok := q.norm[id]; ok {
		return n, true
	}
	t, ok := q.texts[id]
	if !ok {
		return "", false
	}
	n := " " + normalizeForQuote(t) + " "
	q.norm[id] = n
	return n, true
}

func (q *quoteWalker) walk(v reflect.Value, at string) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			q.walk(v.Elem(), at)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			q.walk(v.Index(i), fmt.Sprintf("%s[%d]", at, i))
		}
	case reflect.Struct:
		t := v.Type()
		var sources []string
		var texts []string
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			fv := v.Field(i)
			switch {
			case name == "sources" && f.Type == stringsType:
				sources = fv.Interface().([]string)
			case fv.Kind() == reflect.String:
				texts = append(texts, fv.String())
			default:
				q.walk(fv, join(at, name))
			}
		}
		var docs []string
		for _, id := range sources {
			if n, ok := q.normalized(id); ok {
				docs = append(docs, n)
			}
		}
		if len(docs) == 0 {
			return
		}
		if !quotesFound(texts, docs) {
			q.problems = append(q.problems, fmt.Sprintf("%s quotes a fragment that none of its cited sources (%s) contains: quote the source exactly or paraphrase without quotation marks", at, strings.Join(sources, ", ")))
		}
	}
}

// quotesFound reports whether every quotation in texts is in one of docs
// (normalised, padded with spaces so only whole words match).
func quotesFound(texts, docs []string) bool {
	for _, text := range texts {
		for _, quote := range quotations(text) {
			for _, piece := range quotePieces(quote) {
				if !containsAny(docs, " "+piece+" ") {
					return false
				}
			}
		}
	}
	return true
}

func containsAny(docs []string, piece string) bool {
	for _, d := range docs {
		if strings.Contains(d, piece) {
			return true
		}
	}
	return false
}

// QuotedContent is the part of an agent's content whose quotations must be
// found in the sources: the evaluations (GEM5, GEM1–GEM3, and GEM1–GEM3 as
// a correction rewrites them). GEM4's findings and a correction's change
// log quote the agents' outputs, not the sources, and are not checked.
func QuotedContent(agent string, content any) any {
	switch c := content.(type) {
	case Gem4Content:
		return nil
	case CorrectionContent:
		return []any{c.Gem1, c.Gem2, c.Gem3}
	}
	return content
}
