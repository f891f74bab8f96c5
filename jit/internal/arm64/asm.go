package arm64

import (
	"encoding/binary"
	"fmt"
)

// Asm is a buffer of machine code: little-endian instruction words.
type Asm struct {
	b []byte
}

// NewAsm returns a buffer with room for n instructions.
func NewAsm(n int) *Asm { return &Asm{b: make([]byte, 0, 4*n)} }

// Bytes returns the code emitted so far.
func (a *Asm) Bytes() []byte { return a.b }

// Len returns the number of bytes emitted so far; the next instruction
// goes there.
func (a *Asm) Len() int { return len(a.b) }

// Reset empties the buffer, keeping its capacity.
func (a *Asm) Reset() { a.b = a.b[:0] }

// Emit appends one instruction.
func (a *Asm) Emit(w uint32) { a.b = binary.LittleEndian.AppendUint32(a.b, w) }

// EmitOK appends w when ok, and reports ok, so that a fallible encoder's
// result can be emitted in one line: if !a.EmitOK(Load(...)) { fallback }.
func (a *Asm) EmitOK(w uint32, ok bool) bool {
	if ok {
		a.Emit(w)
	}
	return ok
}

// Word returns the instruction at byte offset pos.
func (a *Asm) Word(pos int) uint32 { return binary.LittleEndian.Uint32(a.b[pos:]) }

// Patch overwrites the instruction at pos.
func (a *Asm) Patch(pos int, w uint32) { binary.LittleEndian.PutUint32(a.b[pos:], w) }

// MovConst emits the sequence of MovConstWords.
func (a *Asm) MovConst(size int, rd Reg, v uint64) {
	code, n := MovConstWords(size, rd, v)
	for _, w := range code[:n] {
		a.Emit(w)
	}
}

// PatchBranch makes the branch at pos (B, BL, B.cond, CBZ, CBNZ, TBZ or
// TBNZ, emitted with any offset) jump to target, both byte offsets in the
// buffer. It returns an error when the target is out of the branch's
// range, and panics when the word at pos is not a branch.
func (a *Asm) PatchBranch(pos, target int) error {
	w, err := Retarget(a.Word(pos), int64(target-pos))
	if err != nil {
		return fmt.Errorf("branch at %#x to %#x: %w", pos, target, err)
	}
	a.Patch(pos, w)
	return nil
}

// ErrOutOfRange is returned by PatchBranch and Retarget when a target is
// too far for the branch.
var ErrOutOfRange = fmt.Errorf("arm64: branch target out of range")

// Retarget returns the branch w with its offset replaced by off.
func Retarget(w uint32, off int64) (uint32, error) {
	w, ok := branchOffset(w, off)
	if !ok {
		return 0, ErrOutOfRange
	}
	return w, nil
}

// branchOffset returns w, a B, BL, B.cond, CBZ, CBNZ, TBZ or TBNZ, with
// its offset field set to off, or false when off is misaligned or out of
// the branch's range. The encoders build their words with it too, so that
// encoding and patching cannot disagree.
func branchOffset(w uint32, off int64) (uint32, bool) {
	var field, mask uint32
	var ok bool
	switch {
	case w&0x7c000000 == 0x14000000: // B, BL: imm26
		field, ok = words(off, RangeB)
		mask = 0x3ffffff
	case w&0xff000010 == 0x54000000, // B.cond: imm19 at 5
		w&0x7e000000 == 0x34000000: // CBZ, CBNZ: imm19 at 5
		field, ok = words(off, RangeCond)
		field, mask = field<<5, 0x7ffff<<5
	case w&0x7e000000 == 0x36000000: // TBZ, TBNZ: imm14 at 5
		field, ok = words(off, RangeTB)
		field, mask = field<<5, 0x3fff<<5
	default:
		panic(fmt.Sprintf("arm64: %#08x is not a PC-relative branch", w))
	}
	if !ok {
		return 0, false
	}
	return w&^mask | field&mask, true
}
