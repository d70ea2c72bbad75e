package asl

import (
	"context"
	"fmt"
	"regexp"
	"time"
)

// JSONata states: loading and running them. In a JSONata state the five
// JSONPath fields give way to Arguments and Output, "…Path" fields to
// {% %} expressions in the plain field, ItemsPath to Items, and Choice rules
// to a Condition ("Transforming data with JSONata in Step Functions").

var (
	jsonataStateFields = map[string]map[string]bool{
		"Pass":     set("Next", "End", "Output", "Assign"),
		"Task":     set("Next", "End", "Output", "Assign", "Arguments", "Resource", "TimeoutSeconds", "HeartbeatSeconds", "Retry", "Catch", "Credentials"),
		"Choice":   set("Choices", "Default", "Output", "Assign"),
		"Wait":     set("Next", "End", "Output", "Assign", "Seconds", "Timestamp"),
		"Succeed":  set("Output"),
		"Fail":     set("Error", "Cause"),
		"Parallel": set("Next", "End", "Output", "Assign", "Arguments", "Branches", "Retry", "Catch"),
		"Map":      set("Next", "End", "Output", "Assign", "Items", "ItemSelector", "ItemProcessor", "Iterator", "MaxConcurrency", "Retry", "Catch", "ItemReader", "ResultWriter", "ItemBatcher", "ToleratedFailurePercentage", "ToleratedFailureCount", "Label"),
	}
	jsonPathOnly = set("InputPath", "OutputPath", "ResultPath", "Parameters", "ResultSelector", "Result",
		"TimeoutSecondsPath", "HeartbeatSecondsPath", "SecondsPath", "TimestampPath", "ErrorPath", "CausePath",
		"ItemsPath", "MaxConcurrencyPath", "ToleratedFailurePercentagePath", "ToleratedFailureCountPath")
	jsonataOnly          = set("Arguments", "Output", "Items")
	jsonataCatcherFields = set("ErrorEquals", "Next", "Comment", "Output", "Assign")
)

// jsonataState loads the type-specific fields of a JSONata state.
func (v *validator) jsonataState(st *State, m map[string]any, where string) {
	typ := st.Type
	st.InputPath, st.OutputPath, st.ResultPath = optPath{p: rootPath}, optPath{p: rootPath}, optPath{p: rootPath}
	v.transition(st, m, where)
	f := &jsonataFields{}
	st.ja = f
	fromResult := typ == "Task" || typ == "Parallel" || typ == "Map"
	compile := func(field string, acc jsonataAccess) *jvalue {
		raw, ok := m[field]
		if !ok {
			return nil
		}
		j, err := compileJValue(raw, where+": "+field, acc)
		if err != nil {
			v.addf("%v", err)
			return nil
		}
		return j
	}
	f.Output = compile("Output", jsonataAccess{result: fromResult})
	if a, ok := m["Assign"]; ok {
		a, err := compileAssignmentAccess(a, where+": Assign", jsonataAccess{result: fromResult})
		if err != nil {
			v.addf("%v", err)
		}
		st.Assign = a
	}
	if fromResult {
		st.Retry = v.retriers(m["Retry"], where)
		st.Catch = v.jsonataCatchers(m["Catch"], where)
	}
	switch typ {
	case "Task":
		res, ok := m["Resource"].(string)
		if !ok || res == "" {
			v.addf("%s: Resource must be a non-empty string", where)
		}
		st.Resource = res
		f.Arguments = compile("Arguments", jsonataAccess{})
		f.Timeout = v.numberOrExpr(m, "TimeoutSeconds", where, &st.TimeoutSeconds, 1)
		f.Heartbeat = v.numberOrExpr(m, "HeartbeatSeconds", where, &st.HeartbeatSeconds, 1)
	case "Parallel":
		f.Arguments = compile("Arguments", jsonataAccess{})
		v.branches(st, m, where)
	case "Map":
		v.mapProcessor(st, m, where)
		f.Items = compile("Items", jsonataAccess{})
		if raw, ok := m["Items"]; ok && f.Items != nil && f.Items.kind == tmplLiteral {
			if _, isArr := raw.([]any); !isArr {
				v.addf("%s: Items must be an array or a JSONata expression", where)
			}
		}
		f.ItemSelector = compile("ItemSelector", jsonataAccess{})
		f.MaxConcurrency = v.numberOrExpr(m, "MaxConcurrency", where, &st.MaxConcurrency, 0)
	case "Choice":
		v.jsonataChoice(st, m, where)
	case "Wait":
		n := 0
		if _, ok := m["Seconds"]; ok {
			n++
			f.Seconds = v.numberOrExpr(m, "Seconds", where, &st.Seconds, 0)
			st.hasSeconds = f.Seconds == nil
		}
		if raw, ok := m["Timestamp"]; ok {
			n++
			if s, ok := raw.(string); ok && isJSONataString(s) {
				f.Timestamp = compile("Timestamp", jsonataAccess{})
			} else {
				ts, err := time.Parse(time.RFC3339Nano, fmt.Sprint(raw))
				if err != nil {
					v.addf("%s: Timestamp %v is not an RFC3339 timestamp", where, raw)
				}
				st.Timestamp, st.hasTimestamp = ts, true
			}
		}
		if n != 1 {
			v.addf("%s: a Wait state needs exactly one of Seconds, Timestamp (has %d)", where, n)
		}
	case "Fail":
		for _, field := range []string{"Error", "Cause"} {
			raw, ok := m[field]
			if !ok {
				continue
			}
			s, isStr := raw.(string)
			switch {
			case !isStr:
				v.addf("%s: %s must be a string or a JSONata expression", where, field)
			case isJSONataString(s):
				if field == "Error" {
					f.Error = compile(field, jsonataAccess{})
				} else {
					f.Cause = compile(field, jsonataAccess{})
				}
			case field == "Error":
				st.Error = s
			default:
				st.Cause = s
			}
		}
	}
}

// transition loads Next and End.
func (v *validator) transition(st *State, m map[string]any, where string) {
	if st.Type == "Choice" || st.Type == "Succeed" || st.Type == "Fail" {
		return
	}
	next, hasNext := m["Next"]
	end, hasEnd := m["End"]
	switch {
	case hasNext && hasEnd:
		v.addf("%s: has both Next and End", where)
	case hasNext:
		s, ok := next.(string)
		if !ok || s == "" {
			v.addf("%s: Next must be a non-empty string", where)
		}
		st.Next = s
	case hasEnd:
		if end != true {
			v.addf("%s: End must be true", where)
		}
		st.End = true
	default:
		v.addf("%s: needs Next or \"End\": true", where)
	}
}

// numberOrExpr loads a field that is a literal integer (at least min) or a
// JSONata expression.
func (v *validator) numberOrExpr(m map[string]any, field, where string, lit *int64, min int64) *jvalue {
	raw, ok := m[field]
	if !ok {
		return nil
	}
	if s, ok := raw.(string); ok && isJSONataString(s) {
		j, err := compileJValue(s, where+": "+field, jsonataAccess{})
		if err != nil {
			v.addf("%v", err)
		}
		return j
	}
	n, ok := asInt(raw)
	if !ok || n < min {
		v.addf("%s: %s must be an integer of at least %d or a JSONata expression", where, field, min)
	}
	*lit = n
	return nil
}

func compileAssignmentAccess(raw any, where string, acc jsonataAccess) (*assignment, error) {
	return compileAssignmentAcc(raw, where, true, acc)
}

func (v *validator) jsonataCatchers(raw any, where string) []*catcher {
	var out []*catcher
	v.errorHandlers(raw, where, "Catch", jsonataCatcherFields, func(m map[string]any, w string, last bool) {
		c := &catcher{index: len(out)}
		c.ErrorEquals = v.errorEquals(m["ErrorEquals"], w, last)
		acc := jsonataAccess{errorOutput: true}
		if o, ok := m["Output"]; ok {
			j, err := compileJValue(o, w+": Output", acc)
			if err != nil {
				v.addf("%v", err)
			}
			c.Output = j
		}
		if a, ok := m["Assign"]; ok {
			a, err := compileAssignmentAccess(a, w+": Assign", acc)
			if err != nil {
				v.addf("%v", err)
			}
			c.Assign = a
		}
		next, ok := m["Next"].(string)
		if !ok || next == "" {
			v.addf("%s: Next must be a state name", w)
		}
		c.Next = next
		out = append(out, c)
	})
	return out
}

var jsonataRuleFields = set("Condition", "Next", "Comment", "Assign", "Output")

func (v *validator) jsonataChoice(st *State, m map[string]any, where string) {
	choices, ok := m["Choices"].([]any)
	if !ok || len(choices) == 0 {
		v.addf("%s: Choices must be a non-empty array", where)
	}
	for i, c := range choices {
		w := fmt.Sprintf("%s: choice rule %d", where, i+1)
		cm, ok := c.(map[string]any)
		if !ok {
			v.addf("%s must be an object", w)
			continue
		}
		for _, k := range sortedKeys(cm) {
			if !jsonataRuleFields[k] {
				v.addf("%s: field %q is not allowed in a JSONata choice rule (a JSONata rule has a Condition)", w, k)
			}
		}
		r := &choiceRule{}
		cond, ok := cm["Condition"]
		switch s, isStr := cond.(string); {
		case !ok:
			v.addf("%s: Condition is required", w)
		case isStr && isJSONataString(s):
			j, err := compileJValue(s, w+": Condition", jsonataAccess{})
			if err != nil {
				v.addf("%v", err)
			}
			r.cond = j
		case cond == true || cond == false:
			r.cond = &jvalue{kind: tmplLiteral, literal: cond}
		default:
			v.addf("%s: Condition must be a boolean or a JSONata expression", w)
		}
		if n, ok := cm["Next"].(string); ok && n != "" {
			r.Next = n
		} else {
			v.addf("%s: Next must be a state name", w)
		}
		if o, ok := cm["Output"]; ok {
			j, err := compileJValue(o, w+": Output", jsonataAccess{})
			if err != nil {
				v.addf("%v", err)
			}
			r.output = j
		}
		if a, ok := cm["Assign"]; ok {
			a, err := compileAssignmentAccess(a, w+": Assign", jsonataAccess{})
			if err != nil {
				v.addf("%v", err)
			}
			r.assign = a
		}
		st.Choices = append(st.Choices, r)
	}
	if d, ok := m["Default"]; ok {
		s, ok := d.(string)
		if !ok || s == "" {
			v.addf("%s: Default must be a state name", where)
		}
		st.Default = s
	}
}

// Running JSONata states.

// jsonataOutput evaluates Output (or returns def) and the Assign, then
// commits the assignments: both see the variables as they were on entry.
func (r *stateRun) jsonataOutput(env *jenv, output *jvalue, a *assignment, def any) (any, error) {
	return r.jsonataOutputAt(env, "", output, a, def)
}

// jsonataOutputAt is jsonataOutput for the Output and Assign of a choice
// rule or a catcher, whose causes name them under prefix ("Choices[0]/").
func (r *stateRun) jsonataOutputAt(env *jenv, prefix string, output *jvalue, a *assignment, def any) (any, error) {
	out := def
	if output != nil {
		v, err := output.eval(env, prefix+"Output")
		if err != nil {
			return nil, err
		}
		out = v
	}
	if a != nil && a.ja != nil {
		v, err := a.ja.eval(env, prefix+"Assign")
		if err != nil {
			return nil, err
		}
		m, _ := v.(map[string]any)
		if err := r.assign(m); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (r *stateRun) jsonataPass(ctx context.Context, input any) (any, error) {
	return r.jsonataOutput(r.jsonataEnv(ctx, input, nil), r.st.ja.Output, r.st.Assign, input)
}

// jsonataFinish is finish for a JSONata Task, Parallel or Map.
func (r *stateRun) jsonataFinish(input, result any) (any, error) {
	env := r.jsonataEnv(r.ctx, input, map[string]any{"result": result})
	return r.jsonataOutput(env, r.st.ja.Output, r.st.Assign, result)
}

func (r *stateRun) jsonataCaught(ctx context.Context, c *catcher, input any, errOut map[string]any) (any, error) {
	env := r.jsonataEnv(ctx, input, map[string]any{"errorOutput": errOut})
	return r.jsonataOutputAt(env, fmt.Sprintf("Catch[%d]/", c.index), c.Output, c.Assign, errOut)
}

// jsonataArguments is the input a JSONata Task or Parallel works on.
func (r *stateRun) jsonataArguments(input any) (any, error) {
	if r.st.ja.Arguments == nil {
		return input, nil
	}
	v, err := r.st.ja.Arguments.eval(r.jsonataEnv(r.ctx, input, nil), "Arguments")
	if err == nil && r.x.test != nil {
		r.inspect("afterArguments", v)
	}
	return v, err
}

func (r *stateRun) jsonataChoice(ctx context.Context, input any) (any, string, error) {
	env := r.jsonataEnv(ctx, input, nil)
	for i, rule := range r.st.Choices {
		prefix := fmt.Sprintf("Choices[%d]/", i)
		v, err := rule.cond.eval(env, prefix+"Condition")
		if err != nil {
			return nil, "", err
		}
		b, ok := v.(bool)
		if !ok {
			return nil, "", queryError(prefix+"Condition", "The JSONata expression '%s' specified for the field '%sCondition' returned an unexpected result type. Expected 'boolean', but was '%s' for value: %s", rule.cond.src, prefix, typeName(v), describe(v, true))
		}
		if b {
			out, err := r.jsonataOutputAt(env, prefix, rule.output, rule.assign, input)
			return out, rule.Next, err
		}
	}
	if r.st.Default == "" {
		return nil, "", newError(ErrNoChoiceMatched, "no Choice rule of state %q matched the input and it has no Default", r.st.Name)
	}
	out, err := r.jsonataOutput(env, r.st.ja.Output, r.st.Assign, input)
	return out, r.st.Default, err
}

// jsonataInt evaluates an integer field written as an expression.
func (r *stateRun) jsonataInt(env *jenv, j *jvalue, field string, min int64) (int64, error) {
	v, err := j.eval(env, field)
	if err != nil {
		return 0, err
	}
	n, ok := asInt(v)
	if !ok {
		return 0, queryError(field, "The JSONata expression '%s' specified for the field '%s' returned an unexpected result type. Expected 'integer', but was '%s' for value: %s", j.src, field, typeName(v), describe(v, true))
	}
	if n < min {
		return 0, queryError(field, "The JSONata expression '%s' specified for the field '%s' returned a value out of range: %d (the minimum is %d)", j.src, field, n, min)
	}
	return n, nil
}

func (r *stateRun) jsonataWaitUntil(ctx context.Context, input any, began time.Time) (time.Time, error) {
	st := r.st
	env := r.jsonataEnv(ctx, input, nil)
	if st.ja.Seconds != nil {
		n, err := r.jsonataInt(env, st.ja.Seconds, "Seconds", 0)
		if err != nil {
			return time.Time{}, err
		}
		return began.Add(time.Duration(n) * time.Second), nil
	}
	v, err := st.ja.Timestamp.eval(env, "Timestamp")
	if err != nil {
		return time.Time{}, err
	}
	s, _ := v.(string)
	ts, perr := time.Parse(time.RFC3339Nano, s)
	if perr != nil {
		return time.Time{}, queryError("Timestamp", "The JSONata expression '%s' specified for the field 'Timestamp' returned %s, which is not an ISO-8601 timestamp", st.ja.Timestamp.src, describe(v, true))
	}
	return ts, nil
}

func (r *stateRun) jsonataFail(input any) error {
	st := r.st
	name, cause := st.Error, st.Cause
	env := r.jsonataEnv(r.ctx, input, nil)
	for _, f := range []struct {
		j     *jvalue
		field string
		dst   *string
	}{{st.ja.Error, "Error", &name}, {st.ja.Cause, "Cause", &cause}} {
		if f.j == nil {
			continue
		}
		v, err := f.j.eval(env, f.field)
		if err != nil {
			return err
		}
		s, ok := v.(string)
		if !ok {
			return queryError(f.field, "The JSONata expression '%s' specified for the field '%s' returned an unexpected result type. Expected 'string', but was '%s' for value: %s", f.j.src, f.field, typeName(v), describe(v, true))
		}
		*f.dst = s
	}
	return &StatesError{Name: name, Cause: cause}
}

// needsContext reports whether some expression of the state reads
// $states.context (or $states whole), so that the context object, which
// costs a few allocations, is built only for those states.
func needsContext(st *State) bool {
	var vals []*jvalue
	add := func(a *assignment) {
		if a != nil {
			vals = append(vals, a.ja)
		}
	}
	if f := st.ja; f != nil {
		vals = append(vals, f.Arguments, f.Output, f.Items, f.ItemSelector, f.MaxConcurrency, f.Timeout, f.Heartbeat, f.Seconds, f.Timestamp, f.Error, f.Cause)
	}
	add(st.Assign)
	for _, r := range st.Choices {
		vals = append(vals, r.cond, r.output)
		add(r.assign)
	}
	for _, c := range st.Catch {
		vals = append(vals, c.Output)
		add(c.Assign)
	}
	for _, j := range vals {
		if j.readsContext() {
			return true
		}
	}
	return false
}

var statesWhole = regexp.MustCompile(`\$states(\.context|[^.A-Za-z0-9_]|$)`)

func (j *jvalue) readsContext() bool {
	if j == nil {
		return false
	}
	if j.kind == tmplPath && statesWhole.MatchString(j.src) {
		return true
	}
	for _, f := range j.fields {
		if f.readsContext() {
			return true
		}
	}
	for _, it := range j.items {
		if it.readsContext() {
			return true
		}
	}
	return false
}
