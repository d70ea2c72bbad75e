package veredicto

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxLabelLen bounds a label a person types next to the documents — a
// search's client or role, a company or a job platform — in characters.
const MaxLabelLen = 200

// CheckLabel accepts such a label: one line of at most MaxLabelLen
// characters without control characters, since it heads reports and
// agents' messages. Its error is an *InvalidInputError naming file and
// field, never the value.
func CheckLabel(file, field, v string) error {
	problem := ""
	switch n := utf8.RuneCountInString(v); {
	case !utf8.ValidString(v):
		problem = "is not valid UTF-8 text"
	case n > MaxLabelLen:
		problem = fmt.Sprintf("has %d characters; at most %d", n, MaxLabelLen)
	case strings.IndexFunc(v, unicode.IsControl) >= 0:
		problem = "must be one line without control characters"
	}
	if problem == "" {
		return nil
	}
	return &InvalidInputError{File: file, Field: field, Problem: problem}
}

// idPattern: an id (a tenant, a search, a candidate) is 1–64 Unicode
// letters or digits, '.', '_' or '-', starting with a letter or digit
// ("c-001", "Ñandú"). Combining marks are accepted after the first letter,
// so a name a macOS file system stores decomposed (N + U+0303) is accepted
// too. Ids become S3 keys, DynamoDB keys and file names (all UTF-8), never
// holding a '/' or a leading '.'; execution names, which are ASCII-only,
// are derived from a hash of the id.
var idPattern = regexp.MustCompile(`^[\p{L}\p{N}][\p{L}\p{M}\p{N}._-]{0,63}$`)

// IDRule says what ValidID accepts, for error messages.
const IDRule = "1–64 letters (accents and ñ included), digits, '.', '_' or '-', starting with a letter or digit"

// ValidID reports whether s is a valid id (IDRule): a tenant, a search or
// a candidate.
func ValidID(s string) bool { return idPattern.MatchString(s) }
