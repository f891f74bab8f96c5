package arm64

import "fmt"

// ALUOp is a two-operand data-processing operation: the add/sub group
// (bits 30-29 op and S) or the logical group (bits 30-29 opc, and N
// for the inverted second operand of the register forms).
type ALUOp uint8

// ALU operations. The S forms set the flags.
const (
	ADD ALUOp = iota
	ADDS
	SUB
	SUBS
	AND
	ORR
	EOR
	ANDS
	BIC  // and not; register forms only
	ORN  // or not; register forms only
	EON  // xor not; register forms only
	BICS // register forms only
)

func (o ALUOp) logical() bool { return o >= AND }

// setsFlags reports whether o writes NZCV, which makes a destination
// register 31 mean XZR rather than SP in the immediate forms.
func (o ALUOp) setsFlags() bool { return o == ADDS || o == SUBS || o == ANDS || o == BICS }

// bits returns bits 29-30 (and N in bit 21 for the logical register forms).
func (o ALUOp) bits() uint32 {
	if o > BICS {
		badOp(o)
	}
	if o.logical() {
		return uint32(o-AND)&3<<29 | uint32(o-AND)>>2<<21
	}
	return uint32(o) << 29 // op in bit 30, S in bit 29
}

//go:noinline
func badOp(o ALUOp) { panic(fmt.Sprintf("arm64: ALUOp(%d)", uint8(o))) }

// ALUReg emits "op rd, rn, rm". In the add/sub group rn may be SP, and so
// may rd of ADD and SUB: the encoder then uses the extended-register form,
// where register 31 means SP, instead of the shifted-register form, where
// it means XZR ("cmp sp, x1" is SUBS xzr, sp, x1).
func ALUReg(o ALUOp, size int, rd, rn, rm Reg) uint32 {
	if !o.logical() && (rn == SP || (rd == SP && !o.setsFlags())) {
		// Extended register with UXTX (UXTW for 32 bits) #0: bit 21 set,
		// option in bits 13-15.
		opt := uint32(3)
		if size == 4 {
			opt = 2
		}
		var rdEnc uint32
		if o.setsFlags() {
			rdEnc = rd.zr()
		} else {
			rdEnc = rd.sp()
		}
		return sf(size) | o.bits() | 0x0b200000 | rm.zr()<<16 | opt<<13 | rn.sp()<<5 | rdEnc
	}
	w, _ := ALUShifted(o, size, rd, rn, rm, LSL, 0)
	return w
}

// ALUShifted emits "op rd, rn, rm, shift #amount". ROR is only encodable
// for the logical operations, and amount must be less than the operand
// width in bits.
func ALUShifted(o ALUOp, size int, rd, rn, rm Reg, sh Shift, amount uint8) (uint32, bool) {
	if int(amount) >= size*8 || sh > ROR || (sh == ROR && !o.logical()) {
		return 0, false
	}
	base := uint32(0x0b000000)
	if o.logical() {
		base = 0x0a000000
	}
	return sf(size) | o.bits() | base | uint32(sh)<<22 | rm.zr()<<16 | uint32(amount)<<10 | rn.zr()<<5 | rd.zr(), true
}

// ALUImm emits "op rd, rn, #imm". For the add/sub group imm is 12 bits,
// optionally shifted left by 12; for AND, ORR, EOR and ANDS it must be a
// logical immediate (see IsLogicalImm). Register 31 is SP for rn of
// add/sub and for rd unless the operation sets flags; for the logical
// group rn is XZR.
func ALUImm(o ALUOp, size int, rd, rn Reg, imm uint64) (uint32, bool) {
	rdEnc := func() uint32 {
		if o.setsFlags() {
			return rd.zr()
		}
		return rd.sp()
	}
	switch {
	case o <= SUBS:
		var sh uint32
		switch {
		case imm < 1<<12:
		case imm&0xfff == 0 && imm < 1<<24:
			sh, imm = 1, imm>>12
		default:
			return 0, false
		}
		return sf(size) | o.bits() | 0x11000000 | sh<<22 | uint32(imm)<<10 | rn.sp()<<5 | rdEnc(), true
	case o <= ANDS:
		n, immr, imms, ok := encodeBitmask(size, imm)
		if !ok {
			return 0, false
		}
		return sf(size) | o.bits() | 0x12000000 | n<<22 | immr<<16 | imms<<10 | rn.zr()<<5 | rdEnc(), true
	}
	return 0, false
}

// IsAddSubImm reports whether imm fits the immediate of ADD, SUB, CMP
// and CMN: 12 bits, or 12 bits shifted left by 12.
func IsAddSubImm(imm uint64) bool {
	return imm < 1<<12 || (imm&0xfff == 0 && imm < 1<<24)
}

// AddImm emits rd = rn + imm for a signed imm, as ADD or SUB: the form
// frame and pointer arithmetic needs. rd and rn may be SP.
func AddImm(size int, rd, rn Reg, imm int64) (uint32, bool) {
	if imm < 0 {
		return ALUImm(SUB, size, rd, rn, uint64(-imm))
	}
	return ALUImm(ADD, size, rd, rn, uint64(imm))
}

// Cmp emits "cmp rn, rm" (SUBS xzr, rn, rm). rn may be SP.
func Cmp(size int, rn, rm Reg) uint32 { return ALUReg(SUBS, size, XZR, rn, rm) }

// CmpImm emits "cmp rn, #imm" (SUBS xzr, rn, #imm), or "cmn rn, #-imm"
// for a negative imm. rn may be SP.
func CmpImm(size int, rn Reg, imm int64) (uint32, bool) {
	if imm < 0 {
		return ALUImm(ADDS, size, XZR, rn, uint64(-imm))
	}
	return ALUImm(SUBS, size, XZR, rn, uint64(imm))
}

// Cmn emits "cmn rn, rm" (ADDS xzr, rn, rm).
func Cmn(size int, rn, rm Reg) uint32 { return ALUReg(ADDS, size, XZR, rn, rm) }

// Tst emits "tst rn, rm" (ANDS xzr, rn, rm).
func Tst(size int, rn, rm Reg) uint32 { return ALUReg(ANDS, size, XZR, rn, rm) }

// TstImm emits "tst rn, #imm" for a logical immediate.
func TstImm(size int, rn Reg, imm uint64) (uint32, bool) {
	return ALUImm(ANDS, size, XZR, rn, imm)
}

// Neg emits "neg rd, rm" (SUB rd, xzr, rm).
func Neg(size int, rd, rm Reg) uint32 { return ALUReg(SUB, size, rd, XZR, rm) }

// Mvn emits "mvn rd, rm" (ORN rd, xzr, rm).
func Mvn(size int, rd, rm Reg) uint32 { return ALUReg(ORN, size, rd, XZR, rm) }

// Mov emits "mov rd, rm": ORR rd, xzr, rm, or ADD rd, rm, #0 when either
// is SP. A 32-bit move clears the upper half of rd.
func Mov(size int, rd, rm Reg) uint32 {
	if rd == SP || rm == SP {
		w, _ := ALUImm(ADD, size, rd, rm, 0)
		return w
	}
	return ALUReg(ORR, size, rd, XZR, rm)
}

// Madd emits "madd rd, rn, rm, ra": rd = ra + rn*rm.
func Madd(size int, rd, rn, rm, ra Reg) uint32 {
	return sf(size) | 0x1b000000 | rm.zr()<<16 | ra.zr()<<10 | rn.zr()<<5 | rd.zr()
}

// Msub emits "msub rd, rn, rm, ra": rd = ra - rn*rm, which with a
// quotient gives the remainder of a division.
func Msub(size int, rd, rn, rm, ra Reg) uint32 {
	return sf(size) | 0x1b008000 | rm.zr()<<16 | ra.zr()<<10 | rn.zr()<<5 | rd.zr()
}

// Mul emits "mul rd, rn, rm" (MADD with xzr).
func Mul(size int, rd, rn, rm Reg) uint32 { return Madd(size, rd, rn, rm, XZR) }

// Umulh emits "umulh rd, rn, rm": the high 64 bits of the unsigned
// 128-bit product.
func Umulh(rd, rn, rm Reg) uint32 {
	return 0x9bc07c00 | rm.zr()<<16 | rn.zr()<<5 | rd.zr()
}

// Smulh emits "smulh rd, rn, rm": the high 64 bits of the signed 128-bit
// product.
func Smulh(rd, rn, rm Reg) uint32 {
	return 0x9b407c00 | rm.zr()<<16 | rn.zr()<<5 | rd.zr()
}

// dp2 encodes a data-processing (2 source) instruction.
func dp2(opcode uint32, size int, rd, rn, rm Reg) uint32 {
	return sf(size) | 0x1ac00000 | rm.zr()<<16 | opcode<<10 | rn.zr()<<5 | rd.zr()
}

// Udiv emits "udiv rd, rn, rm". Division by zero gives 0 and does not
// trap, as eBPF wants.
func Udiv(size int, rd, rn, rm Reg) uint32 { return dp2(0x02, size, rd, rn, rm) }

// Sdiv emits "sdiv rd, rn, rm". Division by zero gives 0, and the most
// negative value divided by -1 gives itself; neither traps.
func Sdiv(size int, rd, rn, rm Reg) uint32 { return dp2(0x03, size, rd, rn, rm) }

// ShiftReg emits "lslv/lsrv/asrv/rorv rd, rn, rm": the shift amount is rm
// modulo the operand width, the same masking eBPF specifies.
func ShiftReg(sh Shift, size int, rd, rn, rm Reg) uint32 {
	return dp2(0x08|uint32(sh&3), size, rd, rn, rm)
}

// bitfield encodes SBFM (opc 0), BFM (1) and UBFM (2).
func bitfield(opc uint32, size int, rd, rn Reg, immr, imms uint8) (uint32, bool) {
	if int(immr) >= size*8 || int(imms) >= size*8 {
		return 0, false
	}
	s := sf(size)
	return s | opc<<29 | 0x13000000 | s>>9 | uint32(immr)<<16 | uint32(imms)<<10 | rn.zr()<<5 | rd.zr(), true
}

// Sbfm emits "sbfm rd, rn, #immr, #imms".
func Sbfm(size int, rd, rn Reg, immr, imms uint8) (uint32, bool) {
	return bitfield(0, size, rd, rn, immr, imms)
}

// Bfm emits "bfm rd, rn, #immr, #imms".
func Bfm(size int, rd, rn Reg, immr, imms uint8) (uint32, bool) {
	return bitfield(1, size, rd, rn, immr, imms)
}

// Ubfm emits "ubfm rd, rn, #immr, #imms".
func Ubfm(size int, rd, rn Reg, immr, imms uint8) (uint32, bool) {
	return bitfield(2, size, rd, rn, immr, imms)
}

// ShiftImm emits "lsl/lsr/asr rd, rn, #amount" (UBFM and SBFM aliases).
// amount must be less than the operand width; ROR is not supported.
func ShiftImm(sh Shift, size int, rd, rn Reg, amount uint8) (uint32, bool) {
	bits := uint8(size * 8)
	if amount >= bits {
		return 0, false
	}
	switch sh {
	case LSL:
		return Ubfm(size, rd, rn, (bits-amount)&(bits-1), bits-1-amount)
	case LSR:
		return Ubfm(size, rd, rn, amount, bits-1)
	case ASR:
		return Sbfm(size, rd, rn, amount, bits-1)
	}
	return 0, false
}

// Ubfx emits "ubfx rd, rn, #lsb, #width": width bits from lsb, zero
// extended.
func Ubfx(size int, rd, rn Reg, lsb, width uint8) (uint32, bool) {
	if width == 0 || int(lsb)+int(width) > size*8 {
		return 0, false
	}
	return Ubfm(size, rd, rn, lsb, lsb+width-1)
}

// Sxtb emits "sxtb rd, rn": sign-extend the low byte to size.
func Sxtb(size int, rd, rn Reg) uint32 { w, _ := Sbfm(size, rd, rn, 0, 7); return w }

// Sxth emits "sxth rd, rn": sign-extend the low halfword to size.
func Sxth(size int, rd, rn Reg) uint32 { w, _ := Sbfm(size, rd, rn, 0, 15); return w }

// Sxtw emits "sxtw xd, wn": sign-extend the low word to 64 bits.
func Sxtw(rd, rn Reg) uint32 { w, _ := Sbfm(8, rd, rn, 0, 31); return w }

// Uxtb emits "uxtb wd, wn": zero-extend the low byte to 64 bits (a 32-bit
// operation clears the upper half).
func Uxtb(rd, rn Reg) uint32 { w, _ := Ubfm(4, rd, rn, 0, 7); return w }

// Uxth emits "uxth wd, wn": zero-extend the low halfword to 64 bits.
func Uxth(rd, rn Reg) uint32 { w, _ := Ubfm(4, rd, rn, 0, 15); return w }

// dp1 encodes a data-processing (1 source) instruction.
func dp1(opcode uint32, size int, rd, rn Reg) uint32 {
	return sf(size) | 0x5ac00000 | opcode<<10 | rn.zr()<<5 | rd.zr()
}

// Rev16 emits "rev16 rd, rn": swap the bytes of every halfword. With
// UXTH after it, it is eBPF's be16/le16 on a little-endian machine.
func Rev16(size int, rd, rn Reg) uint32 { return dp1(0x01, size, rd, rn) }

// Rev32 emits "rev32 xd, xn": swap the bytes of each word of a 64-bit
// register.
func Rev32(rd, rn Reg) uint32 { return dp1(0x02, 8, rd, rn) }

// Rev emits "rev rd, rn": reverse all bytes of the W (size 4, clearing
// the upper half) or X register.
func Rev(size int, rd, rn Reg) uint32 {
	if size == 4 {
		return dp1(0x02, 4, rd, rn)
	}
	return dp1(0x03, 8, rd, rn)
}

// Clz emits "clz rd, rn".
func Clz(size int, rd, rn Reg) uint32 { return dp1(0x04, size, rd, rn) }

// csel encodes the conditional select group: op in bit 30, op2 in bits
// 10-11.
func csel(op, op2 uint32, size int, rd, rn, rm Reg, c Cond) uint32 {
	return sf(size) | op<<30 | 0x1a800000 | rm.zr()<<16 | uint32(c&15)<<12 | op2<<10 | rn.zr()<<5 | rd.zr()
}

// Csel emits "csel rd, rn, rm, c": rd = c ? rn : rm.
func Csel(size int, rd, rn, rm Reg, c Cond) uint32 { return csel(0, 0, size, rd, rn, rm, c) }

// Csinc emits "csinc rd, rn, rm, c": rd = c ? rn : rm+1.
func Csinc(size int, rd, rn, rm Reg, c Cond) uint32 { return csel(0, 1, size, rd, rn, rm, c) }

// Csinv emits "csinv rd, rn, rm, c": rd = c ? rn : ^rm.
func Csinv(size int, rd, rn, rm Reg, c Cond) uint32 { return csel(1, 0, size, rd, rn, rm, c) }

// Csneg emits "csneg rd, rn, rm, c": rd = c ? rn : -rm.
func Csneg(size int, rd, rn, rm Reg, c Cond) uint32 { return csel(1, 1, size, rd, rn, rm, c) }

// Cset emits "cset rd, c": rd = c ? 1 : 0 (CSINC rd, zr, zr, !c). c must
// not be AL or NV, which have no opposite.
func Cset(size int, rd Reg, c Cond) (uint32, bool) {
	if c >= AL {
		return 0, false
	}
	return Csinc(size, rd, XZR, XZR, c.Invert()), true
}
