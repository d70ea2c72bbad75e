package veredicto

import (
	"fmt"
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
