package frontend

import (
	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/vm"
)

// Tracking is what a back end knows inside a block (straight-line code with one
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

// Tracking is a back end's knowledge of a block so far, updated as it
// emits each instruction (Reset at block starts, calls, atomics and packet
// loads). The masks have a bit per eBPF register, so that forgetting what
// a register held costs two tests when there is nothing to forget.
type Tracking struct {
	fpKnown  uint16    // registers that hold r10 + fpOff
	slotRegs uint16    // registers that slots hold, and r1 (see R1Known)
	fpOff    [11]int32 //
	slots    [maxSlots]slotInfo
	nslots   int
	// R1Known: r1 holds the constant R1 here (lddw r1 in this block).
	R1Known bool
	R1      uint64
}

// Reset forgets everything but r10.
func (t *Tracking) Reset() {
	t.fpKnown, t.slotRegs, t.nslots = 1<<asm.R10, 1<<asm.R1, 0
	t.fpOff[asm.R10] = 0
	t.R1Known = false
}

// FrameOff returns the offset from r10 of [reg+off] when reg is a known
// frame pointer.
func (t *Tracking) FrameOff(reg uint8, off int32) (int32, bool) {
	if t.fpKnown&(1<<(reg&15)) == 0 {
		return 0, false
	}
	return t.fpOff[reg] + off, true
}

// FramePointer reports whether reg holds r10 plus a constant.
func (t *Tracking) FramePointer(reg uint8) bool { return t.fpKnown&(1<<(reg&15)) != 0 }

// InFrame reports whether [reg+off] of size bytes is inside the current
// frame, where accesses need no check.
func (t *Tracking) InFrame(reg uint8, off int32, size int) bool {
	o, ok := t.FrameOff(reg, off)
	return ok && o >= -vm.StackFrameSize && o <= int32(-size)
}

// SlotReg returns the register whose low size bytes the slot at r10+off
// holds, if known.
func (t *Tracking) SlotReg(off int32, size int) (uint8, bool) {
	for i := range t.nslots {
		s := &t.slots[i]
		if s.off == off && int(s.size) == size {
			return s.reg, true
		}
	}
	return 0, false
}

// KeySlot returns the register whose low 4 bytes are at r10+off, a
// lookup's key, if known: a slot of 4 or 8 bytes there.
func (t *Tracking) KeySlot(off int32) (uint8, bool) {
	for i := range t.nslots {
		s := &t.slots[i]
		if s.off == off && s.size >= 4 {
			return s.reg, true
		}
	}
	return 0, false
}

// forgetOverlap forgets the slots that overlap size bytes at r10+off.
func (t *Tracking) forgetOverlap(off int32, size int) {
	n, regs := 0, uint16(1<<asm.R1)
	for i := range t.nslots {
		s := t.slots[i]
		if s.off+int32(s.size) <= off || off+int32(size) <= s.off {
			t.slots[n] = s
			n++
			regs |= 1 << s.reg
		}
	}
	t.nslots, t.slotRegs = n, regs
}

// forgetReg forgets the slots that hold register reg. It is not inlined,
// so that Written is.
//
//go:noinline
func (t *Tracking) forgetReg(reg uint8) {
	if reg == asm.R1 {
		t.R1Known = false
	}
	n, regs := 0, uint16(1<<asm.R1)
	for i := range t.nslots {
		if s := t.slots[i]; s.reg != reg {
			t.slots[n] = s
			n++
			regs |= 1 << s.reg
		}
	}
	t.nslots, t.slotRegs = n, regs
}

// remember records that the slot at r10+off holds register reg.
func (t *Tracking) remember(off int32, size int, reg uint8) {
	if t.nslots == maxSlots {
		copy(t.slots[:], t.slots[1:])
		t.nslots--
		t.slotRegs = 1 << asm.R1
		for i := range t.nslots {
			t.slotRegs |= 1 << t.slots[i].reg
		}
	}
	t.slots[t.nslots] = slotInfo{off: off, size: uint8(size), reg: reg}
	t.nslots++
	t.slotRegs |= 1 << reg
}

// Written forgets what register reg held.
func (t *Tracking) Written(reg uint8) {
	bit := uint16(1) << reg
	t.fpKnown &^= bit
	if t.slotRegs&bit != 0 {
		t.forgetReg(reg)
	}
}

// LDDW updates the tracking after lddw of v into dst.
func (t *Tracking) LDDW(dst uint8, v uint64) {
	t.Written(dst)
	if dst == asm.R1 {
		t.R1Known, t.R1 = true, v
	}
}

// ALU updates the tracking after an ALU instruction. Most write a
// register nothing is known of: a compile loop calls it only when
// NeedsALU.
func (t *Tracking) ALU(ins *asm.Instruction) {
	dst := ins.Dst & 15
	if dst >= 10 {
		return // validation refuses writes to r10
	}
	bit := uint16(1) << dst
	switch {
	case ins.Opcode == asm.ClassALU64|asm.AluMOV|asm.SourceX && ins.Offset == 0:
		src := ins.Src & 15
		t.Written(dst)
		if t.fpKnown&(1<<src) != 0 {
			t.fpKnown |= bit
			t.fpOff[dst] = t.fpOff[src]
		}
		return
	case t.fpKnown&bit == 0:
	case ins.Opcode == asm.ClassALU64|asm.AluADD|asm.SourceK:
		t.moveFrame(dst, int64(ins.Imm))
		return
	case ins.Opcode == asm.ClassALU64|asm.AluSUB|asm.SourceK:
		t.moveFrame(dst, -int64(ins.Imm))
		return
	}
	t.Written(dst)
}

// NeedsALU reports whether ALU has anything to do for ins.
func (t *Tracking) NeedsALU(ins *asm.Instruction) bool {
	return (t.fpKnown|t.slotRegs)&(1<<(ins.Dst&15)) != 0 || ins.Opcode == asm.ClassALU64|asm.AluMOV|asm.SourceX
}

// moveFrame adds d to frame pointer dst.
func (t *Tracking) moveFrame(dst uint8, d int64) {
	o := int64(t.fpOff[dst]) + d
	t.Written(dst)
	if o >= -vm.StackSize && o <= vm.StackSize {
		t.fpKnown |= 1 << dst
		t.fpOff[dst] = int32(o)
	}
}

// Store updates the tracking for a store of size bytes through base
// with offset off, from register src (src < 0: an immediate).
func (t *Tracking) Store(base uint8, off int32, size int, src int) {
	o, ok := t.FrameOff(base, off)
	if !ok {
		t.nslots, t.slotRegs = 0, 1<<asm.R1
		return
	}
	if t.nslots != 0 {
		t.forgetOverlap(o, size)
	}
	if src >= 0 {
		t.remember(o, size, uint8(src))
	}
}

// Load updates the tracking for a load of size bytes (zero-extended, or
// sign-extended if signed) through base with offset off into dst, and
// returns the register whose low bytes the slot holds when the load can be
// a move from it.
func (t *Tracking) Load(dst, base uint8, off int32, size int, signed bool) (src uint8, move bool) {
	o, ok := t.FrameOff(base, off)
	if !ok || t.nslots == 0 {
		t.Written(dst)
		return 0, false
	}
	src, hit := t.SlotReg(o, size)
	t.Written(dst)
	return src, hit && !signed
}
