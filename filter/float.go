package filter

import "github.com/uebpf/uebpf/asm"

// eBPF has no floating point: doubles are compared in integer code on
// their IEEE 754 bits. These routines use r0 and r6..r9 only.

const (
	magMask  = 1<<63 - 1          // all but the sign bit
	infBits  = 0x7ff0000000000000 // +Inf: a larger magnitude is NaN
	two63    = 0x43e0000000000000 // 2^63
	expShift = 52
	expBias  = 1023
)

// widen turns the binary32 bits in r (zero-extended) into the binary64
// bits of the same number, exactly: subnormals become normal doubles. It
// uses r0 too.
func (g *gen) widen(r uint8) {
	sign, exp := uint8(asm.R6), uint8(asm.R7)
	pack, special, small := g.newLabel(), g.newLabel(), g.newLabel()
	g.mov(sign, r)
	g.alu(asm.AluRSH, sign, 31)
	g.alu(asm.AluLSH, sign, 63)
	g.mov(exp, r)
	g.alu(asm.AluRSH, exp, 23)
	g.alu(asm.AluAND, exp, 0xff)
	g.alu(asm.AluAND, r, 0x7fffff)
	g.jump(asm.JmpJEQ, exp, 0xff, special)
	g.jump(asm.JmpJEQ, exp, 0, small)
	g.alu(asm.AluADD, exp, expBias-127)
	g.ja(pack)
	g.place(special) // Inf and NaN keep their payload
	g.alu(asm.AluMOV, exp, 0x7ff)
	g.ja(pack)
	g.place(small)
	g.jump(asm.JmpJEQ, r, 0, pack) // ±0
	// A subnormal m·2^-149: shift m until its bit 23 is set, k places in
	// all; the double's exponent is then -126-k. Each step of the binary
	// search shifts by s or 0 without a branch, (m - 2^(24-s)) >> 63
	// being all ones exactly when m is below 2^(24-s): with branches,
	// the verifier would follow 32 paths through every binary32 read.
	const t = asm.R0
	g.alu(asm.AluMOV, exp, expBias-126)
	for _, s := range []int32{16, 8, 4, 2, 1} {
		g.mov(t, r)
		g.alu(asm.AluSUB, t, 1<<(24-s))
		g.alu(asm.AluARSH, t, 63)
		g.alu(asm.AluAND, t, s)
		g.aluReg(asm.AluLSH, r, t)
		g.aluReg(asm.AluSUB, exp, t)
	}
	g.alu(asm.AluAND, r, 0x7fffff)
	g.place(pack)
	g.alu(asm.AluLSH, r, 29)
	g.alu(asm.AluLSH, exp, expShift)
	g.aluReg(asm.AluOR, r, exp)
	g.aluReg(asm.AluOR, r, sign)
}

// threeWayTail places the labels that set the three-way result in r0.
func (g *gen) threeWayTail(lt, eq, gt, unord label) {
	done := g.newLabel()
	for _, c := range []struct {
		l label
		v int32
	}{{lt, -1}, {eq, 0}, {gt, 1}, {unord, unordered}} {
		g.place(c.l)
		g.alu(asm.AluMOV, asm.R0, c.v)
		g.ja(done)
	}
	g.place(done)
}

// cmpFloat compares the doubles in r8 and r9: r0 = -1, 0, 1 or 2
// (unordered). A double's sign-magnitude bits, the magnitude negated when
// the sign is set, order as signed integers like the doubles do, and both
// zeros become 0.
func (g *gen) cmpFloat() {
	lt, eq, gt, unord := g.newLabel(), g.newLabel(), g.newLabel(), g.newLabel()
	const a, b, ka, kb = asm.R8, asm.R9, asm.R6, asm.R7
	g.movConst(kb, magMask)
	g.mov(ka, a)
	g.aluReg(asm.AluAND, ka, kb)
	g.aluReg(asm.AluAND, kb, b)
	g.movConst(asm.R0, infBits)
	g.jumpReg(asm.JmpJGT, ka, asm.R0, unord)
	g.jumpReg(asm.JmpJGT, kb, asm.R0, unord)
	for _, k := range []struct{ x, key uint8 }{{a, ka}, {b, kb}} {
		pos := g.newLabel()
		g.jump(asm.JmpJSGE, k.x, 0, pos)
		g.alu(asm.AluNEG, k.key, 0)
		g.place(pos)
	}
	g.jumpReg(asm.JmpJSLT, ka, kb, lt)
	g.jumpReg(asm.JmpJSGT, ka, kb, gt)
	g.ja(eq)
	g.threeWayTail(lt, eq, gt, unord)
}

// cmpIntFloat compares the integer in r8 with the double in r9 exactly:
// r0 = -1, 0, 1 or 2 (NaN). Within ±2^63 the double is split into its
// integer part t, truncated, and a fraction; the integer is compared with
// t, and if equal the fraction's sign decides.
func (g *gen) cmpIntFloat() {
	lt, eq, gt, unord := g.newLabel(), g.newLabel(), g.newLabel(), g.newLabel()
	finite, big, sign, cmp := g.newLabel(), g.newLabel(), g.newLabel(), g.newLabel()
	const i, d, t, m = asm.R8, asm.R9, asm.R6, asm.R7
	const frac = asm.R0
	g.movConst(frac, magMask)
	g.aluReg(asm.AluAND, frac, d) // the magnitude, for now
	g.movConst(t, infBits)
	g.jumpReg(asm.JmpJGT, frac, t, unord)
	g.movConst(t, two63)
	g.jumpReg(asm.JmpJLT, frac, t, finite)
	g.jump(asm.JmpJSGE, d, 0, lt)      // d >= 2^63 exceeds every integer
	g.jumpReg(asm.JmpJNE, frac, t, gt) // d < -2^63 is below every one
	g.movConst(t, 1<<63)               // d = -2^63 exactly
	g.alu(asm.AluMOV, frac, 0)
	g.ja(cmp)

	g.place(finite)
	g.mov(t, frac)
	g.alu(asm.AluRSH, t, expShift) // the biased exponent
	g.jump(asm.JmpJGE, t, expBias, big)
	g.alu(asm.AluMOV, t, 0) // |d| < 1: t = 0, the fraction is all of it
	g.ja(sign)

	g.place(big)
	// m = 1.mantissa with the integer bit at bit 63; t = m >> (63-e),
	// the bits shifted out are the fraction.
	g.mov(m, frac)
	g.alu(asm.AluLSH, m, 11)
	g.alu(asm.AluMOV, frac, 1)
	g.alu(asm.AluLSH, frac, 63)
	g.aluReg(asm.AluOR, m, frac)
	g.alu(asm.AluMOV, frac, expBias+63)
	g.aluReg(asm.AluSUB, frac, t) // the shift, 1..63
	g.mov(t, m)
	g.aluReg(asm.AluRSH, t, frac)
	g.alu(asm.AluNEG, frac, 0)
	g.alu(asm.AluADD, frac, 64)
	g.aluReg(asm.AluLSH, m, frac)
	g.mov(frac, m)

	g.place(sign)
	g.jump(asm.JmpJSGE, d, 0, cmp)
	g.alu(asm.AluNEG, t, 0)

	g.place(cmp)
	g.jumpReg(asm.JmpJSLT, i, t, lt)
	g.jumpReg(asm.JmpJSGT, i, t, gt)
	g.jump(asm.JmpJEQ, frac, 0, eq)
	// i = t: a positive d is t plus its fraction, a negative one minus.
	g.jump(asm.JmpJSGE, d, 0, lt)
	g.ja(gt)
	g.threeWayTail(lt, eq, gt, unord)
}
