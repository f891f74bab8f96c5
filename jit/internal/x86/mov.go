package x86

import "encoding/binary"

// MovRR emits "mov dst, src". Size 4 zero-extends into the upper half.
func (a *Asm) MovRR(size int, dst, src Reg) {
	a.rr(opc1(size, 0x89), byte(src), dst)
}

// MovRI32 emits "mov dst32, imm", which zero-extends imm to 64 bits.
func (a *Asm) MovRI32(dst Reg, imm uint32) {
	w, n := uint64(0xb8+dst.low()), 1
	if dst.hi() != 0 {
		w, n = w<<8|0x41, 2
	}
	p := a.room()
	binary.LittleEndian.PutUint64(p[:8], w|uint64(imm)<<(8*n))
	a.b = a.b[:len(a.b)+n+4]
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
//
// Load, Store, StoreImm and Lea pick their opcode from a table and make one
// call, so that they inline and an access costs the compiler one call.
func (a *Asm) Load(size int, dst Reg, m Mem) {
	a.rmi(loadOps[size&15], byte(dst), m, 0, 0)
}

// loadOps are Load's opcodes by size.
var loadOps = [16]op{1: opc2(4, 0x0f, 0xb6), 2: opc2(4, 0x0f, 0xb7), 4: opc1(4, 0x8b), 8: opc1(8, 0x8b)}

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
	a.rmi(storeOps[size&15], byte(src), m, 0, 0)
}

// storeOps are Store's opcodes by size.
var storeOps = [16]op{1: opc1(1, 0x88) | opByteReg, 2: opc1(2, 0x89), 4: opc1(4, 0x89), 8: opc1(8, 0x89)}

// StoreImm emits a store of imm (truncated, or sign-extended for size 8)
// to m.
func (a *Asm) StoreImm(size int, m Mem, imm int32) {
	a.rmi(storeImmOps[size&15], 0, m, uint32(imm), uint(min(size, 4)))
}

// storeImmOps are StoreImm's opcodes by size.
var storeImmOps = [16]op{1: opc1(1, 0xc6), 2: opc1(2, 0xc7), 4: opc1(4, 0xc7), 8: opc1(8, 0xc7)}

// Lea emits "lea dst, [m]".
func (a *Asm) Lea(dst Reg, m Mem) {
	a.rmi(opLea, byte(dst), m, 0, 0)
}

const opLea = op(0x8d) | 1<<24 | 8<<32 // opc1(8, 0x8d)

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
