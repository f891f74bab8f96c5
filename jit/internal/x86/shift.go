package x86

// ShiftOp is a C1/D3 /digit shift or rotate.
type ShiftOp byte

// Shifts and rotates.
const (
	ROL ShiftOp = 0
	ROR ShiftOp = 1
	SHL ShiftOp = 4
	SHR ShiftOp = 5
	SAR ShiftOp = 7
)

// ShiftRI emits "op r, imm".
func (a *Asm) ShiftRI(o ShiftOp, size int, r Reg, imm uint8) {
	if imm == 1 {
		a.rr(opc1(size, 0xd1), byte(o), r)
		return
	}
	a.rri(opc1(size, 0xc1), byte(o), r, uint32(imm), 1)
}

// ShiftRCL emits "op r, cl".
func (a *Asm) ShiftRCL(o ShiftOp, size int, r Reg) {
	a.rr(opc1(size, 0xd3), byte(o), r)
}

// Shift kinds of the BMI2 shifts, as the pp field of their VEX prefix.
const (
	SHLX = 1 // 66
	SARX = 2 // F3
	SHRX = 3 // F2
)

// ShiftX emits the BMI2 "shlx/shrx/sarx dst, src, count" (kind SHLX, SHRX
// or SARX). The count is masked to 5 or 6 bits by the CPU, as eBPF wants,
// and the flags are not changed.
func (a *Asm) ShiftX(kind byte, size int, dst, src, count Reg) {
	var w byte
	if size == 8 {
		w = 1
	}
	a.byte1(0xc4)
	// R̄ X̄ B̄ and map 0F38.
	a.byte1((dst.hi()^1)<<7 | 1<<6 | (src.hi()^1)<<5 | 0x02)
	// W, inverted vvvv, L=0, pp.
	a.byte1(w<<7 | (^byte(count)&0xf)<<3 | kind)
	a.byte1(0xf7)
	a.byte1(0xc0 | dst.low()<<3 | src.low())
}

// Mulx emits the BMI2 "mulx hi, lo, src": hi:lo = rdx * src, unsigned,
// without touching rax or the flags. hi and lo must differ.
func (a *Asm) Mulx(size int, hi, lo, src Reg) {
	var w byte
	if size == 8 {
		w = 1
	}
	p := a.room()
	// C4, then R̄ X̄ B̄ and map 0F38, then W, inverted vvvv (lo), L=0 and
	// pp F2, then F6 /r.
	p[0] = 0xc4
	p[1] = (hi.hi()^1)<<7 | 1<<6 | (src.hi()^1)<<5 | 0x02
	p[2] = w<<7 | (^byte(lo)&0xf)<<3 | 3
	p[3] = 0xf6
	p[4] = 0xc0 | hi.low()<<3 | src.low()
	a.b = a.b[:len(a.b)+5]
}
