package arm64

import (
	"fmt"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/internal/engine"
	"github.com/uebpf/uebpf/jit/internal/arm64"
	"github.com/uebpf/uebpf/jit/internal/backend"
	"github.com/uebpf/uebpf/jit/internal/frontend"
	"github.com/uebpf/uebpf/vm"
)

// Hoisted loop checks, as in the amd64 back end: the front end
// (frontend.Hoist) finds the counted loops whose checks can be hoisted,
// their hoisted accesses and the address ranges those reach; this back
// end emits, for each, a guard before the loop that tests the ranges
// against the run's regions, and an unchecked copy of the loop after the
// body that the guard runs when they are allowed. Otherwise the guard
// goes on to the usual, checked loop in the body, which faults where the
// interpreter does. Jumps into the loop from elsewhere land in the
// checked loop; only the guard enters the copy.
//
// The guard of a loop that the code before falls into is emitted at its
// head; that of a loop entered by the jump right before its head (which
// nothing falls into) is emitted there too, and the jump goes to it. So
// the guard's own branches stay short; only the copy, after the body, may
// be far from the code it leaves to, and its branches there are B or
// B.cond over B. A slice that ends in the copy resumes in the copy where
// the interrupted jump stays in the loop: the run goes on with the same
// regions (no helper runs inside a hoisted loop, and regions are only
// ever added during a run), so what the guard found still holds.

// a64Hoisting is the emission state of the hoisted loops of a compile.
type a64Hoisting struct {
	// guards are what the guards of the Hoists leave, by loop.
	guards []a64Guard
	// copying is the loop whose unchecked copy is being emitted, at
	// copyOffsets; copyFixups are its branches to its own slots.
	copying     *frontend.Hoist
	copyOffsets []int32
	copyFixups  []a64Fixup
	// copyHead and copyEnd are the slots of the copy being emitted, a
	// hoisted loop's or a budget loop's.
	copyHead, copyEnd int
	// probeCalls are the BLs of the guards' slow paths to the region
	// probe, emitted once after the copies.
	probeCalls []int32
}

// a64Guard is what the emission of a loop's guard leaves to patch: the
// B to the copy's entry (emitted false: no guard, no copy).
type a64Guard struct {
	emitted bool
	toCopy  int32
}

// inCopy reports whether slot pc is one of the copy being emitted.
func (c *a64Compiler) inCopy(pc int) bool { return pc >= c.hoist.copyHead && pc <= c.hoist.copyEnd }

// hoistAt returns the index of the loop with hoisted checks whose head is
// slot pc, or -1.
func (c *a64Compiler) hoistAt(pc int) int {
	for i := range c.Hoists {
		if int(c.Hoists[i].Head) == pc {
			return i
		}
	}
	return -1
}

// enterHoisted is called where the body's block at slot pc starts,
// before its code: at the head of a loop with hoisted checks it emits the
// loop's guard. For a loop entered by the jump right before its head,
// that jump goes to the guard instead of the entry.
func (c *a64Compiler) enterHoisted(pc int) {
	if len(c.Hoists) == 0 || c.hoist.copying != nil {
		return
	}
	i := c.hoistAt(pc)
	if i < 0 {
		return
	}
	l := &c.Hoists[i]
	if !l.Inline() {
		// The jump's branch to the entry is among the last fixups, those
		// of the slot before (its slice exit's ADR comes after it and
		// still resumes at the entry, in the checked loop).
		from := c.offsets[pc-1]
		j := len(c.fixups) - 1
		for ; j >= 0 && c.fixups[j].pos >= from; j-- {
			if f := &c.fixups[j]; !f.label && !f.adr && int(f.target) == int(l.Entry) {
				break
			}
		}
		if j < 0 || c.fixups[j].pos < from {
			return // entered some other way after all
		}
		c.fixups[j] = a64Fixup{pos: c.fixups[j].pos, target: int32(c.a.Len()), label: true}
	}
	c.emitGuard(i)
}

// emitLoopTrap makes the checked loop of a loop with hoisted checks fail
// at its entry, slot pc, for tests (Options.TrapSlowPaths): a run that
// completes took the unchecked copy.
func (c *a64Compiler) emitLoopTrap(pc int) {
	if !c.trap || c.hoist.copying != nil {
		return
	}
	for i := range c.Hoists {
		if int(c.Hoists[i].Entry) == pc {
			c.leavePC(backend.ReasonBudget, pc, false)
			return
		}
	}
}

// emitGuard emits the tests that send the run to the unchecked copy of
// loop i when all of the loop's hoisted accesses are allowed, and to the
// checked loop otherwise. It uses x16, x17, x19 and x20, free between
// slots.
func (c *a64Compiler) emitGuard(i int) {
	a, l := c.a, &c.Hoists[i]
	var fails []int // B.conds to the checked loop
	failOff := -1   // where they go, known at the end
	if l.IV {
		// The counter's first compared value must be below the bound,
		// and for "!=" reach it exactly.
		c.addImm(a64Addr, a64Regs[l.Counter], int64(l.DE))
		c.cmpConst(a64Addr, int64(l.Bound))
		fails = append(fails, c.forward(must64(arm64.BCond(arm64.HS, 0))))
		if l.Divisible {
			a.MovConst(4, a64Tmp, uint64(l.Bound))
			a.Emit(arm64.ALUReg(arm64.SUB, 4, a64Tmp, a64Tmp, a64Addr))
			c.emit(arm64.TstImm(4, a64Tmp, uint64(l.Step-1)))
			fails = append(fails, c.forward(must64(arm64.BCond(arm64.NE, 0))))
		}
	}
	for j := l.Ranges[0]; j < l.Ranges[1]; j++ {
		r := &c.HoistRanges[j]
		// x19 = the lowest address - the region's start, x20 = the
		// highest + 1 - 8 - the region's start: allowed if x19 <= x20 <
		// end, where end (x17) is the region's size minus 7.
		hot := backend.OffHotReadLo
		if r.Write {
			hot = backend.OffHotWriteLo
		}
		bases := r.Bases
		if r.IV {
			bases |= 1 << l.Counter
		}
		// Fewer than 8 bytes: the hot region's usual test, as for one
		// access.
		small := !r.IV && r.HiM8 < r.Lo
		c.emitSum(a64Addr, bases, r.Lo)
		if !small {
			c.emitSum(a64Scratch, r.Bases, r.HiM8)
		}
		c.ldState(a64Tmp, hot)
		a.Emit(arm64.ALUReg(arm64.SUB, 8, a64Addr, a64Addr, a64Tmp))
		c.ldState(a64Tmp2, hot+8)
		var slow []int
		if small {
			a.Emit(arm64.Cmp(8, a64Addr, a64Tmp2))
			slow = append(slow, c.forward(must64(arm64.BCond(arm64.HS, 0))))
		} else {
			a.Emit(arm64.ALUReg(arm64.SUB, 8, a64Scratch, a64Scratch, a64Tmp))
			a.Emit(arm64.Cmp(8, a64Scratch, a64Tmp2))
			slow = append(slow, c.forward(must64(arm64.BCond(arm64.HS, 0))))
			a.Emit(arm64.Cmp(8, a64Addr, a64Scratch))
			slow = append(slow, c.forward(must64(arm64.BCond(arm64.HI, 0))))
		}
		resume, write, size := a.Len(), r.Write, r.HiM8-r.Lo+8
		c.stubs = append(c.stubs, func() {
			// Not in the hot region: ask the stack and the region list.
			for _, pos := range slow {
				c.here(pos)
			}
			if small {
				a.MovConst(8, a64Tmp2, uint64(size))
			} else {
				a.Emit(arm64.ALUReg(arm64.SUB, 8, a64Tmp2, a64Scratch, a64Addr))
				c.emit(arm64.AddImm(8, a64Tmp2, a64Tmp2, 8))
			}
			c.ldState(a64Tmp, hot)
			a.Emit(arm64.ALUReg(arm64.ADD, 8, a64Addr, a64Addr, a64Tmp))
			w := uint64(0)
			if write {
				w = 1
			}
			a.MovConst(8, a64Tmp, w)
			c.hoist.probeCalls = append(c.hoist.probeCalls, int32(c.forward(must64(arm64.BL(0)))))
			no := c.forward(must64(arm64.Cbz(8, a64Tmp, 0)))
			c.branchTo(must64(arm64.B(0)), resume, false)
			c.here(no)
			c.branchTo(must64(arm64.B(0)), failOff, false)
		})
	}
	c.hoist.guards[i] = a64Guard{emitted: true, toCopy: int32(c.forward(must64(arm64.B(0))))}
	failOff = a.Len()
	for _, pos := range fails {
		c.here(pos)
	}
	if !l.Inline() {
		c.jumpSlot(arm64.AL, true, int(l.Entry))
	}
	// Inline: the checked loop's head follows.
}

// cmpConst compares rn with v, through x16 when v is no immediate.
func (c *a64Compiler) cmpConst(rn arm64.Reg, v int64) {
	if w, ok := arm64.CmpImm(8, rn, v); ok {
		c.a.Emit(w)
		return
	}
	c.a.MovConst(8, a64Tmp, uint64(v))
	c.a.Emit(arm64.Cmp(8, rn, a64Tmp))
}

// emitSum loads into dst the sum of the registers in bases and d; x16 is
// clobbered when d is no immediate.
func (c *a64Compiler) emitSum(dst arm64.Reg, bases uint16, d int64) {
	first := true
	for r := range 11 {
		if bases&(1<<r) == 0 {
			continue
		}
		if first {
			c.addImm(dst, a64Regs[r], d)
			first = false
		} else {
			c.a.Emit(arm64.ALUReg(arm64.ADD, 8, dst, dst, a64Regs[r]))
		}
	}
	if first {
		c.a.MovConst(8, dst, uint64(d))
	}
}

// copyJump is jumpSlot inside the copy of a loop: to the copy's own slots
// within the loop, to the body's code outside it. The body's code may be
// farther than B.cond reaches, and is then jumped to by a B.
func (c *a64Compiler) copyJump(cond arm64.Cond, always bool, target int) {
	h := &c.hoist
	if c.inCopy(target) {
		w := must64(arm64.B(0))
		if !always {
			w = must64(arm64.BCond(cond, 0))
		}
		h.copyFixups = append(h.copyFixups, a64Fixup{pos: int32(c.forward(w)), target: int32(target)})
		return
	}
	off := int64(c.offsets[target]) - int64(c.a.Len())
	if !always {
		if w, ok := arm64.BCond(cond, off); ok {
			c.a.Emit(w)
			return
		}
		c.a.Emit(must64(arm64.BCond(cond.Invert(), 8)))
		off -= 4
	}
	c.emit(arm64.B(off))
}

// emitLoopCopies emits, after the body and its stubs, the unchecked copy
// of each loop whose guard was emitted, with its own stubs, and then the
// region probe that the guards' slow paths call.
func (c *a64Compiler) emitLoopCopies() error {
	h := &c.hoist
	if len(c.Hoists) == 0 {
		return nil
	}
	for i := range c.Hoists {
		l, g := &c.Hoists[i], &h.guards[i]
		if !g.emitted {
			continue
		}
		if err := c.emitLoopCopy(l, g); err != nil {
			return err
		}
	}
	if len(h.probeCalls) > 0 {
		probe := c.a.Len()
		c.emitRegionProbe()
		for _, pos := range h.probeCalls {
			if err := c.a.PatchBranch(int(pos), probe); err != nil {
				return &vm.LoadError{Program: c.prog.Name(), Index: c.pc, Err: fmt.Errorf("jit: arm64: %w", err)}
			}
		}
	}
	return nil
}

// emitLoopCopy emits the unchecked copy of loop l and its stubs, and
// points the guard's branch at it.
func (c *a64Compiler) emitLoopCopy(l *frontend.Hoist, g *a64Guard) error {
	h := &c.hoist
	h.copying = l
	defer func() { h.copying = nil }()
	if err := c.emitCopy(int(l.Head), int(l.End)); err != nil {
		return err
	}
	if err := c.a.PatchBranch(int(g.toCopy), int(h.copyOffsets[l.Entry])); err != nil {
		return &vm.LoadError{Program: c.prog.Name(), Index: int(l.Head), Err: fmt.Errorf("jit: arm64: %w", err)}
	}
	return nil
}

// emitCopy emits slots [head, end] once more, after the body, at
// copyOffsets, with their stubs: a loop with hoisted checks' unchecked
// copy (hoist.copying set) or a budget loop's (budget.fast set, see
// compile_loopbudget.go). Its jumps to its own slots stay in the copy
// (copyJump), the others and a fall through its end go to the body's
// code.
func (c *a64Compiler) emitCopy(head, end int) error {
	h := &c.hoist
	if h.copyOffsets == nil {
		h.copyOffsets = make([]int32, len(c.insns))
	}
	h.copyHead, h.copyEnd, h.copyFixups = head, end, h.copyFixups[:0]
	fixups := len(c.fixups)
	c.stretch.Begin(head)
	for pc := head; pc <= end; pc++ {
		// As the body does: the copy charges what the body's loop does.
		if c.Starts[pc] {
			if n := c.stretch.Pending(pc); n > 0 {
				c.subBudget(n)
			}
			c.stretch.Begin(pc)
		}
		c.pc = pc
		h.copyOffsets[pc] = int32(c.a.Len())
		if sel, ok := c.selectAt(pc); ok {
			pc = c.emitSelect(pc, sel, h.copyOffsets)
			c.stretch.Next(pc)
			continue
		}
		ins := &c.insns[pc]
		if err := c.emitInsn(pc, ins); err != nil {
			return &vm.LoadError{Program: c.prog.Name(), Index: pc, Err: fmt.Errorf("jit: %w", err)}
		}
		if ins.Opcode == asm.OpLDDW {
			pc++
			h.copyOffsets[pc] = h.copyOffsets[pc-1]
		}
		c.stretch.Next(pc)
	}
	if frontend.FallsThrough(&c.insns[end]) {
		// The slot after the loop starts a block (the front end made it
		// one): charge as the body does when it falls into it.
		if n := c.stretch.Pending(end + 1); n > 0 {
			c.subBudget(n)
		}
		c.copyJump(arm64.AL, true, end+1)
	}
	c.flushStubs()
	for _, f := range h.copyFixups {
		if err := c.a.PatchBranch(int(f.pos), int(h.copyOffsets[f.target])); err != nil {
			return &vm.LoadError{Program: c.prog.Name(), Index: head, Err: fmt.Errorf("jit: arm64: %w", err)}
		}
	}
	// The slice exits of the copy resume at slots: in a hoisted loop's
	// copy within the loop, or through a B to the body's code, which
	// their ADR may not reach. (A budget loop's copy makes no test that
	// can fail: its slices end in the body.)
	kept := c.fixups[:fixups]
	for _, f := range c.fixups[fixups:] {
		if f.label {
			kept = append(kept, f)
			continue
		}
		if !f.adr {
			panic(fmt.Errorf("%w: branch to slot %d in a loop's copy", errA64Encode, f.target))
		}
		var target int
		if h.copying != nil && c.inCopy(int(f.target)) {
			target = int(h.copyOffsets[f.target])
		} else {
			target = c.a.Len()
			c.branchTo(must64(arm64.B(0)), int(c.offsets[f.target]), false)
		}
		w, ok := arm64.Adr(a64Tmp, int64(target-int(f.pos)))
		if !ok {
			return &vm.LoadError{Program: c.prog.Name(), Index: head, Err: fmt.Errorf("jit: arm64: adr: %w", arm64.ErrOutOfRange)}
		}
		c.a.Patch(int(f.pos), w)
	}
	c.fixups = kept
	return nil
}

// emitRegionProbe emits the subroutine (BL) of the guards' slow paths.
// In: x19 = the range's start, x17 = its size (at least 1), x16 = 1 for
// writes. Out: x16 = 1 when the stack or a region allows the whole range,
// the region then being the hot one of its kind, as the region check
// makes it; else 0.
func (c *a64Compiler) emitRegionProbe() {
	a := c.a
	end, lo, n, t, u := a64Scratch, a64Scratch2, a64Scratch3, a64Scratch4, a64Scratch5
	a.Emit(arm64.ALUReg(arm64.ADD, 8, end, a64Addr, a64Tmp2))
	a.Emit(arm64.Cmp(8, end, a64Addr))
	no1 := c.forward(must64(arm64.BCond(arm64.LO, 0)))
	// The stack: size <= StackSize and addr - stackLo <= StackSize - size.
	a.MovConst(8, u, vm.StackSize)
	a.Emit(arm64.ALUReg(arm64.SUBS, 8, u, u, a64Tmp2))
	notStack1 := c.forward(must64(arm64.BCond(arm64.LO, 0)))
	c.ldState(lo, backend.OffStackLo)
	a.Emit(arm64.ALUReg(arm64.SUB, 8, t, a64Addr, lo))
	a.Emit(arm64.Cmp(8, t, u))
	notStack2 := c.forward(must64(arm64.BCond(arm64.HI, 0)))
	a.MovConst(8, a64Tmp, 1)
	a.Emit(arm64.Ret())
	c.here(notStack1)
	c.here(notStack2)
	c.ldState(lo, backend.OffRegions)
	c.ldState(n, backend.OffNRegions)
	loop := a.Len()
	no2 := c.forward(must64(arm64.Cbz(8, n, 0)))
	c.emit(arm64.Load(8, t, lo, int64(engine.RegionLoOffset)))
	a.Emit(arm64.Cmp(8, a64Addr, t))
	next1 := c.forward(must64(arm64.BCond(arm64.LO, 0)))
	c.emit(arm64.Load(8, u, lo, int64(engine.RegionHiOffset)))
	a.Emit(arm64.Cmp(8, end, u))
	next2 := c.forward(must64(arm64.BCond(arm64.HI, 0)))
	c.emit(arm64.Load(1, u, lo, int64(engine.RegionWritableOffset)))
	a.Emit(arm64.Cmp(8, u, a64Tmp))
	next3 := c.forward(must64(arm64.BCond(arm64.LO, 0)))
	// Allowed: the region becomes the hot one of its kind, with end =
	// size - 7, or 0 if negative.
	c.emit(arm64.Load(8, u, lo, int64(engine.RegionHiOffset)))
	a.Emit(arm64.ALUReg(arm64.SUB, 8, u, u, t))
	c.emit(arm64.ALUImm(arm64.SUBS, 8, u, u, 7))
	a.Emit(arm64.Csel(8, u, u, arm64.XZR, arm64.HS))
	c.emit(arm64.ALUShifted(arm64.ADD, 8, n, a64State, a64Tmp, arm64.LSL, 4))
	c.emit(arm64.Store(8, t, n, int64(backend.OffHotReadLo)))
	c.emit(arm64.Store(8, u, n, int64(backend.OffHotReadLo+8)))
	a.MovConst(8, a64Tmp, 1)
	a.Emit(arm64.Ret())
	c.here(next1)
	c.here(next2)
	c.here(next3)
	c.emit(arm64.AddImm(8, lo, lo, int64(engine.RegionSize)))
	c.emit(arm64.AddImm(8, n, n, -1))
	c.branchTo(must64(arm64.B(0)), loop, false)
	c.here(no1)
	c.here(no2)
	a.Emit(arm64.Mov(8, a64Tmp, arm64.XZR))
	a.Emit(arm64.Ret())
}

// Hoisted returns the number of loops of vp whose checks the checked
// compiler hoists and of accesses it hoists, for package jit's tests.
func Hoisted(vp *vm.Program) (loops, accesses int) {
	c := newA64Compiler(vp, true, false, 0)
	if c.Analyze(vp, c.analysisOptions()) != nil {
		return 0, 0
	}
	for _, h := range c.Hoisted {
		if h {
			accesses++
		}
	}
	return len(c.Hoists), accesses
}

// analysisOptions are the front end's options for this compile: hoisted
// checks in checked code and selects, unless constants are blinded (the
// guard's bounds and the select's value would be unblinded immediates),
// and budget loops (whose cost is the loop's length, not a program
// constant).
func (c *a64Compiler) analysisOptions() frontend.Options {
	return frontend.Options{Hoist: c.checked && !c.blind, Selects: !c.blind, LoopBudget: loopBudgets}
}

// prepareHoists sizes what the guards leave, after the analysis.
func (c *a64Compiler) prepareHoists() {
	c.hoist.guards = make([]a64Guard, len(c.Hoists))
}
