package x86

import "encoding/binary"

// ALUOp is one of the eight classic two-operand ALU operations. Its value
// is both the /digit of the immediate forms and opcode>>3 of the register
// forms.
type ALUOp byte

// ALU operations.
const (
	ADD ALUOp = 0
	OR  ALUOp = 1
	ADC ALUOp = 2 // add with carry
	SBB ALUOp = 3 // subtract with borrow
	AND ALUOp = 4
	SUB ALUOp = 5
	XOR ALUOp = 6
	CMP ALUOp = 7
)

// ALURR emits "op dst, src".
func (a *Asm) ALURR(o ALUOp, size int, dst, src Reg) {
	a.rr(opc1(size, byte(o)<<3|1), byte(src), dst)
}

// ALURI emits "op dst, imm" (imm sign-extended to the operand size).
//
// It is the compiler's most frequent instruction (every charge of the
// budget is one), so it encodes the usual sizes itself, as rri would,
// rather than costing a second call.
func (a *Asm) ALURI(o ALUOp, size int, dst Reg, imm int32) {
	c, n := byte(0x81), uint(4)
	if fitsInt8(int64(imm)) {
		c, n = 0x83, 1
	}
	if size == 2 {
		a.rri(opc1(size, c), byte(o), dst, uint32(imm), n)
		return
	}
	rex := 0x40 | byte(size)&8 | byte(dst)>>3&1
	w, nb := uint64(c)|uint64(0xc0|byte(o)<<3|byte(dst)&7)<<8, uint(2)
	if rex != 0x40 {
		w, nb = w<<8|uint64(rex), 3
	}
	p := a.room()
	binary.LittleEndian.PutUint64(p[:8], w)
	binary.LittleEndian.PutUint32(p[nb&7:], uint32(imm))
	a.b = a.b[:len(a.b)+int(nb+n)]
}

// ALURM emits "op dst, [m]".
func (a *Asm) ALURM(o ALUOp, size int, dst Reg, m Mem) {
	a.rm(opc1(size, byte(o)<<3|3), byte(dst), m)
}

// ALUMR emits "op [m], src".
func (a *Asm) ALUMR(o ALUOp, size int, m Mem, src Reg) {
	a.rm(opc1(size, byte(o)<<3|1), byte(src), m)
}

// LockALUMR emits "lock op [m], src".
func (a *Asm) LockALUMR(o ALUOp, size int, m Mem, src Reg) {
	c := opc1(size, byte(o)<<3|1)
	c = c.lock()
	a.rm(c, byte(src), m)
}

// ALUMI emits "op [m], imm".
func (a *Asm) ALUMI(o ALUOp, size int, m Mem, imm int32) {
	c, n := byte(0x81), uint(4)
	if fitsInt8(int64(imm)) {
		c, n = 0x83, 1
	}
	a.rmi(opc1(size, c), byte(o), m, uint32(imm), n)
}

// CmpMemByteReg emits "cmp byte [m], src".
func (a *Asm) CmpMemByteReg(m Mem, src Reg) {
	c := opc1(1, 0x38)
	c |= opByteReg
	a.rm(c, byte(src), m)
}

// Setcc emits "setcc dst8": dst's low byte = 1 if c holds, else 0 (the
// rest of dst is left alone).
func (a *Asm) Setcc(c Cond, dst Reg) {
	o := opc2(1, 0x0f, 0x90|byte(c))
	o |= opByteRM
	a.rr(o, 0, dst)
}

// TestRR emits "test a, b".
func (a *Asm) TestRR(size int, r1, r2 Reg) {
	a.rr(opc1(size, 0x85), byte(r2), r1)
}

// TestRI emits "test r, imm".
func (a *Asm) TestRI(size int, r Reg, imm int32) {
	if size == 1 {
		c := opc1(1, 0xf6)
		c |= opByteRM
		a.rri(c, 0, r, uint32(imm), 1)
		return
	}
	a.rri(opc1(size, 0xf7), 0, r, uint32(imm), 4)
}

// ImulRR emits "imul dst, src" (the low half of the product).
func (a *Asm) ImulRR(size int, dst, src Reg) {
	a.rr(opc2(size, 0x0f, 0xaf), byte(dst), src)
}

// ImulRRI emits "imul dst, src, imm".
func (a *Asm) ImulRRI(size int, dst, src Reg, imm int32) {
	if fitsInt8(int64(imm)) {
		a.rri(opc1(size, 0x6b), byte(dst), src, uint32(imm), 1)
		return
	}
	a.rri(opc1(size, 0x69), byte(dst), src, uint32(imm), 4)
}

// UnaryOp is an F7 /digit operation.
type UnaryOp byte

// Unary operations of opcode F7.
const (
	NOT  UnaryOp = 2
	NEG  UnaryOp = 3
	MUL  UnaryOp = 4
	IMUL UnaryOp = 5
	DIV  UnaryOp = 6 // unsigned rdx:rax / r
	IDIV UnaryOp = 7 // signed rdx:rax / r
)

// Unary emits "op r".
func (a *Asm) Unary(o UnaryOp, size int, r Reg) {
	a.rr(opc1(size, 0xf7), byte(o), r)
}

// Cqo sign-extends rax into rdx (cdq for size 4).
func (a *Asm) Cqo(size int) {
	a.prefixes(opc1(size, 0x99), 0, 0, 0, false)
}

// Cmov emits "cmovcc dst, src": dst = src when c holds. The 32-bit form
// zero-extends dst even when c does not hold, so selects of eBPF
// registers use size 8.
func (a *Asm) Cmov(c Cond, size int, dst, src Reg) {
	a.rr(opc2(size, 0x0f, 0x40|byte(c)), byte(dst), src)
}
