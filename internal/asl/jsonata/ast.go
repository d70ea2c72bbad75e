package jsonata

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
			res := &node{typ: nPath, pos: n.pos}
			if lstep.typ == nPath {
				res.steps = append(res.steps, lstep.steps...)
				res.keepSingletonArray = lstep.keepSingletonArray
			} else {
				res.steps = []*node{lstep}
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
			if pred.typ == nParent {
				return nil, newErr("S0217", n.pos, "the parent operator is not supported by this evaluator")
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
		}
		res.steps = append(res.steps, s)
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
		return nil, newErr("S0217", n.pos, "the parent operator %% is not supported by this evaluator")
	case nUnaryMinus:
		if n.lhs, err = process(n.lhs); err != nil {
			return nil, err
		}
		if n.lhs.typ == nNumber {
			return &node{typ: nNumber, num: -n.lhs.num, pos: n.pos}, nil
		}
		return n, nil
	case nArray, nBlock, nFunction, nPartial:
		for i, e := range n.exprs {
			if n.exprs[i], err = process(e); err != nil {
				return nil, err
			}
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
