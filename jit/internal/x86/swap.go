package x86

// Bswap emits "bswap r" (size 4 or 8).
func (a *Asm) Bswap(size int, r Reg) {
	a.prefixes(opc2(size, 0x0f, 0xc8+r.low()), 0, 0, r.hi(), false)
}

// MovbeLoad emits "movbe dst, [m]": a load of size bytes (2, 4, 8) with
// the bytes reversed. Size 2 writes only the low word of dst.
func (a *Asm) MovbeLoad(size int, dst Reg, m Mem) {
	a.rm(opc3(size, 0x0f, 0x38, 0xf0), byte(dst), m)
}

// MovbeStore emits "movbe [m], src".
func (a *Asm) MovbeStore(size int, m Mem, src Reg) {
	a.rm(opc3(size, 0x0f, 0x38, 0xf1), byte(src), m)
}
