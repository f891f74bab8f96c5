package x86

import "encoding/binary"

// MovRR emits "mov dst, src". Size 4 zero-extends into the upper half.
func (a *Asm) MovRR(size int, dst, src Reg) {
	a.rr(opc1(size, 0x89), byte(src), dst)
}

// MovRI32 emits "mov dst32, imm", which zero-extends imm to 64 bits.
func (a *Asm) MovRI32(dst Reg, imm uint32) {
	w, n := uint64(0xb8+dst.low()), uint(1)
	if dst.hi() != 0 {
		w, n = w<<8|0x41, 2
	}
	a.emit(w, n, imm, 4)
}

// MovRISX emits "mov dst, imm" with imm sign-extended to 64 bits.
func (a *Asm) MovRISX(dst Reg, imm int32) {
	a.rri(opc1(8, 0xc7), 0, dst, uint32(imm), 4)
}

// MovRI64 emits "movabs dst, imm".
func (a *Asm) MovRI64(dst Reg, imm uint64) {
	p := a.room()
	p[0] = 0x48 | dst.hi()
	p[1] = 0xb8 + dst.low()
	binary.LittleEndian.PutUint64(p[2:10], imm)
	a.b = a.b[:len(a.b)+10]
}

// MovRI loads the 64-bit constant v into dst with the shortest encoding.
// It may change the flags (xor for zero).
func (a *Asm) MovRI(dst Reg, v uint64) {
	switch {
	case v == 0:
		a.ALURR(XOR, 4, dst, dst)
	case v <= 0xffffffff:
		a.MovRI32(dst, uint32(v))
	case fitsInt32(int64(v)):
		a.MovRISX(dst, int32(int64(v)))
	default:
		a.MovRI64(dst, v)
	}
}

// Load emits a zero-extending load of size bytes from m into dst.
func (a *Asm) Load(size int, dst Reg, m Mem) {
	switch size {
	case 1:
		a.rm(opc2(4, 0x0f, 0xb6), byte(dst), m)
	case 2:
		a.rm(opc2(4, 0x0f, 0xb7), byte(dst), m)
	default:
		a.rm(opc1(size, 0x8b), byte(dst), m)
	}
}

// LoadSX emits a load of size bytes from m, sign-extended to 64 bits.
func (a *Asm) LoadSX(size int, dst Reg, m Mem) {
	switch size {
	case 1:
		a.rm(opc2(8, 0x0f, 0xbe), byte(dst), m)
	case 2:
		a.rm(opc2(8, 0x0f, 0xbf), byte(dst), m)
	case 4:
		a.rm(opc1(8, 0x63), byte(dst), m)
	default:
		a.rm(opc1(8, 0x8b), byte(dst), m)
	}
}

// Store emits a store of the low size bytes of src to m.
func (a *Asm) Store(size int, m Mem, src Reg) {
	if size == 1 {
		c := opc1(1, 0x88)
		c |= opByteReg
		a.rm(c, byte(src), m)
		return
	}
	a.rm(opc1(size, 0x89), byte(src), m)
}

// StoreImm emits a store of imm (truncated, or sign-extended for size 8)
// to m.
func (a *Asm) StoreImm(size int, m Mem, imm int32) {
	switch size {
	case 1:
		a.rmi(opc1(1, 0xc6), 0, m, uint32(imm), 1)
	case 2:
		a.rmi(opc1(2, 0xc7), 0, m, uint32(imm), 2)
	default:
		a.rmi(opc1(size, 0xc7), 0, m, uint32(imm), 4)
	}
}

// Lea emits "lea dst, [m]".
func (a *Asm) Lea(dst Reg, m Mem) {
	a.rm(opc1(8, 0x8d), byte(dst), m)
}

// LeaRIP emits "lea dst, [rip+0]" and returns the position of its rel32
// field for PatchRel32.
func (a *Asm) LeaRIP(dst Reg) int {
	a.rm(opc1(8, 0x8d), byte(dst), MRIP(0))
	return a.Len() - 4
}

// MovzxRR emits "movzx dst32, src" for a byte or word (size) source.
func (a *Asm) MovzxRR(size int, dst, src Reg) {
	c := opc2(4, 0x0f, 0xb6)
	if size == 2 {
		c = opc2(4, 0x0f, 0xb7)
	}
	if size == 1 {
		c |= opByteRM
	}
	a.rr(c, byte(dst), src)
}

// MovsxRR sign-extends the low srcSize bytes of src into dst (dstSize 4 or 8).
func (a *Asm) MovsxRR(srcSize, dstSize int, dst, src Reg) {
	var c op
	switch srcSize {
	case 1:
		c = opc2(dstSize, 0x0f, 0xbe)
		c |= opByteRM
	case 2:
		c = opc2(dstSize, 0x0f, 0xbf)
	default:
		c = opc1(8, 0x63) // movsxd
	}
	a.rr(c, byte(dst), src)
}
