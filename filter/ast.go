package filter

// op is the operation of a node.
type op uint8

const (
	opField  op = iota
	opInt       // integer literal
	opFloat     // float literal
	opStr       // string literal
	opNot       // !
	opBitNot    // ~
	opNeg       // unary -
	opPos       // unary +
	opShl
	opShr
	opAnd // &
	opXor
	opOr // |
	opLT
	opLE
	opGT
	opGE
	opEQ
	opNE
	opLAnd // &&
	opLOr  // ||
)

var opNames = [...]string{
	opNot: "!", opBitNot: "~", opNeg: "-", opPos: "+",
	opShl: "<<", opShr: ">>", opAnd: "&", opXor: "^", opOr: "|",
	opLT: "<", opLE: "<=", opGT: ">", opGE: ">=", opEQ: "==", opNE: "!=",
	opLAnd: "&&", opLOr: "||",
}

func (o op) String() string { return opNames[o] }

func (o op) isCompare() bool { return o >= opLT && o <= opNE }

// mirror is the comparison with its operands swapped: a < b is b > a.
func (o op) mirror() op {
	switch o {
	case opLT:
		return opGT
	case opLE:
		return opGE
	case opGT:
		return opLT
	case opGE:
		return opLE
	}
	return o
}

// typ is the type of a value: LTTng has 64-bit integers, doubles and
// strings.
type typ uint8

const (
	tyInt typ = iota
	tyFloat
	tyStr
)

func (t typ) String() string { return [...]string{"an integer", "a float", "a string"}[t] }

// node is a type-checked expression.
type node struct {
	op    op
	col   int
	ty    typ
	l, r  *node
	i     int64   // opInt
	f     float64 // opFloat
	s     *strLit // opStr
	field *Field  // opField
	// konst: no field is read below, so the value is known when the
	// filter is compiled.
	konst bool
}

// strLit is a string literal after its escapes: the pieces between
// unescaped stars. A literal with no star has one piece.
type strLit struct {
	segs [][]byte
}

func (s *strLit) glob() bool { return len(s.segs) > 1 }

// plain is the bytes of a literal without stars.
func (s *strLit) plain() []byte { return s.segs[0] }
