package filter

import (
	"errors"
	"math"

	"github.com/uebpf/uebpf/asm"
)

// Registers: r1 holds the record throughout; the value stack lives in
// r2..r5 and then in stack slots; r0 and r6..r9 are scratch for the
// operation being emitted, which never keeps a value in them across the
// evaluation of an operand.
const (
	rCtx      = asm.R1
	firstSlot = asm.R2
	nRegSlots = 4
	// maxSlots bounds the value stack: the spilled slots must fit the
	// 512-byte eBPF stack.
	maxSlots = nRegSlots + 64
)

// gen generates the code of one expression.
type gen struct {
	emitter
	drop label // r0 = 0, exit: the event does not match
	err  error
}

// generate compiles a type-checked expression whose code takes at most
// size instructions (its estimate): the slices are made that large once
// rather than grown (filters are compiled on every attach).
func generate(n *node, size int) ([]asm.Instruction, error) {
	g := &gen{}
	g.emitter.code = make([]asm.Instruction, 0, size)
	g.emitter.target = make([]label, 0, size)
	g.emitter.labels = make([]int, 0, 8)
	g.drop = g.newLabel()
	g.jumpIf(n, 0, g.drop, false)
	g.alu(asm.AluMOV, asm.R0, 1)
	g.exit()
	g.place(g.drop)
	g.alu(asm.AluMOV, asm.R0, 0)
	g.exit()
	if g.err != nil {
		return nil, g.err
	}
	return g.finish()
}

// slot returns the register holding value-stack slot d, loading a
// spilled slot into scratch first.
func (g *gen) slot(d int, scratch uint8) uint8 {
	if d < nRegSlots {
		return firstSlot + uint8(d)
	}
	g.load(scratch, asm.RFP, spillOffset(d), 8)
	return scratch
}

// target returns the register to compute slot d in: its own, or scratch
// when it is spilled (then setSlot stores it).
func (g *gen) target(d int, scratch uint8) uint8 {
	if d < nRegSlots {
		return firstSlot + uint8(d)
	}
	return scratch
}

// setSlot makes slot d hold register r.
func (g *gen) setSlot(d int, r uint8) {
	if d < nRegSlots {
		g.mov(firstSlot+uint8(d), r)
		return
	}
	g.store(asm.RFP, spillOffset(d), r)
}

func spillOffset(d int) int { return -8 * (d - nRegSlots + 1) }

// check records an error for an expression deeper than the value stack.
func (g *gen) check(n *node, d int) bool {
	if d >= maxSlots {
		if g.err == nil {
			g.err = errorf(n.col, "expression too deep for the eBPF stack")
		}
		return false
	}
	return true
}

// constant evaluates an expression that reads no field; ok is false when
// it makes the event not match (a bad shift).
func constant(n *node) (v value, ok bool) {
	v, err := eval(n, nil)
	return v, !errors.Is(err, errNoMatch)
}

// bits is the 64-bit representation of a number: an integer or the IEEE
// bits of a double.
func bits(v value) uint64 {
	if v.ty == tyFloat {
		return math.Float64bits(v.f)
	}
	return uint64(v.i)
}

// value emits code leaving the value of n (an integer, or the bits of a
// double) in slot d.
func (g *gen) value(n *node, d int) {
	if !g.check(n, d) {
		return
	}
	if n.konst {
		v, ok := constant(n)
		if !ok {
			g.ja(g.drop)
			return
		}
		r := g.target(d, asm.R0)
		g.movConst(r, bits(v))
		g.setSlot(d, r)
		return
	}
	switch n.op {
	case opField:
		g.field(n.field, d)
	case opPos:
		g.value(n.l, d)
	case opNeg, opBitNot:
		g.value(n.l, d)
		r := g.slot(d, asm.R8)
		switch {
		case n.op == opBitNot:
			g.alu(asm.AluXOR, r, -1)
		case n.ty == tyInt:
			g.alu(asm.AluNEG, r, 0)
		default: // a double: flip the sign bit
			g.movConst(asm.R0, 1<<63)
			g.aluReg(asm.AluXOR, r, asm.R0)
		}
		g.setSlot(d, r)
	case opShl, opShr, opAnd, opXor, opOr:
		g.bitwise(n, d)
	default: // comparisons and logical operators: 0 or 1
		no, end := g.newLabel(), g.newLabel()
		g.jumpIf(n, d, no, false)
		r := g.target(d, asm.R0)
		g.alu(asm.AluMOV, r, 1)
		g.setSlot(d, r)
		g.ja(end)
		g.place(no)
		g.alu(asm.AluMOV, r, 0)
		g.setSlot(d, r)
		g.place(end)
	}
}

var aluOps = map[op]uint8{opShl: asm.AluLSH, opShr: asm.AluRSH, opAnd: asm.AluAND, opXor: asm.AluXOR, opOr: asm.AluOR}

// bitwise emits a bitwise operation or shift of two integers.
func (g *gen) bitwise(n *node, d int) {
	aop := aluOps[n.op]
	shift := n.op == opShl || n.op == opShr
	g.value(n.l, d)
	if n.r.konst {
		v, ok := constant(n.r)
		if !ok || shift && uint64(v.i) > 63 {
			g.ja(g.drop)
			return
		}
		if v.i == int64(int32(v.i)) {
			r := g.slot(d, asm.R8)
			g.alu(aop, r, int32(v.i))
			g.setSlot(d, r)
			return
		}
	}
	g.value(n.r, d+1)
	a, b := g.slot(d, asm.R8), g.slot(d+1, asm.R9)
	if shift {
		// LTTng: a shift count outside 0..63 fails the whole filter.
		g.jump(asm.JmpJGT, b, 63, g.drop)
	}
	g.aluReg(aop, a, b)
	g.setSlot(d, a)
}

// field loads a field into slot d: integers extended to 64 bits, floats
// as the bits of a double.
func (g *gen) field(f *Field, d int) {
	switch {
	case f.Kind == Float && f.Size == 4:
		g.load(asm.R9, rCtx, f.Offset, 4)
		g.widen(asm.R9)
		// The verifier follows widen's paths (normal, subnormal, zero,
		// Inf and NaN) with the double's exact range on each, so they
		// stay apart where they meet, and a few pending floats multiply
		// their paths past its limit. XOR with a number it cannot know,
		// twice (a no-op), leaves every path the same unknown double:
		// they merge at the next pruning point.
		g.load(asm.R7, rCtx, f.Offset, 1)
		g.alu(asm.AluNEG, asm.R7, 0)
		g.aluReg(asm.AluXOR, asm.R9, asm.R7)
		g.aluReg(asm.AluXOR, asm.R9, asm.R7)
		g.setSlot(d, asm.R9)
		return
	case f.Kind == String:
		panic("filter: a string field as a value")
	}
	r := g.target(d, asm.R0)
	g.load(r, rCtx, f.Offset, f.Size)
	if f.Kind == Signed && f.Size < 8 {
		g.alu(asm.AluLSH, r, int32(64-8*f.Size))
		g.alu(asm.AluARSH, r, int32(64-8*f.Size))
	}
	g.setSlot(d, r)
}

// jumpIf emits code that jumps to l when the truth of n is when, and
// falls through otherwise. Logical operators become control flow.
func (g *gen) jumpIf(n *node, d int, l label, when bool) {
	if !g.check(n, d) {
		return
	}
	if n.konst {
		v, ok := constant(n)
		switch {
		case !ok:
			g.ja(g.drop)
		case truth(v) == when:
			g.ja(l)
		}
		return
	}
	switch {
	case n.op == opNot:
		g.jumpIf(n.l, d, l, !when)
	case n.op == opLAnd || n.op == opLOr:
		if (n.op == opLOr) == when {
			// Either operand decides: a || b jumps when either is true.
			g.jumpIf(n.l, d, l, when)
			g.jumpIf(n.r, d, l, when)
			return
		}
		skip := g.newLabel()
		g.jumpIf(n.l, d, skip, !when)
		g.jumpIf(n.r, d, l, when)
		g.place(skip)
	case n.op.isCompare():
		g.compare(n, d, l, when)
	case n.ty == tyFloat:
		// A double is true unless it is ±0: NaN is true.
		g.value(n, d)
		r := g.slot(d, asm.R8)
		g.alu(asm.AluLSH, r, 1)
		g.jump(condOp(asm.JmpJNE, when), r, 0, l)
	default:
		g.value(n, d)
		g.jump(condOp(asm.JmpJNE, when), g.slot(d, asm.R8), 0, l)
	}
}

// complement is the jump taken exactly when op's is not.
var complement = map[uint8]uint8{
	asm.JmpJEQ: asm.JmpJNE, asm.JmpJNE: asm.JmpJEQ,
	asm.JmpJSLT: asm.JmpJSGE, asm.JmpJSGE: asm.JmpJSLT,
	asm.JmpJSLE: asm.JmpJSGT, asm.JmpJSGT: asm.JmpJSLE,
	asm.JmpJLE: asm.JmpJGT, asm.JmpJGT: asm.JmpJLE,
	asm.JmpJLT: asm.JmpJGE, asm.JmpJGE: asm.JmpJLT,
}

// condOp is the jump op that jumps when the condition op tests has truth
// when.
func condOp(op uint8, when bool) uint8 {
	if when {
		return op
	}
	return complement[op]
}

// intJumps are the signed jumps of integer comparisons.
var intJumps = map[op]uint8{opEQ: asm.JmpJEQ, opNE: asm.JmpJNE, opLT: asm.JmpJSLT, opLE: asm.JmpJSLE, opGT: asm.JmpJSGT, opGE: asm.JmpJSGE}

// threeWay are the tests of a three-way result c (-1, 0, 1, or 2 when
// unordered) for each comparison: only != holds for unordered operands.
var threeWay = map[op]struct {
	jop uint8
	imm int32
}{
	opEQ: {asm.JmpJEQ, 0},
	opNE: {asm.JmpJNE, 0},
	opLT: {asm.JmpJSLT, 0},
	opLE: {asm.JmpJSLE, 0},
	opGT: {asm.JmpJEQ, 1},
	opGE: {asm.JmpJLE, 1}, // unsigned: 0 or 1
}

// jumpThreeWay jumps on the three-way result in r0.
func (g *gen) jumpThreeWay(o op, l label, when bool) {
	t := threeWay[o]
	g.jump(condOp(t.jop, when), asm.R0, t.imm, l)
}

// compare emits a comparison that jumps to l when its truth is when.
func (g *gen) compare(n *node, d int, l label, when bool) {
	o, a, b := n.op, n.l, n.r
	if a.ty == tyStr {
		if a.op == opStr {
			a, b, o = b, a, o.mirror()
		}
		g.compareString(a, b)
		g.jumpThreeWay(o, l, when)
		return
	}
	// The integer, or the constant, on the right.
	if a.ty == tyFloat && b.ty == tyInt || a.konst && !b.konst && a.ty == b.ty {
		a, b, o = b, a, o.mirror()
	}
	switch {
	case a.ty == tyInt && b.ty == tyInt:
		g.value(a, d)
		g.compareInt(o, d, b, l, when)
	case a.ty == tyInt && b.konst:
		v, _ := constant(b)
		o2, t, fixed, result := intVersusConstant(o, v.f)
		if fixed {
			// The integer is still computed: a shift count out of
			// range in it drops the event whatever the comparison says.
			g.value(a, d)
			if result == when {
				g.ja(l)
			}
			return
		}
		g.value(a, d)
		g.compareInt(o2, d, &node{op: opInt, i: t, konst: true}, l, when)
	default:
		g.value(a, d)
		g.value(b, d+1)
		g.mov(asm.R8, g.slot(d, asm.R8))
		g.mov(asm.R9, g.slot(d+1, asm.R9))
		if a.ty == tyInt {
			g.cmpIntFloat()
		} else {
			g.cmpFloat()
		}
		g.jumpThreeWay(o, l, when)
	}
}

// compareInt compares slot d with integer b.
func (g *gen) compareInt(o op, d int, b *node, l label, when bool) {
	jop := condOp(intJumps[o], when)
	if b.konst {
		if v, ok := constant(b); ok && v.i == int64(int32(v.i)) {
			g.jump(jop, g.slot(d, asm.R8), int32(v.i), l)
			return
		}
	}
	g.value(b, d+1)
	g.jumpReg(jop, g.slot(d, asm.R8), g.slot(d+1, asm.R9), l)
}

// intVersusConstant turns "integer o constant double c" into an integer
// comparison "integer o2 t", exactly, or into a fixed result.
func intVersusConstant(o op, c float64) (o2 op, t int64, fixed, result bool) {
	switch {
	case math.IsNaN(c) || c >= 1<<63 || c < -(1<<63):
		// Every integer compares the same way.
		return o, 0, true, holds(o, cmpIntFloat(0, c))
	}
	tr := math.Trunc(c)
	t = int64(tr)
	switch {
	case c == tr:
		return o, t, false, false
	case o == opEQ || o == opNE:
		return o, 0, true, o == opNE
	case c > tr: // c in (t, t+1)
		switch o {
		case opLT, opLE:
			return opLE, t, false, false
		default:
			return opGT, t, false, false
		}
	default: // c in (t-1, t)
		switch o {
		case opLT, opLE:
			return opLT, t, false, false
		default:
			return opGE, t, false, false
		}
	}
}
