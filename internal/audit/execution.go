package audit

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxExecutionName bounds an execution's name (Step Functions: 80).
const MaxExecutionName = 80

// ValidExecution reports whether name can name an execution's record: 1
// to MaxExecutionName characters of UTF-8, no slash, backslash, space or
// control character, and not "." or "..". A record is kept per execution,
// in a folder (or under a key) of its name.
func ValidExecution(name string) bool {
	return name != "" && utf8.ValidString(name) && utf8.RuneCountInString(name) <= MaxExecutionName && name != "." && name != ".." &&
		!strings.ContainsFunc(name, func(r rune) bool { return r == '/' || r == '\\' || unicode.IsControl(r) || unicode.IsSpace(r) })
}
