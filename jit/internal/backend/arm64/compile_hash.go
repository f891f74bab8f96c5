package arm64

import (
	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/internal/engine"
	"github.com/uebpf/uebpf/jit/internal/arm64"
	"github.com/uebpf/uebpf/jit/internal/backend"
	"github.com/uebpf/uebpf/maps"
)

// Inline hash updates, as the amd64 back end does them (its
// compile_hash.go says what qualifies, frontend.InlineHashUpdate decides):
// the value of an existing key overwritten in generated code under the
// map's stripe lock, everything else left to the helper exit right after.

// inlineHashUpdate returns the layout and sizes of the map that the
// HashUpdate call at slot pc updates, if the call can be answered inline.
func (c *a64Compiler) inlineHashUpdate(pc int) (l engine.HashLayout, keySize, valueSize int, ok bool) {
	return c.tr.InlineHashUpdate(c.prog, &c.insns[pc], c.checked)
}

// emitHashUpdateCall emits the call at slot pc of a HashUpdate helper that
// inlineHashUpdate accepted: the budget's test, the inline update, and
// the helper exit for what it leaves to Go.
func (c *a64Compiler) emitHashUpdateCall(pc int, l engine.HashLayout, keySize, valueSize int) {
	reason := c.inlineHelperReason(pc)
	c.checkBudget(pc)
	c.lk.updates++
	done := c.emitHashUpdate(l, keySize, valueSize)
	if c.trap {
		c.leavePC(backend.ReasonBudget, pc, false)
	} else {
		c.leaveForHelper(pc, reason)
	}
	c.here(done)
}

// emitHashUpdate emits an inline update. What it leaves to Go falls
// through at its end, into the helper exit; the branch done ends the
// update it makes, past that exit.
//
// Registers: x19 the key word, x20 the control word a match has, x21 the
// lock, x22 the slot, x23 the slots left to look at; x0 (r0, which either
// path sets), x16, x17 and x24 scratch. r1-r5 are only read, so the
// helper exit sees them as the program left them.
func (c *a64Compiler) emitHashUpdate(l engine.HashLayout, keySize, valueSize int) (done int) {
	a := c.a
	const (
		key   = a64Addr
		want  = a64Scratch
		lock  = a64Scratch2
		slot  = a64Scratch3
		left  = a64Scratch4
		tmp   = a64Scratch5
		hv    = arm64.X0
		t1    = a64Tmp
		t2    = a64Tmp2
		value = arm64.X3 // r3
		flags = arm64.X4 // r4
	)
	keyOff, _ := c.tr.FrameOff(asm.R2, 0)
	if r, ok := c.tr.SlotReg(keyOff, keySize); ok && c.tr.InFrame(asm.R2, 0, keySize) {
		// The key was stored from a register in this block: no load.
		switch keySize {
		case 1:
			a.Emit(arm64.Uxtb(key, a64Regs[r]))
		case 2:
			a.Emit(arm64.Uxth(key, a64Regs[r]))
		default:
			a.Emit(arm64.Mov(keySize, key, a64Regs[r]))
		}
	} else {
		c.emit(arm64.Load(keySize, key, a64Regs[2], 0))
	}
	// BPF_ANY (0) and BPF_EXIST (2) only.
	c.emit(arm64.TstImm(8, flags, ^uint64(maps.UpdateExist)))
	var fall []int // branches to the helper exit, the lock not held
	fall = append(fall, c.forward(must64(arm64.BCond(arm64.NE, 0))))
	// hv = HashSmall(start, key): two 128-bit products, halves xored.
	a.MovConst(8, hv, l.HashStart^engine.HashP0)
	a.Emit(arm64.ALUReg(arm64.EOR, 8, hv, hv, key))
	a.MovConst(8, t1, engine.HashP1)
	a.Emit(arm64.ALUReg(arm64.EOR, 8, t1, t1, key))
	a.Emit(arm64.Mul(8, t2, hv, t1))
	a.Emit(arm64.Umulh(hv, hv, t1))
	a.Emit(arm64.ALUReg(arm64.EOR, 8, hv, hv, t2))
	a.MovConst(8, t1, engine.HashP2)
	a.Emit(arm64.ALUReg(arm64.EOR, 8, t1, t1, hv))
	a.Emit(arm64.Mul(8, t2, hv, t1))
	a.Emit(arm64.Umulh(hv, hv, t1))
	a.Emit(arm64.ALUReg(arm64.EOR, 8, hv, hv, t2))
	// want = tag | live; hv = home.
	c.emit(arm64.ALUImm(arm64.AND, 4, want, hv, engine.CtrlTagMask))
	c.emit(arm64.ALUImm(arm64.ORR, 4, want, want, engine.CtrlLive))
	c.emit(arm64.ShiftImm(arm64.LSR, 8, hv, hv, 32))
	a.MovConst(8, t1, uint64(l.NumSlots))
	a.Emit(arm64.Mul(8, hv, hv, t1))
	c.emit(arm64.ShiftImm(arm64.LSR, 8, hv, hv, 32))
	// lock = Locks + (home & LockMask) * LockStride; slot = the home slot.
	a.MovConst(4, t1, uint64(l.LockMask))
	a.Emit(arm64.ALUReg(arm64.AND, 4, t1, hv, t1))
	a.MovConst(8, t2, uint64(l.LockStride))
	a.MovConst(8, lock, uint64(l.Locks))
	a.Emit(arm64.Madd(8, lock, t1, t2, lock))
	a.MovConst(8, t2, uint64(l.SlotSize))
	a.MovConst(8, slot, uint64(l.Slots))
	a.Emit(arm64.Madd(8, slot, hv, t2, slot))
	// Take the lock (exchange 1 into it, 0 back: taken), or leave the
	// waiting to Go.
	c.emit(arm64.Movz(4, t2, 1, 0))
	if c.lse {
		c.emit(arm64.Atomic(arm64.SWP, arm64.AcqRel, 4, t2, t1, lock))
		fall = append(fall, c.forward(must64(arm64.Cbnz(4, t1, 0))))
	} else {
		retry := a.Len()
		c.emit(arm64.Ldxr(true, 4, t1, lock))
		busy := c.forward(must64(arm64.Cbnz(4, t1, 0)))
		c.emit(arm64.Stxr(true, 4, tmp, t2, lock))
		c.branchTo(must64(arm64.Cbnz(4, tmp, 0)), retry, false)
		taken := c.forward(must64(arm64.B(0)))
		c.here(busy)
		a.Emit(clrex)
		fall = append(fall, c.forward(must64(arm64.B(0))))
		c.here(taken)
	}
	// left = the home slot's bound on probes, unless saturated.
	var unlockAndFall []int
	c.emit(arm64.Load(8, left, slot, 0))
	c.emit(arm64.Ubfx(8, left, left, engine.CtrlHomeDistShift, 8))
	c.emit(arm64.CmpImm(8, left, engine.CtrlMaxDist))
	unlockAndFall = append(unlockAndFall, c.forward(must64(arm64.BCond(arm64.EQ, 0))))
	probe := a.Len()
	c.emit(arm64.Load(8, tmp, slot, 0))
	a.Emit(arm64.ALUReg(arm64.EOR, 8, t1, tmp, want))
	c.emit(arm64.TstImm(4, t1, engine.CtrlTagMask|engine.CtrlStateMask))
	noMatch := c.forward(must64(arm64.BCond(arm64.NE, 0)))
	// Unlike a lookup, no second read of the control word: only holders
	// of this lock write this key into a slot, so a key word equal to it
	// after a live control word is that live element's, which stays live
	// while the lock is held.
	c.emit(arm64.Load(8, t1, slot, int64(l.KeyOff)))
	a.Emit(arm64.Cmp(8, t1, key))
	found := c.forward(must64(arm64.BCond(arm64.EQ, 0)))
	c.here(noMatch)
	// An empty slot ends the probe; so does the bound.
	c.emit(arm64.TstImm(4, tmp, engine.CtrlStateMask))
	unlockAndFall = append(unlockAndFall, c.forward(must64(arm64.BCond(arm64.EQ, 0))))
	c.emit(arm64.ALUImm(arm64.SUBS, 4, left, left, 1))
	unlockAndFall = append(unlockAndFall, c.forward(must64(arm64.BCond(arm64.LO, 0))))
	c.addImm(slot, slot, int64(l.SlotSize))
	a.MovConst(8, t1, uint64(l.Slots)+uint64(l.NumSlots)*uint64(l.SlotSize))
	a.Emit(arm64.Cmp(8, slot, t1))
	c.branchTo(must64(arm64.BCond(arm64.NE, 0)), probe, false)
	a.MovConst(8, slot, uint64(l.Slots))
	c.branchTo(must64(arm64.B(0)), probe, false)

	// Found: copy the value, release the lock, r0 = 0.
	c.here(found)
	c.addImm(tmp, slot, int64(l.ValueOff))
	for off := 0; off < valueSize; {
		n := 8
		for n > valueSize-off {
			n >>= 1
		}
		c.emit(arm64.Load(n, t1, value, int64(off)))
		c.emit(arm64.Store(n, t1, tmp, int64(off)))
		off += n
	}
	if l.RefBit != 0 {
		// LRU: the update is a use. The atomic or only when the bit is
		// not there yet, as lruTouch does: most updates find it set.
		c.addImm(tmp, slot, int64(l.RefOff))
		c.emit(arm64.Load(4, t1, tmp, 0))
		c.emit(arm64.TstImm(4, t1, uint64(l.RefBit)))
		skip := c.forward(must64(arm64.BCond(arm64.NE, 0)))
		a.MovConst(4, t2, uint64(l.RefBit))
		if c.lse {
			c.emit(arm64.Atomic(arm64.LDSET, arm64.AcqRel, 4, t2, arm64.XZR, tmp))
		} else {
			retry := a.Len()
			c.emit(arm64.Ldxr(true, 4, t1, tmp))
			a.Emit(arm64.ALUReg(arm64.ORR, 4, t1, t1, t2))
			c.emit(arm64.Stxr(true, 4, left, t1, tmp))
			c.branchTo(must64(arm64.Cbnz(4, left, 0)), retry, false)
		}
		c.here(skip)
	}
	c.emit(arm64.Stlr(4, arm64.XZR, lock))
	a.Emit(arm64.Mov(8, arm64.X0, arm64.XZR))
	done = c.forward(must64(arm64.B(0)))

	for _, p := range unlockAndFall {
		c.here(p)
	}
	c.emit(arm64.Stlr(4, arm64.XZR, lock))
	for _, p := range fall {
		c.here(p)
	}
	return done
}
