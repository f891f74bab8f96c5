package asm

// Instruction classes (the low three bits of the opcode).
const (
	ClassLD    = 0x00
	ClassLDX   = 0x01
	ClassST    = 0x02
	ClassSTX   = 0x03
	ClassALU   = 0x04
	ClassJMP   = 0x05
	ClassJMP32 = 0x06
	ClassALU64 = 0x07
)

// Size field of load and store opcodes.
const (
	SizeW  = 0x00
	SizeH  = 0x08
	SizeB  = 0x10
	SizeDW = 0x18
)

// Mode field of load and store opcodes.
const (
	ModeIMM    = 0x00
	ModeABS    = 0x20
	ModeIND    = 0x40
	ModeMEM    = 0x60
	ModeMEMSX  = 0x80
	ModeATOMIC = 0xc0
)

// Source field of ALU and jump opcodes.
const (
	SourceK = 0x00 // immediate operand
	SourceX = 0x08 // register operand
)

// ALU operations (the high four bits of ALU and ALU64 opcodes).
const (
	AluADD  = 0x00
	AluSUB  = 0x10
	AluMUL  = 0x20
	AluDIV  = 0x30
	AluOR   = 0x40
	AluAND  = 0x50
	AluLSH  = 0x60
	AluRSH  = 0x70
	AluNEG  = 0x80
	AluMOD  = 0x90
	AluXOR  = 0xa0
	AluMOV  = 0xb0
	AluARSH = 0xc0
	AluEND  = 0xd0
)

// Jump operations (the high four bits of JMP and JMP32 opcodes).
const (
	JmpJA   = 0x00
	JmpJEQ  = 0x10
	JmpJGT  = 0x20
	JmpJGE  = 0x30
	JmpJSET = 0x40
	JmpJNE  = 0x50
	JmpJSGT = 0x60
	JmpJSGE = 0x70
	JmpCALL = 0x80
	JmpEXIT = 0x90
	JmpJLT  = 0xa0
	JmpJLE  = 0xb0
	JmpJSLT = 0xc0
	JmpJSLE = 0xd0
)

// Atomic operations, carried in the immediate of STX|ATOMIC instructions.
const (
	AtomicADD     = 0x00
	AtomicOR      = 0x40
	AtomicAND     = 0x50
	AtomicXOR     = 0xa0
	AtomicFetch   = 0x01
	AtomicXCHG    = 0xe0 | AtomicFetch
	AtomicCMPXCHG = 0xf0 | AtomicFetch
)

// Src values of call and lddw instructions (BPF_PSEUDO_*).
const (
	PseudoCall      = 1 // call: imm is a pc-relative bpf-to-bpf call
	PseudoKfuncCall = 2 // call: kernel function, not available in userspace
	PseudoMapFD     = 1 // lddw: imm is an index into ProgramSpec.Maps
	PseudoMapValue  = 2 // lddw: imm is a map index, the next imm an offset into its value
	PseudoFunc      = 4 // lddw: imm is the pc-relative address of a function (a callback)
)

// Frequently used complete opcodes.
const (
	OpLDDW  = ClassLD | ModeIMM | SizeDW // 0x18
	OpCall  = ClassJMP | JmpCALL         // 0x85
	OpCallX = ClassJMP | JmpCALL | SourceX
	OpExit  = ClassJMP | JmpEXIT // 0x95
)

// Register numbers.
const (
	R0 = iota
	R1
	R2
	R3
	R4
	R5
	R6
	R7
	R8
	R9
	R10
	// RFP is the read-only frame pointer.
	RFP = R10
)

// InstructionSize is the size of one instruction slot in bytes.
const InstructionSize = 8

// JumpTaken reports whether a conditional jump whose operation (the high
// nibble of its opcode, as JmpJEQ) is op is taken with dst value x and
// operand y: compared on all 64 bits, or on the low 32 for JMP32 (wide
// false), as the interpreter does.
func JumpTaken(op uint8, x, y uint64, wide bool) bool {
	sx, sy := int64(x), int64(y)
	if !wide {
		x, y = uint64(uint32(x)), uint64(uint32(y))
		sx, sy = int64(int32(x)), int64(int32(y))
	}
	switch op & 0xf0 {
	case JmpJEQ:
		return x == y
	case JmpJNE:
		return x != y
	case JmpJSET:
		return x&y != 0
	case JmpJGT:
		return x > y
	case JmpJGE:
		return x >= y
	case JmpJLT:
		return x < y
	case JmpJLE:
		return x <= y
	case JmpJSGT:
		return sx > sy
	case JmpJSGE:
		return sx >= sy
	case JmpJSLT:
		return sx < sy
	case JmpJSLE:
		return sx <= sy
	}
	return false
}
