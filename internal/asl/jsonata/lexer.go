package jsonata

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

type tokenKind int

const (
	tokEnd tokenKind = iota
	tokOperator
	tokString
	tokNumber
	tokName
	tokVariable
	tokValue // true, false, null
	tokRegex
)

type token struct {
	kind  tokenKind
	value string // operator symbol, name, string contents
	num   float64
	val   any // true/false/nil for tokValue
	re    *regexValue
	pos   int // 1-based offset just past the token, as the reference reports
}

var operatorSymbols = map[string]bool{
	".": true, "[": true, "]": true, "{": true, "}": true, "(": true, ")": true, ",": true,
	"@": true, "#": true, ";": true, ":": true, "?": true, "+": true, "-": true, "*": true,
	"/": true, "%": true, "|": true, "=": true, "<": true, ">": true, "^": true, "**": true,
	"..": true, ":=": true, "!=": true, "<=": true, ">=": true, "~>": true, "and": true, "or": true, "in": true, "&": true, "!": true, "~": true,
}

type lexer struct {
	src []rune
	pos int
}

func isNameStop(r rune) bool {
	switch r {
	case '.', '[', ']', '{', '}', '(', ')', ',', '@', '#', ';', ':', '?', '+', '-', '*', '/',
		'%', '|', '=', '<', '>', '^', '&', '!', '~', '"', '\'', '`', ' ', '\t', '\n', '\r', '\v', '\f':
		return true
	}
	return false
}

// next returns the next token. prefix is true where an operand is expected,
// so that a '/' starts a regular expression rather than a division.
func (l *lexer) next(prefix bool) (token, error) {
	src := l.src
	for l.pos < len(src) {
		c := src[l.pos]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' {
			l.pos++
			continue
		}
		if c == '/' && l.pos+1 < len(src) && src[l.pos+1] == '*' {
			start := l.pos
			end := strings.Index(string(src[l.pos+2:]), "*/")
			if end < 0 {
				return token{}, newErr("S0106", start+1, "comment has no closing tag")
			}
			l.pos += 2 + utf8.RuneCountInString(string(src[l.pos+2:])[:end]) + 2
			continue
		}
		break
	}
	if l.pos >= len(src) {
		return token{kind: tokEnd, pos: l.pos}, nil
	}
	c := src[l.pos]
	if prefix && c == '/' {
		return l.regex()
	}
	if l.pos+1 < len(src) {
		two := string(src[l.pos : l.pos+2])
		switch two {
		case "..", ":=", "!=", ">=", "<=", "**", "~>":
			l.pos += 2
			return token{kind: tokOperator, value: two, pos: l.pos}, nil
		}
	}
	if operatorSymbols[string(c)] {
		l.pos++
		return token{kind: tokOperator, value: string(c), pos: l.pos}, nil
	}
	if c == '"' || c == '\'' {
		return l.str(c)
	}
	if c >= '0' && c <= '9' {
		return l.number()
	}
	if c == '`' {
		end := -1
		for i := l.pos + 1; i < len(src); i++ {
			if src[i] == '`' {
				end = i
				break
			}
		}
		if end < 0 {
			return token{}, newErr("S0105", l.pos+1, "quoted property name must be terminated with a backquote (`)")
		}
		name := string(src[l.pos+1 : end])
		l.pos = end + 1
		return token{kind: tokName, value: name, pos: l.pos}, nil
	}
	start := l.pos
	i := l.pos
	for i < len(src) && !isNameStop(src[i]) {
		i++
	}
	if c == '$' {
		name := string(src[start+1 : i])
		l.pos = i
		return token{kind: tokVariable, value: name, pos: l.pos}, nil
	}
	name := string(src[start:i])
	l.pos = i
	switch name {
	case "and", "or", "in":
		return token{kind: tokOperator, value: name, pos: l.pos}, nil
	case "true":
		return token{kind: tokValue, val: true, value: name, pos: l.pos}, nil
	case "false":
		return token{kind: tokValue, val: false, value: name, pos: l.pos}, nil
	case "null":
		return token{kind: tokValue, val: nil, value: name, pos: l.pos}, nil
	}
	if name == "" {
		return token{}, newErr("S0204", start+1, "unknown operator: %q", string(c))
	}
	return token{kind: tokName, value: name, pos: l.pos}, nil
}

func (l *lexer) number() (token, error) {
	src := l.src
	i := l.pos
	if src[i] == '0' {
		i++
	} else {
		for i < len(src) && src[i] >= '0' && src[i] <= '9' {
			i++
		}
	}
	if i+1 < len(src) && src[i] == '.' && src[i+1] >= '0' && src[i+1] <= '9' {
		i++
		for i < len(src) && src[i] >= '0' && src[i] <= '9' {
			i++
		}
	}
	if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
		j := i + 1
		if j < len(src) && (src[j] == '+' || src[j] == '-') {
			j++
		}
		if j < len(src) && src[j] >= '0' && src[j] <= '9' {
			for j < len(src) && src[j] >= '0' && src[j] <= '9' {
				j++
			}
			i = j
		}
	}
	text := string(src[l.pos:i])
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || f > 1.7976931348623157e308 {
		return token{}, newErr("S0102", l.pos+1, "number out of range: %s", text)
	}
	l.pos = i
	return token{kind: tokNumber, num: f, value: text, pos: l.pos}, nil
}

func (l *lexer) str(quote rune) (token, error) {
	src := l.src
	start := l.pos
	var b strings.Builder
	i := l.pos + 1
	for i < len(src) {
		c := src[i]
		if c == '\\' {
			i++
			if i >= len(src) {
				break
			}
			switch src[i] {
			case '"', '\\', '/', '\'':
				b.WriteRune(src[i])
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				if i+4 >= len(src) {
					return token{}, newErr("S0104", i+1, "the escape sequence \\u must be followed by 4 hex digits")
				}
				code, err := strconv.ParseUint(string(src[i+1:i+5]), 16, 32)
				if err != nil {
					return token{}, newErr("S0104", i+1, "the escape sequence \\u must be followed by 4 hex digits")
				}
				r := rune(code)
				i += 4
				// a UTF-16 surrogate pair written as two escapes
				if r >= 0xD800 && r < 0xDC00 && i+6 < len(src) && src[i+1] == '\\' && src[i+2] == 'u' {
					if lo, err := strconv.ParseUint(string(src[i+3:i+7]), 16, 32); err == nil && lo >= 0xDC00 && lo < 0xE000 {
						r = 0x10000 + (r-0xD800)<<10 + rune(lo-0xDC00)
						i += 6
					}
				}
				b.WriteRune(r)
			default:
				return token{}, newErr("S0103", i+1, "unsupported escape sequence: \\%c", src[i])
			}
			i++
			continue
		}
		if c == quote {
			l.pos = i + 1
			return token{kind: tokString, value: b.String(), pos: l.pos}, nil
		}
		b.WriteRune(c)
		i++
	}
	return token{}, newErr("S0101", start+1, "string literal must be terminated by a matching quote")
}

func (l *lexer) regex() (token, error) {
	src := l.src
	start := l.pos
	i := l.pos + 1
	depth := 0 // inside a [...] class a '/' does not end the pattern
	for i < len(src) {
		c := src[i]
		if c == '\\' {
			i += 2
			continue
		}
		if c == '[' {
			depth = 1
		} else if c == ']' {
			depth = 0
		} else if c == '/' && depth == 0 {
			break
		}
		i++
	}
	if i >= len(src) {
		return token{}, newErr("S0302", start+1, "no terminating / in regular expression")
	}
	pattern := string(src[start+1 : i])
	if pattern == "" {
		return token{}, newErr("S0301", start+1, "empty regular expressions are not allowed")
	}
	i++
	fstart := i
	for i < len(src) && (src[i] == 'i' || src[i] == 'm') {
		i++
	}
	flags := string(src[fstart:i])
	l.pos = i
	re, err := compileRegex(pattern, flags)
	if err != nil {
		return token{}, newErr("S0303", start+1, "invalid regular expression /%s/: %v", pattern, err)
	}
	return token{kind: tokRegex, re: re, value: pattern, pos: l.pos}, nil
}
