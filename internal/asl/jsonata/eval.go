package jsonata

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"
)

// Function is a Go function callable from an expression, registered with
// WithFunction or given as a binding. Its arguments are in the encoding/json
// model, with Undefined for an argument that selected nothing; it returns a
// value in the same model (Undefined for none).
type Function func(ctx context.Context, args []any) (any, error)

// Option configures Compile.
type Option func(*config)

type config struct {
	functions map[string]Function
	maxDepth  int
	maxSteps  int
	maxString int
	maxItems  int
}

// Default size bounds on the values an evaluation builds, so that an
// expression that doubles a string or an array in a loop ends with error
// U1003 instead of exhausting memory. Step Functions' own payload limit is
// 256 KiB.
const (
	DefaultMaxStringBytes = 16 << 20
	DefaultMaxArrayItems  = 10_000_000
)

// WithMaxSize bounds the strings (in bytes) and arrays (in items) one
// evaluation may build; n <= 0 keeps a default.
func WithMaxSize(stringBytes, arrayItems int) Option {
	return func(c *config) {
		if stringBytes > 0 {
			c.maxString = stringBytes
		}
		if arrayItems > 0 {
			c.maxItems = arrayItems
		}
	}
}

func (ev *evaluator) tooLarge(pos int, what string) error {
	limit, unit := ev.cfg.maxItems, "items"
	if what == "string" {
		limit, unit = ev.cfg.maxString, "bytes"
	}
	return newErr("U1003", pos, "the %s being built exceeds %d %s", what, limit, unit)
}

// Default bounds. A step is one evaluation of an expression node; the depth
// counts nested evaluations, including function calls.
const (
	DefaultMaxDepth = 500
	DefaultMaxSteps = 10_000_000
)

// WithFunction registers a Go function under name (without the '$'). It
// shadows a built-in function of the same name.
func WithFunction(name string, fn Function) Option {
	return func(c *config) {
		if c.functions == nil {
			c.functions = map[string]Function{}
		}
		c.functions[name] = fn
	}
}

// WithMaxDepth bounds the nesting of evaluation (recursion); n <= 0 keeps
// the default.
func WithMaxDepth(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.maxDepth = n
		}
	}
}

// WithMaxSteps bounds the number of evaluation steps of one Eval; n <= 0
// keeps the default.
func WithMaxSteps(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.maxSteps = n
		}
	}
}

// Expr is a compiled expression. It is immutable and safe for concurrent use.
type Expr struct {
	src  string
	root *node
	cfg  config
}

// Compile parses expr once. A syntax error is an *Error with the position.
func Compile(expr string, opts ...Option) (*Expr, error) {
	cfg := config{maxDepth: DefaultMaxDepth, maxSteps: DefaultMaxSteps, maxString: DefaultMaxStringBytes, maxItems: DefaultMaxArrayItems}
	for _, o := range opts {
		o(&cfg)
	}
	p := &parser{lex: lexer{src: []rune(expr)}}
	if err := p.advance(true); err != nil {
		return nil, err
	}
	root, err := p.expression(0)
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tokEnd {
		return nil, newErr("S0201", p.tok.pos, "syntax error: unexpected %q", p.tok.value)
	}
	root, err = process(root)
	if err != nil {
		return nil, err
	}
	if root.typ == nParent || root.seekingParent != nil {
		return nil, newErr("S0217", root.pos, "the parent operator %% cannot be used outside a path step that has a parent")
	}
	return &Expr{src: expr, root: root, cfg: cfg}, nil
}

// String returns the source of the expression.
func (e *Expr) String() string { return e.src }

// Eval evaluates the expression against input (a value in the encoding/json
// model) with the given variable bindings (names without '$'; a binding may
// be a Function). The result is in the same model, or Undefined.
func (e *Expr) Eval(ctx context.Context, input any, bindings map[string]any) (result any, err error) {
	ev := &evaluator{ctx: ctx, cfg: &e.cfg}
	if arr, ok := input.([]any); ok {
		input = &sequence{items: []any{arr}, seq: true, outerWrapper: true}
	}
	// The bindings are the outermost frame, read as they are: the evaluator
	// writes only to the frames it makes, so they are never copied.
	roots := &[2]frame{{vars: map[string]any{"$": input}}, {vars: bindings}}
	roots[0].parent = &roots[1]
	env := &roots[0]
	defer func() {
		if r := recover(); r != nil {
			b, ok := r.(budgetExceeded)
			if !ok {
				panic(r)
			}
			result, err = nil, b.err
		}
	}()
	res, err := ev.eval(e.root, input, env)
	if err != nil {
		return nil, err
	}
	return ev.finalize(res), nil
}

// budgetExceeded carries the error of a value traversal (equality, copies,
// serialisation, the final conversion) that ran out of steps: those walk
// values that an expression can make exponentially large by sharing, so
// they count steps too and unwind to Eval by panicking with this type.
type budgetExceeded struct{ err error }

// count charges one step to a value traversal.
func (ev *evaluator) count() {
	if ev == nil {
		return
	}
	ev.steps++
	if ev.steps > ev.cfg.maxSteps {
		panic(budgetExceeded{newErr("U1002", 0, "evaluation exceeded %d steps", ev.cfg.maxSteps)})
	}
	if ev.steps&1023 == 0 {
		if err := ev.ctx.Err(); err != nil {
			panic(budgetExceeded{fmt.Errorf("jsonata evaluation stopped: %w", err)})
		}
	}
}

type frame struct {
	vars   map[string]any
	parent *frame
}

func newFrame(parent *frame) *frame { return &frame{vars: map[string]any{}, parent: parent} }

func (f *frame) lookup(name string) (any, bool) {
	for ; f != nil; f = f.parent {
		if v, ok := f.vars[name]; ok {
			return v, true
		}
	}
	return nil, false
}

type evaluator struct {
	// keyOrder remembers the key order of objects this evaluation built,
	// which Go maps do not keep (see keys)
	keyOrder map[uintptr][]string
	ctx      context.Context
	cfg      *config
	steps    int
	depth    int
	now      time.Time // $now(): read at its first use, the same for every call of the evaluation
}

// lambda is a function value: a user-defined function with its closure, a
// partial application, or a composition made by '~>'.
type lambda struct {
	params []string
	body   *node
	env    *frame
	input  any
	sig    *signature
	pos    int
	// partial application
	partialOf   any
	partialArgs []any // placeholder entries are the placeholder value
	// composition f ~> g
	first, second any
}

type placeholderT struct{}

var placeholder = &placeholderT{}

// transformer is the function made by a |pattern|update,delete| expression.
type transformer struct {
	n   *node
	env *frame
}

func (ev *evaluator) tick(n *node) error {
	ev.steps++
	if ev.steps > ev.cfg.maxSteps {
		return newErr("U1002", n.pos, "evaluation exceeded %d steps", ev.cfg.maxSteps)
	}
	if ev.steps&1023 == 0 {
		if err := ev.ctx.Err(); err != nil {
			return fmt.Errorf("jsonata evaluation stopped at position %d: %w", n.pos, err)
		}
	}
	return nil
}

func (ev *evaluator) eval(n *node, input any, env *frame) (any, error) {
	if err := ev.tick(n); err != nil {
		return nil, err
	}
	ev.depth++
	defer func() { ev.depth-- }()
	if ev.depth > ev.cfg.maxDepth {
		return nil, newErr("U1001", n.pos, "stack overflow: evaluation nested deeper than %d levels; check for non-terminating recursion", ev.cfg.maxDepth)
	}
	var res any
	var err error
	switch n.typ {
	case nPath:
		res, err = ev.evalPath(n, input, env)
	case nBinary:
		res, err = ev.evalBinary(n, input, env)
	case nUnaryMinus:
		res, err = ev.eval(n.lhs, input, env)
		if err == nil && res != Undefined {
			f, ok := toNumber(res)
			if !ok {
				return nil, newErr("D1002", n.pos, "cannot negate a non-numeric value: %s", describe(res))
			}
			res = -f
		}
	case nArray:
		res, err = ev.evalArray(n, input, env)
	case nObject:
		res, err = ev.evalGroup(n, input, env)
	case nName:
		res = ev.lookup(input, n.str)
	case nString:
		res = n.str
	case nNumber:
		res = n.num
	case nValue:
		res = n.val
	case nRegex:
		res = n.re
	case nWildcard:
		res = ev.wildcard(input)
	case nParent:
		if v, ok := env.lookup(n.slot.label); ok {
			res = v
		} else {
			res = Undefined
		}
	case nDescendant:
		res = ev.descendants(input)
	case nCondition:
		res, err = ev.evalCondition(n, input, env)
	case nBlock:
		res = Undefined
		frame := newFrame(env)
		for _, e := range n.exprs {
			if res, err = ev.eval(e, input, frame); err != nil {
				return nil, err
			}
		}
	case nBind:
		res, err = ev.eval(n.rhs, input, env)
		if err == nil {
			env.vars[n.lhs.str] = res
		}
	case nVariable:
		if n.str == "" {
			if s, ok := input.(*sequence); ok && s.outerWrapper && len(s.items) > 0 {
				res = s.items[0]
			} else {
				res = input
			}
		} else if v, ok := env.lookup(n.str); ok {
			res = v
		} else if fn, ok := ev.cfg.functions[n.str]; ok {
			res = fn
		} else if b, ok := builtins[n.str]; ok {
			res = b
		} else {
			res = Undefined
		}
	case nFunction:
		res, err = ev.evalCall(n, input, env, nil)
	case nPartial:
		res, err = ev.evalPartial(n, input, env)
	case nLambda:
		res = &lambda{params: n.params, body: n.body, env: env, input: input, sig: n.signature, pos: n.pos}
	case nApply:
		res, err = ev.evalApply(n, input, env)
	case nTransform:
		res = &transformer{n: n, env: env}
	case nSort:
		res, err = ev.evalSort(n, input, env)
	default:
		return nil, newErr("S0201", n.pos, "unsupported expression")
	}
	if err != nil {
		return nil, err
	}
	for _, p := range n.predicate {
		if res, err = ev.filter(p.lhs, res, env); err != nil {
			return nil, err
		}
	}
	if n.typ != nPath && n.group != nil {
		if res, err = ev.evalGroup(n.group, res, env); err != nil {
			return nil, err
		}
	}
	if s, ok := res.(*sequence); ok && s.seq && !s.tupleStream {
		if n.keepArray {
			s.keepSingleton = true
		}
		if len(s.items) == 0 {
			return Undefined, nil
		}
		if len(s.items) == 1 && !s.keepSingleton {
			return s.items[0], nil
		}
	}
	return res, nil
}

func (ev *evaluator) lookup(input any, key string) any {
	ev.count()
	if arr, ok := asArray(input); ok {
		out := newSeq()
		for _, it := range arr {
			r := ev.lookup(it, key)
			if r == Undefined {
				continue
			}
			if ra, ok := asArray(r); ok {
				out.items = append(out.items, ra...)
			} else {
				out.items = append(out.items, r)
			}
		}
		return out
	}
	if m, ok := input.(map[string]any); ok {
		if v, ok := m[key]; ok {
			return v
		}
	}
	return Undefined
}

func (ev *evaluator) wildcard(input any) any {
	if s, ok := input.(*sequence); ok && s.outerWrapper && len(s.items) > 0 {
		input = s.items[0]
	}
	out := newSeq()
	plain := false
	var values []any
	if m, ok := input.(map[string]any); ok {
		for _, k := range ev.keys(m) {
			values = append(values, m[k])
		}
	} else if arr, ok := asArray(input); ok {
		// an array is an object keyed by index in the reference
		values = arr
	}
	for _, v := range values {
		if arr, ok := asArray(v); ok {
			out.items = append(out.items, ev.flattenAll(arr, nil)...)
			plain = true
		} else {
			out.items = append(out.items, v)
		}
	}
	if plain {
		return out.items
	}
	return out
}

func (ev *evaluator) flattenAll(arr []any, out []any) []any {
	ev.count()
	for _, v := range arr {
		if a, ok := asArray(v); ok {
			out = ev.flattenAll(a, out)
		} else {
			out = append(out, v)
		}
	}
	return out
}

func (ev *evaluator) descendants(input any) any {
	if input == Undefined {
		return Undefined
	}
	out := newSeq()
	var rec func(v any)
	rec = func(v any) {
		ev.count()
		if arr, ok := asArray(v); ok {
			for _, it := range arr {
				rec(it)
			}
			return
		}
		out.items = append(out.items, v)
		if m, ok := v.(map[string]any); ok {
			for _, k := range ev.keys(m) {
				rec(m[k])
			}
		}
	}
	rec(input)
	if len(out.items) == 1 {
		return out.items[0]
	}
	return out
}

func (ev *evaluator) evalPath(n *node, input any, env *frame) (any, error) {
	// Fast path for a plain field name applied to a non-array value (the
	// most common step): the same result as the general step evaluation
	// below, without its intermediate sequences.
	if len(n.steps) == 1 && !n.keepSingletonArray && n.group == nil {
		if st := n.steps[0]; st.typ == nName && st.stages == nil && st.predicate == nil && st.group == nil && !st.tuple && !st.keepArray {
			if _, isArr := asArray(input); !isArr {
				if err := ev.tick(st); err != nil {
					return nil, err
				}
				return ev.lookup(input, st.str), nil
			}
		}
	}
	var inputSeq []any
	var inputVal any
	if arr, ok := asArray(input); ok && n.steps[0].typ != nVariable {
		inputSeq = arr
		inputVal = input
	} else {
		inputSeq = []any{input}
		inputVal = newSeq(input)
	}
	var result any = Undefined
	isTuple := false
	var tuples []map[string]any
	for i, step := range n.steps {
		var err error
		if step.tuple {
			isTuple = true
		}
		switch {
		case i == 0 && step.consArray:
			result, err = ev.eval(step, inputVal, env)
		case isTuple:
			tuples, err = ev.evalTupleStep(step, inputSeq, tuples, env)
		default:
			result, err = ev.evalStep(step, inputSeq, env, i == len(n.steps)-1)
		}
		if err != nil {
			return nil, err
		}
		if isTuple {
			continue
		}
		if result == Undefined {
			break
		}
		items, ok := asArray(result)
		if ok && len(items) == 0 {
			break
		}
		if !ok {
			items = []any{result}
		}
		if !step.hasFocus {
			inputSeq = items
		}
	}
	if isTuple {
		ts := &sequence{seq: true, tupleStream: true}
		for _, t := range tuples {
			ts.items = append(ts.items, t)
		}
		if n.group != nil {
			return ev.evalGroup(n.group, ts, env)
		}
		if n.tuple {
			// the tuples carry ancestors for a % further out
			return ts, nil
		}
		out := newSeq()
		for _, t := range tuples {
			_, c := asTuple(t)
			out.items = append(out.items, c)
		}
		result = out
	}
	if n.keepSingletonArray && result != Undefined {
		if s, ok := result.(*sequence); ok && s.cons && !s.seq {
			result = newSeq(result)
		}
		if s, ok := result.(*sequence); ok {
			s.keepSingleton = true
		} else if _, ok := result.([]any); ok {
			// a plain array is never collapsed: nothing to keep
		} else {
			result = &sequence{items: []any{result}, seq: true, keepSingleton: true}
		}
	}
	if n.group != nil {
		var err error
		if result, err = ev.evalGroup(n.group, result, env); err != nil {
			return nil, err
		}
	}
	return result, nil
}

// asTuple reads an item of a tuple stream; anything else is an empty tuple
// whose context value is undefined.
func asTuple(item any) (map[string]any, any) {
	t, ok := item.(map[string]any)
	if !ok {
		return map[string]any{}, Undefined
	}
	ctx, ok := t["@"]
	if !ok {
		ctx = Undefined
	}
	return t, ctx
}

func tupleFrame(env *frame, t map[string]any) *frame {
	f := newFrame(env)
	for k, v := range t {
		if k != "@" {
			f.vars[k] = v
		}
	}
	return f
}

// evalTupleStep evaluates a step of a path that binds @$focus or #$index
// variables: the stream carries, with each context value ("@"), the
// variables bound so far.
func (ev *evaluator) evalTupleStep(step *node, input []any, tuples []map[string]any, env *frame) ([]map[string]any, error) {
	if tuples == nil {
		for _, it := range input {
			tuples = append(tuples, map[string]any{"@": it})
		}
	}
	var out []map[string]any
	if step.typ == nSort {
		ts := &sequence{seq: true, tupleStream: true}
		for _, t := range tuples {
			ts.items = append(ts.items, t)
		}
		sorted, err := ev.evalSort(step, ts, env)
		if err != nil {
			return nil, err
		}
		items, _ := asArray(sorted)
		for i, it := range items {
			t, _ := asTuple(it)
			if step.hasIndex {
				c := copyTuple(t)
				c[step.index] = float64(i)
				t = c
			}
			out = append(out, t)
		}
	} else {
		for _, t := range tuples {
			res, err := ev.eval(step, t["@"], tupleFrame(env, t))
			if err != nil {
				return nil, err
			}
			if res == Undefined {
				continue
			}
			items, ok := asArray(res)
			if !ok {
				items = []any{res}
			}
			if rs, ok := res.(*sequence); ok && rs.tupleStream {
				for _, r := range items {
					c := copyTuple(t)
					rt, _ := asTuple(r)
					for k, v := range rt {
						c[k] = v
					}
					out = append(out, c)
				}
				continue
			}
			for bb, v := range items {
				c := copyTuple(t)
				if step.ancestor != nil {
					c[step.ancestor.label] = t["@"]
				}
				if step.hasFocus {
					c[step.focus] = v
				} else {
					c["@"] = v
				}
				if step.hasIndex {
					c[step.index] = float64(bb)
				}
				out = append(out, c)
			}
		}
	}
	for _, st := range step.stages {
		if st.typ == nIndexStage {
			for i, t := range out {
				t[st.str] = float64(i)
			}
			continue
		}
		ts := &sequence{seq: true, tupleStream: true}
		for _, t := range out {
			ts.items = append(ts.items, t)
		}
		filtered, err := ev.filter(st.lhs, ts, env)
		if err != nil {
			return nil, err
		}
		items, _ := asArray(filtered)
		out = out[:0:0]
		for _, it := range items {
			t, _ := asTuple(it)
			out = append(out, t)
		}
	}
	if out == nil {
		out = []map[string]any{}
	}
	return out, nil
}

func copyTuple(t map[string]any) map[string]any {
	c := make(map[string]any, len(t)+1)
	for k, v := range t {
		c[k] = v
	}
	return c
}

func (ev *evaluator) evalStep(step *node, inputSeq []any, env *frame, last bool) (any, error) {
	if step.typ == nSort {
		res, err := ev.evalSort(step, newSeq(inputSeq...), env)
		if err != nil {
			return nil, err
		}
		for _, st := range step.stages {
			if res, err = ev.filter(st.lhs, res, env); err != nil {
				return nil, err
			}
		}
		return res, nil
	}
	results := make([]any, 0, len(inputSeq))
	for _, item := range inputSeq {
		r, err := ev.eval(step, item, env)
		if err != nil {
			return nil, err
		}
		for _, st := range step.stages {
			if r, err = ev.filter(st.lhs, r, env); err != nil {
				return nil, err
			}
		}
		if r != Undefined {
			results = append(results, r)
		}
	}
	if last && len(results) == 1 {
		if _, ok := asArray(results[0]); ok && !isSeq(results[0]) {
			return results[0], nil
		}
	}
	out := newSeq()
	for _, r := range results {
		if arr, ok := asArray(r); ok && !isCons(r) {
			out.items = append(out.items, arr...)
		} else {
			out.items = append(out.items, r)
		}
	}
	return out, nil
}

func isCons(v any) bool {
	s, ok := v.(*sequence)
	return ok && s.cons
}

func (ev *evaluator) filter(pred *node, input any, env *frame) (any, error) {
	out := newSeq()
	tupleIn := false
	if s, ok := input.(*sequence); ok && s.tupleStream {
		tupleIn = true
		out.tupleStream = true
	}
	items, ok := asArray(input)
	if !ok {
		items = []any{input}
	}
	if pred.typ == nNumber {
		idx := int(math.Floor(pred.num))
		if idx < 0 {
			idx += len(items)
		}
		if idx >= 0 && idx < len(items) {
			item := items[idx]
			if item != Undefined {
				if _, ok := asArray(item); ok {
					return item, nil
				}
				out.items = append(out.items, item)
			}
		}
		return out, nil
	}
	for i, item := range items {
		ctx, fenv := item, env
		if tupleIn {
			t, c := asTuple(item)
			ctx, fenv = c, tupleFrame(env, t)
		}
		r, err := ev.eval(pred, ctx, fenv)
		if err != nil {
			return nil, err
		}
		if f, ok := toNumber(r); ok {
			r = []any{f}
		}
		if nums, ok := arrayOfNumbers(r); ok {
			for _, f := range nums {
				j := int(math.Floor(f))
				if j < 0 {
					j += len(items)
				}
				if j == i {
					out.items = append(out.items, item)
				}
			}
		} else if ev.toBoolean(r) {
			out.items = append(out.items, item)
		}
	}
	return out, nil
}

func arrayOfNumbers(v any) ([]float64, bool) {
	arr, ok := asArray(v)
	if !ok {
		return nil, false
	}
	nums := make([]float64, 0, len(arr))
	for _, it := range arr {
		f, ok := toNumber(it)
		if !ok {
			return nil, false
		}
		nums = append(nums, f)
	}
	return nums, true
}

func (ev *evaluator) evalArray(n *node, input any, env *frame) (any, error) {
	out := []any{}
	for _, item := range n.exprs {
		v, err := ev.eval(item, input, env)
		if err != nil {
			return nil, err
		}
		if v == Undefined {
			continue
		}
		if item.typ == nArray {
			out = append(out, v)
		} else if arr, ok := asArray(v); ok {
			out = append(out, arr...)
		} else {
			out = append(out, v)
		}
	}
	if len(out) > ev.cfg.maxItems {
		return nil, ev.tooLarge(n.pos, "array")
	}
	if n.consArray {
		return &sequence{items: out, cons: true}, nil
	}
	return out, nil
}

func (ev *evaluator) evalGroup(n *node, input any, env *frame) (any, error) {
	items, ok := asArray(input)
	if !ok {
		items = []any{input}
	}
	if len(items) == 0 {
		items = []any{Undefined}
	}
	type entry struct {
		data      any
		exprIndex int
	}
	groups := map[string]*entry{}
	var order []string
	reduce := false
	if s, ok := input.(*sequence); ok && s.tupleStream {
		reduce = true
	}
	for _, item := range items {
		ctx, genv := item, env
		if reduce {
			t, c := asTuple(item)
			ctx, genv = c, tupleFrame(env, t)
		}
		for pi, pair := range n.pairs {
			k, err := ev.eval(pair[0], ctx, genv)
			if err != nil {
				return nil, err
			}
			if k == Undefined {
				continue
			}
			key, ok := k.(string)
			if !ok {
				return nil, newErr("T1003", n.pos, "key in object structure must evaluate to a string; got: %s", describe(k))
			}
			if g, ok := groups[key]; ok {
				if g.exprIndex != pi {
					return nil, newErr("D1009", n.pos, "multiple key definitions evaluate to same key: %q", key)
				}
				g.data = appendValues(g.data, item)
			} else {
				groups[key] = &entry{data: item, exprIndex: pi}
				order = append(order, key)
			}
		}
	}
	out := make(map[string]any, len(groups))
	defer func() { ev.recordOrder(out, order) }()
	for _, key := range order {
		g := groups[key]
		ctx, genv := g.data, env
		if reduce {
			t := reduceTuples(g.data)
			_, ctx = asTuple(t)
			delete(t, "@")
			genv = tupleFrame(env, t)
		}
		v, err := ev.eval(n.pairs[g.exprIndex][1], ctx, genv)
		if err != nil {
			return nil, err
		}
		if v != Undefined {
			out[key] = v
		}
	}
	return out, nil
}

// reduceTuples merges the tuples grouped under one key: each binding
// becomes the sequence of its values.
func reduceTuples(data any) map[string]any {
	if t, ok := data.(map[string]any); ok {
		return copyTuple(t)
	}
	items, _ := asArray(data)
	if len(items) == 0 {
		return map[string]any{}
	}
	first, _ := asTuple(items[0])
	out := copyTuple(first)
	for _, it := range items[1:] {
		t, _ := asTuple(it)
		for k, v := range t {
			prev, ok := out[k]
			if !ok {
				prev = Undefined
			}
			out[k] = appendValues(prev, v)
		}
	}
	return out
}

// appendValues is the reference's fn.append: it joins two values into a plain
// array, treating a non-array as a one-item array.
func appendValues(a, b any) any {
	if a == Undefined {
		return b
	}
	if b == Undefined {
		return a
	}
	out := []any{}
	if arr, ok := asArray(a); ok {
		out = append(out, arr...)
	} else {
		out = append(out, a)
	}
	if arr, ok := asArray(b); ok {
		out = append(out, arr...)
	} else {
		out = append(out, b)
	}
	return out
}

func (ev *evaluator) evalCondition(n *node, input any, env *frame) (any, error) {
	c, err := ev.eval(n.cond, input, env)
	if err != nil {
		return nil, err
	}
	if ev.toBoolean(c) {
		return ev.eval(n.then, input, env)
	}
	if n.els != nil {
		return ev.eval(n.els, input, env)
	}
	return Undefined, nil
}

func (ev *evaluator) evalBinary(n *node, input any, env *frame) (any, error) {
	lhs, err := ev.eval(n.lhs, input, env)
	if err != nil {
		return nil, err
	}
	switch n.op {
	case "and":
		if !ev.toBoolean(lhs) {
			return false, nil
		}
		rhs, err := ev.eval(n.rhs, input, env)
		if err != nil {
			return nil, err
		}
		return ev.toBoolean(rhs), nil
	case "or":
		if ev.toBoolean(lhs) {
			return true, nil
		}
		rhs, err := ev.eval(n.rhs, input, env)
		if err != nil {
			return nil, err
		}
		return ev.toBoolean(rhs), nil
	}
	rhs, err := ev.eval(n.rhs, input, env)
	if err != nil {
		return nil, err
	}
	switch n.op {
	case "+", "-", "*", "/", "%":
		return arithmetic(n, lhs, rhs)
	case "=":
		if lhs == Undefined || rhs == Undefined {
			return false, nil
		}
		return ev.deepEqual(lhs, rhs), nil
	case "!=":
		if lhs == Undefined || rhs == Undefined {
			return false, nil
		}
		return !ev.deepEqual(lhs, rhs), nil
	case "<", "<=", ">", ">=":
		return compare(n, lhs, rhs)
	case "&":
		ls, rs := "", ""
		if lhs != Undefined {
			if ls, err = ev.toJSONString(lhs, false, n.pos); err != nil {
				return nil, err
			}
		}
		if rhs != Undefined {
			if rs, err = ev.toJSONString(rhs, false, n.pos); err != nil {
				return nil, err
			}
		}
		if len(ls)+len(rs) > ev.cfg.maxString {
			return nil, ev.tooLarge(n.pos, "string")
		}
		return ls + rs, nil
	case "..":
		return rangeValues(n, lhs, rhs)
	case "in":
		if lhs == Undefined || rhs == Undefined {
			return false, nil
		}
		items, ok := asArray(rhs)
		if !ok {
			items = []any{rhs}
		}
		for _, it := range items {
			if strictEqual(it, lhs) {
				return true, nil
			}
		}
		return false, nil
	}
	return nil, newErr("S0201", n.pos, "unknown operator %q", n.op)
}

// strictEqual is JavaScript's ===: objects and arrays are equal only to
// themselves.
func strictEqual(a, b any) bool {
	if an, ok := toNumber(a); ok {
		bn, ok := toNumber(b)
		return ok && an == bn
	}
	switch a.(type) {
	case string, bool, nil:
		return a == b
	}
	return false
}

func checkNumeric(v any, code string, pos int, op string) (float64, bool, error) {
	if v == Undefined {
		return 0, false, nil
	}
	f, ok := toNumber(v)
	if !ok {
		side := "left"
		if code == "T2002" {
			side = "right"
		}
		return 0, false, newErr(code, pos, "the %s side of the %q operator must evaluate to a number", side, op)
	}
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false, newErr("D1001", pos, "number out of range: %v", f)
	}
	return f, true, nil
}

func arithmetic(n *node, lhs, rhs any) (any, error) {
	l, lok, err := checkNumeric(lhs, "T2001", n.pos, n.op)
	if err != nil {
		return nil, err
	}
	r, rok, err := checkNumeric(rhs, "T2002", n.pos, n.op)
	if err != nil {
		return nil, err
	}
	if !lok || !rok {
		return Undefined, nil
	}
	var res float64
	switch n.op {
	case "+":
		res = l + r
	case "-":
		res = l - r
	case "*":
		res = l * r
	case "/":
		res = l / r
	case "%":
		res = math.Mod(l, r)
	}
	return res, nil
}

func compare(n *node, lhs, rhs any) (any, error) {
	comparable := func(v any) bool {
		if v == Undefined {
			return true
		}
		if _, ok := v.(string); ok {
			return true
		}
		_, ok := toNumber(v)
		return ok
	}
	if !comparable(lhs) || !comparable(rhs) {
		bad := lhs
		if comparable(lhs) {
			bad = rhs
		}
		return nil, newErr("T2010", n.pos, "the expressions either side of operator %q must evaluate to numeric or string values; got %s", n.op, describe(bad))
	}
	if lhs == Undefined || rhs == Undefined {
		return Undefined, nil
	}
	ls, lstr := lhs.(string)
	rs, rstr := rhs.(string)
	if lstr != rstr {
		return nil, newErr("T2009", n.pos, "the values %s and %s either side of operator %q must be of the same data type", describe(lhs), describe(rhs), n.op)
	}
	var c int
	if lstr {
		c = compareUTF16(ls, rs)
	} else {
		l, _ := toNumber(lhs)
		r, _ := toNumber(rhs)
		switch {
		case l < r:
			c = -1
		case l > r:
			c = 1
		case l != r: // NaN
			return false, nil
		}
	}
	switch n.op {
	case "<":
		return c < 0, nil
	case "<=":
		return c <= 0, nil
	case ">":
		return c > 0, nil
	}
	return c >= 0, nil
}

func rangeValues(n *node, lhs, rhs any) (any, error) {
	l, lok := toNumber(lhs)
	if lhs != Undefined && (!lok || !isInteger(l)) {
		return nil, newErr("T2003", n.pos, "the left side of the range operator (..) must evaluate to an integer")
	}
	r, rok := toNumber(rhs)
	if rhs != Undefined && (!rok || !isInteger(r)) {
		return nil, newErr("T2004", n.pos, "the right side of the range operator (..) must evaluate to an integer")
	}
	if lhs == Undefined || rhs == Undefined || l > r {
		return []any{}, nil
	}
	if r-l+1 > 1e7 {
		return nil, newErr("D2014", n.pos, "the size of the sequence allocated by the range operator (..) must not exceed 1e7; attempted to allocate %v", r-l+1)
	}
	out := make([]any, 0, int(r-l+1))
	for v := l; v <= r; v++ {
		out = append(out, v)
	}
	return out, nil
}

func (ev *evaluator) evalSort(n *node, input any, env *frame) (any, error) {
	items, ok := asArray(input)
	if !ok || len(items) <= 1 {
		return input, nil
	}
	type keyed struct {
		item any
		keys []any
	}
	tupleIn := false
	if s, ok := input.(*sequence); ok && s.tupleStream {
		tupleIn = true
	}
	ks := make([]keyed, len(items))
	for i, it := range items {
		ks[i].item = it
		ctx, senv := it, env
		if tupleIn {
			t, c := asTuple(it)
			ctx, senv = c, tupleFrame(env, t)
		}
		for _, t := range n.terms {
			k, err := ev.eval(t.expr, ctx, senv)
			if err != nil {
				return nil, err
			}
			ks[i].keys = append(ks[i].keys, k)
		}
	}
	var sortErr error
	// greater reports whether a must come after b, as the reference's
	// comparator does; the sort is stable.
	greater := func(a, b keyed) bool {
		for i, t := range n.terms {
			aa, bb := a.keys[i], b.keys[i]
			comp := 0
			if aa == Undefined {
				if bb != Undefined {
					comp = 1
				}
				if comp != 0 {
					return comp == 1
				}
				continue
			}
			if bb == Undefined {
				return false
			}
			as, aStr := aa.(string)
			bs, bStr := bb.(string)
			_, aNum := toNumber(aa)
			_, bNum := toNumber(bb)
			if !(aStr || aNum) || !(bStr || bNum) {
				if sortErr == nil {
					sortErr = newErr("T2008", n.pos, "the expressions within an order-by clause must evaluate to numeric or string values")
				}
				return false
			}
			if aStr != bStr {
				if sortErr == nil {
					sortErr = newErr("T2007", n.pos, "type mismatch when comparing values %s and %s in order-by clause", describe(aa), describe(bb))
				}
				return false
			}
			if aStr {
				comp = compareUTF16(as, bs)
				if comp > 0 {
					comp = 1
				} else if comp < 0 {
					comp = -1
				}
			} else {
				x, _ := toNumber(aa)
				y, _ := toNumber(bb)
				if x < y {
					comp = -1
				} else if x > y {
					comp = 1
				}
			}
			if t.descending {
				comp = -comp
			}
			if comp != 0 {
				return comp == 1
			}
		}
		return false
	}
	sort.SliceStable(ks, func(i, j int) bool { return greater(ks[j], ks[i]) })
	if sortErr != nil {
		return nil, sortErr
	}
	out := make([]any, len(ks))
	for i, k := range ks {
		out[i] = k.item
	}
	return out, nil
}

func (ev *evaluator) evalCall(n *node, input any, env *frame, applyTo []any) (any, error) {
	proc, err := ev.eval(n.procedure, input, env)
	if err != nil {
		return nil, err
	}
	name := procName(n.procedure)
	if !isFunc(proc) {
		return nil, &Error{Code: "T1006", Position: n.pos, Token: name, Message: "attempted to invoke a non-function" + nameSuffix(name)}
	}
	args := make([]any, 0, len(applyTo)+len(n.exprs))
	args = append(args, applyTo...)
	for _, a := range n.exprs {
		v, err := ev.eval(a, input, env)
		if err != nil {
			return nil, err
		}
		args = append(args, v)
	}
	return ev.apply(proc, args, input, n.pos, name)
}

func nameSuffix(name string) string {
	if name == "" {
		return ""
	}
	return ": $" + name
}

func procName(n *node) string {
	if n.typ == nVariable {
		return n.str
	}
	if n.typ == nPath && len(n.steps) > 0 {
		return n.steps[0].str
	}
	return ""
}

func (ev *evaluator) apply(proc any, args []any, input any, pos int, name string) (any, error) {
	ev.depth++
	defer func() { ev.depth-- }()
	if ev.depth > ev.cfg.maxDepth {
		return nil, newErr("U1001", pos, "stack overflow: evaluation nested deeper than %d levels; check for non-terminating recursion", ev.cfg.maxDepth)
	}
	switch f := proc.(type) {
	case *builtin:
		vargs, err := f.sig.validate(args, input, pos, f.name)
		if err != nil {
			return nil, err
		}
		res, err := f.fn(ev, vargs, pos)
		if err != nil {
			if e, ok := err.(*Error); ok && e.Position == 0 {
				e.Position = pos
			}
			return nil, err
		}
		return res, nil
	case *lambda:
		if f.partialOf != nil {
			full := make([]any, 0, len(f.partialArgs))
			k := 0
			for _, a := range f.partialArgs {
				if a == placeholder {
					if k < len(args) {
						full = append(full, args[k])
					} else {
						full = append(full, Undefined)
					}
					k++
				} else {
					full = append(full, a)
				}
			}
			return ev.apply(f.partialOf, full, input, pos, name)
		}
		if f.first != nil {
			mid, err := ev.apply(f.first, args, input, pos, name)
			if err != nil {
				return nil, err
			}
			return ev.apply(f.second, []any{mid}, input, pos, name)
		}
		if f.sig != nil {
			var err error
			if args, err = f.sig.validate(args, input, pos, name); err != nil {
				return nil, err
			}
		}
		fr := newFrame(f.env)
		for i, p := range f.params {
			if i < len(args) {
				fr.vars[p] = args[i]
			} else {
				fr.vars[p] = Undefined
			}
		}
		return ev.eval(f.body, f.input, fr)
	case func(context.Context, []any) (any, error):
		return ev.apply(Function(f), args, input, pos, name)
	case Function:
		fargs := make([]any, len(args))
		for i, a := range args {
			fargs[i] = ev.finalize(a)
		}
		res, err := f(ev.ctx, fargs)
		if err != nil {
			return nil, err
		}
		if res == nil {
			return nil, nil
		}
		return res, nil
	case *transformer:
		var arg any = Undefined
		if len(args) > 0 {
			arg = args[0]
		}
		return ev.transform(f, arg)
	case *regexValue:
		var arg any = Undefined
		if len(args) > 0 {
			arg = args[0]
		}
		s, ok := arg.(string)
		if !ok {
			return Undefined, nil
		}
		ms := f.matches(s, 1)
		if len(ms) == 0 {
			return Undefined, nil
		}
		return ms[0], nil
	}
	return nil, &Error{Code: "T1006", Position: pos, Token: name, Message: "attempted to invoke a non-function" + nameSuffix(name)}
}

func (ev *evaluator) evalPartial(n *node, input any, env *frame) (any, error) {
	proc, err := ev.eval(n.procedure, input, env)
	if err != nil {
		return nil, err
	}
	name := procName(n.procedure)
	if !isFunc(proc) {
		return nil, &Error{Code: "T1008", Position: n.pos, Token: name, Message: "attempted to partially apply a non-function" + nameSuffix(name)}
	}
	args := make([]any, 0, len(n.exprs))
	for _, a := range n.exprs {
		if a.typ == nPlaceholder {
			args = append(args, placeholder)
			continue
		}
		v, err := ev.eval(a, input, env)
		if err != nil {
			return nil, err
		}
		args = append(args, v)
	}
	return &lambda{partialOf: proc, partialArgs: args, pos: n.pos}, nil
}

func (ev *evaluator) evalApply(n *node, input any, env *frame) (any, error) {
	lhs, err := ev.eval(n.lhs, input, env)
	if err != nil {
		return nil, err
	}
	if n.rhs.typ == nFunction {
		return ev.evalCall(n.rhs, input, env, []any{lhs})
	}
	fn, err := ev.eval(n.rhs, input, env)
	if err != nil {
		return nil, err
	}
	if !isFunc(fn) {
		return nil, newErr("T2006", n.pos, "the right side of the function application operator ~> must be a function")
	}
	if isFunc(lhs) {
		return &lambda{first: lhs, second: fn, pos: n.pos}, nil
	}
	return ev.apply(fn, []any{lhs}, Undefined, n.pos, procName(n.rhs))
}

func (ev *evaluator) transform(t *transformer, obj any) (any, error) {
	if obj == Undefined {
		return Undefined, nil
	}
	if sym := typeSymbol(obj); sym != 'o' && sym != 'a' {
		return nil, newErr("T0410", t.n.pos, "argument 1 of the transform expression does not match function signature")
	}
	result := ev.deepCopy(obj)
	matches, err := ev.eval(t.n.lhs, result, t.env)
	if err != nil {
		return nil, err
	}
	if matches == Undefined {
		return result, nil
	}
	list, ok := asArray(matches)
	if !ok {
		list = []any{matches}
	}
	for _, m := range list {
		upd, err := ev.eval(t.n.update, m, t.env)
		if err != nil {
			return nil, err
		}
		mm, isMap := m.(map[string]any)
		var order []string
		if isMap {
			order = ev.keys(mm)
		}
		if upd != Undefined {
			um, ok := upd.(map[string]any)
			if !ok {
				return nil, newErr("T2011", t.n.pos, "the insert/update clause of the transform expression must evaluate to an object: %s", describe(upd))
			}
			if isMap {
				for _, k := range ev.keys(um) {
					if _, had := mm[k]; !had {
						order = append(order, k)
					}
					mm[k] = um[k]
				}
				ev.recordOrder(mm, order)
			}
		}
		if t.n.del != nil {
			dels, err := ev.eval(t.n.del, m, t.env)
			if err != nil {
				return nil, err
			}
			if dels == Undefined {
				continue
			}
			names, ok := asArray(dels)
			if !ok {
				names = []any{dels}
			}
			for _, d := range names {
				if _, ok := d.(string); !ok {
					return nil, newErr("T2012", t.n.pos, "the delete clause of the transform expression must evaluate to a string or array of strings: %s", describe(dels))
				}
			}
			if isMap {
				for _, d := range names {
					delete(mm, d.(string))
				}
				ev.recordOrder(mm, order)
			}
		}
	}
	return result, nil
}

// deepCopy clones a JSON value the way JSON.parse(JSON.stringify(v)) does.
func (ev *evaluator) deepCopy(v any) any {
	ev.count()
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		keys := ev.keys(x)
		for _, k := range keys {
			it := x[k]
			if it == Undefined || isFunc(it) {
				continue
			}
			out[k] = ev.deepCopy(it)
		}
		ev.recordOrder(out, keys)
		return out
	case []any, *sequence:
		items, _ := asArray(x)
		out := make([]any, 0, len(items))
		for _, it := range items {
			if it == Undefined || isFunc(it) {
				out = append(out, nil)
				continue
			}
			out = append(out, ev.deepCopy(it))
		}
		return out
	}
	if f, ok := toNumber(v); ok {
		return f
	}
	return v
}

func describe(v any) string {
	if v == Undefined {
		return "undefined"
	}
	if isFunc(v) {
		return "a function"
	}
	// a bounded rendering: values may be huge or shared exponentially
	ev := &evaluator{ctx: context.Background(), cfg: &config{maxSteps: 1000, maxString: 200}}
	var s string
	var err error
	truncated := func() (over bool) {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(budgetExceeded); !ok {
					panic(r)
				}
				over = true
			}
		}()
		s, err = ev.toJSONString(v, false, 0)
		return false
	}()
	if truncated {
		return "a value too large to show"
	}
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	if _, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return s
}

// clock returns the evaluation's time, read at its first use: every $now()
// and $millis() of one evaluation returns the same instant.
func (ev *evaluator) clock() time.Time {
	if ev.now.IsZero() {
		ev.now = time.Now()
	}
	return ev.now
}
