package x86

// Reg is a general-purpose register, numbered as in its encoding.
type Reg uint8

// General-purpose registers.
const (
	RAX Reg = iota
	RCX
	RDX
	RBX
	RSP
	RBP
	RSI
	RDI
	R8
	R9
	R10
	R11
	R12
	R13
	R14
	R15
)

func (r Reg) low() byte { return byte(r) & 7 }
func (r Reg) hi() byte  { return byte(r) >> 3 & 1 }

// needsREXAsByte reports whether r, used as a byte register, needs a REX
// prefix: without one, encodings 4..7 mean AH, CH, DH, BH instead of SPL,
// BPL, SIL, DIL.
func (r Reg) needsREXAsByte() bool { return r >= RSP && r <= RDI }

// Mem is a memory operand [Base + Index*Scale + Disp], or [RIP + Disp] when
// RIP is set; Scale 0 means no index. It is packed in one word (base in
// bits 0-7, index 8-15, scale 16-23, RIP bit 24, disp 32-63) rather than
// being a struct: the Go compiler spills small struct arguments field by
// field and reloads them whole, a store-forwarding stall on every
// encoder call.
type Mem uint64

// M returns the operand [base + disp].
func M(base Reg, disp int32) Mem { return Mem(base) | Mem(uint32(disp))<<32 }

// MIndex returns the operand [base + index*scale + disp] (scale 1, 2, 4
// or 8).
func MIndex(base, index Reg, scale uint8, disp int32) Mem {
	return M(base, disp) | Mem(index)<<8 | Mem(scale)<<16
}

// MRIP returns the operand [rip + disp].
func MRIP(disp int32) Mem { return Mem(uint32(disp))<<32 | 1<<24 }

// Base returns the base register.
func (m Mem) Base() Reg { return Reg(m) }

// Index returns the index register, when Scale is not 0.
func (m Mem) Index() Reg { return Reg(m >> 8) }

// Scale returns the index's scale, or 0 without an index.
func (m Mem) Scale() uint8 { return uint8(m >> 16) }

// RIP reports whether the operand is relative to the next instruction.
func (m Mem) RIP() bool { return m&(1<<24) != 0 }

// Disp returns the displacement.
func (m Mem) Disp() int32 { return int32(m >> 32) }

// Cond is a condition code, as in the low nibble of Jcc.
type Cond byte

// Condition codes.
const (
	CondO  Cond = 0x0
	CondNO Cond = 0x1
	CondB  Cond = 0x2 // below (unsigned <), carry
	CondAE Cond = 0x3 // above or equal (unsigned >=)
	CondE  Cond = 0x4
	CondNE Cond = 0x5
	CondBE Cond = 0x6 // below or equal (unsigned <=)
	CondA  Cond = 0x7 // above (unsigned >)
	CondS  Cond = 0x8
	CondNS Cond = 0x9
	CondL  Cond = 0xc // less (signed <)
	CondGE Cond = 0xd
	CondLE Cond = 0xe
	CondG  Cond = 0xf
)

// Invert returns the opposite condition.
func (c Cond) Invert() Cond { return c ^ 1 }
