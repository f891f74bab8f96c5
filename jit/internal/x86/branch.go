package x86

// JccShort emits "jcc rel8" with rel8 relative to the end of the
// instruction.
func (a *Asm) JccShort(c Cond, rel int8) {
	a.emit(uint64(0x70|byte(c))|uint64(uint8(rel))<<8, 2, 0, 0)
}

// Jcc emits "jcc rel32" with a zero displacement and returns the
// position of the rel32 field for PatchRel32.
func (a *Asm) Jcc(c Cond) int {
	a.emit(0x0f|uint64(0x80|byte(c))<<8, 6, 0, 0)
	return a.Len() - 4
}

// JccTo emits a conditional jump to target, an offset already emitted,
// in its short form when it reaches.
func (a *Asm) JccTo(c Cond, target int) {
	if rel := int64(target - (a.Len() + 2)); fitsInt8(rel) {
		a.JccShort(c, int8(rel))
		return
	}
	a.PatchRel32(a.Jcc(c), target)
}

// JmpShort emits "jmp rel8".
func (a *Asm) JmpShort(rel int8) {
	a.emit(0xeb|uint64(uint8(rel))<<8, 2, 0, 0)
}

// Jmp emits "jmp rel32" with a zero displacement and returns the position
// of the rel32 field.
func (a *Asm) Jmp() int {
	a.emit(0xe9, 5, 0, 0)
	return a.Len() - 4
}

// JmpTo emits an unconditional jump to target, an offset already emitted.
func (a *Asm) JmpTo(target int) {
	if rel := int64(target - (a.Len() + 2)); fitsInt8(rel) {
		a.JmpShort(int8(rel))
		return
	}
	a.PatchRel32(a.Jmp(), target)
}

// JmpMem emits "jmp qword [m]".
func (a *Asm) JmpMem(m Mem) { a.rm(opc1(4, 0xff), 4, m) }

// JmpReg emits "jmp r".
func (a *Asm) JmpReg(r Reg) { a.rr(opc1(4, 0xff), 4, r) }

// Call emits "call rel32" and returns the position of the rel32 field.
func (a *Asm) Call() int {
	a.emit(0xe8, 5, 0, 0)
	return a.Len() - 4
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
