package amd64

import (
	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/jit/internal/backend"
	"github.com/uebpf/uebpf/jit/internal/x86"
)

// What the compiler knows inside a block (frame pointers, stack slots
// that hold a register, the constant in r1) is the front end's
// frontend.Tracking, in c.tr; these forward to it.

func (c *compiler) resetTracking()                                  { c.tr.Reset() }
func (c *compiler) frameOff(reg uint8, off int32) (int32, bool)     { return c.tr.FrameOff(reg, off) }
func (c *compiler) inFrame(reg uint8, off int32, size int) bool     { return c.tr.InFrame(reg, off, size) }
func (c *compiler) slotReg(off int32, size int) (uint8, bool)       { return c.tr.SlotReg(off, size) }
func (c *compiler) keySlot(off int32) (uint8, bool)                 { return c.tr.KeySlot(off) }
func (c *compiler) trackLDDW(pc int, dst uint8)                     { c.tr.LDDW(dst, backend.Constant(c.prog, pc)) }
func (c *compiler) trackALU(ins *asm.Instruction)                   { c.tr.ALU(ins) }
func (c *compiler) needsTrackALU(ins *asm.Instruction) bool         { return c.tr.NeedsALU(ins) }
func (c *compiler) trackStore(base uint8, off int32, size, src int) { c.tr.Store(base, off, size, src) }

// loadFromSlot emits a load of size bytes (zero-extended) through base at
// off into dst as a move when the slot is known to hold a register, and
// updates the tracking. It reports whether it emitted the load.
func (c *compiler) loadFromSlot(dst, base uint8, off int32, size int, signed bool) bool {
	src, hit := c.tr.Load(dst, base, off, size, signed)
	if hit {
		d, s := regMap[dst], regMap[src]
		switch size {
		case 8:
			if d != s {
				c.a.MovRR(8, d, s)
			}
		case 4:
			c.a.MovRR(4, d, s)
		default:
			c.a.MovzxRR(size, d, s)
		}
	}
	return hit
}

// emitLeaPair emits "mov dst, src; add dst, imm" or "mov dst, src; add
// dst, reg" (slots pc and pc+1, in one block) as one lea, and reports
// whether it did.
func (c *compiler) emitLeaPair(pc int, ins *asm.Instruction) bool {
	if ins.Opcode != asm.ClassALU64|asm.AluMOV|asm.SourceX || ins.Offset != 0 || c.blind ||
		pc+1 >= len(c.insns) || c.Starts[pc+1] {
		return false
	}
	next := &c.insns[pc+1]
	if next.Dst != ins.Dst || ins.Dst == ins.Src {
		return false
	}
	switch next.Opcode {
	case asm.ClassALU64 | asm.AluADD | asm.SourceK:
		c.a.Lea(regMap[ins.Dst], x86.M(regMap[ins.Src], next.Imm))
	case asm.ClassALU64 | asm.AluADD | asm.SourceX:
		index := next.Src
		if index == ins.Dst { // dst + dst: src + src
			index = ins.Src
		}
		c.a.Lea(regMap[ins.Dst], x86.MIndex(regMap[ins.Src], regMap[index], 1, 0))
	default:
		return false
	}
	return true
}
