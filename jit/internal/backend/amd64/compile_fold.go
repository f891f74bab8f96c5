package amd64

import (
	"github.com/uebpf/uebpf/asm"
)

// Clang adds an offset that does not fit an instruction's 16 bits to the
// pointer first ("r3 += 0x100000; *(u8 *)(r3 + 0) = r4"), and often never
// reads the sum again. Such a pair becomes one access at [r3 + 0x100000]:
// one instruction fewer, which in a tight loop is the difference between
// one and two cycles an iteration (measured on a byte copy).

// emitFoldedAccess emits "add dst, imm" at slot pc and the load or store
// through dst at pc+1 as one access with imm in its displacement, leaving
// dst as it was, and reports whether it did. It does so only when nothing
// reads dst's new value: the load writes dst itself, or no path from
// pc+2 reads dst before writing it (DeadAfter).
func (c *compiler) emitFoldedAccess(pc int, ins *asm.Instruction) bool {
	if ins.Opcode != asm.ClassALU64|asm.AluADD|asm.SourceK || c.blind ||
		pc+1 >= len(c.insns) || c.Starts[pc+1] {
		return false
	}
	reg := ins.Dst
	if reg >= asm.R10 || c.tr.FramePointer(reg) {
		return false // a frame pointer: its accesses are tracked
	}
	next := &c.insns[pc+1]
	load := next.Class() == asm.ClassLDX
	base := next.Dst
	switch next.Opcode & 0xe7 { // class and mode
	case asm.ClassLDX | asm.ModeMEM, asm.ClassLDX | asm.ModeMEMSX:
		base = next.Src
	case asm.ClassST | asm.ModeMEM:
	case asm.ClassSTX | asm.ModeMEM:
		if next.Src == reg {
			return false // stores the sum
		}
	default:
		return false
	}
	off := int64(ins.Imm) + int64(next.Offset)
	if base != reg || off != int64(int32(off)) {
		return false
	}
	if !(load && next.Dst == reg) && !c.DeadAfter(pc+2, reg) {
		return false
	}
	if c.needsTrackALU(ins) {
		c.trackALU(ins)
	}
	c.pc = pc + 1
	if load {
		c.emitLoad(pc+1, next, int32(off))
	} else {
		c.emitStore(pc+1, next, int32(off))
	}
	return true
}
