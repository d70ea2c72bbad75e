package asl

import (
	"cmp"
	"fmt"
	"math"
	"math/big"
	"strings"
	"time"
)

// choiceRule is one rule of a Choice state, or a rule nested inside And, Or
// or Not. Top-level rules carry Next; nested rules must not.
type choiceRule struct {
	Next   string
	assign *assignment
	output *jvalue // JSONata Output of a top-level rule
	cond   *jvalue // JSONata Condition

	// Boolean combinators: exactly one of these, or a comparison.
	and []*choiceRule
	or  []*choiceRule
	not *choiceRule

	// Comparison.
	variable *path
	op       string // operator name without the "Path" suffix, e.g. "NumericEquals"
	byPath   bool   // the operator was the "…Path" form
	operand  any    // literal operand
	opPath   *path  // operand path for the "…Path" form
}

// comparison operators and the JSON kind of their literal operand.
var choiceOperators = map[string]string{
	"StringEquals":               "string",
	"StringLessThan":             "string",
	"StringGreaterThan":          "string",
	"StringLessThanEquals":       "string",
	"StringGreaterThanEquals":    "string",
	"StringMatches":              "string",
	"NumericEquals":              "number",
	"NumericLessThan":            "number",
	"NumericGreaterThan":         "number",
	"NumericLessThanEquals":      "number",
	"NumericGreaterThanEquals":   "number",
	"BooleanEquals":              "boolean",
	"TimestampEquals":            "timestamp",
	"TimestampLessThan":          "timestamp",
	"TimestampGreaterThan":       "timestamp",
	"TimestampLessThanEquals":    "timestamp",
	"TimestampGreaterThanEquals": "timestamp",
	"IsNull":                     "boolean",
	"IsPresent":                  "boolean",
	"IsNumeric":                  "boolean",
	"IsString":                   "boolean",
	"IsBoolean":                  "boolean",
	"IsTimestamp":                "boolean",
}

// parseChoiceRule compiles a choice rule. top is true for the rules listed
// directly in Choices (they need Next); where prefixes error messages.
func parseChoiceRule(m map[string]any, top bool, where string) (*choiceRule, error) {
	r := &choiceRule{}
	if n, ok := m["Next"]; ok {
		if !top {
			return nil, fmt.Errorf("%s: a rule nested in And, Or or Not must not have Next", where)
		}
		s, ok := n.(string)
		if !ok || s == "" {
			return nil, fmt.Errorf("%s: Next must be a state name", where)
		}
		r.Next = s
	} else if top {
		return nil, fmt.Errorf("%s: Next is required", where)
	}

	var ops []string
	for _, k := range sortedKeys(m) {
		switch k {
		case "Next", "Variable", "Comment":
			continue
		case "Assign":
			if !top {
				return nil, fmt.Errorf("%s: Assign is only allowed in a top-level choice rule", where)
			}
			a, err := compileAssignment(m[k], where+": Assign", false)
			if err != nil {
				return nil, err
			}
			r.assign = a
			continue
		case "And", "Or", "Not":
			ops = append(ops, k)
			continue
		}
		base := strings.TrimSuffix(k, "Path")
		if _, ok := choiceOperators[base]; ok && !strings.HasPrefix(base, "Is") {
			ops = append(ops, k)
			continue
		}
		if _, ok := choiceOperators[k]; ok {
			ops = append(ops, k)
			continue
		}
		if k == "Condition" || k == "Output" {
			return nil, fmt.Errorf("%s: field %q is only allowed in a JSONata state (QueryLanguage \"JSONata\")", where, k)
		}
		return nil, fmt.Errorf("%s: unknown field %q", where, k)
	}
	if len(ops) != 1 {
		if len(ops) == 0 {
			return nil, fmt.Errorf("%s: needs a comparison operator, And, Or or Not", where)
		}
		return nil, fmt.Errorf("%s: has more than one operator (%s)", where, strings.Join(ops, ", "))
	}
	op := ops[0]
	val := m[op]

	switch op {
	case "And", "Or":
		if _, ok := m["Variable"]; ok {
			return nil, fmt.Errorf("%s: %s must not have Variable", where, op)
		}
		arr, ok := val.([]any)
		if !ok || len(arr) == 0 {
			return nil, fmt.Errorf("%s: %s must be a non-empty array of rules", where, op)
		}
		subs := make([]*choiceRule, 0, len(arr))
		for i, e := range arr {
			em, ok := e.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s: %s[%d] must be an object", where, op, i)
			}
			sub, err := parseChoiceRule(em, false, fmt.Sprintf("%s: %s[%d]", where, op, i))
			if err != nil {
				return nil, err
			}
			subs = append(subs, sub)
		}
		if op == "And" {
			r.and = subs
		} else {
			r.or = subs
		}
		return r, nil
	case "Not":
		if _, ok := m["Variable"]; ok {
			return nil, fmt.Errorf("%s: Not must not have Variable", where)
		}
		em, ok := val.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: Not must be a rule object", where)
		}
		sub, err := parseChoiceRule(em, false, where+": Not")
		if err != nil {
			return nil, err
		}
		r.not = sub
		return r, nil
	}

	vs, ok := m["Variable"].(string)
	if !ok {
		return nil, fmt.Errorf("%s: %s needs a Variable path string", where, op)
	}
	vp, err := compilePath(vs)
	if err != nil {
		return nil, fmt.Errorf("%s: Variable: %v", where, err)
	}
	r.variable = vp

	if _, ok := choiceOperators[op]; ok {
		r.op = op
		kind := choiceOperators[op]
		if err := checkOperand(val, kind); err != nil {
			return nil, fmt.Errorf("%s: %s: %v", where, op, err)
		}
		if kind == "timestamp" {
			ts, _ := parseTimestamp(val.(string))
			r.operand = ts
		} else {
			r.operand = val
		}
		return r, nil
	}
	r.op = strings.TrimSuffix(op, "Path")
	r.byPath = true
	ps, ok := val.(string)
	if !ok {
		return nil, fmt.Errorf("%s: %s must be a path string", where, op)
	}
	pp, err := compilePath(ps)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %v", where, op, err)
	}
	r.opPath = pp
	return r, nil
}

func checkOperand(v any, kind string) error {
	switch kind {
	case "string":
		if _, ok := v.(string); !ok {
			return fmt.Errorf("operand must be a string, got %s", typeName(v))
		}
	case "number":
		if _, ok := toRat(v); !ok {
			return fmt.Errorf("operand must be a number, got %s", typeName(v))
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("operand must be a boolean, got %s", typeName(v))
		}
	case "timestamp":
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("operand must be an RFC3339 timestamp string, got %s", typeName(v))
		}
		if _, ok := parseTimestamp(s); !ok {
			return fmt.Errorf("operand %q is not an RFC3339 timestamp", s)
		}
	}
	return nil
}

// match evaluates the rule against the scope. A Variable (or operand path)
// that selects nothing is a States.Runtime error, as in Step Functions,
// except for IsPresent, which exists to test exactly that. A value of the
// wrong type for the operator makes the comparison false.
func (r *choiceRule) match(sc *scope) (bool, error) {
	switch {
	case r.and != nil:
		for _, s := range r.and {
			ok, err := s.match(sc)
			if err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	case r.or != nil:
		for _, s := range r.or {
			ok, err := s.match(sc)
			if err != nil || ok {
				return ok, err
			}
		}
		return false, nil
	case r.not != nil:
		ok, err := r.not.match(sc)
		return !ok && err == nil, err
	}

	v, found := sc.lookup(r.variable)
	if found && !r.variable.definite {
		// An indefinite path yields an array of matches; an empty one is absent.
		if a, ok := v.([]any); ok && len(a) == 0 {
			found = false
		}
	}
	if r.op == "IsPresent" {
		return found == r.operand.(bool), nil
	}
	if !found {
		return false, newError(ErrRuntime, "Invalid path %q: the Choice rule's Variable references a value that is not in the input", r.variable.raw)
	}

	operand := r.operand
	if r.byPath {
		o, ok := sc.lookup(r.opPath)
		if !ok {
			return false, newError(ErrRuntime, "Invalid path %q: the Choice rule's %sPath references a value that is not in the input", r.opPath.raw, r.op)
		}
		operand = o
		if choiceOperators[r.op] == "timestamp" {
			s, ok := o.(string)
			if !ok {
				return false, nil
			}
			ts, ok := parseTimestamp(s)
			if !ok {
				return false, nil
			}
			operand = ts
		}
	}
	return compare(r.op, v, operand), nil
}

// compare applies a comparison operator; operand already has the right Go
// type for literal operands (time.Time for timestamps).
func compare(op string, v, operand any) bool {
	switch op {
	case "IsNull":
		return (v == nil) == operand.(bool)
	case "IsNumeric":
		_, ok := toRat(v)
		return ok == operand.(bool)
	case "IsString":
		_, ok := v.(string)
		return ok == operand.(bool)
	case "IsBoolean":
		_, ok := v.(bool)
		return ok == operand.(bool)
	case "IsTimestamp":
		s, ok := v.(string)
		if ok {
			_, ok = parseTimestamp(s)
		}
		return ok == operand.(bool)
	case "BooleanEquals":
		a, ok1 := v.(bool)
		b, ok2 := operand.(bool)
		return ok1 && ok2 && a == b
	}

	switch choiceOperators[op] {
	case "string":
		a, ok1 := v.(string)
		b, ok2 := operand.(string)
		if !ok1 || !ok2 {
			return false
		}
		if op == "StringMatches" {
			return wildcardMatch(b, a)
		}
		return ordered(op, strings.Compare(a, b))
	case "number":
		if c, ok := compareSameKind(v, operand); ok {
			return ordered(op, c)
		}
		a, ok1 := toRat(v)
		b, ok2 := toRat(operand)
		if !ok1 || !ok2 {
			return false
		}
		return ordered(op, a.Cmp(b))
	case "timestamp":
		s, ok := v.(string)
		if !ok {
			return false
		}
		a, ok := parseTimestamp(s)
		b, ok2 := operand.(time.Time)
		if !ok || !ok2 {
			return false
		}
		return ordered(op, a.Compare(b))
	}
	return false
}

func ordered(op string, c int) bool {
	switch {
	case strings.HasSuffix(op, "LessThanEquals"):
		return c <= 0
	case strings.HasSuffix(op, "GreaterThanEquals"):
		return c >= 0
	case strings.HasSuffix(op, "LessThan"):
		return c < 0
	case strings.HasSuffix(op, "GreaterThan"):
		return c > 0
	default: // Equals
		return c == 0
	}
}

// compareSameKind compares two int64 or two finite float64 numbers, which
// Go compares exactly, without toRat's allocations; other pairs are not
// handled.
func compareSameKind(a, b any) (int, bool) {
	switch x := a.(type) {
	case int64:
		if y, ok := b.(int64); ok {
			return cmp.Compare(x, y), true
		}
	case float64:
		if y, ok := b.(float64); ok && !math.IsNaN(x) && !math.IsNaN(y) && !math.IsInf(x, 0) && !math.IsInf(y, 0) {
			return cmp.Compare(x, y), true
		}
	}
	return 0, false
}

// toRat converts a JSON number to an exact rational, so int64 and float64
// values compare exactly.
func toRat(v any) (*big.Rat, bool) {
	switch x := v.(type) {
	case int64:
		return new(big.Rat).SetInt64(x), true
	case int:
		return new(big.Rat).SetInt64(int64(x)), true
	case float64:
		r := new(big.Rat)
		if r.SetFloat64(x) == nil {
			return nil, false
		}
		return r, true
	}
	return nil, false
}

// parseTimestamp accepts RFC3339 timestamps as Step Functions does: an
// uppercase T separator and an explicit zone (Z or an offset).
func parseTimestamp(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, false
	}
	return t, true
}

// wildcardMatch implements StringMatches: '*' matches any run of characters
// (including none); "\*" is a literal star and "\\" a literal backslash.
func wildcardMatch(pattern, s string) bool {
	type tok struct {
		star bool
		lit  rune
	}
	var toks []tok
	rs := []rune(pattern)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		if c == '\\' && i+1 < len(rs) && (rs[i+1] == '*' || rs[i+1] == '\\') {
			toks = append(toks, tok{lit: rs[i+1]})
			i++
			continue
		}
		if c == '*' {
			toks = append(toks, tok{star: true})
			continue
		}
		toks = append(toks, tok{lit: c})
	}
	str := []rune(s)
	// Iterative glob matching with backtracking to the last star.
	ti, si := 0, 0
	starT, starS := -1, 0
	for si < len(str) {
		switch {
		case ti < len(toks) && !toks[ti].star && toks[ti].lit == str[si]:
			ti++
			si++
		case ti < len(toks) && toks[ti].star:
			starT, starS = ti, si
			ti++
		case starT >= 0:
			starS++
			si = starS
			ti = starT + 1
		default:
			return false
		}
	}
	for ti < len(toks) && toks[ti].star {
		ti++
	}
	return ti == len(toks)
}
