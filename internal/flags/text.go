package flags

import (
	"fmt"
	"strings"
	"unicode"
)

func wordCount(s string) int {
	n := 0
	for _, f := range strings.Fields(s) {
		if strings.IndexFunc(f, isWordRune) >= 0 {
			n++
		}
	}
	return n
}

func compileMarkers(markers []string) ([][]string, error) {
	if markers == nil {
		markers = DefaultHedgingMarkers
	}
	out := make([][]string, 0, len(markers))
	for i, m := range markers {
		w := words(m)
		if len(w) == 0 {
			return nil, fmt.Errorf("hedging marker %d (%q) has no letters or digits", i, m)
		}
		out = append(out, w)
	}
	return out, nil
}

// composer turns the decomposed forms of Spanish accented letters into their
// precomposed forms, so NFD and NFC text compare equal.
var composer = strings.NewReplacer(
	"a\u0301", "á", "e\u0301", "é", "i\u0301", "í", "o\u0301", "ó", "u\u0301", "ú",
	"A\u0301", "Á", "E\u0301", "É", "I\u0301", "Í", "O\u0301", "Ó", "U\u0301", "Ú",
	"n\u0303", "ñ", "N\u0303", "Ñ", "u\u0308", "ü", "U\u0308", "Ü",
)

func compose(s string) string { return composer.Replace(s) }

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// words returns the lower-cased words of s: maximal runs of letters and
// digits.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(compose(s)), func(r rune) bool { return !isWordRune(r) })
}
