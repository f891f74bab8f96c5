package arm64

// Atomics come in two families: the LSE instructions (ARMv8.1, one
// instruction per read-modify-write) and the load/store-exclusive pairs
// of ARMv8.0, which a back end loops over when the CPU lacks LSE. Sizes
// are 4 or 8 bytes; the address register rn may be SP.

// Order is the memory ordering of an atomic instruction.
type Order uint8

// Orderings. AcqRel is what eBPF's atomics with BPF_FETCH need (the
// kernel's arm64 JIT uses the AL forms for them).
const (
	Relaxed Order = 0
	Release Order = 1 // the "L" forms
	Acquire Order = 2 // the "A" forms
	AcqRel  Order = 3 // the "AL" forms
)

// AtomicOp is an LSE atomic memory operation.
type AtomicOp uint8

// LSE operations, numbered as o3:opc (bits 15 and 12-14).
const (
	LDADD AtomicOp = 0x0 // add
	LDCLR AtomicOp = 0x1 // and not: LDCLR with ^x is an atomic and
	LDEOR AtomicOp = 0x2 // xor
	LDSET AtomicOp = 0x3 // or
	SWP   AtomicOp = 0x8 // exchange
)

// wordSize returns bits 30-31 for a 4- or 8-byte atomic.
func wordSize(size int) (uint32, bool) {
	switch size {
	case 4:
		return 2, true
	case 8:
		return 3, true
	}
	return 0, false
}

// Atomic emits "op{a,l,al} rs, rt, [rn]": rt = [rn]; [rn] = [rn] op rs.
// With rt = XZR and no acquire it is the ST-form alias ("stadd rs, [rn]");
// with rt = XZR the architecture drops the acquire half of the ordering,
// so a fetch that needs acquire semantics must name a real register.
func Atomic(o AtomicOp, ord Order, size int, rs, rt, rn Reg) (uint32, bool) {
	sz, ok := wordSize(size)
	if !ok || (o > LDSET && o != SWP) {
		return 0, false
	}
	// A in bit 23, R in bit 22.
	return sz<<30 | 0x38200000 | uint32(ord&3)<<22 | rs.zr()<<16 | uint32(o)>>3<<15 | uint32(o)&7<<12 | rn.sp()<<5 | rt.zr(), true
}

// Cas emits "cas{a,l,al} rs, rt, [rn]": if [rn] == rs then [rn] = rt;
// rs receives the old value either way.
func Cas(ord Order, size int, rs, rt, rn Reg) (uint32, bool) {
	sz, ok := wordSize(size)
	if !ok {
		return 0, false
	}
	// L (acquire) in bit 22, o0 (release) in bit 15.
	return sz<<30 | 0x08a07c00 | uint32(ord>>1&1)<<22 | uint32(ord&1)<<15 | rs.zr()<<16 | rn.sp()<<5 | rt.zr(), true
}

// Ldxr emits "ldxr rt, [rn]" (acquire: "ldaxr"), starting an exclusive
// access.
func Ldxr(acquire bool, size int, rt, rn Reg) (uint32, bool) {
	sz, ok := wordSize(size)
	if !ok {
		return 0, false
	}
	return sz<<30 | 0x085f7c00 | b2u(acquire)<<15 | rn.sp()<<5 | rt.zr(), true
}

// Stxr emits "stxr ws, rt, [rn]" (release: "stlxr"): store rt if the
// exclusive access still holds; ws = 0 on success, 1 on failure. ws must
// differ from rt and rn (the architecture leaves that UNPREDICTABLE).
func Stxr(release bool, size int, ws, rt, rn Reg) (uint32, bool) {
	sz, ok := wordSize(size)
	if !ok || ws == rt || ws == rn {
		return 0, false
	}
	return sz<<30 | 0x08007c00 | ws.zr()<<16 | b2u(release)<<15 | rn.sp()<<5 | rt.zr(), true
}

// Ldar emits "ldar rt, [rn]": a load-acquire, for eBPF's load_acquire.
// size may be 1, 2, 4 or 8.
func Ldar(size int, rt, rn Reg) (uint32, bool) {
	sz, ok := sizeBits(size)
	if !ok {
		return 0, false
	}
	return sz<<30 | 0x08dffc00 | rn.sp()<<5 | rt.zr(), true
}

// Stlr emits "stlr rt, [rn]": a store-release, for eBPF's store_release.
// size may be 1, 2, 4 or 8.
func Stlr(size int, rt, rn Reg) (uint32, bool) {
	sz, ok := sizeBits(size)
	if !ok {
		return 0, false
	}
	return sz<<30 | 0x089ffc00 | rn.sp()<<5 | rt.zr(), true
}

func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}
