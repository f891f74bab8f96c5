package jit

import "unsafe"

// Code returns the program's machine code and the offset of its body, for
// tests that disassemble it.
func Code(p *Program) (code []byte, body int) {
	base := uintptr(0)
	if len(p.mem) > 0 {
		base = uintptr(unsafe.Pointer(unsafe.SliceData(p.mem)))
	}
	return p.mem, int(p.entry - base)
}
