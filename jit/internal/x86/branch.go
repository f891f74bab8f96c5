package x86

import "encoding/binary"

// JccShort emits "jcc rel8" with rel8 relative to the end of the
// instruction.
func (a *Asm) JccShort(c Cond, rel int8) {
	p := a.room()
	p[0], p[1] = 0x70|byte(c), byte(rel)
	a.b = a.b[:len(a.b)+2]
}

// Jcc emits "jcc rel32" with a zero displacement and returns the
// position of the rel32 field for PatchRel32.
func (a *Asm) Jcc(c Cond) int {
	p := a.room()
	binary.LittleEndian.PutUint64(p[:8], 0x0f|uint64(0x80|byte(c))<<8)
	end := len(a.b) + 6
	a.b = a.b[:end]
	return end - 4
}

// JccTo emits a conditional jump to target, an offset already emitted,
// in its short form when it reaches.
//
// Branches to known targets are the most frequent instructions of the
// compiler's stubs: each form is written in one store, not through emit
// and a patch.
func (a *Asm) JccTo(c Cond, target int) {
	start := len(a.b)
	p := a.room()
	if rel := int64(target - (start + 2)); fitsInt8(rel) {
		p[0], p[1] = 0x70|byte(c), byte(rel)
		a.b = a.b[:start+2]
		return
	}
	rel := uint32(target - (start + 6))
	binary.LittleEndian.PutUint64(p[:8], 0x0f|uint64(0x80|byte(c))<<8|uint64(rel)<<16)
	a.b = a.b[:start+6]
}

// JmpShort emits "jmp rel8".
func (a *Asm) JmpShort(rel int8) {
	p := a.room()
	p[0], p[1] = 0xeb, byte(rel)
	a.b = a.b[:len(a.b)+2]
}

// Jmp emits "jmp rel32" with a zero displacement and returns the position
// of the rel32 field.
func (a *Asm) Jmp() int {
	p := a.room()
	binary.LittleEndian.PutUint64(p[:8], 0xe9)
	end := len(a.b) + 5
	a.b = a.b[:end]
	return end - 4
}

// JmpTo emits an unconditional jump to target, an offset already emitted.
func (a *Asm) JmpTo(target int) {
	start := len(a.b)
	p := a.room()
	if rel := int64(target - (start + 2)); fitsInt8(rel) {
		p[0], p[1] = 0xeb, byte(rel)
		a.b = a.b[:start+2]
		return
	}
	rel := uint32(target - (start + 5))
	binary.LittleEndian.PutUint64(p[:8], 0xe9|uint64(rel)<<8)
	a.b = a.b[:start+5]
}

// JmpMem emits "jmp qword [m]".
func (a *Asm) JmpMem(m Mem) { a.rm(opc1(4, 0xff), 4, m) }

// JmpReg emits "jmp r".
func (a *Asm) JmpReg(r Reg) { a.rr(opc1(4, 0xff), 4, r) }

// Call emits "call rel32" and returns the position of the rel32 field.
func (a *Asm) Call() int {
	p := a.room()
	binary.LittleEndian.PutUint64(p[:8], 0xe8)
	end := len(a.b) + 5
	a.b = a.b[:end]
	return end - 4
}

// CallReg emits "call r".
func (a *Asm) CallReg(r Reg) { a.rr(opc1(4, 0xff), 2, r) }

// Ret emits "ret".
func (a *Asm) Ret() { a.byte1(0xc3) }

// Push emits "push r".
func (a *Asm) Push(r Reg) { a.prefixes(opc1(4, 0x50+r.low()), 0, 0, r.hi(), false) }

// Pop emits "pop r".
func (a *Asm) Pop(r Reg) { a.prefixes(opc1(4, 0x58+r.low()), 0, 0, r.hi(), false) }

// Ud2 emits "ud2", which traps.
func (a *Asm) Ud2() { a.b = append(a.b, 0x0f, 0x0b) }

// Int3 emits "int3", the padding between functions.
func (a *Asm) Int3() { a.byte1(0xcc) }

// RepMovsb emits "rep movsb": copy rcx bytes from [rsi] to [rdi].
func (a *Asm) RepMovsb() { a.b = append(a.b, 0xf3, 0xa4) }
