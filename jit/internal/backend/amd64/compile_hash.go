package amd64

import (
	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/internal/engine"
	"github.com/uebpf/uebpf/jit/internal/backend"
	"github.com/uebpf/uebpf/jit/internal/x86"
	"github.com/uebpf/uebpf/maps"
)

// Inline hash updates. A call to a HashUpdate helper (bpf_map_update_elem)
// on a hash or LRU hash map of package maps that overwrites the value of a
// key already in the map is answered in generated code, under the map's
// stripe lock, exactly as the map's UpdateElem answers it
// (engine.HashLayout is the recipe). Everything else (a missing key, a busy
// lock, flags other than BPF_ANY and BPF_EXIST) takes the ordinary helper
// exit right after, where Go answers as the interpreter does. The inline
// code comes after the call's budget test, so both paths charge alike.
//
// The call qualifies when r1 is known at compile time to point at such a
// map (lddw r1, map in the same block), its key is 1, 2, 4 or 8 bytes and
// its value at most frontend.MaxInlineValue bytes; checked code also needs the key
// and the value in the current frame, where no check is needed. Verified
// code relies on the verifier, which checked both against the map's sizes.
//
// Going through Go cost six times the update itself (BenchmarkHashUpdate):
// a return to the trampoline, the dispatch, and the stores of every
// register, which the lock's locked instruction then waited for.

// inlineHashUpdate returns the layout and sizes of the map that the
// HashUpdate call at slot pc updates, if the call can be answered inline.
func (c *compiler) inlineHashUpdate(pc int) (l engine.HashLayout, keySize, valueSize int, ok bool) {
	return c.tr.InlineHashUpdate(c.prog, &c.insns[pc], c.checked)
}

// knownMap returns the index of the map table entry that r1 points to at
// this call, if known.
func (c *compiler) knownMap() (int, bool) { return c.tr.KnownMap(c.prog) }

// emitHashUpdateCall emits the call at slot pc of a HashUpdate helper that
// inlineHashUpdate accepted: the budget's test, the inline update, and
// the helper exit for what it leaves to Go.
func (c *compiler) emitHashUpdateCall(pc int, l engine.HashLayout, keySize, valueSize int) {
	reason := c.helperReason(pc)
	c.checkBudget(pc)
	c.hashUpdates++
	done := c.emitHashUpdate(l, keySize, valueSize)
	if c.trap {
		c.jmpLeavePC(backend.ReasonBudget, int32(pc))
	} else {
		c.emitHelperLeave(pc, reason)
	}
	c.a.PatchRel32(done, c.a.Len())
}

// emitHashUpdate emits an inline update. What it leaves to Go falls
// through at its end, into the helper exit; the rel32 jump done ends the
// update it makes, past that exit.
//
// Registers: r11 the key word, rdi the control word a match has, rdx the
// lock, r10 the slot, rcx the slots left to look at, rax scratch. r1, r5
// and the budget (rdx) are saved on the native stack around it; r2-r4 are
// only read, so the helper exit sees all of r1-r5 as the program left them.
func (c *compiler) emitHashUpdate(l engine.HashLayout, keySize, valueSize int) (done int) {
	a := c.a
	const (
		key   = tmpAddr
		want  = x86.RDI
		lock  = x86.RDX
		slot  = x86.R10
		left  = tmpC
		value = x86.R8 // r3
		flags = x86.R9 // r4
	)
	keyOff, _ := c.frameOff(asm.R2, 0)
	if r, ok := c.slotReg(keyOff, keySize); ok && c.inFrame(asm.R2, 0, keySize) {
		// The key was stored from a register in this block: no load.
		if keySize < 4 {
			a.MovzxRR(keySize, key, regMap[r])
		} else {
			a.MovRR(keySize, key, regMap[r])
		}
	} else {
		a.Load(keySize, key, x86.M(regMap[2], 0))
	}
	// BPF_ANY (0) and BPF_EXIST (2) only.
	a.TestRI(8, flags, ^int32(maps.UpdateExist))
	badFlags := a.Jcc(x86.CondNE)
	a.Push(lock)
	a.Push(want)
	a.Push(slot)
	// rax = HashSmall(start, key): two 128-bit products, halves xored.
	a.MovRI(x86.RAX, l.HashStart^engine.HashP0)
	a.ALURR(x86.XOR, 8, x86.RAX, key)
	a.MovRI(tmpC, engine.HashP1)
	a.ALURR(x86.XOR, 8, tmpC, key)
	a.Unary(x86.MUL, 8, tmpC)
	a.ALURR(x86.XOR, 8, x86.RAX, x86.RDX)
	a.MovRI(tmpC, engine.HashP2)
	a.ALURR(x86.XOR, 8, tmpC, x86.RAX)
	a.Unary(x86.MUL, 8, tmpC)
	a.ALURR(x86.XOR, 8, x86.RAX, x86.RDX)
	// want = tag | live; rax = home.
	a.MovRR(4, want, x86.RAX)
	a.ALURI(x86.AND, 4, want, engine.CtrlTagMask)
	a.ALURI(x86.OR, 4, want, engine.CtrlLive)
	a.ShiftRI(x86.SHR, 8, x86.RAX, 32)
	a.ImulRRI(8, x86.RAX, x86.RAX, int32(l.NumSlots))
	a.ShiftRI(x86.SHR, 8, x86.RAX, 32)
	// lock = Locks + (home & LockMask) * LockStride; slot = the home slot.
	a.MovRR(4, tmpC, x86.RAX)
	a.ALURI(x86.AND, 4, tmpC, int32(l.LockMask))
	a.ImulRRI(8, tmpC, tmpC, int32(l.LockStride))
	a.MovRI(lock, uint64(l.Locks))
	a.ALURR(x86.ADD, 8, lock, tmpC)
	a.ImulRRI(8, slot, x86.RAX, int32(l.SlotSize))
	a.MovRI(x86.RAX, uint64(l.Slots))
	a.ALURR(x86.ADD, 8, slot, x86.RAX)
	// Take the lock, or leave the waiting to Go.
	a.MovRI32(x86.RAX, 1)
	a.Xchg(4, x86.M(lock, 0), x86.RAX)
	a.TestRR(4, x86.RAX, x86.RAX)
	popAndFall := a.Jcc(x86.CondNE)
	// left = the home slot's bound on probes, unless saturated.
	a.Load(8, left, x86.M(slot, 0))
	a.ShiftRI(x86.SHR, 8, left, engine.CtrlHomeDistShift)
	a.ALURI(x86.AND, 4, left, engine.CtrlMaxDist)
	a.ALURI(x86.CMP, 4, left, engine.CtrlMaxDist)
	var unlockAndFall [3]int
	unlockAndFall[0] = a.Jcc(x86.CondE)
	probe := a.Len()
	a.Load(8, x86.RAX, x86.M(slot, 0))
	a.ALURR(x86.XOR, 8, x86.RAX, want)
	a.TestRI(4, x86.RAX, engine.CtrlTagMask|engine.CtrlStateMask)
	a.JccShort(x86.CondNE, 0)
	noMatch := a.Len()
	// Unlike a lookup, no second read of the control word: only holders
	// of this lock write this key into a slot, so a key word equal to it
	// after a live control word is that live element's, which stays live
	// while the lock is held.
	a.ALURM(x86.CMP, 8, key, x86.M(slot, int32(l.KeyOff)))
	found := a.Jcc(x86.CondE)
	a.Bytes()[noMatch-1] = byte(a.Len() - noMatch)
	// An empty slot ends the probe; so does the bound.
	a.Load(4, x86.RAX, x86.M(slot, 0))
	a.TestRI(4, x86.RAX, engine.CtrlStateMask)
	unlockAndFall[1] = a.Jcc(x86.CondE)
	a.ALURI(x86.SUB, 4, left, 1)
	unlockAndFall[2] = a.Jcc(x86.CondB)
	a.ALURI(x86.ADD, 8, slot, int32(l.SlotSize))
	a.MovRI(x86.RAX, uint64(l.Slots)+uint64(l.NumSlots)*uint64(l.SlotSize))
	a.ALURR(x86.CMP, 8, slot, x86.RAX)
	a.JccTo(x86.CondNE, probe)
	a.MovRI(slot, uint64(l.Slots))
	a.JmpTo(probe)

	// Found: copy the value, release the lock, r0 = 0.
	a.PatchRel32(found, a.Len())
	for off := 0; off < valueSize; {
		n := 8
		for n > valueSize-off {
			n >>= 1
		}
		a.Load(n, x86.RAX, x86.M(value, int32(off)))
		a.Store(n, x86.M(slot, int32(l.ValueOff)+int32(off)), x86.RAX)
		off += n
	}
	if l.RefBit != 0 {
		// LRU: the update is a use. The locked or only when the bit is
		// not there yet, as lruTouch does: most updates find it set.
		a.Load(4, x86.RAX, x86.M(slot, int32(l.RefOff)))
		a.TestRI(4, x86.RAX, int32(l.RefBit))
		a.JccShort(x86.CondNE, 0)
		skip := a.Len()
		a.MovRI32(x86.RAX, l.RefBit)
		a.LockALUMR(x86.OR, 4, x86.M(slot, int32(l.RefOff)), x86.RAX)
		a.Bytes()[skip-1] = byte(a.Len() - skip)
	}
	a.StoreImm(4, x86.M(lock, 0), 0)
	a.Pop(slot)
	a.Pop(want)
	a.Pop(lock)
	a.ALURR(x86.XOR, 4, x86.RAX, x86.RAX)
	done = a.Jmp()

	for _, p := range unlockAndFall {
		a.PatchRel32(p, a.Len())
	}
	a.StoreImm(4, x86.M(lock, 0), 0)
	a.PatchRel32(popAndFall, a.Len())
	a.Pop(slot)
	a.Pop(want)
	a.Pop(lock)
	a.PatchRel32(badFlags, a.Len())
	return done
}
