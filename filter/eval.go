package filter

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Eval evaluates expr on record by walking its syntax tree: the reference
// the generated code is tested against. It reports whether the event is
// kept. The default Limits apply, but for MaxInstructions: Eval
// generates no code.
func Eval(expr string, fields []Field, record []byte) (bool, error) {
	lim, _ := Limits{}.resolve()
	n, err := parse(expr, fields, &lim)
	if err != nil {
		return false, err
	}
	if size := recordSize(n); len(record) < size {
		return false, fmt.Errorf("filter %q: record of %d bytes, the fields need %d", expr, len(record), size)
	}
	v, err := eval(n, record)
	if errors.Is(err, errNoMatch) {
		return false, nil
	}
	return truth(v), err
}

// errNoMatch ends an evaluation whose event does not match whatever the
// rest of the expression says: a shift count outside 0..63, as in LTTng.
var errNoMatch = errors.New("shift count out of range")

// value is the result of evaluating a node.
type value struct {
	ty  typ
	i   int64
	f   float64
	s   []byte  // a string field's bytes
	lit *strLit // a string literal
}

func truth(v value) bool {
	if v.ty == tyFloat {
		return v.f != 0 || math.IsNaN(v.f)
	}
	return v.i != 0
}

func boolValue(b bool) value {
	if b {
		return value{i: 1}
	}
	return value{}
}

// eval evaluates n on record, which holds every field n reads.
func eval(n *node, record []byte) (value, error) {
	switch n.op {
	case opField:
		return readField(n.field, record), nil
	case opInt:
		return value{i: n.i}, nil
	case opFloat:
		return value{ty: tyFloat, f: n.f}, nil
	case opStr:
		return value{ty: tyStr, lit: n.s}, nil
	case opLAnd, opLOr:
		l, err := eval(n.l, record)
		if err != nil || truth(l) == (n.op == opLOr) {
			return boolValue(truth(l)), err
		}
		r, err := eval(n.r, record)
		return boolValue(truth(r)), err
	}
	x, err := eval(n.l, record)
	if err != nil {
		return value{}, err
	}
	switch n.op {
	case opNot:
		return boolValue(!truth(x)), nil
	case opBitNot:
		return value{i: ^x.i}, nil
	case opNeg:
		x.i, x.f = -x.i, -x.f
		return x, nil
	case opPos:
		return x, nil
	}
	y, err := eval(n.r, record)
	if err != nil {
		return value{}, err
	}
	switch n.op {
	case opShl, opShr:
		if uint64(y.i) > 63 {
			return value{}, errNoMatch
		}
		if n.op == opShl {
			return value{i: int64(uint64(x.i) << y.i)}, nil
		}
		return value{i: int64(uint64(x.i) >> y.i)}, nil
	case opAnd:
		return value{i: x.i & y.i}, nil
	case opXor:
		return value{i: x.i ^ y.i}, nil
	case opOr:
		return value{i: x.i | y.i}, nil
	}
	return boolValue(holds(n.op, compare(x, y))), nil
}

// compare is the three-way comparison of two values of compatible types;
// for a string and a wildcard pattern it is 0 when the string matches and
// 1 when it does not.
func compare(x, y value) int {
	switch {
	case x.ty == tyStr:
		xs, ys := x.s, y.s
		if x.lit != nil {
			if x.lit.glob() {
				return b2i(!globMatch(y.s, x.lit.segs))
			}
			xs = x.lit.plain()
		}
		if y.lit != nil {
			if y.lit.glob() {
				return b2i(!globMatch(xs, y.lit.segs))
			}
			ys = y.lit.plain()
		}
		return bytes.Compare(xs, ys)
	case x.ty == tyInt && y.ty == tyInt:
		return cmpInt(x.i, y.i)
	case x.ty == tyInt:
		return cmpIntFloat(x.i, y.f)
	case y.ty == tyInt:
		c := cmpIntFloat(y.i, x.f)
		if c != unordered {
			c = -c
		}
		return c
	}
	return cmpFloat(x.f, y.f)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// readField reads f from record as LTTng sees it: integers widened to
// 64 bits, binary32 to binary64, strings cut at their NUL.
func readField(f *Field, record []byte) value {
	b := record[f.Offset : f.Offset+f.Size]
	switch f.Kind {
	case String:
		return value{ty: tyStr, s: cString(b)}
	case Float:
		if f.Size == 4 {
			return value{ty: tyFloat, f: float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))}
		}
		return value{ty: tyFloat, f: math.Float64frombits(binary.LittleEndian.Uint64(b))}
	}
	var u uint64
	switch f.Size {
	case 1:
		u = uint64(b[0])
	case 2:
		u = uint64(binary.LittleEndian.Uint16(b))
	case 4:
		u = uint64(binary.LittleEndian.Uint32(b))
	default:
		u = binary.LittleEndian.Uint64(b)
	}
	if f.Kind == Signed {
		shift := 64 - 8*f.Size
		return value{i: int64(u<<shift) >> shift}
	}
	return value{i: int64(u)}
}

// recordSize is the end of the last field n reads.
func recordSize(n *node) int {
	size := 0
	walk(n, func(n *node) {
		if n.op == opField {
			size = max(size, n.field.Offset+n.field.Size)
		}
	})
	return size
}

// walk calls fn on n and its descendants, left to right.
func walk(n *node, fn func(*node)) {
	if n == nil {
		return
	}
	fn(n)
	walk(n.l, fn)
	walk(n.r, fn)
}
