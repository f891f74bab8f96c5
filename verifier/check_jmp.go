package verifier

import (
	"math"

	"github.com/uebpf/uebpf/asm"
)

// checkJump handles the JMP and JMP32 classes: jumps, calls and exit.
func (v *verifier) checkJump(ins asm.Instruction) (int, bool, error) {
	op := ins.Opcode & 0xf0
	switch {
	case ins.Opcode == asm.OpExit:
		return v.checkExit()
	case ins.Opcode == asm.OpCall:
		if ins.Src == asm.PseudoCall {
			return v.checkLocalCall(ins)
		}
		next, err := v.checkHelperCall(ins)
		return next, false, err
	case ins.Opcode == asm.OpCallX:
		return 0, false, v.fail(ErrInvalidCall, "indirect calls (callx) are not supported")
	case op == asm.JmpJA:
		if ins.Class() == asm.ClassJMP32 {
			return v.pc + 1 + int(ins.Imm), false, nil
		}
		return v.pc + 1 + int(ins.Offset), false, nil
	}
	return v.checkCondJump(ins)
}

// Outcomes of a comparison.
const (
	unknownOutcome = iota
	alwaysTaken
	neverTaken
)

func (v *verifier) checkCondJump(ins asm.Instruction) (int, bool, error) {
	is32 := ins.Class() == asm.ClassJMP32
	op := ins.Opcode & 0xf0
	target := v.pc + 1 + int(ins.Offset)
	dst, err := v.readReg(ins.Dst)
	if err != nil {
		return 0, false, err
	}
	var src reg
	srcReg := ins.Opcode&asm.SourceX != 0
	if srcReg {
		s, err := v.readReg(ins.Src)
		if err != nil {
			return 0, false, err
		}
		src = *s
	} else if is32 {
		src = scalarReg(constScalar(uint64(uint32(ins.Imm))))
	} else {
		src = scalarReg(constScalar(uint64(int64(ins.Imm))))
	}

	if dst.typ.isPointer() || src.typ.isPointer() {
		return v.pointerJump(ins, dst, &src, srcReg, target)
	}

	a, b := dst.off, src.off
	// A 32-bit comparison of numbers that fit in 32 bits (unsigned, or
	// non-negative for signed comparisons) is the 64-bit comparison.
	same := !is32
	if is32 {
		if a.umax <= math.MaxUint32 && b.umax <= math.MaxUint32 {
			same = !signedJump(op) || (a.umax <= math.MaxInt32 && b.umax <= math.MaxInt32)
		}
		if !same && a.isConst() && b.isConst() {
			if asm.JumpTaken(op, a.value(), b.value(), false) {
				return target, false, nil
			}
			return v.pc + 1, false, nil
		}
	}
	if !same {
		return v.jump32(ins, src, srcReg, target)
	}
	o := outcome(op, a, b)
	if o == unknownOutcome {
		o = v.st.decideByRels(ins)
	}
	switch o {
	case alwaysTaken:
		return target, false, nil
	case neverTaken:
		return v.pc + 1, false, nil
	}
	taken := v.st.clone()
	tf := taken.cur()
	tb := src.off
	okTaken := refine(op, true, &tf.regs[ins.Dst].off, &tb)
	if srcReg && okTaken {
		tf.regs[ins.Src].off = tb
	}
	okTaken = okTaken && taken.branchRels(ins, true)
	nb := src.off
	okFall := refine(op, false, &dst.off, &nb)
	if srcReg && okFall {
		v.st.cur().regs[ins.Src].off = nb
	}
	okFall = okFall && v.st.branchRels(ins, false)
	return v.follow(taken, target, okTaken, okFall)
}

// follow continues a conditional jump: taken is the state on the taken
// edge, v.st the one on the fall-through, each possible or not.
func (v *verifier) follow(taken *state, target int, okTaken, okFall bool) (int, bool, error) {
	switch {
	case okTaken && okFall:
		v.branch(taken, target)
		return v.pc + 1, false, nil
	case okTaken:
		v.st = taken
		return target, false, nil
	case okFall:
		return v.pc + 1, false, nil
	}
	// Neither branch can happen: the state is contradictory, the path dead.
	return 0, true, nil
}

// low32 is what is known of the low 32 bits of s, zero-extended.
func low32(s scalar) scalar {
	if s.umax <= math.MaxUint32 {
		return s
	}
	return fromTnum(s.t.cast32())
}

// withLow32 narrows s to the numbers whose low 32 bits l allows. It
// reports false when none are left.
func withLow32(s *scalar, l scalar) bool {
	if s.umax <= math.MaxUint32 {
		*s = l
		return !s.empty()
	}
	t := tnum{value: l.t.value & math.MaxUint32, mask: l.t.mask&math.MaxUint32 | math.MaxUint32<<32}
	if s.t.conflicts(t) {
		return false
	}
	s.t = s.t.intersect(t)
	s.sync()
	return !s.empty()
}

// jump32 handles a 32-bit comparison of numbers that do not fit in 32
// bits: unsigned comparisons and equality are decided or narrowed on the
// low 32 bits (zero-extended), which then narrow the tnum of the 64-bit
// values. Signed comparisons only fork.
func (v *verifier) jump32(ins asm.Instruction, src reg, srcReg bool, target int) (int, bool, error) {
	op := ins.Opcode & 0xf0
	if signedJump(op) {
		v.branch(v.st.clone(), target)
		return v.pc + 1, false, nil
	}
	a, b := low32(v.st.cur().regs[ins.Dst].off), low32(src.off)
	switch outcome(op, a, b) {
	case alwaysTaken:
		return target, false, nil
	case neverTaken:
		return v.pc + 1, false, nil
	}
	narrow := func(st *state, taken bool) bool {
		ta, tb := a, b
		if !refine(op, taken, &ta, &tb) {
			return false
		}
		f := st.cur()
		if !withLow32(&f.regs[ins.Dst].off, ta) {
			return false
		}
		return !srcReg || withLow32(&f.regs[ins.Src].off, tb)
	}
	taken := v.st.clone()
	okTaken := narrow(taken, true)
	okFall := narrow(v.st, false)
	return v.follow(taken, target, okTaken, okFall)
}

func signedJump(op uint8) bool {
	switch op {
	case asm.JmpJSGT, asm.JmpJSGE, asm.JmpJSLT, asm.JmpJSLE:
		return true
	}
	return false
}

// decide is the outcome of a comparison always or never taken, or
// unknownOutcome when neither is certain.
func decide(always, never bool) int {
	switch {
	case always:
		return alwaysTaken
	case never:
		return neverTaken
	}
	return unknownOutcome
}

// outcome decides a 64-bit comparison from what is known of its operands.
func outcome(op uint8, a, b scalar) int {
	switch op {
	case asm.JmpJEQ, asm.JmpJNE:
		eq := a.isConst() && b.isConst() && a.value() == b.value()
		ne := a.umin > b.umax || a.umax < b.umin || a.smin > b.smax || a.smax < b.smin || a.t.conflicts(b.t)
		if op == asm.JmpJNE {
			eq, ne = ne, eq
		}
		return decide(eq, ne)
	case asm.JmpJGT:
		return decide(a.umin > b.umax, a.umax <= b.umin)
	case asm.JmpJGE:
		return decide(a.umin >= b.umax, a.umax < b.umin)
	case asm.JmpJLT:
		return decide(a.umax < b.umin, a.umin >= b.umax)
	case asm.JmpJLE:
		return decide(a.umax <= b.umin, a.umin > b.umax)
	case asm.JmpJSGT:
		return decide(a.smin > b.smax, a.smax <= b.smin)
	case asm.JmpJSGE:
		return decide(a.smin >= b.smax, a.smax < b.smin)
	case asm.JmpJSLT:
		return decide(a.smax < b.smin, a.smin >= b.smax)
	case asm.JmpJSLE:
		return decide(a.smax <= b.smin, a.smin > b.smax)
	case asm.JmpJSET:
		return decide(a.t.value&b.t.value != 0, a.t.umax()&b.t.umax() == 0)
	}
	return unknownOutcome
}

// refine narrows a and b to the numbers for which "a op b" is taken (or
// not). It reports false when no numbers are left: the branch is dead.
func refine(op uint8, taken bool, a, b *scalar) bool {
	if !taken {
		switch op {
		case asm.JmpJEQ:
			op = asm.JmpJNE
		case asm.JmpJNE:
			op = asm.JmpJEQ
		case asm.JmpJGT:
			op = asm.JmpJLE
		case asm.JmpJLE:
			op = asm.JmpJGT
		case asm.JmpJGE:
			op = asm.JmpJLT
		case asm.JmpJLT:
			op = asm.JmpJGE
		case asm.JmpJSGT:
			op = asm.JmpJSLE
		case asm.JmpJSLE:
			op = asm.JmpJSGT
		case asm.JmpJSGE:
			op = asm.JmpJSLT
		case asm.JmpJSLT:
			op = asm.JmpJSGE
		case asm.JmpJSET:
			// a & b == 0: with b known, a's bits of b are zero.
			if b.isConst() {
				if a.t.value&b.value() != 0 {
					return false
				}
				a.t = tnum{value: a.t.value &^ b.value(), mask: a.t.mask &^ b.value()}
				a.sync()
			}
			return !a.empty() && !b.empty()
		}
	}
	switch op {
	case asm.JmpJEQ:
		if a.t.conflicts(b.t) {
			return false
		}
		t := a.t.intersect(b.t)
		a.t, b.t = t, t
		a.umin, b.umin = max(a.umin, b.umin), max(a.umin, b.umin)
		a.umax, b.umax = min(a.umax, b.umax), min(a.umax, b.umax)
		a.smin, b.smin = max(a.smin, b.smin), max(a.smin, b.smin)
		a.smax, b.smax = min(a.smax, b.smax), min(a.smax, b.smax)
	case asm.JmpJNE:
		excludeEdge(a, b)
		excludeEdge(b, a)
	case asm.JmpJGT:
		if !ltU(b, a) {
			return false
		}
	case asm.JmpJGE:
		leU(b, a)
	case asm.JmpJLT:
		if !ltU(a, b) {
			return false
		}
	case asm.JmpJLE:
		leU(a, b)
	case asm.JmpJSGT:
		if !ltS(b, a) {
			return false
		}
	case asm.JmpJSGE:
		leS(b, a)
	case asm.JmpJSLT:
		if !ltS(a, b) {
			return false
		}
	case asm.JmpJSLE:
		leS(a, b)
	case asm.JmpJSET:
		// taken: nothing simple to learn.
	}
	a.sync()
	b.sync()
	return !a.empty() && !b.empty()
}

// excludeEdge removes the value of b, when known, from the ends of a's ranges.
func excludeEdge(a, b *scalar) {
	if !b.isConst() {
		return
	}
	c := b.value()
	if a.umin == c && a.umin < a.umax {
		a.umin++
	} else if a.umin == c && a.umin == a.umax {
		a.umin, a.umax = 1, 0 // empty
		return
	}
	if a.umax == c {
		a.umax--
	}
	if a.smin == int64(c) && a.smin < a.smax {
		a.smin++
	}
	if a.smax == int64(c) && a.smin < a.smax {
		a.smax--
	}
}

// ltU narrows a < b (unsigned).
func ltU(a, b *scalar) bool {
	if b.umax == 0 || a.umin == math.MaxUint64 {
		return false
	}
	a.umax = min(a.umax, b.umax-1)
	b.umin = max(b.umin, a.umin+1)
	return true
}

func leU(a, b *scalar) {
	a.umax = min(a.umax, b.umax)
	b.umin = max(b.umin, a.umin)
}

func ltS(a, b *scalar) bool {
	if b.smax == math.MinInt64 || a.smin == math.MaxInt64 {
		return false
	}
	a.smax = min(a.smax, b.smax-1)
	b.smin = max(b.smin, a.smin+1)
	return true
}

func leS(a, b *scalar) {
	a.smax = min(a.smax, b.smax)
	b.smin = max(b.smin, a.smin)
}

// pointerJump handles comparisons where an operand is a pointer: null
// checks of value-or-null pointers, and comparisons the verifier can
// decide (a valid pointer is never 0).
func (v *verifier) pointerJump(ins asm.Instruction, dst, src *reg, srcReg bool, target int) (int, bool, error) {
	op := ins.Opcode & 0xf0
	is32 := ins.Class() == asm.ClassJMP32
	isZero := func(r *reg) bool { return r.typ == scalarValue && r.off.isConst() && r.off.value() == 0 }
	ptr, other := dst, src
	if !dst.typ.isPointer() {
		ptr, other = src, dst
	}
	if !is32 && (op == asm.JmpJEQ || op == asm.JmpJNE) && isZero(other) {
		if ptr.typ.orNull() {
			null := v.st.clone()
			markNull(null, ptr.id, true)
			markNull(v.st, ptr.id, false)
			if op == asm.JmpJEQ { // taken when null
				v.branch(null, target)
				return v.pc + 1, false, nil
			}
			v.branch(v.st, target)
			v.st = null
			return v.pc + 1, false, nil
		}
		// A valid pointer is not 0.
		if op == asm.JmpJEQ {
			return v.pc + 1, false, nil
		}
		return target, false, nil
	}
	if !v.opts.AllowPointerLeaks {
		if ptr.typ.orNull() {
			return 0, false, v.fail(ErrPointerCompare, "R%d (%s) may only be compared with 0 (a 64-bit jeq/jne) before its null check", regOf(ins, dst == ptr), ptr.typ)
		}
		return 0, false, v.fail(ErrPointerCompare, "comparison of pointer R%d (%s) with %s prohibited", regOf(ins, dst == ptr), ptr.typ, other.String())
	}
	v.branch(v.st.clone(), target)
	return v.pc + 1, false, nil
}

func regOf(ins asm.Instruction, isDst bool) uint8 {
	if isDst {
		return ins.Dst
	}
	return ins.Src
}

// markNull resolves the value-or-null pointers with id in st: to 0 when
// null, else to the pointer type. A null record releases its reference.
func markNull(st *state, id uint32, null bool) {
	var ref uint32
	st.forEachReg(func(r *reg) {
		if !r.typ.orNull() || r.id != id {
			return
		}
		if null {
			ref = r.ref
			*r = scalarReg(constScalar(0))
			return
		}
		if r.typ == ptrMapValueOrNull {
			r.typ = ptrMapValue
		} else {
			r.typ = ptrMem
		}
	})
	if ref != 0 {
		st.dropRef(ref)
	}
}
