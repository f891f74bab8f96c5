package x86

// XReg is an SSE register, X0-X15.
type XReg byte

// The SSE registers the JIT uses (Go's ABI keeps X15 zero: leave it).
const (
	X0 XReg = iota
	X1
	X2
	X3
)

// SSE2 instructions of the byte-loop idioms: 0x66-prefixed (size 2, which
// adds the prefix and never REX.W) or F3-prefixed.
var (
	opPcmpeqb  = opc2(2, 0x0f, 0x74)
	opPcmpeqw  = opc2(2, 0x0f, 0x75)
	opPcmpeqd  = opc2(2, 0x0f, 0x76)
	opPandn    = opc2(2, 0x0f, 0xdf)
	opPor      = opc2(2, 0x0f, 0xeb)
	opPxor     = opc2(2, 0x0f, 0xef)
	opPminub   = opc2(2, 0x0f, 0xda)
	opPmovmskb = opc2(2, 0x0f, 0xd7)
	opMovdToX  = opc2(2, 0x0f, 0x6e)
	opPshufd   = opc2(2, 0x0f, 0x70)
	opMovdqu   = opc2(4, 0x0f, 0x6f) | 0xf3<<40
	opMovdqaRR = opc2(2, 0x0f, 0x6f)
)

// Movdqu emits movdqu dst, [m]: an unaligned 16-byte load.
func (a *Asm) Movdqu(dst XReg, m Mem) { a.rm(opMovdqu, byte(dst), m) }

// Movdqa emits movdqa dst, src.
func (a *Asm) Movdqa(dst, src XReg) { a.rr(opMovdqaRR, byte(dst), Reg(src)) }

// Pcmpeqb emits pcmpeqb dst, src: each byte 0xff where equal, else 0.
func (a *Asm) Pcmpeqb(dst, src XReg) { a.rr(opPcmpeqb, byte(dst), Reg(src)) }

// Pcmpeqw emits pcmpeqw dst, src: each 16-bit word all ones where equal.
func (a *Asm) Pcmpeqw(dst, src XReg) { a.rr(opPcmpeqw, byte(dst), Reg(src)) }

// Pcmpeqd emits pcmpeqd dst, src: each 32-bit word all ones where equal.
func (a *Asm) Pcmpeqd(dst, src XReg) { a.rr(opPcmpeqd, byte(dst), Reg(src)) }

// Pandn emits pandn dst, src: dst = ^dst & src.
func (a *Asm) Pandn(dst, src XReg) { a.rr(opPandn, byte(dst), Reg(src)) }

// Por emits por dst, src.
func (a *Asm) Por(dst, src XReg) { a.rr(opPor, byte(dst), Reg(src)) }

// Pxor emits pxor dst, src.
func (a *Asm) Pxor(dst, src XReg) { a.rr(opPxor, byte(dst), Reg(src)) }

// Pminub emits pminub dst, src: the unsigned byte minimums.
func (a *Asm) Pminub(dst, src XReg) { a.rr(opPminub, byte(dst), Reg(src)) }

// Pmovmskb emits pmovmskb dst, src: the 16 bytes' top bits into dst's
// low 16 bits (32-bit destination, the rest zero).
func (a *Asm) Pmovmskb(dst Reg, src XReg) { a.rr(opPmovmskb, byte(dst), Reg(src)) }

// MovdToX emits movd dst, src: src's low 32 bits into dst, the rest zero.
func (a *Asm) MovdToX(dst XReg, src Reg) { a.rr(opMovdToX, byte(dst), src) }

// Pshufd emits pshufd dst, src, order.
func (a *Asm) Pshufd(dst, src XReg, order uint8) {
	a.rri(opPshufd, byte(dst), Reg(src), uint32(order), 1)
}

// Bsf emits bsf dst, src: the index of src's lowest set bit (dst is
// undefined for a zero src).
func (a *Asm) Bsf(size int, dst, src Reg) { a.rr(opc2(size, 0x0f, 0xbc), byte(dst), src) }
