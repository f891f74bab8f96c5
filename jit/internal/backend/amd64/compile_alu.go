package amd64

import (
	"fmt"
	"math/bits"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/jit/internal/backend"
	"github.com/uebpf/uebpf/jit/internal/x86"
	"github.com/uebpf/uebpf/vm"
)

// aluOps and shiftOps are indexed by the operation's high nibble.
var aluOps = [16]x86.ALUOp{
	asm.AluADD >> 4: x86.ADD, asm.AluSUB >> 4: x86.SUB, asm.AluOR >> 4: x86.OR,
	asm.AluAND >> 4: x86.AND, asm.AluXOR >> 4: x86.XOR,
}

var shiftOps = [16]struct {
	op   x86.ShiftOp
	kind byte
}{
	asm.AluLSH >> 4:  {x86.SHL, x86.SHLX},
	asm.AluRSH >> 4:  {x86.SHR, x86.SHRX},
	asm.AluARSH >> 4: {x86.SAR, x86.SARX},
}

// emitALU emits an ALU or ALU64 instruction.
func (c *compiler) emitALU(ins *asm.Instruction) error {
	a := c.a
	size := 4
	if ins.Class() == asm.ClassALU64 {
		size = 8
	}
	dst, src := regMap[ins.Dst], regMap[ins.Src]
	isX := ins.Opcode&asm.SourceX != 0
	imm := ins.Imm
	op := ins.Opcode & 0xf0
	switch op {
	case asm.AluADD, asm.AluSUB, asm.AluOR, asm.AluAND, asm.AluXOR:
		o := aluOps[op>>4]
		switch {
		case isX:
			a.ALURR(o, size, dst, src)
		case c.blind:
			c.blindImm(tmpAddr, imm)
			a.ALURR(o, size, dst, tmpAddr)
		default:
			a.ALURI(o, size, dst, imm)
		}
	case asm.AluMOV:
		switch {
		case isX && ins.Offset != 0: // movsx
			a.MovsxRR(int(ins.Offset)/8, size, dst, src)
		case isX:
			if size == 4 || dst != src {
				a.MovRR(size, dst, src)
			}
		case c.blind && imm != 0:
			c.blindImm(dst, imm)
			if size == 4 {
				a.MovRR(4, dst, dst)
			}
		case size == 4:
			a.MovRI(dst, uint64(uint32(imm)))
		default:
			a.MovRI(dst, uint64(int64(imm)))
		}
	case asm.AluMUL:
		switch {
		case isX:
			a.ImulRR(size, dst, src)
		case c.blind:
			c.blindImm(tmpAddr, imm)
			a.ImulRR(size, dst, tmpAddr)
		default:
			a.ImulRRI(size, dst, dst, imm)
		}
	case asm.AluNEG:
		a.Unary(x86.NEG, size, dst)
	case asm.AluLSH, asm.AluRSH, asm.AluARSH:
		c.emitShift(shiftOps[op>>4].op, shiftOps[op>>4].kind, size, dst, src, isX, imm)
	case asm.AluDIV, asm.AluMOD:
		c.emitDivMod(op == asm.AluMOD, ins.Offset == 1, size, ins, isX)
	case asm.AluEND:
		c.emitEndian(ins, dst)
	default:
		return fmt.Errorf("%w %#02x", vm.ErrUnknownOpcode, ins.Opcode)
	}
	return nil
}

func (c *compiler) emitShift(op x86.ShiftOp, kind byte, size int, dst, src x86.Reg, isX bool, imm int32) {
	a := c.a
	if !isX {
		n := uint8(imm) & uint8(size*8-1)
		switch {
		case n != 0:
			a.ShiftRI(op, size, dst, n)
		case size == 4:
			a.MovRR(4, dst, dst) // a shift by 0 still zero-extends
		}
		return
	}
	if c.feat.bmi2 {
		a.ShiftX(kind, size, dst, dst, src)
		return
	}
	a.MovRR(4, tmpC, src)
	a.ShiftRCL(op, size, dst)
	if size == 4 {
		// A count of 0 leaves the flags, and on some CPUs the upper
		// half, alone: zero-extend explicitly.
		a.MovRR(4, dst, dst)
	}
}

// emitEndian emits le/be/bswap.
func (c *compiler) emitEndian(ins *asm.Instruction, dst x86.Reg) {
	a := c.a
	swap := ins.Class() == asm.ClassALU64 || ins.Opcode&asm.SourceX != 0
	switch {
	case !swap && ins.Imm == 16:
		a.MovzxRR(2, dst, dst)
	case !swap && ins.Imm == 32:
		a.MovRR(4, dst, dst)
	case !swap: // le64: nothing to do on a little-endian host
	case ins.Imm == 16:
		a.ShiftRI(x86.ROR, 2, dst, 8)
		a.MovzxRR(2, dst, dst)
	case ins.Imm == 32:
		a.Bswap(4, dst)
	default:
		a.Bswap(8, dst)
	}
}

// emitDivMod emits div, mod, sdiv and smod with the ISA's rules: x/0 = 0,
// x%0 = x (zero-extended in 32-bit), INT_MIN/-1 = INT_MIN and INT_MIN%-1 =
// 0. x86 traps on the last two and on a zero divisor, so those never reach
// div/idiv.
func (c *compiler) emitDivMod(mod, signed bool, size int, ins *asm.Instruction, isX bool) {
	a := c.a
	dst := regMap[ins.Dst]
	// rax and rdx are about to be overwritten. A divisor in another
	// register stays there, and the budget waits in r11; otherwise the
	// divisor goes to r11 and the budget to the state.
	dv := tmpAddr
	if isX && regMap[ins.Src] != x86.RAX {
		dv = regMap[ins.Src]
	} else if isX {
		a.MovRR(size, tmpAddr, regMap[ins.Src])
	} else {
		d := int64(ins.Imm)
		if size == 4 {
			d = int64(int32(ins.Imm))
		}
		switch {
		case d == 0:
			c.divByZero(mod, size, dst)
			return
		case !signed && !c.blind && c.divPow2(mod, size, dst, ins.Imm):
			return
		case !signed && !c.blind && c.divMagic(mod, size, dst, ins.Imm):
			return
		case signed && d == -1:
			c.divByMinusOne(mod, size, dst)
			return
		case c.blind:
			c.blindImm(tmpAddr, ins.Imm)
		default:
			a.MovRISX(tmpAddr, ins.Imm)
		}
	}
	var zeroJump, minusOneJump int // to the special cases, patched below
	if isX {
		a.TestRR(size, dv, dv)
		zeroJump = a.Jcc(x86.CondE)
		if signed {
			a.ALURI(x86.CMP, size, dv, -1)
			minusOneJump = a.Jcc(x86.CondE)
		}
	}
	if dv == tmpAddr {
		a.Store(8, st(backend.OffBudget), budgetReg)
	} else {
		a.MovRR(8, tmpAddr, budgetReg)
	}
	// r0 lives in rax: keep it in rcx unless nothing reads it before
	// writing it.
	keepR0 := dst != x86.RAX && !c.DeadAfter(c.pc+1, asm.R0)
	if keepR0 {
		a.MovRR(8, tmpC, x86.RAX)
	}
	if dst != x86.RAX {
		a.MovRR(8, x86.RAX, dst)
	}
	switch {
	case signed:
		a.Cqo(size)
		a.Unary(x86.IDIV, size, dv)
	case size == 8:
		// A 64-bit division of operands that fit in 32 bits is a 32-bit
		// one, which many x86 cores do in half the time: test the upper
		// halves (rdx is free here) and take the short form when they are
		// zero, as C compilers do on those cores.
		a.MovRR(8, tmpD, x86.RAX)
		if isX || ins.Imm < 0 { // else the divisor fits in 31 bits
			a.ALURR(x86.OR, 8, tmpD, dv)
		}
		a.ShiftRI(x86.SHR, 8, tmpD, 32)
		a.JccShort(x86.CondE, 0)
		fast := a.Len()
		a.ALURR(x86.XOR, 4, tmpD, tmpD)
		a.Unary(x86.DIV, 8, dv)
		a.JmpShort(0)
		done := a.Len()
		a.Bytes()[fast-1] = byte(a.Len() - fast)
		a.Unary(x86.DIV, 4, dv) // rdx is 0: the quotient and remainder zero-extend
		a.Bytes()[done-1] = byte(a.Len() - done)
	default:
		a.ALURR(x86.XOR, 4, tmpD, tmpD)
		a.Unary(x86.DIV, size, dv)
	}
	result := x86.RAX
	if mod {
		result = tmpD
	}
	switch {
	case dst == x86.RAX:
		if mod {
			a.MovRR(size, x86.RAX, tmpD)
		}
	case keepR0:
		a.MovRR(size, dst, result)
		a.MovRR(8, x86.RAX, tmpC)
	default:
		a.MovRR(size, dst, result)
		c.tr.Written(asm.R0) // rax no longer holds what a slot may say
	}
	if dv == tmpAddr {
		a.Load(8, budgetReg, st(backend.OffBudget))
	} else {
		a.MovRR(8, budgetReg, tmpAddr)
	}
	// The special cases are out of line, so that the usual path falls
	// through.
	if isX {
		c.divSpecialStub(zeroJump, stubDivZero, !(mod && size == 8))
		if signed {
			c.divSpecialStub(minusOneJump, stubDivMinusOne, true)
		}
	}
}

// divSpecialStub makes the rel32 at patch jump to the out-of-line special
// case of kind (stubDivZero, stubDivMinusOne) of the division at c.pc,
// which then continues here, or straight here when the special case has
// no code (x % 0 = x in 64 bits).
func (c *compiler) divSpecialStub(patch int, kind stubKind, hasCode bool) {
	if !hasCode {
		c.a.PatchRel32(patch, c.a.Len())
		return
	}
	c.addStub(patch, kind, c.pc).resume = int32(c.a.Len())
}

// emitDivSpecial emits the code of a stubDivZero or stubDivMinusOne.
func (c *compiler) emitDivSpecial(s *stub) {
	ins := &c.insns[s.pc]
	size := 8
	if ins.Class() == asm.ClassALU {
		size = 4
	}
	mod := ins.Opcode&0xf0 == asm.AluMOD
	if s.kind == stubDivZero {
		c.divByZero(mod, size, regMap[ins.Dst])
	} else {
		c.divByMinusOne(mod, size, regMap[ins.Dst])
	}
	c.a.JmpTo(int(s.resume))
}

// divPow2 emits an unsigned division or modulo by the constant imm
// (zero-extended for size 4, sign-extended for size 8) when it is a power
// of two, as a shift or a mask, and reports whether it did.
func (c *compiler) divPow2(mod bool, size int, dst x86.Reg, imm int32) bool {
	d := uint64(int64(imm))
	if size == 4 {
		d = uint64(uint32(imm))
	}
	if d == 0 || d&(d-1) != 0 {
		return false
	}
	// d <= 1<<31 here, so the mask fits a sign-extended imm32 (size 8
	// only sees positive imm, d <= 1<<30).
	k := uint8(bits.TrailingZeros64(d))
	switch {
	case mod && k == 0:
		c.a.ALURR(x86.XOR, 4, dst, dst)
	case mod:
		c.a.ALURI(x86.AND, size, dst, int32(d-1))
	case k != 0:
		c.a.ShiftRI(x86.SHR, size, dst, k)
	case size == 4:
		c.a.MovRR(4, dst, dst) // x/1 still zero-extends
	}
	return true
}

// divMagic emits an unsigned division or modulo by the constant imm (not
// 0 or a power of two) as a multiplication by its reciprocal, and reports
// whether it did: q = high 64 bits of n*m, shifted right by s.
func (c *compiler) divMagic(mod bool, size int, dst x86.Reg, imm int32) bool {
	e := &c.magic[uint32(imm)%uint32(len(c.magic))]
	if !e.valid || e.imm != imm || e.size != uint8(size) {
		*e = magicFor(size, imm)
	}
	if !e.ok {
		return false
	}
	// The code depends on nothing but the entry, mod, dst and the
	// features: the last one emitted is kept and copied when asked again
	// (programs divide by the same constants over and over).
	key := magicCodeKey{valid: true, mod: mod, dst: dst, bmi2: c.feat.bmi2}
	if e.key == key {
		c.a.Append(e.code[:e.codeLen])
		return true
	}
	start := c.a.Len()
	c.emitDivMagic(e, mod, size, dst, imm)
	e.codeLen = uint8(copy(e.code[:], c.a.Bytes()[start:]))
	if int(e.codeLen) == c.a.Len()-start { // else too long to keep
		e.key = key
	}
	return true
}

// emitDivMagic emits divMagic's code for the reciprocal e.
func (c *compiler) emitDivMagic(e *magicEntry, mod bool, size int, dst x86.Reg, imm int32) {
	a := c.a
	if c.feat.bmi2 {
		// mulx reads rdx and leaves rax alone: only the budget moves,
		// to r11 and back, and the high half goes where it is wanted.
		a.MovRR(8, tmpAddr, budgetReg)
		if size == 4 {
			a.MovRR(4, dst, dst) // the 32-bit dividend, zero-extended
		}
		a.MovRI(x86.RDX, e.m)
		q := dst
		if mod {
			q = x86.RDX
		}
		a.Mulx(8, q, tmpC, dst)
		if e.sh != 0 {
			a.ShiftRI(x86.SHR, 8, q, e.sh)
		}
		if mod {
			// q*d <= n, so the low bits of the product are exact.
			a.ImulRRI(size, x86.RDX, x86.RDX, imm)
			a.ALURR(x86.SUB, size, dst, x86.RDX)
		}
		a.MovRR(8, budgetReg, tmpAddr)
		return
	}
	// mul takes rax and writes rdx: the budget waits in r11, r0 in rcx,
	// and n is in dst, or rcx when dst is r0.
	a.MovRR(8, tmpAddr, budgetReg)
	n := dst
	if dst == x86.RAX {
		n = tmpC
		a.MovRR(size, tmpC, x86.RAX)
	} else {
		a.MovRR(8, tmpC, x86.RAX)
		if size == 4 {
			a.MovRR(4, dst, dst) // the 32-bit dividend, zero-extended
		}
	}
	a.MovRI(x86.RAX, e.m)
	a.Unary(x86.MUL, 8, n)
	if e.sh != 0 {
		a.ShiftRI(x86.SHR, 8, x86.RDX, e.sh)
	}
	// rdx = the quotient.
	if mod {
		// q*d <= n, so the low bits of the product are exact.
		a.ImulRRI(size, x86.RDX, x86.RDX, imm)
		a.ALURR(x86.SUB, size, n, x86.RDX)
		if dst == x86.RAX {
			a.MovRR(size, x86.RAX, tmpC)
		}
	} else {
		a.MovRR(size, dst, x86.RDX)
	}
	if dst != x86.RAX {
		a.MovRR(8, x86.RAX, tmpC)
	}
	a.MovRR(8, budgetReg, tmpAddr)
}

// magicEntry is the reciprocal of a divisor for divMagic (ok false when
// there is none), and the code last emitted with it, for key.
type magicEntry struct {
	m         uint64
	imm       int32
	size, sh  uint8
	valid, ok bool
	key       magicCodeKey
	codeLen   uint8
	code      [64]byte
}

// magicCodeKey is what divMagic's code depends on besides its entry.
type magicCodeKey struct {
	valid, mod, bmi2 bool
	dst              x86.Reg
}

// magicFor finds the reciprocal of the divisor imm (zero-extended for
// size 4, sign-extended for size 8; not 0 or a power of two). For 32-bit
// operands m = ceil(2^64/d), s = 0 is exact (the error n*(m-2^64/d)/2^64
// is below 2^-32 <= 1/d); for 64-bit ones it takes the smallest s with
// m = ceil(2^(64+s)/d) < 2^64 and m*d - 2^(64+s) <= 2^s (Hacker's
// Delight, 10-9), and has none for the divisors that need a 65-bit m.
func magicFor(size int, imm int32) magicEntry {
	e := magicEntry{imm: imm, size: uint8(size), valid: true}
	if size == 4 {
		d := uint64(uint32(imm))
		e.m, e.ok = ^uint64(0)/d+1, true
		return e
	}
	d := uint64(int64(imm))
	l := 64 - bits.LeadingZeros64(d-1) // ceil(log2 d)
	for s := 0; s < l; s++ {           // 1<<s < d, so Div64 cannot overflow
		quo, rem := bits.Div64(1<<s, 0, d)
		if rem != 0 && quo != ^uint64(0) && d-rem <= 1<<s {
			e.m, e.sh, e.ok = quo+1, uint8(s), true
			break
		}
	}
	return e
}

func (c *compiler) divByZero(mod bool, size int, dst x86.Reg) {
	switch {
	case !mod:
		c.a.ALURR(x86.XOR, 4, dst, dst)
	case size == 4:
		c.a.MovRR(4, dst, dst)
	}
}

func (c *compiler) divByMinusOne(mod bool, size int, dst x86.Reg) {
	if mod {
		c.a.ALURR(x86.XOR, 4, dst, dst)
		return
	}
	c.a.Unary(x86.NEG, size, dst)
}
