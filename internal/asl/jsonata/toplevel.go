package jsonata

// TopLevelNames lists the field names the expression reads from the
// context item itself: a path whose first step is a bare name, such as
// "phone" or "order.total", evaluated where the context is the input
// document. Names in later steps, predicates, sort terms and groupings read
// the values of an earlier step and are not listed; a lambda body keeps the
// context of the expression that defines it. Step Functions evaluates
// expressions with no context item and refuses a definition that reads one
// ("Reference to 'phone' at the top level is not supported").
func (e *Expr) TopLevelNames() []string {
	var names []string
	seen := map[string]bool{}
	var visit func(n *node, top bool)
	visitAll := func(ns []*node, top bool) {
		for _, c := range ns {
			visit(c, top)
		}
	}
	visit = func(n *node, top bool) {
		if n == nil {
			return
		}
		if n.typ == nPath && len(n.steps) > 0 {
			first := n.steps[0]
			if top && first.typ == nName && !seen[first.str] {
				seen[first.str] = true
				names = append(names, first.str)
			}
			if first.typ != nName {
				visit(first, top)
			}
			for _, s := range n.steps[1:] {
				visit(s, false)
			}
			for _, s := range n.steps {
				visitAll(s.predicate, false)
				visitAll(s.stages, false)
				visit(s.group, false)
				for _, t := range s.terms {
					visit(t.expr, false)
				}
			}
			visit(n.group, false)
			visitAll(n.predicate, false)
			return
		}
		visit(n.lhs, top)
		visit(n.rhs, top)
		visitAll(n.exprs, top)
		for _, p := range n.pairs {
			visit(p[0], top)
			visit(p[1], top)
		}
		visit(n.procedure, top)
		visit(n.body, top)
		visit(n.cond, top)
		visit(n.then, top)
		visit(n.els, top)
		visit(n.update, false)
		visit(n.del, false)
		visitAll(n.predicate, false)
		visitAll(n.stages, false)
		visit(n.group, false)
		for _, t := range n.terms {
			visit(t.expr, false)
		}
	}
	visit(e.root, true)
	return names
}
