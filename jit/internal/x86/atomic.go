package x86

// LockXadd emits "lock xadd [m], r": r receives the old value.
func (a *Asm) LockXadd(size int, m Mem, r Reg) {
	c := opc2(size, 0x0f, 0xc1)
	c = c.lock()
	a.rm(c, byte(r), m)
}

// Xchg emits "xchg [m], r", which is atomic without a LOCK prefix.
func (a *Asm) Xchg(size int, m Mem, r Reg) {
	a.rm(opc1(size, 0x87), byte(r), m)
}

// LockCmpxchg emits "lock cmpxchg [m], r": if [m] equals rax (eax) it
// stores r, else it loads [m] into rax (eax).
func (a *Asm) LockCmpxchg(size int, m Mem, r Reg) {
	c := opc2(size, 0x0f, 0xb1)
	c = c.lock()
	a.rm(c, byte(r), m)
}
