package jsonata

import (
	"fmt"
	"regexp"
	"strings"
)

// signature is a parsed JSONata function signature such as "<s-nn?:s>". The
// argument types are matched the way the reference does it: each argument is
// reduced to a one-letter type symbol and the symbols are matched against a
// regular expression built from the parameter list.
type signature struct {
	params []sigParam
	re     *regexp.Regexp
}

type sigParam struct {
	typ        byte   // s n b l o a f j x, or '(' for a choice
	regex      string // the symbol class for this parameter
	subtype    string // the <...> part of a or f
	context    bool   // '-': use the context value when the argument is missing
	contextRe  *regexp.Regexp
	optionalRe string
}

func parseSignature(sig string) (*signature, error) {
	s := &signature{}
	// drop the return type
	if i := topLevelColon(sig); i >= 0 {
		sig = sig[:i]
	}
	for i := 0; i < len(sig); i++ {
		c := sig[i]
		last := len(s.params) - 1
		switch c {
		case 's', 'n', 'b', 'l', 'o':
			s.params = append(s.params, sigParam{typ: c, regex: "[" + string(c) + "m]"})
		case 'a':
			s.params = append(s.params, sigParam{typ: c, regex: "[asnblfom]"})
		case 'f':
			s.params = append(s.params, sigParam{typ: c, regex: "f"})
		case 'j':
			s.params = append(s.params, sigParam{typ: c, regex: "[asnblom]"})
		case 'x':
			s.params = append(s.params, sigParam{typ: c, regex: "[asnblfom]"})
		case '-':
			if last < 0 {
				return nil, fmt.Errorf("'-' without a parameter")
			}
			s.params[last].context = true
			s.params[last].contextRe = regexp.MustCompile("^" + s.params[last].regex + "$")
			s.params[last].regex += "?"
		case '?', '+':
			if last < 0 {
				return nil, fmt.Errorf("%q without a parameter", c)
			}
			s.params[last].regex += string(c)
		case '(':
			end := strings.IndexByte(sig[i:], ')')
			if end < 0 {
				return nil, fmt.Errorf("unclosed '('")
			}
			choice := sig[i+1 : i+end]
			if strings.ContainsAny(choice, "<>") {
				return nil, fmt.Errorf("parameterised types in a choice are not supported")
			}
			s.params = append(s.params, sigParam{typ: '(', regex: "[" + choice + "m]"})
			i += end
		case '<':
			if last < 0 || (s.params[last].typ != 'a' && s.params[last].typ != 'f') {
				return nil, fmt.Errorf("type parameters apply only to a and f")
			}
			depth, j := 0, i
			for ; j < len(sig); j++ {
				if sig[j] == '<' {
					depth++
				} else if sig[j] == '>' {
					depth--
					if depth == 0 {
						break
					}
				}
			}
			if j >= len(sig) {
				return nil, fmt.Errorf("unclosed '<'")
			}
			s.params[last].subtype = sig[i+1 : j]
			i = j
		default:
			return nil, fmt.Errorf("unknown type symbol %q", c)
		}
	}
	var b strings.Builder
	b.WriteString("^")
	for _, p := range s.params {
		b.WriteString("(" + p.regex + ")")
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, err
	}
	s.re = re
	return s, nil
}

func topLevelColon(sig string) int {
	depth := 0
	for i := 0; i < len(sig); i++ {
		switch sig[i] {
		case '<', '(':
			depth++
		case '>', ')':
			depth--
		case ':':
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

func mustSignature(sig string) *signature {
	s, err := parseSignature(strings.TrimSuffix(strings.TrimPrefix(sig, "<"), ">"))
	if err != nil {
		panic("jsonata: bad built-in signature " + sig + ": " + err.Error())
	}
	return s
}

func typeSymbol(v any) byte {
	if isFunc(v) {
		return 'f'
	}
	switch v.(type) {
	case string:
		return 's'
	case bool:
		return 'b'
	case nil:
		return 'l'
	case map[string]any:
		return 'o'
	case []any, *sequence:
		return 'a'
	}
	if v == Undefined {
		return 'm'
	}
	if _, ok := toNumber(v); ok {
		return 'n'
	}
	return 'm'
}

// validate matches the arguments against the signature, inserting the
// context value for a missing argument marked '-' and wrapping a single value
// given where an array is expected.
func (s *signature) validate(args []any, context any, pos int, name string) ([]any, error) {
	sym := make([]byte, len(args))
	for i, a := range args {
		sym[i] = typeSymbol(a)
	}
	m := s.re.FindStringSubmatchIndex(string(sym))
	if m == nil {
		return nil, s.mismatch(args, string(sym), pos, name)
	}
	out := make([]any, 0, len(s.params))
	argIndex := 0
	for i, p := range s.params {
		start, end := m[2*i+2], m[2*i+3]
		if start == end || start < 0 {
			if p.context {
				if !p.contextRe.MatchString(string(typeSymbol(context))) {
					return nil, &Error{Code: "T0411", Position: pos, Token: name,
						Message: fmt.Sprintf("context value is not a compatible type with argument %d of function %s", argIndex+1, fnName(name))}
				}
				out = append(out, context)
			} else {
				if argIndex < len(args) {
					out = append(out, args[argIndex])
				} else {
					out = append(out, Undefined)
				}
				argIndex++
			}
			continue
		}
		for k := start; k < end; k++ {
			arg := args[argIndex]
			if p.typ == 'a' && sym[k] != 'm' {
				items, isArr := asArray(arg)
				if p.subtype != "" {
					ok := true
					if !isArr {
						ok = string(sym[k]) == p.subtype
					} else if len(items) > 0 {
						first := typeSymbol(items[0])
						ok = first == p.subtype[0]
						for _, it := range items {
							if typeSymbol(it) != first {
								ok = false
							}
						}
					}
					if !ok {
						return nil, &Error{Code: "T0412", Position: pos, Token: name,
							Message: fmt.Sprintf("argument %d of function %s must be an array of %s", argIndex+1, fnName(name), subtypeName(p.subtype))}
					}
				}
				if !isArr {
					arg = []any{arg}
				}
			}
			out = append(out, arg)
			argIndex++
		}
	}
	return out, nil
}

func (s *signature) mismatch(args []any, sym string, pos int, name string) error {
	partial := "^"
	good := 0
	for _, p := range s.params {
		partial += p.regex
		loc := regexp.MustCompile(partial).FindStringIndex(sym)
		if loc == nil {
			break
		}
		good = loc[1]
	}
	return &Error{Code: "T0410", Position: pos, Token: name,
		Message: fmt.Sprintf("argument %d of function %s does not match function signature", good+1, fnName(name))}
}

func fnName(name string) string {
	if name == "" {
		return "(anonymous)"
	}
	return "$" + name
}

func subtypeName(s string) string {
	switch s {
	case "s":
		return "strings"
	case "n":
		return "numbers"
	case "b":
		return "booleans"
	case "o":
		return "objects"
	case "a":
		return "arrays"
	}
	return s
}
