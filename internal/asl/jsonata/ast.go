package jsonata

import (
	"strconv"
	"sync/atomic"
)

// process rewrites the parse tree into the evaluation tree: chains of '.'
// become path nodes with steps, predicates attach to the step they filter,
// grouping and sorting attach to paths.
func process(n *node) (*node, error) {
	if n == nil {
		return nil, nil
	}
	var err error
	switch n.typ {
	case nBinary:
		switch n.op {
		case ".":
			lstep, err := process(n.lhs)
			if err != nil {
				return nil, err
			}
			res := lstep
			if lstep.typ != nPath {
				res = &node{typ: nPath, pos: n.pos, steps: []*node{lstep}}
			}
			if lstep.typ == nParent {
				res.seekingParent = []*ancSlot{lstep.slot}
			}
			rest, err := process(n.rhs)
			if err != nil {
				return nil, err
			}
			if rest.typ == nPath {
				res.steps = append(res.steps, rest.steps...)
			} else {
				if rest.predicate != nil {
					rest.stages = rest.predicate
					rest.predicate = nil
				}
				res.steps = append(res.steps, rest)
			}
			for _, s := range res.steps {
				if s.typ == nNumber || s.typ == nValue {
					return nil, newErr("S0213", s.pos, "the literal value %s cannot be used as a step within a path expression", literalText(s))
				}
				if s.typ == nString {
					s.typ = nName
				}
				if s.keepArray {
					res.keepSingletonArray = true
				}
			}
			if first := res.steps[0]; first.typ == nArray {
				first.consArray = true
			}
			if last := res.steps[len(res.steps)-1]; last.typ == nArray {
				last.consArray = true
			}
			if err := resolveAncestry(res); err != nil {
				return nil, err
			}
			return res, nil
		case "[":
			res, err := process(n.lhs)
			if err != nil {
				return nil, err
			}
			step := res
			stages := false
			if res.typ == nPath {
				step = res.steps[len(res.steps)-1]
				stages = true
			}
			if step.group != nil {
				return nil, newErr("S0209", n.pos, "a predicate cannot follow a grouping expression in a step")
			}
			pred, err := process(n.rhs)
			if err != nil {
				return nil, err
			}
			if pred.seekingParent != nil {
				for _, slot := range pred.seekingParent {
					if slot.level == 1 {
						if _, err := seekParent(step, slot); err != nil {
							return nil, err
						}
					} else {
						slot.level--
					}
				}
				pushAncestry(step, pred)
			}
			f := &node{typ: nFilter, lhs: pred, pos: n.pos}
			if stages {
				step.stages = append(step.stages, f)
			} else {
				step.predicate = append(step.predicate, f)
			}
			return res, nil
		case "@":
			res, err := process(n.lhs)
			if err != nil {
				return nil, err
			}
			step := res
			if res.typ == nPath {
				step = res.steps[len(res.steps)-1]
			}
			if step.stages != nil || step.predicate != nil {
				return nil, newErr("S0215", n.pos, "a context variable binding must precede any predicates on a step")
			}
			if step.typ == nSort {
				return nil, newErr("S0216", n.pos, "a context variable binding must precede the 'order-by' clause on a step")
			}
			if n.keepArray {
				step.keepArray = true
			}
			step.focus, step.hasFocus, step.tuple = n.rhs.str, true, true
			return res, nil
		case "#":
			res, err := process(n.lhs)
			if err != nil {
				return nil, err
			}
			step := res
			if res.typ == nPath {
				step = res.steps[len(res.steps)-1]
			} else {
				res = &node{typ: nPath, steps: []*node{res}, pos: res.pos}
				if step.predicate != nil {
					step.stages, step.predicate = step.predicate, nil
				}
			}
			if step.stages == nil {
				step.index, step.hasIndex = n.rhs.str, true
			} else {
				step.stages = append(step.stages, &node{typ: nIndexStage, str: n.rhs.str, pos: n.pos})
			}
			step.tuple = true
			return res, nil
		case "{":
			res, err := process(n.lhs)
			if err != nil {
				return nil, err
			}
			if res.group != nil {
				return nil, newErr("S0210", n.pos, "each step can only have one grouping expression")
			}
			g, err := process(n.rhs)
			if err != nil {
				return nil, err
			}
			res.group = g
			return res, nil
		}
		if n.lhs, err = process(n.lhs); err != nil {
			return nil, err
		}
		if n.rhs, err = process(n.rhs); err != nil {
			return nil, err
		}
		pushAncestry(n, n.lhs)
		pushAncestry(n, n.rhs)
		return n, nil
	case nSort:
		res, err := process(n.lhs)
		if err != nil {
			return nil, err
		}
		if res.typ != nPath {
			res = &node{typ: nPath, steps: []*node{res}, pos: res.pos}
		}
		s := &node{typ: nSort, pos: n.pos}
		for _, t := range n.terms {
			e, err := process(t.expr)
			if err != nil {
				return nil, err
			}
			s.terms = append(s.terms, sortTerm{expr: e, descending: t.descending})
			pushAncestry(s, e)
		}
		res.steps = append(res.steps, s)
		if err := resolveAncestry(res); err != nil {
			return nil, err
		}
		return res, nil
	case nName:
		res := &node{typ: nPath, steps: []*node{n}, pos: n.pos}
		if n.keepArray {
			res.keepSingletonArray = true
		}
		return res, nil
	case nEnd:
		return nil, newErr("S0207", n.pos, "unexpected end of expression")
	case nParent:
		return &node{typ: nParent, pos: n.pos, slot: &ancSlot{label: "!" + strconv.FormatInt(ancestorLabels.Add(1), 10), level: 1}}, nil
	case nUnaryMinus:
		if n.lhs, err = process(n.lhs); err != nil {
			return nil, err
		}
		if n.lhs.typ == nNumber {
			// fold the constant, keeping any predicate on it: -1[p] is (-1)[p]
			n.lhs.num = -n.lhs.num
			return n.lhs, nil
		}
		pushAncestry(n, n.lhs)
		return n, nil
	case nArray, nBlock, nFunction, nPartial:
		for i, e := range n.exprs {
			if n.exprs[i], err = process(e); err != nil {
				return nil, err
			}
			pushAncestry(n, n.exprs[i])
		}
		if n.procedure != nil {
			if n.procedure, err = process(n.procedure); err != nil {
				return nil, err
			}
		}
		return n, nil
	case nObject:
		for i := range n.pairs {
			if n.pairs[i][0], err = process(n.pairs[i][0]); err != nil {
				return nil, err
			}
			if n.pairs[i][1], err = process(n.pairs[i][1]); err != nil {
				return nil, err
			}
			pushAncestry(n, n.pairs[i][0])
			pushAncestry(n, n.pairs[i][1])
		}
		return n, nil
	case nLambda:
		if n.body, err = process(n.body); err != nil {
			return nil, err
		}
		return n, nil
	case nCondition:
		if n.cond, err = process(n.cond); err != nil {
			return nil, err
		}
		if n.then, err = process(n.then); err != nil {
			return nil, err
		}
		if n.els, err = process(n.els); err != nil {
			return nil, err
		}
		pushAncestry(n, n.cond)
		pushAncestry(n, n.then)
		pushAncestry(n, n.els)
		return n, nil
	case nBind, nApply:
		if n.lhs, err = process(n.lhs); err != nil {
			return nil, err
		}
		if n.rhs, err = process(n.rhs); err != nil {
			return nil, err
		}
		if n.typ == nApply {
			n.keepArray = n.lhs.keepArray || n.rhs.keepArray
		} else {
			pushAncestry(n, n.rhs)
		}
		return n, nil
	case nTransform:
		if n.lhs, err = process(n.lhs); err != nil {
			return nil, err
		}
		if n.update, err = process(n.update); err != nil {
			return nil, err
		}
		if n.del, err = process(n.del); err != nil {
			return nil, err
		}
		return n, nil
	}
	return n, nil
}

// ancSlot is the variable through which a parent operator % reads the
// context of the step it refers to: that step binds it in the tuple stream.
type ancSlot struct {
	label string
	level int
}

var ancestorLabels atomic.Int64

// pushAncestry passes the parent references still unresolved in value up
// to result.
func pushAncestry(result, value *node) {
	if value == nil || (value.seekingParent == nil && value.typ != nParent) {
		return
	}
	slots := append([]*ancSlot(nil), value.seekingParent...)
	if value.typ == nParent {
		slots = append(slots, value.slot)
	}
	result.seekingParent = append(result.seekingParent, slots...)
}

// seekParent walks back through node for the step a % refers to.
func seekParent(n *node, slot *ancSlot) (*ancSlot, error) {
	switch n.typ {
	case nName, nWildcard:
		slot.level--
		if slot.level == 0 {
			if n.ancestor != nil {
				slot.label = n.ancestor.label
			}
			n.ancestor = slot
			n.tuple = true
		}
	case nParent:
		slot.level++
	case nBlock:
		if len(n.exprs) > 0 {
			n.tuple = true
			return seekParent(n.exprs[len(n.exprs)-1], slot)
		}
	case nPath:
		n.tuple = true
		i := len(n.steps) - 1
		var err error
		if slot, err = seekParent(n.steps[i], slot); err != nil {
			return nil, err
		}
		for i--; slot.level > 0 && i >= 0; i-- {
			if slot, err = seekParent(n.steps[i], slot); err != nil {
				return nil, err
			}
		}
	default:
		return nil, newErr("S0217", n.pos, "the parent operator %% cannot derive an ancestor from this expression")
	}
	return slot, nil
}

// resolveAncestry binds the parent references of a path's last step to the
// earlier steps they refer to; those it cannot resolve move up to the path.
func resolveAncestry(path *node) error {
	last := path.steps[len(path.steps)-1]
	slots := append([]*ancSlot(nil), last.seekingParent...)
	if last.typ == nParent {
		slots = append(slots, last.slot)
	}
	for _, slot := range slots {
		i := len(path.steps) - 2
		for slot.level > 0 {
			if i < 0 {
				path.seekingParent = append(path.seekingParent, slot)
				break
			}
			step := path.steps[i]
			i--
			for i >= 0 && step.hasFocus && path.steps[i].hasFocus {
				step = path.steps[i]
				i--
			}
			var err error
			if slot, err = seekParent(step, slot); err != nil {
				return err
			}
		}
	}
	return nil
}

func literalText(n *node) string {
	if n.typ == nNumber {
		return formatNumber(n.num)
	}
	switch n.val {
	case true:
		return "true"
	case false:
		return "false"
	}
	return "null"
}
