// Package labelstest checks a Spanish surface — a report, a console page,
// the lines the CLI prints about a person's work — for what must never
// reach it: a code of the label table shown instead of its label, an
// identifier in snake_case, and words of a deny list of English and
// Portuguese (seed 003's) that a Spanish reader should not meet.
package labelstest

import (
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/veredicto/veredicto/internal/labels"
)

// Spanish are the codes whose label may read as the code: Spanish words
// already.
var Spanish = map[string]bool{
	"confirma": true, "contradice": true, "alta": true, "media": true, "baja": true,
	"cumple": true, "transferible": true, "parcial": true, "general": true,
	"intermedio": true, "avanzado": true, "experto": true, "debate": true, "motivo": true,
}

// Deny are words and phrases that are not Spanish, matched whole and
// case-sensitively: English headings and jargon the project used to
// print, and seed 003's Portuguese labels.
var Deny = []string{
	// English
	"Culture Radar", "Killer Summary", "Gap Analysis", "Skills Matrix", "Impact Bullets", "Interview Intel",
	"Scores", "Confidence Score", "Non-negotiables", "Advocacy", "Career Companion", "trade-offs",
	"Assessment", "assessment", "Claims", "Fluff", "No-fits", "gate", "gates", "Gate", "drift",
	"pending", "approved", "rejected", "expired", "evaluated", "candidates", "Reused", "reused",
	"Summary", "Search", "Senior review", "waiting", "started", "finished", "failed", "retried",
	"Item", "none", "true", "false", "null", "undefined", "NaN",
	// Portuguese (seed 003)
	"ATIVADO", "RODADAS", "EXECUTADAS", "NENHUM", "Escalando para", "em rodada", "nao", "Nao", "Sim",
	"Não", "não", "rodada", "também", "você", "Divergências",
	// English left in Spanish text
	"circuit breaker", "Circuit breaker", "CIRCUIT BREAKER",
}

// portuguese are letters Spanish never writes.
var portuguese = regexp.MustCompile(`[ãõçâêôÃÕÇÂÊÔ]`)

var snake = regexp.MustCompile(`\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b`)

var (
	command = regexp.MustCompile(`veredicto(?: [a-z]+(?:\|[a-z]+)*| --?[a-z-]+| [^\s,;]*[/._][^\s,;]*| [A-Z]+| \[[^\]]*\])+`)
	path    = regexp.MustCompile(`[\w.-]+(?:/[\w.-]+)+|[\w-]+\.(?:md|json|yaml|jsonl)\b`)
)

// citation is a source cited as the seeds write it ([RAG:chunk-id],
// [CV:…]): an identifier shown on purpose.
var citation = regexp.MustCompile(`\[[A-Z]+:[^\]\s]+\]`)

// ids are identifiers a surface may show as they are: confirmation ids.
var ids = regexp.MustCompile(`^cf_[0-9a-f]{32}$`)

// Leaks lists what of text must not reach a Spanish surface. allow names
// identifiers the surface shows on purpose (a search id with an
// underscore, a file name).
func Leaks(text string, allow ...string) []string {
	allowed := map[string]bool{}
	for _, a := range allow {
		allowed[a] = true
		if a != "" {
			text = strings.ReplaceAll(text, a, " ") // an id shown on purpose holds no words to check
		}
	}
	// Commands to copy and paths (source ids, files) are shown as they
	// are typed.
	text = command.ReplaceAllString(text, " ")
	text = path.ReplaceAllString(text, " ")
	text = citation.ReplaceAllString(text, " ")
	found := map[string]bool{}
	for _, m := range snake.FindAllString(text, -1) {
		if !allowed[m] && !ids.MatchString(m) {
			found["code "+m] = true
		}
	}
	words := wordSet(text)
	for _, d := range labels.Domains() {
		for _, c := range labels.Codes(d) {
			if len(c) <= 2 || Spanish[c] || allowed[c] || strings.Contains(c, "_") {
				continue // short codes (A–D, SI, NO) are common words; snake_case is caught above
			}
			l, _ := labels.Lookup(d, c)
			if l == c {
				continue
			}
			if words[c] || (strings.ToLower(c) == c && !strings.Contains(c, "-") && words[strings.ToUpper(c[:1])+c[1:]]) {
				found["code "+c+" ("+string(d)+")"] = true
			}
		}
	}
	for _, w := range Deny {
		if containsWord(text, w) && !allowed[w] {
			found["word "+w] = true
		}
	}
	if m := portuguese.FindAllString(text, 3); len(m) > 0 {
		found["Portuguese letters "+strings.Join(m, "")] = true
	}
	out := make([]string, 0, len(found))
	for f := range found {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// Check fails t when text, the surface named, leaks anything (Leaks).
func Check(t testing.TB, surface, text string, allow ...string) {
	t.Helper()
	if leaks := Leaks(text, allow...); len(leaks) > 0 {
		t.Errorf("%s is not all Spanish for people: %s", surface, strings.Join(leaks, "; "))
	}
}

// wordSet is every token of text: letters, digits and the marks codes
// hold (- _ .), split on everything else.
func wordSet(text string) map[string]bool {
	set := map[string]bool{}
	for _, w := range strings.FieldsFunc(text, func(r rune) bool {
		return !(r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > 127)
	}) {
		set[w] = true
	}
	return set
}

func containsWord(text, w string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], w)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(w)
		if boundary(text, start-1) && boundary(text, end) {
			return true
		}
		i = start + 1
	}
}

func boundary(text string, i int) bool {
	if i < 0 || i >= len(text) {
		return true
	}
	c := text[i]
	return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c >= 0x80)
}
