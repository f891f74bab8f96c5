package x86

import "encoding/binary"

// op describes the fixed part of an instruction, packed in one word so
// that building and passing it costs next to nothing: the opcode bytes
// (the first in the low byte, bits 0-23), their count (24-31), the operand
// size in bytes (32-39; 2 adds 0x66, 8 sets REX.W), a legacy prefix before
// 0x66/REX (LOCK, F2, F3) or 0 (40-47), and the flags opByteReg and
// opByteRM.
type op uint64

// opByteReg and opByteRM mark byte-register operands in the reg and r/m
// fields, which need a REX prefix for SPL, BPL, SIL and DIL.
const (
	opByteReg op = 1 << 48
	opByteRM  op = 1 << 49
)

func opc1(size int, b byte) op      { return op(b) | 1<<24 | op(size)<<32 }
func opc2(size int, b1, b2 byte) op { return op(b1) | op(b2)<<8 | 2<<24 | op(size)<<32 }
func opc3(size int, b1, b2, b3 byte) op {
	return op(b1) | op(b2)<<8 | op(b3)<<16 | 3<<24 | op(size)<<32
}

func (o op) opc() uint64   { return uint64(o) & 0xffffff }
func (o op) n() uint       { return uint(o>>24) & 0xff }
func (o op) size() byte    { return byte(o >> 32) }
func (o op) prefix() byte  { return byte(o >> 40) }
func (o op) byteReg() bool { return o&opByteReg != 0 }
func (o op) byteRM() bool  { return o&opByteRM != 0 }
func (o op) lock() op      { return o | 0xf0<<40 }
func (o op) plain() bool   { return o>>40 == 0 && o.size() != 2 } // no prefix, no byte registers
func (o op) rexW() byte    { return o.size() & 8 }

// The encoder is on the compiler's hot path: an instruction is built in
// registers (prefixes, opcode, ModRM and SIB in one 64-bit word, then the
// displacement and the immediate) and written with at most three stores
// into spare capacity the buffer always keeps.

// room makes sure the buffer has 16 spare bytes, more than the longest
// instruction, and returns them.
func (a *Asm) room() *[16]byte {
	if cap(a.b)-len(a.b) < 16 {
		a.grow()
	}
	return (*[16]byte)(a.b[len(a.b):cap(a.b)])
}

// grow leaves at least 32 spare bytes (see EmitSeq).
//
//go:noinline
func (a *Asm) grow() {
	a.b = append(a.b, make([]byte, 32+len(a.b))...)[:len(a.b)]
}

// Seq is a prepared sequence of instructions, at most 32 bytes, with no
// field that depends on its address (a rel32 is emitted as 0 and patched
// afterwards). Emitting one is a single copy, which is cheaper than
// encoding its instructions one by one on the compiler's hot paths.
type Seq struct {
	b [32]byte
	n int
}

// NewSeq records what emit emits. It panics past 32 bytes.
func NewSeq(emit func(a *Asm)) Seq {
	var a Asm
	emit(&a)
	var s Seq
	s.n = copy(s.b[:], a.b)
	if s.n != len(a.b) {
		panic("x86: sequence longer than 32 bytes")
	}
	return s
}

// Len returns the length of the sequence in bytes.
func (s *Seq) Len() int { return s.n }

// EmitSeq appends s and returns the offset of its first byte.
func (a *Asm) EmitSeq(s *Seq) int {
	start := len(a.b)
	if cap(a.b)-start < 32 {
		a.grow()
	}
	*(*[32]byte)(a.b[start : start+32]) = s.b
	a.b = a.b[:start+s.n]
	return start
}

// emit appends the nb low bytes of w, then the immLen (0, 1, 2 or 4) low
// bytes of imm.
func (a *Asm) emit(w uint64, nb uint, imm uint32, immLen uint) {
	p := a.room()
	binary.LittleEndian.PutUint64(p[:8], w)
	binary.LittleEndian.PutUint32(p[nb:], imm)
	a.b = a.b[:len(a.b)+int(nb+immLen)]
}

// header returns the legacy prefixes, the REX prefix (when needed) and
// the opcode as little-endian bytes, and their length in bits. r, x, b are
// the extension bits of the reg, index and base/rm fields.
func header(o op, r, x, b byte, forceREX bool) (uint64, uint) {
	var w uint64
	var n uint
	if o.prefix() != 0 {
		w, n = uint64(o.prefix()), 8
	}
	rex := 0x40 | r<<2 | x<<1 | b
	switch o.size() {
	case 2:
		w |= 0x66 << n
		n += 8
	case 8:
		rex |= 8
	}
	if rex != 0x40 || forceREX {
		w |= uint64(rex) << n
		n += 8
	}
	return w | o.opc()<<n, n + 8*o.n()
}

// prefixes emits the header of an instruction without ModRM (opcodes
// with the register in the low bits, like push and bswap).
func (a *Asm) prefixes(o op, r, x, b byte, forceREX bool) {
	w, n := header(o, r, x, b, forceREX)
	a.emit(w, n/8, 0, 0)
}

// rr emits an instruction with a register r/m operand. reg is a register
// or a /digit opcode extension.
func (a *Asm) rr(o op, reg byte, rm Reg) {
	if !o.plain() {
		a.rriPrefixed(o, reg, rm, 0, 0)
		return
	}
	rex := 0x40 | o.rexW() | reg>>1&4 | byte(rm)>>3
	w := o.opc() | uint64(0xc0|(reg&7)<<3|byte(rm)&7)<<(8*o.n())
	nb := o.n() + 1
	if rex != 0x40 {
		w = w<<8 | uint64(rex)
		nb++
	}
	p := a.room()
	binary.LittleEndian.PutUint64(p[:8], w)
	a.b = a.b[:len(a.b)+int(nb)]
}

// rri emits rr followed by an immediate of immLen bytes.
func (a *Asm) rri(o op, reg byte, rm Reg, imm uint32, immLen uint) {
	if !o.plain() {
		a.rriPrefixed(o, reg, rm, imm, immLen)
		return
	}
	// The common case: REX (W from size 8, R, B) only when not 0x40.
	rex := 0x40 | o.rexW() | reg>>1&4 | byte(rm)>>3
	w := o.opc() | uint64(0xc0|(reg&7)<<3|byte(rm)&7)<<(8*o.n())
	nb := o.n() + 1
	if rex != 0x40 {
		w = w<<8 | uint64(rex)
		nb++
	}
	p := a.room()
	binary.LittleEndian.PutUint64(p[:8], w)
	binary.LittleEndian.PutUint32(p[nb&7:], imm) // nb <= 5
	a.b = a.b[:len(a.b)+int(nb+immLen)]
}

// rriPrefixed is rri with legacy prefixes or byte registers.
func (a *Asm) rriPrefixed(o op, reg byte, rm Reg, imm uint32, immLen uint) {
	force := (o.byteReg() && Reg(reg).needsREXAsByte()) || (o.byteRM() && rm.needsREXAsByte())
	w, n := header(o, reg>>3&1, 0, rm.hi(), force)
	w |= uint64(0xc0|(reg&7)<<3|rm.low()) << n
	a.emit(w, n/8+1, imm, immLen)
}

// rm emits an instruction with a memory r/m operand.
func (a *Asm) rm(o op, reg byte, m Mem) { a.rmi(o, reg, m, 0, 0) }

// rmi emits rm followed by an immediate of immLen bytes.
func (a *Asm) rmi(o op, reg byte, m Mem, imm uint32, immLen uint) {
	if !o.plain() || m&(1<<24|0xff<<16) != 0 { // prefixes, RIP or an index
		a.rmiGeneral(o, reg, m, imm, immLen)
		return
	}
	// The common case: [base+disp], REX only when not 0x40.
	base := byte(m) & 7
	disp := m.Disp()
	var mod byte
	var dl uint
	switch {
	case disp == 0 && base != 5: // [rbp] and [r13] need a displacement
	case fitsInt8(int64(disp)):
		mod, dl = 0x40, 1
	default:
		mod, dl = 0x80, 4
	}
	sh := 8 * o.n()
	w := o.opc() | uint64(mod|(reg&7)<<3|base)<<sh
	nb := o.n() + 1
	if base == 4 { // rsp and r12 need a SIB byte
		w |= 0x24 << (sh + 8)
		nb++
	}
	if rex := 0x40 | o.rexW() | reg>>1&4 | byte(m)>>3&1; rex != 0x40 {
		w = w<<8 | uint64(rex)
		nb++
	}
	p := a.room()
	binary.LittleEndian.PutUint64(p[:8], w)
	binary.LittleEndian.PutUint32(p[nb:], uint32(disp))
	binary.LittleEndian.PutUint32(p[nb+dl:], imm)
	a.b = a.b[:len(a.b)+int(nb+dl+immLen)]
}

// rmiGeneral is rmi for any operand and prefixes.
func (a *Asm) rmiGeneral(o op, reg byte, m Mem, imm uint32, immLen uint) {
	force := o.byteReg() && Reg(reg).needsREXAsByte()
	var x byte
	if m.Scale() != 0 {
		x = m.Index().hi()
	}
	base := m.Base()
	if m.RIP() {
		base = 0
	}
	w, n := header(o, reg>>3&1, x, base.hi(), force)
	modrm, nm, disp, dl := modrmMem(reg, m)
	w |= modrm << n
	nb := n/8 + nm
	p := a.room()
	binary.LittleEndian.PutUint64(p[:8], w)
	binary.LittleEndian.PutUint32(p[nb:], uint32(disp))
	binary.LittleEndian.PutUint32(p[nb+dl:], imm)
	a.b = a.b[:len(a.b)+int(nb+dl+immLen)]
}

// modrmMem returns ModRM and SIB of a memory operand (nm bytes) and its
// displacement (dl bytes).
func modrmMem(reg byte, m Mem) (w uint64, nm uint, disp int32, dl uint) {
	reg = (reg & 7) << 3
	if m.RIP() {
		return uint64(reg | 5), 1, m.Disp(), 4
	}
	var mod byte
	switch {
	case m.Disp() == 0 && m.Base().low() != 5: // [rbp] and [r13] need a displacement
		mod, dl = 0, 0
	case fitsInt8(int64(m.Disp())):
		mod, dl = 1, 1
	default:
		mod, dl = 2, 4
	}
	switch {
	case m.Scale() != 0:
		w = uint64(mod<<6|reg|4) | uint64(scaleBits(m.Scale())<<6|m.Index().low()<<3|m.Base().low())<<8
		nm = 2
	case m.Base().low() == 4: // rsp and r12 need a SIB byte
		w, nm = uint64(mod<<6|reg|4)|0x24<<8, 2
	default:
		w, nm = uint64(mod<<6|reg|m.Base().low()), 1
	}
	return w, nm, m.Disp(), dl
}

func scaleBits(s uint8) byte {
	switch s {
	case 2:
		return 1
	case 4:
		return 2
	case 8:
		return 3
	}
	return 0
}
