package asl

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/veredicto/veredicto/internal/asl/jsonata"
)

// Query languages: JSONPath (the default) and JSONata, per machine and per
// state, as "Transforming data with JSONata in Step Functions" documents.
const (
	langJSONPath = "JSONPath"
	langJSONata  = "JSONata"
)

// assignment is a compiled Assign field: a JSONPath payload template (keys
// ending in ".$" are paths or intrinsics) or a JSONata value.
type assignment struct {
	jp    *template
	ja    *jvalue
	names []string
}

// compileAssignment checks an Assign object and compiles it in the state's
// query language.
func compileAssignment(raw any, where string, isJSONata bool) (*assignment, error) {
	return compileAssignmentAcc(raw, where, isJSONata, jsonataAccess{})
}

func compileAssignmentAcc(raw any, where string, isJSONata bool, acc jsonataAccess) (*assignment, error) {
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: must be an object of variable names and values, got %s", where, typeName(raw))
	}
	a := &assignment{names: assignNames(m)}
	for _, k := range sortedKeys(m) {
		name := k
		if strings.HasSuffix(k, ".$") {
			if isJSONata {
				return nil, fmt.Errorf("%s: field %q: keys ending in .$ are JSONPath; a JSONata state writes \"{%% … %%}\" values instead", where, k)
			}
			name = strings.TrimSuffix(k, ".$")
		}
		if name == reservedStatesVariable {
			return nil, fmt.Errorf("%s: $states is a reserved variable and cannot be assigned", where)
		}
		if err := validVariableName(name); err != nil {
			return nil, fmt.Errorf("%s: %v", where, err)
		}
	}
	if isJSONata {
		j, err := compileJValue(m, where, acc)
		if err != nil {
			return nil, err
		}
		a.ja = j
		return a, nil
	}
	t, err := compileTemplate(m, where)
	if err != nil {
		return nil, err
	}
	a.jp = t
	return a, nil
}

func (v *validator) assignment(raw any, where string, isJSONata bool) *assignment {
	a, err := compileAssignment(raw, where, isJSONata)
	if err != nil {
		v.addf("%v", err)
		return nil
	}
	return a
}

// evalJSONPath evaluates a JSONPath Assign with $ bound to dollar.
func (a *assignment) evalJSONPath(r *stateRun, dollar any) (map[string]any, error) {
	v, err := a.jp.eval(r.scope(dollar))
	if err != nil {
		return nil, err
	}
	m, _ := r.x.plain(v).(map[string]any) // variables hold plain values
	return m, nil
}

// jsonPathAssign evaluates a JSONPath Assign (when there is one) with $
// bound to dollar and returns the function that commits it; the caller
// commits once the state's output is known, so that a state that fails
// assigns nothing.
func (r *stateRun) jsonPathAssign(a *assignment, dollar any) (func() error, error) {
	if a == nil {
		return noCommit, nil
	}
	vals, err := a.evalJSONPath(r, dollar)
	if err != nil {
		return nil, err
	}
	return func() error { return r.assign(vals) }, nil
}

func noCommit() error { return nil }

// jvalue is a compiled JSONata-state value: a JSON value whose strings
// written "{% expr %}" are JSONata expressions, evaluated where they stand.
type jvalue struct {
	kind    tmplKind // tmplLiteral, tmplObject, tmplArray, or tmplPath for an expression
	literal any
	keys    []string
	fields  []*jvalue
	items   []*jvalue
	expr    *jsonata.Expr
	src     string // the expression, without the {% %} marks
}

// jsonataAccess says which parts of $states a field may read.
type jsonataAccess struct {
	result      bool
	errorOutput bool
}

var statesMember = regexp.MustCompile(`\$states\.([A-Za-z_][A-Za-z0-9_]*)`)

// isJSONataString reports whether s is written "{% … %}" (no space outside).
func isJSONataString(s string) bool {
	return strings.HasPrefix(s, "{%") && strings.HasSuffix(s, "%}") && len(s) >= 4
}

// compileJValue compiles v; where names the field for load-time errors.
func compileJValue(v any, where string, acc jsonataAccess) (*jvalue, error) {
	switch x := v.(type) {
	case string:
		if !isJSONataString(x) {
			if strings.HasPrefix(strings.TrimSpace(x), "{%") && strings.HasSuffix(strings.TrimSpace(x), "%}") {
				return nil, fmt.Errorf("%s: a JSONata expression must start with {%% and end with %%} with no spaces outside them", where)
			}
			return &jvalue{kind: tmplLiteral, literal: x}, nil
		}
		src := strings.TrimSpace(x[2 : len(x)-2])
		if strings.TrimSpace(src) == "" {
			return nil, fmt.Errorf("%s: the JSONata expression is empty", where)
		}
		code := withoutStringLiterals(src)
		if strings.Contains(code, "$$") {
			return nil, fmt.Errorf("%s: Reference to '$$' is not supported (the context object is $states.context)", where)
		}
		for _, m := range statesMember.FindAllStringSubmatch(code, -1) {
			switch m[1] {
			case "input", "context":
			case "result":
				if !acc.result {
					return nil, fmt.Errorf("%s: $states.result is not accessible in this field", where)
				}
			case "errorOutput":
				if !acc.errorOutput {
					return nil, fmt.Errorf("%s: $states.errorOutput is only accessible in a Catch's Output and Assign", where)
				}
			default:
				return nil, fmt.Errorf("%s: $states.%s is not defined (the reserved $states has input, result, errorOutput and context)", where, m[1])
			}
		}
		e, err := jsonata.Compile(src, stepFunctionsFunctions...)
		if err != nil {
			return nil, fmt.Errorf("%s: invalid JSONata expression %q: %v", where, src, err)
		}
		if names := e.TopLevelNames(); len(names) > 0 {
			return nil, fmt.Errorf("%s: Reference to '%s' at the top level is not supported: an expression reads the state input as $states.input and a variable as $name", where, names[0])
		}
		return &jvalue{kind: tmplPath, expr: e, src: src}, nil
	case map[string]any:
		j := &jvalue{kind: tmplObject}
		lit := true
		for _, k := range sortedKeys(x) {
			f, err := compileJValue(x[k], where+"."+k, acc)
			if err != nil {
				return nil, err
			}
			j.keys = append(j.keys, k)
			j.fields = append(j.fields, f)
			lit = lit && f.kind == tmplLiteral
		}
		if lit {
			return &jvalue{kind: tmplLiteral, literal: x}, nil
		}
		return j, nil
	case []any:
		j := &jvalue{kind: tmplArray}
		lit := true
		for i, e := range x {
			f, err := compileJValue(e, fmt.Sprintf("%s[%d]", where, i), acc)
			if err != nil {
				return nil, err
			}
			j.items = append(j.items, f)
			lit = lit && f.kind == tmplLiteral
		}
		if lit {
			return &jvalue{kind: tmplLiteral, literal: x}, nil
		}
		return j, nil
	default:
		return &jvalue{kind: tmplLiteral, literal: v}, nil
	}
}

// evaluationProblem words an evaluation failure; the bounds AWS documents
// (time, memory, recursion) get AWS's words, other errors the evaluator's
// code and message. Step Functions stops an expression after 1 second; the
// engine bounds it by evaluation steps instead (10 million, of the same
// order of time, without a timer per expression), so that the outcome
// does not depend on the machine's load.
func evaluationProblem(err error) string {
	var je *jsonata.Error
	switch {
	case errors.As(err, &je) && je.Code == "U1002":
		return "Expression evaluation timeout"
	case errors.As(err, &je) && je.Code == "U1003":
		return "Expression evaluation memory limit exceeded"
	case errors.As(err, &je) && je.Code == "U1001":
		return "Stack overflow error"
	}
	return err.Error()
}

// jenv is what JSONata expressions of one state evaluation see.
type jenv struct {
	ctx      context.Context
	bindings map[string]any
}

// jsonataEnv builds the bindings: the variables in scope and $states with
// input, context and, when given, result or errorOutput.
func (r *stateRun) jsonataEnv(ctx context.Context, input any, extra map[string]any) *jenv {
	states := make(map[string]any, 3)
	states["input"] = r.x.plain(input)
	if r.st.jaContext {
		states["context"] = r.x.plain(r.context())
	}
	for k, v := range extra {
		states[k] = r.x.plain(v)
	}
	b := map[string]any{}
	if r.vars != nil {
		r.vars.snapshot(b)
	}
	b[reservedStatesVariable] = states
	return &jenv{ctx: ctx, bindings: b}
}

// eval renders the value; field locates it in the state for error causes,
// as Step Functions writes it: "Arguments/Input/pushLocation", "Items[1]".
func (j *jvalue) eval(env *jenv, field string) (any, error) {
	switch j.kind {
	case tmplLiteral:
		return j.literal, nil
	case tmplPath:
		// The state input is reached through $states.input only: the
		// context item ($, bare field names) is undefined, as in Step
		// Functions' evaluator (and LocalStack's, which moto ports).
		v, err := j.expr.Eval(env.ctx, jsonata.Undefined, env.bindings)
		if err != nil {
			if env.ctx.Err() != nil {
				return nil, env.ctx.Err() // the execution was stopped or timed out
			}
			return nil, queryError(field, "The JSONata expression '%s' specified for the field '%s' threw an error during evaluation. %s", j.src, field, evaluationProblem(err))
		}
		if jsonata.IsUndefined(v) {
			return nil, queryError(field, "The JSONata expression '%s' specified for the field '%s' returned nothing (undefined).", j.src, field)
		}
		if !isJSONValue(v) {
			return nil, queryError(field, "The JSONata expression '%s' specified for the field '%s' returned an unsupported result type.", j.src, field)
		}
		return normalizeNumbers(v), nil
	case tmplObject:
		out := make(map[string]any, len(j.fields))
		for i, f := range j.fields {
			v, err := f.eval(env, field+"/"+j.keys[i])
			if err != nil {
				return nil, err
			}
			out[j.keys[i]] = v
		}
		return out, nil
	case tmplArray:
		out := make([]any, len(j.items))
		for i, it := range j.items {
			v, err := it.eval(env, fmt.Sprintf("%s[%d]", field, i))
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown JSONata value kind %d", j.kind)
}

// normalizeNumbers turns integral float64 results into int64, the engine's
// representation of integers, so values compare and print alike whichever
// query language produced them. Results may share containers with the
// input, which is never modified: a container is copied only when something
// inside it changes.
func normalizeNumbers(v any) any {
	out, _ := normalized(v)
	return out
}

func normalized(v any) (any, bool) {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x), true
		}
	case map[string]any:
		var cp map[string]any
		for k, e := range x {
			if n, changed := normalized(e); changed {
				if cp == nil {
					cp = make(map[string]any, len(x))
					for k2, e2 := range x {
						cp[k2] = e2
					}
				}
				cp[k] = n
			}
		}
		if cp != nil {
			return cp, true
		}
	case []any:
		var cp []any
		for i, e := range x {
			if n, changed := normalized(e); changed {
				if cp == nil {
					cp = make([]any, len(x))
					copy(cp, x)
				}
				cp[i] = n
			}
		}
		if cp != nil {
			return cp, true
		}
	}
	return v, false
}

// jsonataFields are the compiled fields of a JSONata state.
type jsonataFields struct {
	Arguments      *jvalue
	Output         *jvalue
	Items          *jvalue
	ItemSelector   *jvalue
	MaxConcurrency *jvalue
	Timeout        *jvalue
	Heartbeat      *jvalue
	Seconds        *jvalue
	Timestamp      *jvalue
	Error          *jvalue
	Cause          *jvalue
}

// isJSONValue reports whether v is made of JSON values only (a JSONata
// function, or undefined inside an array, is not).
func isJSONValue(v any) bool {
	switch x := v.(type) {
	case nil, bool, string, float64, int64, int:
		return true
	case map[string]any:
		for _, e := range x {
			if !isJSONValue(e) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range x {
			if !isJSONValue(e) {
				return false
			}
		}
		return true
	}
	return false
}

// withoutStringLiterals blanks the contents of the string literals of a
// JSONata expression, so that the checks on $$ and $states read code only.
func withoutStringLiterals(src string) string {
	b := []byte(src)
	var quote byte
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case quote != 0 && c == '\\' && i+1 < len(b):
			b[i], b[i+1] = ' ', ' '
			i++
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			b[i] = ' '
		case c == '"' || c == '\'':
			quote = c
		}
	}
	return string(b)
}
