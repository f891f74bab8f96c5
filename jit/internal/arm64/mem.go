package arm64

// Loads and stores. size is the access width in bytes (1, 2, 4, 8); the
// base register rn may be SP, the data registers may be XZR (storing
// zero). Loads narrower than 8 bytes zero-extend into the whole register,
// the LDRS forms sign-extend to 64 bits.

// ldst holds bits 22-23 (opc) of the load/store register group.
type ldst uint32

const (
	opStore  ldst = 0
	opLoad   ldst = 1
	opLoadSX ldst = 2 // sign-extend to 64 bits
)

// sizeBits returns bits 30-31 for an access of size bytes, or false.
func sizeBits(size int) (uint32, bool) {
	switch size {
	case 1:
		return 0, true
	case 2:
		return 1, true
	case 4:
		return 2, true
	case 8:
		return 3, true
	}
	return 0, false
}

func (o ldst) valid(size int) bool { return o != opLoadSX || size < 8 }

// memImm encodes the unsigned, scaled 12-bit offset form.
func memImm(o ldst, size int, rt, rn Reg, off int64) (uint32, bool) {
	sz, ok := sizeBits(size)
	if !ok || !o.valid(size) || off < 0 || off&int64(size-1) != 0 || off/int64(size) >= 1<<12 {
		return 0, false
	}
	return sz<<30 | 0x39000000 | uint32(o)<<22 | uint32(off/int64(size))<<10 | rn.sp()<<5 | rt.zr(), true
}

// memUnscaled encodes the signed 9-bit unscaled offset form (LDUR/STUR).
func memUnscaled(o ldst, size int, rt, rn Reg, off int64) (uint32, bool) {
	sz, ok := sizeBits(size)
	if !ok || !o.valid(size) || off < -256 || off > 255 {
		return 0, false
	}
	return sz<<30 | 0x38000000 | uint32(o)<<22 | uint32(off)&0x1ff<<12 | rn.sp()<<5 | rt.zr(), true
}

// memReg encodes the register offset form [rn, rm], rm not scaled.
func memReg(o ldst, size int, rt, rn, rm Reg) (uint32, bool) {
	sz, ok := sizeBits(size)
	if !ok || !o.valid(size) {
		return 0, false
	}
	// option 011 (LSL, the 64-bit index as is), S = 0.
	return sz<<30 | 0x38206800 | uint32(o)<<22 | rm.zr()<<16 | rn.sp()<<5 | rt.zr(), true
}

// mem picks the scaled form, else the unscaled one.
func mem(o ldst, size int, rt, rn Reg, off int64) (uint32, bool) {
	if w, ok := memImm(o, size, rt, rn, off); ok {
		return w, true
	}
	return memUnscaled(o, size, rt, rn, off)
}

// LdrImm emits "ldr{b,h,} rt, [rn, #off]" with off a non-negative multiple
// of size below 4096*size.
func LdrImm(size int, rt, rn Reg, off int64) (uint32, bool) {
	return memImm(opLoad, size, rt, rn, off)
}

// StrImm emits "str{b,h,} rt, [rn, #off]" (off as for LdrImm).
func StrImm(size int, rt, rn Reg, off int64) (uint32, bool) {
	return memImm(opStore, size, rt, rn, off)
}

// LdrsImm emits "ldrs{b,h,w} xt, [rn, #off]" (size 1, 2 or 4).
func LdrsImm(size int, rt, rn Reg, off int64) (uint32, bool) {
	return memImm(opLoadSX, size, rt, rn, off)
}

// Ldur emits "ldur{b,h,} rt, [rn, #off]" with -256 <= off <= 255.
func Ldur(size int, rt, rn Reg, off int64) (uint32, bool) {
	return memUnscaled(opLoad, size, rt, rn, off)
}

// Stur emits "stur{b,h,} rt, [rn, #off]" with -256 <= off <= 255.
func Stur(size int, rt, rn Reg, off int64) (uint32, bool) {
	return memUnscaled(opStore, size, rt, rn, off)
}

// Ldurs emits "ldurs{b,h,w} xt, [rn, #off]" (size 1, 2 or 4).
func Ldurs(size int, rt, rn Reg, off int64) (uint32, bool) {
	return memUnscaled(opLoadSX, size, rt, rn, off)
}

// LdrReg emits "ldr{b,h,} rt, [rn, rm]".
func LdrReg(size int, rt, rn, rm Reg) (uint32, bool) { return memReg(opLoad, size, rt, rn, rm) }

// StrReg emits "str{b,h,} rt, [rn, rm]".
func StrReg(size int, rt, rn, rm Reg) (uint32, bool) { return memReg(opStore, size, rt, rn, rm) }

// LdrsReg emits "ldrs{b,h,w} xt, [rn, rm]" (size 1, 2 or 4).
func LdrsReg(size int, rt, rn, rm Reg) (uint32, bool) { return memReg(opLoadSX, size, rt, rn, rm) }

// Load emits a load of size bytes from [rn + off], in the scaled form when
// off allows, else the unscaled one; ok is false when neither reaches and
// the offset must go through a register.
func Load(size int, rt, rn Reg, off int64) (uint32, bool) { return mem(opLoad, size, rt, rn, off) }

// LoadSX is Load, sign-extending to 64 bits (size 1, 2 or 4): eBPF's
// MEMSX loads.
func LoadSX(size int, rt, rn Reg, off int64) (uint32, bool) {
	return mem(opLoadSX, size, rt, rn, off)
}

// Store emits a store of the low size bytes of rt to [rn + off], like
// Load.
func Store(size int, rt, rn Reg, off int64) (uint32, bool) { return mem(opStore, size, rt, rn, off) }

// AddrMode is the addressing mode of a load or store pair.
type AddrMode uint8

// Pair addressing modes, numbered as bits 23-24.
const (
	PostIndex AddrMode = 1 // access [rn], then rn += off
	Offset    AddrMode = 2 // access [rn + off]
	PreIndex  AddrMode = 3 // rn += off, then access [rn]
)

// pair encodes LDP (load) and STP for 4- or 8-byte registers.
func pair(load bool, size int, rt1, rt2, rn Reg, off int64, mode AddrMode) (uint32, bool) {
	var opc uint32
	switch size {
	case 4:
	case 8:
		opc = 2
	default:
		return 0, false
	}
	if mode < PostIndex || mode > PreIndex || off&int64(size-1) != 0 {
		return 0, false
	}
	scaled := off / int64(size)
	if scaled < -64 || scaled > 63 {
		return 0, false
	}
	// Writing back to a register the instruction also accesses, or
	// loading both halves into one register, is UNPREDICTABLE.
	if mode != Offset && (rt1 == rn || rt2 == rn) || load && rt1 == rt2 {
		return 0, false
	}
	var l uint32
	if load {
		l = 1
	}
	return opc<<30 | 0x28000000 | uint32(mode)<<23 | l<<22 | uint32(scaled)&0x7f<<15 | rt2.zr()<<10 | rn.sp()<<5 | rt1.zr(), true
}

// Ldp emits "ldp rt1, rt2, [rn, #off]" (or its pre/post-indexed form):
// off a multiple of size in [-64*size, 63*size].
func Ldp(size int, rt1, rt2, rn Reg, off int64, mode AddrMode) (uint32, bool) {
	return pair(true, size, rt1, rt2, rn, off, mode)
}

// Stp emits "stp rt1, rt2, [rn, #off]" (or its pre/post-indexed form),
// the usual way to push a frame record: Stp(8, X29, X30, SP, -16,
// PreIndex).
func Stp(size int, rt1, rt2, rn Reg, off int64, mode AddrMode) (uint32, bool) {
	return pair(false, size, rt1, rt2, rn, off, mode)
}
