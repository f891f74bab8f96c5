package arm64

// Branch offsets are in bytes, relative to the branch instruction itself
// (not to the next one, as on x86), and must be multiples of 4. An
// encoder returns ok == false when the target is out of its range.

// Branch ranges in bytes: the offset must be in [-Range, Range).
const (
	RangeB    = 1 << 27 // B, BL: ±128 MiB
	RangeCond = 1 << 20 // B.cond, CBZ, CBNZ, ADR: ±1 MiB
	RangeTB   = 1 << 15 // TBZ, TBNZ: ±32 KiB
)

// words returns off/4 when off is a multiple of 4 in [-limit, limit).
func words(off int64, limit int64) (uint32, bool) {
	if off&3 != 0 || off < -limit || off >= limit {
		return 0, false
	}
	return uint32(off >> 2), true
}

// B emits "b off".
func B(off int64) (uint32, bool) { return branchOffset(0x14000000, off) }

// BL emits "bl off", which sets X30 to the next instruction.
func BL(off int64) (uint32, bool) { return branchOffset(0x94000000, off) }

// BCond emits "b.c off".
func BCond(c Cond, off int64) (uint32, bool) {
	return branchOffset(0x54000000|uint32(c&15), off)
}

// Cbz emits "cbz rt, off": branch if the W (size 4) or X register is 0.
func Cbz(size int, rt Reg, off int64) (uint32, bool) {
	return branchOffset(sf(size)|0x34000000|rt.zr(), off)
}

// Cbnz emits "cbnz rt, off": branch if the register is not 0.
func Cbnz(size int, rt Reg, off int64) (uint32, bool) {
	return branchOffset(sf(size)|0x35000000|rt.zr(), off)
}

// tb encodes TBZ (op 0) and TBNZ (1).
func tb(op uint32, rt Reg, bit uint8, off int64) (uint32, bool) {
	if bit > 63 {
		return 0, false
	}
	b := uint32(bit)
	return branchOffset(b>>5<<31|0x36000000|op<<24|b&31<<19|rt.zr(), off)
}

// Tbz emits "tbz rt, #bit, off": branch if bit of rt is 0. The register
// is shown as W for bits below 32.
func Tbz(rt Reg, bit uint8, off int64) (uint32, bool) { return tb(0, rt, bit, off) }

// Tbnz emits "tbnz rt, #bit, off": branch if bit of rt is 1.
func Tbnz(rt Reg, bit uint8, off int64) (uint32, bool) { return tb(1, rt, bit, off) }

// Br emits "br rn".
func Br(rn Reg) uint32 { return 0xd61f0000 | rn.zr()<<5 }

// Blr emits "blr rn", which sets X30 to the next instruction.
func Blr(rn Reg) uint32 { return 0xd63f0000 | rn.zr()<<5 }

// Ret emits "ret" (return to X30).
func Ret() uint32 { return 0xd65f0000 | uint32(RegLR)<<5 }

// Adr emits "adr rd, off": rd = address of this instruction + off, any
// byte offset within ±1 MiB.
func Adr(rd Reg, off int64) (uint32, bool) {
	if off < -RangeCond || off >= RangeCond {
		return 0, false
	}
	v := uint32(off)
	return v&3<<29 | 0x10000000 | v>>2&0x7ffff<<5 | rd.zr(), true
}

// Adrp emits "adrp rd, off": rd = (address of this instruction with the
// low 12 bits cleared) + off, off a multiple of 4096 within ±4 GiB.
func Adrp(rd Reg, off int64) (uint32, bool) {
	if off&0xfff != 0 || off < -1<<32 || off >= 1<<32 {
		return 0, false
	}
	v := uint32(off >> 12)
	return v&3<<29 | 0x90000000 | v>>2&0x7ffff<<5 | rd.zr(), true
}

// Brk emits "brk #imm", which traps.
func Brk(imm uint16) uint32 { return 0xd4200000 | uint32(imm)<<5 }

// Nop emits "nop".
func Nop() uint32 { return 0xd503201f }

// Barrier is the domain and access type of a DMB.
type Barrier uint8

// DMB options, as in the CRm field.
const (
	BarrierISHLD Barrier = 0x9 // inner shareable, loads
	BarrierISHST Barrier = 0xa // inner shareable, stores
	BarrierISH   Barrier = 0xb // inner shareable, all accesses
	BarrierSY    Barrier = 0xf // full system
)

// Dmb emits "dmb option".
func Dmb(b Barrier) uint32 { return 0xd50330bf | uint32(b&15)<<8 }
