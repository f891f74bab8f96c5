package arm64

import "fmt"

// Reg is a general-purpose register. X0 to X30 are numbered as in their
// encoding; XZR and SP both encode as 31 and are told apart by the
// instruction, so they are distinct values here.
type Reg uint8

// General-purpose registers. The 32-bit (W) forms are selected by the
// operand size, not by the register.
const (
	X0 Reg = iota
	X1
	X2
	X3
	X4
	X5
	X6
	X7
	X8
	X9
	X10
	X11
	X12
	X13
	X14
	X15
	X16
	X17
	X18
	X19
	X20
	X21
	X22
	X23
	X24
	X25
	X26
	X27
	X28
	X29
	X30
	XZR // the zero register: reads as 0, writes are discarded
	SP  // the stack pointer
)

// Registers with a fixed role in Go's arm64 ABI (see the package
// documentation). Generated code must not use them as scratch.
const (
	RegPlatform = X18 // platform register, never touched
	RegClosure  = X26 // closure context
	RegTmp      = X27 // Go assembler temporary (REGTMP)
	RegG        = X28 // current goroutine
	RegFP       = X29 // frame pointer
	RegLR       = X30 // link register
)

// Reserved reports whether r has a fixed role in Go's ABI (or is SP or
// XZR), so that a register allocator must not hand it out.
func Reserved(r Reg) bool {
	switch r {
	case RegPlatform, RegClosure, RegTmp, RegG, RegFP, RegLR, XZR, SP:
		return true
	}
	return false
}

// String returns the 64-bit name of r ("x3", "xzr", "sp").
func (r Reg) String() string {
	switch {
	case r <= X30:
		return fmt.Sprintf("x%d", r)
	case r == XZR:
		return "xzr"
	case r == SP:
		return "sp"
	}
	return fmt.Sprintf("Reg(%d)", uint8(r))
}

// zr returns the encoding of r in a slot where 31 means the zero register.
func (r Reg) zr() uint32 {
	if r > XZR {
		badReg(r, "XZR")
	}
	return uint32(r)
}

// sp returns the encoding of r in a slot where 31 means SP.
func (r Reg) sp() uint32 {
	if r >= XZR {
		if r != SP {
			badReg(r, "SP")
		}
		return 31
	}
	return uint32(r)
}

// badReg panics; it is kept out of line so that the checks inline.
//
//go:noinline
func badReg(r Reg, slot string) {
	panic(fmt.Sprintf("arm64: %v cannot be used here (register 31 is %s in this operand)", r, slot))
}

// sf returns the sf bit (bit 31) of an operand size of 4 or 8 bytes.
func sf(size int) uint32 {
	if size != 4 && size != 8 {
		badSize(size)
	}
	return uint32(size) >> 3 << 31
}

//go:noinline
func badSize(size int) { panic(fmt.Sprintf("arm64: operand size %d, want 4 or 8", size)) }

// Cond is a condition code, as in B.cond and CSEL.
type Cond uint8

// Condition codes. After CMP a, b: EQ/NE compare, HS/LO/HI/LS are the
// unsigned orders, GE/LT/GT/LE the signed ones.
const (
	EQ Cond = 0x0
	NE Cond = 0x1
	HS Cond = 0x2 // unsigned >=, carry set (also CS)
	LO Cond = 0x3 // unsigned <, carry clear (also CC)
	MI Cond = 0x4 // negative
	PL Cond = 0x5 // positive or zero
	VS Cond = 0x6 // overflow
	VC Cond = 0x7 // no overflow
	HI Cond = 0x8 // unsigned >
	LS Cond = 0x9 // unsigned <=
	GE Cond = 0xa
	LT Cond = 0xb
	GT Cond = 0xc
	LE Cond = 0xd
	AL Cond = 0xe // always
	NV Cond = 0xf // always too (not "never" in A64)
)

// Invert returns the opposite condition (not meaningful for AL and NV).
func (c Cond) Invert() Cond { return c ^ 1 }

// Shift is the shift applied to the second register of a data-processing
// instruction, and the kind of a shift instruction.
type Shift uint8

// Shift kinds, numbered as in the shift field.
const (
	LSL Shift = 0
	LSR Shift = 1
	ASR Shift = 2
	ROR Shift = 3 // logical instructions only
)
