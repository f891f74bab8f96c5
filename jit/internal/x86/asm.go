package x86

import "encoding/binary"

// Asm is a buffer of machine code.
type Asm struct {
	b []byte
}

// NewAsm returns a buffer with room for n bytes.
func NewAsm(n int) *Asm { return &Asm{b: make([]byte, 0, n)} }

// Bytes returns the code emitted so far.
func (a *Asm) Bytes() []byte { return a.b }

// Len returns the number of bytes emitted so far.
func (a *Asm) Len() int { return len(a.b) }

// nops are the recommended multi-byte NOPs, by length (Intel SDM, NOP).
var nops = [...][]byte{
	1: {0x90},
	2: {0x66, 0x90},
	3: {0x0f, 0x1f, 0x00},
	4: {0x0f, 0x1f, 0x40, 0x00},
	5: {0x0f, 0x1f, 0x44, 0x00, 0x00},
	6: {0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00},
	7: {0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00},
	8: {0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00},
}

// Align pads the buffer with NOPs to a multiple of n (a power of two up
// to 16), as few instructions as possible.
func (a *Asm) Align(n int) {
	for pad := -len(a.b) & (n - 1); pad > 0; {
		k := min(pad, 8)
		a.b = append(a.b, nops[k]...)
		pad -= k
	}
}

// Reset empties the buffer, keeping its capacity.
func (a *Asm) Reset() { a.b = a.b[:0] }

func (a *Asm) byte1(v byte) { a.b = append(a.b, v) }

func (a *Asm) imm8(v int8) { a.b = append(a.b, byte(v)) }

func (a *Asm) imm16(v int16) { a.b = binary.LittleEndian.AppendUint16(a.b, uint16(v)) }

func (a *Asm) imm32(v int32) { a.b = binary.LittleEndian.AppendUint32(a.b, uint32(v)) }

func (a *Asm) imm64(v uint64) { a.b = binary.LittleEndian.AppendUint64(a.b, v) }

// Patch32 overwrites the 4 bytes at pos with v.
func (a *Asm) Patch32(pos int, v int32) {
	binary.LittleEndian.PutUint32(a.b[pos:], uint32(v))
}

// PatchRel32 makes the rel32 field at pos (the last field of its
// instruction) point at target, both offsets in the buffer.
func (a *Asm) PatchRel32(pos, target int) {
	a.Patch32(pos, int32(target-(pos+4)))
}

func fitsInt8(v int64) bool { return v >= -128 && v <= 127 }

func fitsInt32(v int64) bool { return v >= -1<<31 && v <= 1<<31-1 }

// Append appends code emitted elsewhere, which must not depend on its
// address.
func (a *Asm) Append(code []byte) { a.b = append(a.b, code...) }

// Repeat appends a copy of the n bytes emitted at from, which must not
// depend on their address (no RIP-relative operand, no relative jump).
func (a *Asm) Repeat(from, n int) {
	if n > 16 {
		a.b = append(a.b, a.b[from:from+n]...)
		return
	}
	p := a.room()
	*p = [16]byte(a.b[from : from+16]) // read before written: may overlap p
	a.b = a.b[:len(a.b)+n]
}

// Quad appends v as 8 bytes of data.
func (a *Asm) Quad(v uint64) { a.imm64(v) }

// Dword appends v as 4 bytes of data.
func (a *Asm) Dword(v int32) { a.imm32(v) }

// Truncate drops what was emitted from offset n on.
func (a *Asm) Truncate(n int) { a.b = a.b[:n] }
