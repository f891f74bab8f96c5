package amd64

import (
	"slices"

	"github.com/uebpf/uebpf/jit/internal/backend"
	"github.com/uebpf/uebpf/jit/internal/frontend"
	"github.com/uebpf/uebpf/jit/internal/x86"
)

// Hoisted loop checks: the front end (frontend.Hoist) finds the counted
// loops whose checks can be hoisted, their hoisted accesses and the
// address ranges those reach; the x86 back end emits, for each, a guard
// before the loop that tests the ranges against the run's regions, and an
// unchecked copy of the loop after the body that the guard runs when they
// are allowed.

// hoistGuard is what the emission of a loop's guard leaves to patch.
// guardJump is the rel32 of the guard's jump to the copy, fails those of
// its jumps to the checked copy (0: none). entryJump, for a loop entered
// by a jump to its entry, is that jump's rel32: it goes to the guard.
type hoistGuard struct {
	guardJump, entryJump int32
	fails                [2]int32
}

// hoistAt returns the index of the loop with hoisted checks that starts
// at slot pc, or -1.
func (c *compiler) hoistAt(pc int) int {
	for i := range c.Hoists {
		if int(c.Hoists[i].Head) == pc {
			return i
		}
	}
	return -1
}

// enterHoisted is called at the head of loop i in the body: a loop
// entered by falling into its head gets its guard here; for one entered by
// the jump right before, that jump goes to the guard, out of line.
func (c *compiler) enterHoisted(i int) {
	l := &c.Hoists[i]
	if l.Inline() {
		c.emitGuard(i)
		return
	}
	// The jump's fixup is the last one: it was the slot before.
	if n := len(c.jumps); n > 0 && c.jumps[n-1].target == l.Entry {
		c.hoistGuards[i].entryJump = c.jumps[n-1].pos
		c.jumps = c.jumps[:n-1]
	}
}

// emitLoopTrap makes the checked copy of a loop with hoisted checks fail
// at its entry, slot pc, for tests (Options.trapSlowPaths).
func (c *compiler) emitLoopTrap(pc int) {
	for i := range c.Hoists {
		if c.copying == nil && int(c.Hoists[i].Entry) == pc {
			c.jmpLeavePC(backend.ReasonBudget, int32(pc))
		}
	}
}

// emitGuard emits the tests that send the run to the unchecked copy of
// loop i when all of the loop's hoisted accesses are allowed, and to the
// checked copy otherwise.
func (c *compiler) emitGuard(i int) {
	a, l, g := c.a, &c.Hoists[i], &c.hoistGuards[i]
	if l.IV {
		// The counter's first compared value must be below the bound,
		// and for "!=" reach it exactly.
		a.Lea(tmpAddr, x86.M(regMap[l.Counter], l.DE))
		a.ALURI(x86.CMP, 8, tmpAddr, l.Bound)
		g.fails[0] = int32(a.Jcc(x86.CondAE))
		if l.Divisible {
			a.MovRI32(tmpC, uint32(l.Bound))
			a.ALURR(x86.SUB, 4, tmpC, tmpAddr)
			a.TestRI(4, tmpC, int32(l.Step-1))
			g.fails[1] = int32(a.Jcc(x86.CondNE))
		}
	}
	for j := l.Ranges[0]; j < l.Ranges[1]; j++ {
		r := &c.HoistRanges[j]
		// r11 = the lowest address - the region's start, rcx = the
		// highest + 1 - 8 - the region's start: allowed if r11 <= rcx <
		// end, where end is the region's size minus 7.
		hot := backend.OffHotReadLo
		if r.Write {
			hot = backend.OffHotWriteLo
		}
		bases := r.Bases
		if r.IV {
			bases |= 1 << l.Counter
		}
		c.emitSum(tmpAddr, bases, r.Lo)
		a.ALURM(x86.SUB, 8, tmpAddr, st(hot))
		first := len(c.stubs)
		if !r.IV && r.HiM8 < r.Lo {
			// Fewer than 8 bytes: the hot region's usual test.
			a.ALURM(x86.CMP, 8, tmpAddr, st(hot+8))
			c.toStub(x86.CondAE, stubHoistProbe, int(l.Entry)).n = int32(r.HiM8 - r.Lo + 8)
		} else {
			c.emitSum(tmpC, r.Bases, r.HiM8)
			a.ALURM(x86.SUB, 8, tmpC, st(hot))
			a.ALURM(x86.CMP, 8, tmpC, st(hot+8))
			c.toStub(x86.CondAE, stubHoistProbe, int(l.Entry))
			a.ALURR(x86.CMP, 8, tmpAddr, tmpC)
			c.toStub(x86.CondA, stubHoistProbe, int(l.Entry))
		}
		for k := first; k < len(c.stubs); k++ {
			s := &c.stubs[k]
			s.write, s.off, s.resume = r.Write, hot, int32(a.Len())
		}
	}
	g.guardJump = int32(a.Jmp())
}

// emitSum loads into dst the sum of the registers in bases and d.
func (c *compiler) emitSum(dst x86.Reg, bases uint16, d int64) {
	a := c.a
	first := true
	if d != int64(int32(d)) {
		a.MovRI(dst, uint64(d))
		first, d = false, 0
	}
	for r := range 11 {
		if bases&(1<<r) == 0 {
			continue
		}
		if first {
			a.Lea(dst, x86.M(regMap[r], int32(d)))
			first, d = false, 0
		} else {
			a.ALURR(x86.ADD, 8, dst, regMap[r])
		}
	}
	if first {
		a.MovRI(dst, uint64(d))
	}
}

// emitHoistProbe emits a guard's slow path: its inline test against the
// hot region failed, so it asks the stack and the region list (the region
// probe, which makes the region that allows the range hot) and goes on
// with the guard if one allows the range, or runs the checked copy. In: r11 = the range's start
// minus the hot region's, and rcx = its end - 8 minus the hot region's
// start (s.n = 0) or its size in s.n.
func (c *compiler) emitHoistProbe(s *stub) {
	a := c.a
	a.Push(budgetReg)
	if s.n != 0 {
		a.MovRI32(tmpD, uint32(s.n))
	} else {
		a.MovRR(8, tmpD, tmpC)
		a.ALURR(x86.SUB, 8, tmpD, tmpAddr)
		a.ALURI(x86.ADD, 8, tmpD, 8)
	}
	a.ALURM(x86.ADD, 8, tmpAddr, st(s.off))
	var w uint32
	if s.write {
		w = 1
	}
	a.MovRI32(tmpC, w)
	a.PatchRel32(a.Call(), c.regionProbeOff)
	a.Pop(budgetReg)
	a.TestRR(4, tmpC, tmpC)
	a.JccTo(x86.CondNE, c.bodyOffset(int(s.pc)))
	a.JmpTo(int(s.resume))
}

// emitLoopCopies emits the unchecked copy of each loop with hoisted
// checks, after the body: its jumps within the loop go to the copy, the
// others to the body's code.
func (c *compiler) emitLoopCopies() error {
	if len(c.Hoists) == 0 {
		return nil
	}
	c.copyOffsets = slices.Grow(c.copyOffsets[:0], len(c.insns))[:len(c.insns)]
	for i := range c.Hoists {
		l, g := &c.Hoists[i], &c.hoistGuards[i]
		head, end, entry := int(l.Head), int(l.End), int(l.Entry)
		if !l.Inline() {
			if g.entryJump == 0 {
				continue // not entered that way after all
			}
			c.a.PatchRel32(int(g.entryJump), c.a.Len())
			c.emitGuard(i)
		}
		for _, f := range g.fails {
			if f != 0 {
				c.a.PatchRel32(int(f), c.bodyOffset(entry))
			}
		}
		c.copying = l
		if err := c.emitCopy(head, end); err != nil {
			return err
		}
		c.a.PatchRel32(int(g.guardJump), int(c.copyOffsets[entry]))
		c.copying = nil
	}
	return nil
}

// emitCopy emits slots [head, end] once more, after the body, at
// c.copyOffsets: the jumps it makes to the copy are patched to it, and a
// fall through its end goes on in the body's code.
func (c *compiler) emitCopy(head, end int) error {
	c.stretch.Begin(head)
	jumps := len(c.jumps)
	if err := c.emitSlots(head, end+1, c.copyOffsets); err != nil {
		return err
	}
	if frontend.FallsThrough(&c.insns[end]) {
		if c.stretch.Start < end+1 {
			c.charge(end + 1)
		}
		c.a.JmpTo(int(c.offsets[end+1]))
	}
	for _, j := range c.jumps[jumps:] {
		c.a.PatchRel32(int(j.pos), int(c.copyOffsets[j.target]))
	}
	c.jumps = c.jumps[:jumps]
	return nil
}
