package filter

import (
	"strconv"
	"strings"
)

// parser is a recursive descent parser over LTTng's precedence levels,
// which are not C's: comparisons bind looser than the bitwise operators.
type parser struct {
	lx     lexer
	tok    token // the next token
	fields []Field
	lim    *Limits
	depth  int // unary operators and parentheses around the token: the recursion
	nodes  int
}

// parse parses and type-checks expr within the parsing limits of lim,
// which has its defaults filled in.
func parse(expr string, fields []Field, lim *Limits) (*node, error) {
	if len(expr) > lim.MaxBytes {
		return nil, limitf(lim.MaxBytes+1, "expression of %d bytes (at most %d: filter.Limits.MaxBytes)", len(expr), lim.MaxBytes)
	}
	for i := range fields {
		if err := fields[i].check(); err != nil {
			return nil, err
		}
	}
	p := &parser{lx: lexer{expr: expr}, fields: fields, lim: lim}
	if _, err := p.next(); err != nil {
		return nil, err
	}
	n, err := p.binary(0)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		return nil, errorf(t.col, "unexpected %s", describe(t))
	}
	if n.ty == tyStr {
		return nil, errorf(n.col, "a string is not a condition: compare it")
	}
	return n, nil
}

// field returns the field called name, the last one of that name (a
// record's fields are few: a scan costs less than building a map on every
// compile, which attaching a filter to a tracepoint does).
func (p *parser) field(name string) *Field {
	for i := len(p.fields) - 1; i >= 0; i-- {
		if p.fields[i].Name == name {
			return &p.fields[i]
		}
	}
	return nil
}

// count counts the node that token t makes.
func (p *parser) count(t token) error {
	if p.nodes++; p.nodes > p.lim.MaxNodes {
		return limitf(t.col, "more than %d operands and operators (filter.Limits.MaxNodes)", p.lim.MaxNodes)
	}
	return nil
}

func (p *parser) peek() token { return p.tok }

// next returns the next token and lexes the one after it.
func (p *parser) next() (token, error) {
	t := p.tok
	var err error
	p.tok, err = p.lx.next()
	return t, err
}

func describe(t token) string {
	if t.kind == tEOF {
		return "end of expression"
	}
	return strconv.Quote(t.text)
}

// levels are the binary operators from the loosest to the tightest.
var levels = [][]struct {
	text string
	op   op
}{
	{{"||", opLOr}},
	{{"&&", opLAnd}},
	{{"==", opEQ}, {"!=", opNE}},
	{{"<", opLT}, {"<=", opLE}, {">", opGT}, {">=", opGE}},
	{{"|", opOr}},
	{{"^", opXor}},
	{{"&", opAnd}},
	{{"<<", opShl}, {">>", opShr}},
}

// binary parses the operators of levels[level:], left-associative.
func (p *parser) binary(level int) (*node, error) {
	if level == len(levels) {
		return p.unary()
	}
	l, err := p.binary(level + 1)
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		o, ok := op(0), false
		if t.kind == tOp {
			for _, c := range levels[level] {
				if c.text == t.text {
					o, ok = c.op, true
				}
			}
			if !ok && level == 0 {
				switch t.text {
				case "+", "-", "*", "/", "%":
					return nil, errorf(t.col, "arithmetic operator %q is not supported in filters", t.text)
				case "=":
					return nil, errorf(t.col, "assignment is not supported: compare with ==")
				}
			}
		}
		if !ok {
			return l, nil
		}
		if err := p.count(t); err != nil {
			return nil, err
		}
		if _, err := p.next(); err != nil {
			return nil, err
		}
		r, err := p.binary(level + 1)
		if err != nil {
			return nil, err
		}
		if l, err = binaryNode(o, t.col, l, r); err != nil {
			return nil, err
		}
	}
}

// unary parses unary operators and primaries.
func (p *parser) unary() (*node, error) {
	t := p.peek()
	if t.kind == tOp || t.kind == tLParen {
		p.depth++
		defer func() { p.depth-- }()
		if p.depth > p.lim.MaxDepth {
			return nil, limitf(t.col, "expression nests more than %d deep (filter.Limits.MaxDepth)", p.lim.MaxDepth)
		}
	}
	if t.kind != tLParen {
		if err := p.count(t); err != nil {
			return nil, err
		}
	}
	if t.kind == tOp {
		var o op
		switch t.text {
		case "!":
			o = opNot
		case "~":
			o = opBitNot
		case "-":
			o = opNeg
		case "+":
			o = opPos
		default:
			return nil, errorf(t.col, "unexpected %s", describe(t))
		}
		if _, err := p.next(); err != nil {
			return nil, err
		}
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		return unaryNode(o, t.col, x)
	}
	return p.primary()
}

func (p *parser) primary() (*node, error) {
	t, err := p.next()
	if err != nil {
		return nil, err
	}
	switch t.kind {
	case tLParen:
		n, err := p.binary(0)
		if err != nil {
			return nil, err
		}
		c, err := p.next()
		if err != nil {
			return nil, err
		}
		if c.kind != tRParen {
			return nil, errorf(c.col, "want ) to close the ( at column %d, got %s", t.col, describe(c))
		}
		return n, nil
	case tIdent:
		f := p.field(t.text)
		if f == nil {
			return nil, errorf(t.col, "unknown field %q", t.text)
		}
		n := &node{op: opField, col: t.col, field: f}
		switch f.Kind {
		case Float:
			n.ty = tyFloat
		case String:
			n.ty = tyStr
		}
		return n, nil
	case tNumber:
		return number(t)
	case tString:
		s, err := stringLiteral(t, p.lim)
		if err != nil {
			return nil, err
		}
		return &node{op: opStr, col: t.col, ty: tyStr, s: s, konst: true}, nil
	}
	return nil, errorf(t.col, "want a field, a number, a string or (, got %s", describe(t))
}

// number parses an integer (decimal, 0x hex, 0 octal, C suffixes u and l
// allowed) or a float literal (C suffixes f and l allowed).
func number(t token) (*node, error) {
	s := t.text
	hex := isHex(s)
	if !hex && strings.ContainsAny(s, ".eE") {
		s = strings.TrimRight(s, "fFlL")
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || strings.ContainsAny(s, "xXpP_") {
			return nil, errorf(t.col, "bad float literal %q", t.text)
		}
		return &node{op: opFloat, col: t.col, ty: tyFloat, f: f, konst: true}, nil
	}
	s = strings.TrimRight(s, "uUlL")
	base := 10
	switch {
	case hex:
		base, s = 16, s[2:]
	case len(s) > 1 && s[0] == '0':
		base, s = 8, s[1:]
	}
	u, err := strconv.ParseUint(s, base, 64)
	if err != nil || strings.Contains(s, "_") {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return nil, errorf(t.col, "integer literal %q does not fit in 64 bits", t.text)
		}
		return nil, errorf(t.col, "bad integer literal %q", t.text)
	}
	return &node{op: opInt, col: t.col, i: int64(u), konst: true}, nil
}

// stringLiteral decodes a quoted literal: a backslash takes the next
// byte literally (\\, \", and \* for a star that is not a wildcard); an
// unescaped * is a wildcard.
func stringLiteral(t token, lim *Limits) (*strLit, error) {
	body := t.text[1 : len(t.text)-1]
	s := &strLit{segs: [][]byte{{}}}
	n := 0 // bytes, stars excluded
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch c {
		case 0:
			return nil, errorf(t.col+1+i, "NUL byte in a string literal")
		case '\\':
			i++
			c = body[i]
			if c == 0 {
				return nil, errorf(t.col+1+i, "NUL byte in a string literal")
			}
		case '*':
			if len(s.segs) > lim.MaxGlobStars {
				return nil, limitf(t.col+1+i, "pattern with more than %d stars (filter.Limits.MaxGlobStars)", lim.MaxGlobStars)
			}
			s.segs = append(s.segs, []byte{})
			continue
		}
		if n++; n > lim.MaxLiteralBytes {
			return nil, limitf(t.col+1+i, "string literal longer than %d bytes (filter.Limits.MaxLiteralBytes)", lim.MaxLiteralBytes)
		}
		last := len(s.segs) - 1
		s.segs[last] = append(s.segs[last], c)
	}
	return s, nil
}

// unaryNode type-checks a unary operation.
func unaryNode(o op, col int, x *node) (*node, error) {
	if x.ty == tyStr {
		return nil, errorf(col, "operator %s does not apply to a string", o)
	}
	n := &node{op: o, col: col, l: x, ty: x.ty, konst: x.konst}
	switch o {
	case opNot:
		n.ty = tyInt
	case opBitNot:
		if x.ty != tyInt {
			return nil, errorf(col, "operator ~ does not apply to %s", x.ty)
		}
	}
	return n, nil
}

// binaryNode type-checks a binary operation.
func binaryNode(o op, col int, l, r *node) (*node, error) {
	n := &node{op: o, col: col, l: l, r: r, konst: l.konst && r.konst}
	switch {
	case o.isCompare():
		if (l.ty == tyStr) != (r.ty == tyStr) {
			return nil, errorf(col, "cannot compare %s with %s", l.ty, r.ty)
		}
		if l.ty == tyStr {
			lg := l.op == opStr && l.s.glob()
			rg := r.op == opStr && r.s.glob()
			if (lg || rg) && o != opEQ && o != opNE {
				return nil, errorf(col, "a string with a * wildcard only compares with == or != (write \\* for a star)")
			}
			if lg && rg {
				return nil, errorf(col, "cannot compare two wildcard patterns")
			}
		}
	case o == opLAnd || o == opLOr:
		for _, x := range []*node{l, r} {
			if x.ty == tyStr {
				return nil, errorf(col, "operator %s does not apply to a string", o)
			}
		}
	default: // bitwise and shifts
		for _, x := range []*node{l, r} {
			if x.ty != tyInt {
				return nil, errorf(col, "operator %s does not apply to %s", o, x.ty)
			}
		}
	}
	return n, nil
}
