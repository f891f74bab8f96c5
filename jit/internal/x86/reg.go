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
// RIP is set. Scale 0 means no index.
type Mem struct {
	Base  Reg
	Index Reg
	Scale uint8
	Disp  int32
	RIP   bool
}

// M returns the operand [base + disp].
func M(base Reg, disp int32) Mem { return Mem{Base: base, Disp: disp} }

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
