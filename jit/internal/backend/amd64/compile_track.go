package amd64

import (
	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/jit/internal/x86"
	"github.com/uebpf/uebpf/vm"
)

// What the compiler knows inside a block (straight-line code with one
// entry), forgotten at the start of each block and at calls:
//
//   - which registers hold r10 plus a constant (frame pointers: r2 = r10;
//     r2 += -4 before a helper call), so that their accesses inside the
//     frame need no check, as r10's;
//   - which stack slots hold the value of a register, stored or loaded in
//     this block and unchanged since, so that a load of such a slot (a
//     spilled register read back, the key of an inline lookup) is a move;
//   - the constant r1 holds after lddw r1 (inline lookups).
//
// Stack slots are forgotten on any store that may overlap them, on any
// store or atomic through an address that is not a known frame pointer,
// and when their register changes.

// slotInfo: the size bytes at r10+off hold the low bytes of eBPF
// register reg.
type slotInfo struct {
	off  int32
	size uint8
	reg  uint8
}

// maxSlots bounds the slots remembered; the oldest is forgotten first.
const maxSlots = 4

// tracking is the compiler's knowledge of a block so far. The masks have
// a bit per eBPF register, so that forgetting what a register held costs
// two tests when there is nothing to forget.
type tracking struct {
	fpKnown  uint16    // registers that hold r10 + fpOff
	slotRegs uint16    // registers that slots hold, and r1 (see r1Known)
	fpOff    [11]int32 //
	slots    [maxSlots]slotInfo
	nslots   int
}

// resetTracking forgets everything but r10.
func (c *compiler) resetTracking() {
	c.tr.fpKnown, c.tr.slotRegs, c.tr.nslots = 1<<asm.R10, 1<<asm.R1, 0
	c.tr.fpOff[asm.R10] = 0
	c.r1Known = false
}

// frameOff returns the offset from r10 of [reg+off] when reg is a known
// frame pointer.
func (c *compiler) frameOff(reg uint8, off int32) (int32, bool) {
	if c.tr.fpKnown&(1<<(reg&15)) == 0 {
		return 0, false
	}
	return c.tr.fpOff[reg] + off, true
}

// inFrame reports whether [reg+off] of size bytes is inside the current
// frame, where accesses need no check.
func (c *compiler) inFrame(reg uint8, off int32, size int) bool {
	o, ok := c.frameOff(reg, off)
	return ok && o >= -vm.StackFrameSize && o <= int32(-size)
}

// slotReg returns the register whose low size bytes the slot at r10+off
// holds, if known.
func (c *compiler) slotReg(off int32, size int) (uint8, bool) {
	for i := range c.tr.nslots {
		s := &c.tr.slots[i]
		if s.off == off && int(s.size) == size {
			return s.reg, true
		}
	}
	return 0, false
}

// keySlot returns the register whose low 4 bytes are at r10+off, a
// lookup's key, if known: a slot of 4 or 8 bytes there.
func (c *compiler) keySlot(off int32) (uint8, bool) {
	for i := range c.tr.nslots {
		s := &c.tr.slots[i]
		if s.off == off && s.size >= 4 {
			return s.reg, true
		}
	}
	return 0, false
}

// forgetOverlap forgets the slots that overlap size bytes at r10+off.
func (c *compiler) forgetOverlap(off int32, size int) {
	n, regs := 0, uint16(1<<asm.R1)
	for i := range c.tr.nslots {
		s := c.tr.slots[i]
		if s.off+int32(s.size) <= off || off+int32(size) <= s.off {
			c.tr.slots[n] = s
			n++
			regs |= 1 << s.reg
		}
	}
	c.tr.nslots, c.tr.slotRegs = n, regs
}

// forgetReg forgets the slots that hold register reg. It is not inlined,
// so that written is.
//
//go:noinline
func (c *compiler) forgetReg(reg uint8) {
	if reg == asm.R1 {
		c.r1Known = false
	}
	n, regs := 0, uint16(1<<asm.R1)
	for i := range c.tr.nslots {
		if s := c.tr.slots[i]; s.reg != reg {
			c.tr.slots[n] = s
			n++
			regs |= 1 << s.reg
		}
	}
	c.tr.nslots, c.tr.slotRegs = n, regs
}

// remember records that the slot at r10+off holds register reg.
func (c *compiler) remember(off int32, size int, reg uint8) {
	if c.tr.nslots == maxSlots {
		copy(c.tr.slots[:], c.tr.slots[1:])
		c.tr.nslots--
		c.tr.slotRegs = 1 << asm.R1
		for i := range c.tr.nslots {
			c.tr.slotRegs |= 1 << c.tr.slots[i].reg
		}
	}
	c.tr.slots[c.tr.nslots] = slotInfo{off: off, size: uint8(size), reg: reg}
	c.tr.nslots++
	c.tr.slotRegs |= 1 << reg
}

// written forgets what register reg held.
func (c *compiler) written(reg uint8) {
	bit := uint16(1) << reg
	c.tr.fpKnown &^= bit
	if c.tr.slotRegs&bit != 0 {
		c.forgetReg(reg)
	}
}

// trackLDDW updates the tracking after lddw at slot pc.
func (c *compiler) trackLDDW(pc int, dst uint8) {
	c.written(dst)
	if dst == asm.R1 {
		c.r1Known, c.r1 = true, c.prog.Constant(pc)
	}
}

// trackALU updates the tracking after an ALU instruction. Most write a
// register nothing is known of: the compile loop calls it only when
// needsTrackALU.
func (c *compiler) trackALU(ins *asm.Instruction) {
	dst := ins.Dst & 15
	if dst >= 10 {
		return // validation refuses writes to r10
	}
	bit := uint16(1) << dst
	switch {
	case ins.Opcode == asm.ClassALU64|asm.AluMOV|asm.SourceX && ins.Offset == 0:
		src := ins.Src & 15
		c.written(dst)
		if c.tr.fpKnown&(1<<src) != 0 {
			c.tr.fpKnown |= bit
			c.tr.fpOff[dst] = c.tr.fpOff[src]
		}
		return
	case c.tr.fpKnown&bit == 0:
	case ins.Opcode == asm.ClassALU64|asm.AluADD|asm.SourceK:
		c.moveFrame(dst, int64(ins.Imm))
		return
	case ins.Opcode == asm.ClassALU64|asm.AluSUB|asm.SourceK:
		c.moveFrame(dst, -int64(ins.Imm))
		return
	}
	c.written(dst)
}

// needsTrackALU reports whether trackALU has anything to do for ins.
func (c *compiler) needsTrackALU(ins *asm.Instruction) bool {
	return (c.tr.fpKnown|c.tr.slotRegs)&(1<<(ins.Dst&15)) != 0 || ins.Opcode == asm.ClassALU64|asm.AluMOV|asm.SourceX
}

// moveFrame adds d to frame pointer dst.
func (c *compiler) moveFrame(dst uint8, d int64) {
	o := int64(c.tr.fpOff[dst]) + d
	c.written(dst)
	if o >= -vm.StackSize && o <= vm.StackSize {
		c.tr.fpKnown |= 1 << dst
		c.tr.fpOff[dst] = int32(o)
	}
}

// trackStore updates the tracking for a store of size bytes through base
// with offset off, from register src (src < 0: an immediate).
func (c *compiler) trackStore(base uint8, off int32, size int, src int) {
	o, ok := c.frameOff(base, off)
	if !ok {
		c.tr.nslots, c.tr.slotRegs = 0, 1<<asm.R1
		return
	}
	if c.tr.nslots != 0 {
		c.forgetOverlap(o, size)
	}
	if src >= 0 {
		c.remember(o, size, uint8(src))
	}
}

// loadFromSlot emits a load of size bytes (zero-extended) through base at
// off into dst as a move when the slot is known to hold a register, and
// updates the tracking. It reports whether it emitted the load.
func (c *compiler) loadFromSlot(dst, base uint8, off int32, size int, signed bool) bool {
	o, ok := c.frameOff(base, off)
	if !ok || c.tr.nslots == 0 {
		c.written(dst)
		return false
	}
	src, hit := c.slotReg(o, size)
	if hit && !signed {
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
	c.written(dst)
	return hit && !signed
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
