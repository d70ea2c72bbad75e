package jsonata

type nodeType int

const (
	nString nodeType = iota
	nNumber
	nValue // true, false, null
	nRegex
	nName
	nVariable
	nWildcard
	nDescendant
	nParent
	nPath
	nBinary
	nUnaryMinus
	nArray
	nObject
	nBlock
	nCondition
	nFunction
	nPartial
	nPlaceholder
	nLambda
	nBind
	nApply
	nSort
	nTransform
	nFilter
	nEnd
	nIndexStage // #$var after a predicate: binds the position in the filtered stream
)

type sortTerm struct {
	expr       *node
	descending bool
}

type node struct {
	typ   nodeType
	op    string // binary operator
	str   string // string literal, name, variable
	num   float64
	val   any // nValue
	re    *regexValue
	pos   int
	lhs   *node
	rhs   *node
	exprs []*node // block, array constructor, call arguments
	steps []*node // path
	pairs [][2]*node
	// function call / lambda
	procedure *node
	params    []string
	body      *node
	signature *signature
	// condition
	cond, then, els *node
	terms           []sortTerm
	// transform
	update, del *node

	predicate          []*node // filters applied to the value
	stages             []*node // filters applied inside a path step
	group              *node   // grouping object constructor {...} after an expression
	keepArray          bool
	keepSingletonArray bool
	consArray          bool

	// parent operator %: the slot a % resolves to, the slots still seeking
	// their ancestor step, and the ancestor slot bound by this step
	slot          *ancSlot
	seekingParent []*ancSlot
	ancestor      *ancSlot

	// tuple-stream steps: @$focus and #$index bindings
	tuple    bool
	focus    string
	hasFocus bool
	index    string
	hasIndex bool
}

var bindingPower = map[string]int{
	".": 75, "[": 80, "]": 0, "{": 70, "}": 0, "(": 80, ")": 0, ",": 0, "@": 80, "#": 80,
	";": 80, ":": 80, "?": 20, "+": 50, "-": 50, "*": 60, "/": 60, "%": 60, "|": 20, "=": 40,
	"<": 40, ">": 40, "^": 40, "**": 60, "..": 20, ":=": 10, "!=": 40, "<=": 40, ">=": 40,
	"~>": 40, "and": 30, "or": 25, "in": 40, "&": 50, "!": 0, "~": 0,
}

const maxParseDepth = 500

type parser struct {
	lex   lexer
	tok   token
	depth int
}

func (p *parser) lbp() int {
	if p.tok.kind == tokOperator {
		switch p.tok.value {
		case ":", ";", ",", ")", "]", "}", "..", "|":
			// separators: they end an operand, never extend it
			return 0
		}
		return bindingPower[p.tok.value]
	}
	return 0
}

func (p *parser) advance(prefix bool) error {
	t, err := p.lex.next(prefix)
	if err != nil {
		return err
	}
	p.tok = t
	return nil
}

// expect checks that the current token is the operator id and moves on.
func (p *parser) expect(id string, infix bool) error {
	if p.tok.kind != tokOperator || p.tok.value != id {
		if p.tok.kind == tokEnd {
			return newErr("S0203", p.tok.pos, "expected %q before end of expression", id)
		}
		return newErr("S0202", p.tok.pos, "expected %q, got %q", id, p.tok.value)
	}
	return p.advance(!infix)
}

func (p *parser) isOp(id string) bool { return p.tok.kind == tokOperator && p.tok.value == id }

func (p *parser) expression(rbp int) (*node, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxParseDepth {
		return nil, newErr("U1001", p.tok.pos, "expression nested deeper than %d levels", maxParseDepth)
	}
	t := p.tok
	if err := p.advance(false); err != nil {
		return nil, err
	}
	left, err := p.nud(t)
	if err != nil {
		return nil, err
	}
	for rbp < p.lbp() {
		t = p.tok
		if err := p.advance(true); err != nil {
			return nil, err
		}
		left, err = p.led(t, left)
		if err != nil {
			return nil, err
		}
	}
	return left, nil
}

// nud parses a token that starts an operand. The token t has been consumed
// and the lexer was asked for the next one in infix mode; operators that take
// an operand re-lex nothing because their operand tokens never start with '/'
// except regexes, handled by re-scanning below.
func (p *parser) nud(t token) (*node, error) {
	switch t.kind {
	case tokEnd:
		// as in the reference, the end is an operand here and reported as
		// S0207 when the tree is processed, unless a missing closing token
		// is reported first (S0203)
		return &node{typ: nEnd, pos: t.pos}, nil
	case tokString:
		return &node{typ: nString, str: t.value, pos: t.pos}, nil
	case tokNumber:
		return &node{typ: nNumber, num: t.num, pos: t.pos}, nil
	case tokValue:
		return &node{typ: nValue, val: t.val, pos: t.pos}, nil
	case tokRegex:
		return &node{typ: nRegex, re: t.re, pos: t.pos}, nil
	case tokName:
		return &node{typ: nName, str: t.value, pos: t.pos}, nil
	case tokVariable:
		return &node{typ: nVariable, str: t.value, pos: t.pos}, nil
	}
	switch t.value {
	case "and", "or", "in":
		return &node{typ: nName, str: t.value, pos: t.pos}, nil
	case "-":
		operand, err := p.expression(70)
		if err != nil {
			return nil, err
		}
		return &node{typ: nUnaryMinus, lhs: operand, pos: t.pos}, nil
	case "*":
		return &node{typ: nWildcard, pos: t.pos}, nil
	case "**":
		return &node{typ: nDescendant, pos: t.pos}, nil
	case "%":
		return &node{typ: nParent, pos: t.pos}, nil
	case "(":
		n := &node{typ: nBlock, pos: t.pos}
		for !p.isOp(")") {
			e, err := p.expression(0)
			if err != nil {
				return nil, err
			}
			n.exprs = append(n.exprs, e)
			if !p.isOp(";") {
				break
			}
			if err := p.advance(true); err != nil {
				return nil, err
			}
		}
		if err := p.expect(")", true); err != nil {
			return nil, err
		}
		return n, nil
	case "[":
		n := &node{typ: nArray, pos: t.pos}
		if !p.isOp("]") {
			for {
				item, err := p.expression(0)
				if err != nil {
					return nil, err
				}
				if p.isOp("..") {
					pos := p.tok.pos
					if err := p.advance(true); err != nil {
						return nil, err
					}
					rhs, err := p.expression(0)
					if err != nil {
						return nil, err
					}
					item = &node{typ: nBinary, op: "..", lhs: item, rhs: rhs, pos: pos}
				}
				n.exprs = append(n.exprs, item)
				if !p.isOp(",") {
					break
				}
				if err := p.advance(true); err != nil {
					return nil, err
				}
			}
		}
		if err := p.expect("]", true); err != nil {
			return nil, err
		}
		return n, nil
	case "{":
		pairs, err := p.objectPairs()
		if err != nil {
			return nil, err
		}
		return &node{typ: nObject, pairs: pairs, pos: t.pos}, nil
	case "|":
		pattern, err := p.expression(0)
		if err != nil {
			return nil, err
		}
		if err := p.expect("|", false); err != nil {
			return nil, err
		}
		update, err := p.expression(0)
		if err != nil {
			return nil, err
		}
		n := &node{typ: nTransform, lhs: pattern, update: update, pos: t.pos}
		if p.isOp(",") {
			if err := p.advance(true); err != nil {
				return nil, err
			}
			if n.del, err = p.expression(0); err != nil {
				return nil, err
			}
		}
		if err := p.expect("|", true); err != nil {
			return nil, err
		}
		return n, nil
	case "/":
		// reached when the lexer saw '/' in infix mode but an operand is
		// expected: re-scan from the slash as a regular expression.
		p.lex.pos = t.pos - 1
		rt, err := p.lex.regex()
		if err != nil {
			return nil, err
		}
		if err := p.advance(false); err != nil {
			return nil, err
		}
		return &node{typ: nRegex, re: rt.re, pos: rt.pos}, nil
	}
	return nil, newErr("S0211", t.pos, "the symbol %q cannot be used as a unary operator", t.value)
}

func (p *parser) objectPairs() ([][2]*node, error) {
	var pairs [][2]*node
	if !p.isOp("}") {
		for {
			k, err := p.expression(0)
			if err != nil {
				return nil, err
			}
			if err := p.expect(":", false); err != nil {
				return nil, err
			}
			v, err := p.expression(0)
			if err != nil {
				return nil, err
			}
			pairs = append(pairs, [2]*node{k, v})
			if !p.isOp(",") {
				break
			}
			if err := p.advance(true); err != nil {
				return nil, err
			}
		}
	}
	if err := p.expect("}", true); err != nil {
		return nil, err
	}
	return pairs, nil
}

func (p *parser) led(t token, left *node) (*node, error) {
	op := t.value
	switch op {
	case "(":
		n := &node{typ: nFunction, procedure: left, pos: t.pos}
		if !p.isOp(")") {
			for {
				if p.isOp("?") {
					n.typ = nPartial
					n.exprs = append(n.exprs, &node{typ: nPlaceholder, pos: p.tok.pos})
					if err := p.advance(true); err != nil {
						return nil, err
					}
				} else {
					a, err := p.expression(0)
					if err != nil {
						return nil, err
					}
					n.exprs = append(n.exprs, a)
				}
				if !p.isOp(",") {
					break
				}
				if err := p.advance(true); err != nil {
					return nil, err
				}
			}
		}
		if err := p.expect(")", true); err != nil {
			return nil, err
		}
		if left.typ == nName && (left.str == "function" || left.str == "λ") {
			n.typ = nLambda
			for _, a := range n.exprs {
				if a.typ != nVariable {
					return nil, newErr("S0208", a.pos, "parameter of a function definition must be a variable name (start with $)")
				}
				n.params = append(n.params, a.str)
			}
			n.exprs = nil
			if p.isOp("<") {
				// signature: read raw characters up to the matching '>'
				sigStart := p.tok.pos - 1
				depth := 0
				i := sigStart
				for ; i < len(p.lex.src); i++ {
					if p.lex.src[i] == '<' {
						depth++
					} else if p.lex.src[i] == '>' {
						depth--
						if depth == 0 {
							break
						}
					}
				}
				if i >= len(p.lex.src) {
					return nil, newErr("S0401", sigStart+1, "function signature has no closing '>'")
				}
				sig, err := parseSignature(string(p.lex.src[sigStart+1 : i]))
				if err != nil {
					return nil, newErr("S0402", sigStart+1, "invalid function signature: %v", err)
				}
				n.signature = sig
				p.lex.pos = i + 1
				if err := p.advance(false); err != nil {
					return nil, err
				}
			}
			if err := p.expect("{", false); err != nil {
				return nil, err
			}
			body, err := p.expression(0)
			if err != nil {
				return nil, err
			}
			n.body = body
			if err := p.expect("}", true); err != nil {
				return nil, err
			}
		}
		return n, nil
	case "[":
		if p.isOp("]") {
			step := left
			for step != nil && step.typ == nBinary && step.op == "[" {
				step = step.lhs
			}
			step.keepArray = true
			if err := p.expect("]", true); err != nil {
				return nil, err
			}
			return left, nil
		}
		rhs, err := p.expression(0)
		if err != nil {
			return nil, err
		}
		if err := p.expect("]", true); err != nil {
			return nil, err
		}
		return &node{typ: nBinary, op: "[", lhs: left, rhs: rhs, pos: t.pos}, nil
	case "{":
		pairs, err := p.objectPairs()
		if err != nil {
			return nil, err
		}
		return &node{typ: nBinary, op: "{", lhs: left, rhs: &node{typ: nObject, pairs: pairs, pos: t.pos}, pos: t.pos}, nil
	case "^":
		if err := p.expect("(", false); err != nil {
			return nil, err
		}
		n := &node{typ: nSort, lhs: left, pos: t.pos}
		for {
			desc := false
			if p.isOp("<") {
				if err := p.advance(false); err != nil {
					return nil, err
				}
			} else if p.isOp(">") {
				desc = true
				if err := p.advance(false); err != nil {
					return nil, err
				}
			}
			e, err := p.expression(0)
			if err != nil {
				return nil, err
			}
			n.terms = append(n.terms, sortTerm{expr: e, descending: desc})
			if !p.isOp(",") {
				break
			}
			if err := p.advance(true); err != nil {
				return nil, err
			}
		}
		if err := p.expect(")", true); err != nil {
			return nil, err
		}
		return n, nil
	case ":=":
		if left.typ != nVariable {
			return nil, newErr("S0212", t.pos, "the left side of := must be a variable name (start with $)")
		}
		rhs, err := p.expression(bindingPower[":="] - 1)
		if err != nil {
			return nil, err
		}
		return &node{typ: nBind, lhs: left, rhs: rhs, pos: t.pos}, nil
	case "?":
		then, err := p.expression(0)
		if err != nil {
			return nil, err
		}
		n := &node{typ: nCondition, cond: left, then: then, pos: t.pos}
		if p.isOp(":") {
			if err := p.advance(false); err != nil {
				return nil, err
			}
			if n.els, err = p.expression(0); err != nil {
				return nil, err
			}
		}
		return n, nil
	case "@", "#":
		rhs, err := p.expression(bindingPower[op])
		if err != nil {
			return nil, err
		}
		if rhs.typ != nVariable {
			return nil, newErr("S0214", rhs.pos, "the right side of %s must be a variable name (start with $)", op)
		}
		return &node{typ: nBinary, op: op, lhs: left, rhs: rhs, pos: t.pos}, nil
	case ".", "+", "-", "*", "/", "%", "=", "!=", "<", "<=", ">", ">=", "&", "and", "or", "in", "..", "~>":
		rhs, err := p.expression(bindingPower[op])
		if err != nil {
			return nil, err
		}
		n := &node{typ: nBinary, op: op, lhs: left, rhs: rhs, pos: t.pos}
		if op == "~>" {
			n.typ = nApply
		}
		return n, nil
	}
	return nil, newErr("S0201", t.pos, "syntax error: %q", op)
}
