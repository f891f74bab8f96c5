package asm

import (
	"encoding/binary"
	"fmt"
)

// Instruction is one 8-byte eBPF instruction slot. An lddw occupies two
// slots: the second has opcode 0 and carries the upper 32 bits of the
// constant in Imm.
type Instruction struct {
	Opcode uint8
	Dst    uint8 // 0..10 in a valid program
	Src    uint8 // 0..10 in a valid program
	Offset int16
	Imm    int32
}

// Class returns the instruction class (ClassLD ... ClassALU64).
func (ins Instruction) Class() uint8 { return ins.Opcode & 0x07 }

// IsLDDW reports whether ins is the first slot of a 64-bit immediate load.
func (ins Instruction) IsLDDW() bool { return ins.Opcode == OpLDDW }

// Decode splits little-endian bytecode into instruction slots.
func Decode(code []byte) ([]Instruction, error) {
	if len(code)%InstructionSize != 0 {
		return nil, fmt.Errorf("bytecode length %d is not a multiple of %d", len(code), InstructionSize)
	}
	insns := make([]Instruction, len(code)/InstructionSize)
	for i := range insns {
		insns[i] = DecodeOne(code[i*InstructionSize:])
	}
	return insns, nil
}

// DecodeOne decodes the slot at the start of b, which must hold at least 8 bytes.
func DecodeOne(b []byte) Instruction {
	return Instruction{
		Opcode: b[0],
		Dst:    b[1] & 0x0f,
		Src:    b[1] >> 4,
		Offset: int16(binary.LittleEndian.Uint16(b[2:])),
		Imm:    int32(binary.LittleEndian.Uint32(b[4:])),
	}
}

// Encode appends the little-endian encoding of insns to dst.
func Encode(dst []byte, insns []Instruction) []byte {
	for _, ins := range insns {
		dst = append(dst, ins.Opcode, ins.Dst&0x0f|ins.Src<<4)
		dst = binary.LittleEndian.AppendUint16(dst, uint16(ins.Offset))
		dst = binary.LittleEndian.AppendUint32(dst, uint32(ins.Imm))
	}
	return dst
}

// LDDW returns the two slots of "lddw dst, value".
func LDDW(dst uint8, value uint64) [2]Instruction {
	return [2]Instruction{
		{Opcode: OpLDDW, Dst: dst, Imm: int32(uint32(value))},
		{Imm: int32(uint32(value >> 32))},
	}
}
