package asm

// The .raw directive writes one slot as the little-endian 64-bit number the
// conformance suite uses in its "-- raw" sections: opcode in the low byte,
// then the registers, the offset, and the immediate in the high half.

func rawValue(ins Instruction) uint64 {
	return uint64(ins.Opcode) |
		uint64(ins.Dst&0x0f|ins.Src<<4)<<8 |
		uint64(uint16(ins.Offset))<<16 |
		uint64(uint32(ins.Imm))<<32
}

func fromRaw(v uint64) Instruction {
	return Instruction{
		Opcode: uint8(v),
		Dst:    uint8(v>>8) & 0x0f,
		Src:    uint8(v>>12) & 0x0f,
		Offset: int16(v >> 16),
		Imm:    int32(v >> 32),
	}
}
