package jit

import (
	"math/bits"
	"slices"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/jit/internal/frontend"
	"github.com/uebpf/uebpf/jit/internal/x86"
)

// Checked code tests every access against the run's regions; in a loop
// that walks a buffer those tests are most of the work (a byte copy runs
// 2.5 times slower checked). So the checks of a counted loop are hoisted
// out of it: the loop is compiled twice, as usual and a second time
// without the checks of its hoisted accesses, and a guard before the loop
// runs the second copy when every address those accesses can reach, over
// all the iterations the loop can make, lies in a region that allows them.
// Otherwise the usual, checked copy runs, which reports a fault where the
// interpreter would. Both copies compute the same thing and charge the
// same budget, and the copy jumps to the body's code wherever it leaves
// the loop.
//
// A loop is a range of slots [head, end], from the target of a backward
// jump to the last backward jump there, with no calls, packet loads or
// switch tables. Its iterations start at its entry: head
// when the code before falls into it, or the slot the jump right before
// head goes to (clang's rotated loops). An abstract interpretation of one
// iteration, from the entry and in the order of the slots after it, finds
// its counters (registers that come back to the entry grown by the same
// constant on every path) and, at each access, the address as a sum of
// register values at the start of the iteration plus a constant. A jump
// backwards in that order other than to the entry (an inner loop) makes
// the loop not qualify. The range of a counter comes from an exit test
// that every iteration runs (it dominates the jumps back to the entry), a
// comparison of the counter (plus a constant dE) with an immediate: for
// "stay while counter+dE < bound" and a step k > 0, counter+dE goes from
// its value at entry, which the guard requires below bound, to at most
// bound-1+k (bound-1 where only the test's staying edge leads). Accesses
// through the counter plus invariant registers, or through invariant
// registers alone, are hoisted; the others keep their checks.

// Limits that keep the analysis cheap and the guard short.
const (
	maxHoistLoops  = 8
	maxHoistEdges  = 64
	maxHoistSlots  = 256
	maxHoistRanges = 4
	// maxHoistWork bounds the slots the analysis interprets per program
	// (each loop takes a pass per register that turns out not to be a
	// counter, plus one).
	maxHoistWork = 8192
)

// affine is what the analysis knows of a register at a slot of a loop:
// the sum of the values the registers in bases had at the start of the
// iteration, plus d (mod 2^64). ok false: nothing.
type affine struct {
	bases uint16
	ok    bool
	d     int64
}

// hoistRange is the span of addresses that the hoisted accesses of one
// kind (read or write) through the same registers reach: from the sum of
// the registers in bases (and the counter's entry value, if iv) plus lo,
// to the sum of bases plus hiM8 plus 8 (exclusive).
type hoistRange struct {
	bases    uint16
	iv       bool
	write    bool
	lo, hiM8 int64
}

// hoistLoop is a loop with hoisted checks.
type hoistLoop struct {
	head, end, entry int32
	// The exit test, when iv: stay while counter+dE < bound, with the
	// counter growing by step. divisible: the test is "!=", which needs
	// bound-(counter+dE) to be a multiple of step at entry.
	iv        bool
	counter   uint8
	divisible bool
	dE, bound int32
	step      int64
	// ranges is the loop's part of hoistRanges.
	ranges [2]int32
	// guardJump is the rel32 of the guard's jump to the copy, fails
	// those of its jumps to the checked copy (0: none). entryJump, for a
	// loop entered by a jump to its entry, is that jump's rel32: it goes
	// to the guard.
	guardJump, entryJump int32
	fails                [2]int32
}

func (l *hoistLoop) slots() int         { return int(l.end-l.head) + 1 }
func (l *hoistLoop) inside(pc int) bool { return pc >= int(l.head) && pc <= int(l.end) }
func (l *hoistLoop) inline() bool       { return l.entry == l.head }
func (l *hoistLoop) index(pc int) int   { return (pc - int(l.entry) + l.slots()) % l.slots() }
func (l *hoistLoop) slot(index int) int { return int(l.head) + (int(l.entry-l.head)+index)%l.slots() }

// findHoists finds the loops whose checks can be hoisted, marks their
// hoisted accesses and makes the slot after each such loop the start of a
// block, where the unchecked copy rejoins the code.
func (c *compiler) findHoists() {
	c.hoists, c.hoistRanges, c.hoisted = c.hoists[:0], c.hoistRanges[:0], c.hoisted[:0]
	if !c.checked || c.blind || !c.Loops || !c.HotUsed {
		return
	}
	c.hoisted = slices.Grow(c.hoisted, len(c.insns))[:len(c.insns)]
	clear(c.hoisted)
	// The first backward jumps only: finding each one's loop is linear in
	// their number, which the program controls.
	edges := c.BackEdges[:min(len(c.BackEdges), maxHoistEdges)]
	for i, e := range edges {
		head, end := int(e[0]), int(e[1])
		if len(c.hoists) == maxHoistLoops || slices.ContainsFunc(edges[:i], func(o [2]int32) bool { return int(o[0]) == head }) {
			continue
		}
		for _, o := range edges[i+1:] { // the loop ends at its last back edge
			if int(o[0]) == head {
				end = max(end, int(o[1]))
			}
		}
		c.hoistLoop(head, end)
	}
}

// hoistLoop analyses the loop [head, end] and records it when some of its
// checks can be hoisted.
func (c *compiler) hoistLoop(head, end int) {
	if head == 0 || end-head >= maxHoistSlots {
		return
	}
	l := hoistLoop{head: int32(head), end: int32(end), entry: int32(head)}
	prev := head - 1
	if head >= 2 && c.insns[head-2].Opcode == asm.OpLDDW {
		prev = head - 2
	}
	if ins := &c.insns[prev]; !fallsThrough(ins) {
		if ins.Opcode&0xf0 != asm.JmpJA || ins.Opcode&0x07 != asm.ClassJMP && ins.Opcode&0x07 != asm.ClassJMP32 {
			return // entered some other way
		}
		t := frontend.JumpTarget(prev, ins)
		if t <= head || t > end {
			return
		}
		l.entry = int32(t)
	}
	var defined uint16 // the registers the loop writes
	for pc := head; pc <= end; pc++ {
		ins := &c.insns[pc]
		switch ins.Class() {
		case asm.ClassALU, asm.ClassALU64, asm.ClassLDX:
			defined |= 1 << ins.Dst
		case asm.ClassSTX:
			if ins.Opcode&0xe0 == asm.ModeATOMIC {
				defined |= 1<<ins.Src | 1 // fetches, and r0 for cmpxchg
			}
		case asm.ClassLD:
			if ins.Opcode != asm.OpLDDW {
				return // packet loads
			}
			defined |= 1 << ins.Dst
			pc++ // its second slot
		case asm.ClassJMP, asm.ClassJMP32:
			if ins.Opcode&0xf0 == asm.JmpCALL {
				return
			}
		}
	}
	for _, s := range c.Switches {
		if l.inside(int(s.Root)) {
			return // its table jumps to the body's code
		}
	}

	// Counters: assume every register the loop writes is one, and drop
	// those that do not come back to the entry grown by a constant.
	var steps [11]int64
	ivs := defined
	for {
		if c.hoistWork += l.slots(); c.hoistWork > maxHoistWork {
			return
		}
		kept, ok := c.interpretLoop(&l, defined, ivs, &steps)
		if !ok {
			return
		}
		if kept == ivs {
			break
		}
		ivs = kept
	}
	moving := uint16(0) // counters that change
	for r := range 11 {
		if ivs&(1<<r) != 0 && steps[r] != 0 {
			moving |= 1 << r
		}
	}
	c.exitTest(&l, moving, &steps)
	first := len(c.hoistRanges)
	for i := range l.slots() {
		c.hoistAccess(&l, i, moving, first)
	}
	if len(c.hoistRanges) == first {
		return
	}
	l.ranges = [2]int32{int32(first), int32(len(c.hoistRanges))}
	c.hoists = append(c.hoists, l)
	if end+1 < len(c.insns) {
		c.Starts[end+1] = true
	}
}

// successors returns the slots that may run after slot pc of a loop, the
// next one and a jump's target (-1: none).
func (c *compiler) successors(pc int) (next, jump int) {
	ins := &c.insns[pc]
	switch ins.Class() {
	case asm.ClassLD:
		return pc + 2, -1 // lddw
	case asm.ClassJMP, asm.ClassJMP32:
		switch ins.Opcode & 0xf0 {
		case asm.JmpEXIT:
			return -1, -1
		case asm.JmpJA:
			return -1, frontend.JumpTarget(pc, ins)
		}
		return pc + 1, frontend.JumpTarget(pc, ins)
	}
	return pc + 1, -1
}

// interpretLoop runs one iteration of loop l abstractly, assuming the
// registers in ivs hold counters at its entry, and returns those that do:
// on every path back to the entry, grown by the same constant, which it
// stores in steps. It leaves in hoistState the registers at the start of
// each slot, by index (hoistReached false: no path reaches the slot). ok
// false: a jump goes backwards in the iteration's order, not to the entry.
func (c *compiler) interpretLoop(l *hoistLoop, defined, ivs uint16, steps *[11]int64) (_ uint16, ok bool) {
	n := l.slots()
	c.hoistState = slices.Grow(c.hoistState[:0], n)[:n]
	c.hoistReached = slices.Grow(c.hoistReached[:0], n)[:n]
	clear(c.hoistReached)
	var seen uint16 // counters whose step is known
	var cur [11]affine
	for r := range cur {
		if defined&(1<<r) == 0 || ivs&(1<<r) != 0 {
			cur[r] = affine{bases: 1 << r, ok: true}
		}
	}
	c.hoistState[0], c.hoistReached[0] = cur, true
	ok = true
	flow := func(from, t int, cur *[11]affine) {
		switch i := l.index(t); {
		case t < 0 || !l.inside(t): // leaves the loop
		case i == 0: // back to the entry
			for r := range 11 {
				if ivs&(1<<r) == 0 {
					continue
				}
				v := cur[r]
				switch {
				case !v.ok || v.bases != 1<<r:
					ivs &^= 1 << r
				case seen&(1<<r) == 0:
					steps[r], seen = v.d, seen|1<<r
				case steps[r] != v.d:
					ivs &^= 1 << r
				}
			}
		case i <= l.index(from):
			ok = false
		case !c.hoistReached[i]:
			c.hoistState[i], c.hoistReached[i] = *cur, true
		default:
			s := &c.hoistState[i]
			for r := range s {
				if s[r] != cur[r] {
					s[r] = affine{}
				}
			}
		}
	}
	for i := range n {
		if !c.hoistReached[i] {
			continue
		}
		pc := l.slot(i)
		cur = c.hoistState[i]
		ins := &c.insns[pc]
		switch ins.Class() {
		case asm.ClassALU64:
			stepALU64(&cur, ins)
		case asm.ClassALU, asm.ClassLDX, asm.ClassLD:
			cur[ins.Dst] = affine{}
		case asm.ClassSTX:
			if ins.Opcode&0xe0 == asm.ModeATOMIC {
				cur[ins.Src], cur[0] = affine{}, affine{}
			}
		}
		next, jump := c.successors(pc)
		flow(pc, jump, &cur)
		flow(pc, next, &cur)
	}
	return ivs, ok
}

// stepALU64 applies a 64-bit ALU instruction to what is known.
func stepALU64(cur *[11]affine, ins *asm.Instruction) {
	dst := &cur[ins.Dst]
	x := ins.Opcode&asm.SourceX != 0
	switch op := ins.Opcode & 0xf0; {
	case op == asm.AluMOV && ins.Offset == 0: // not movsx
		if x {
			*dst = cur[ins.Src]
		} else {
			*dst = affine{ok: true, d: int64(ins.Imm)}
		}
	case op == asm.AluADD && !x && dst.ok:
		dst.d += int64(ins.Imm)
	case op == asm.AluSUB && !x && dst.ok:
		dst.d -= int64(ins.Imm)
	case op == asm.AluADD && dst.ok && cur[ins.Src].ok && dst.bases&cur[ins.Src].bases == 0:
		dst.bases |= cur[ins.Src].bases
		dst.d += cur[ins.Src].d
	default:
		*dst = affine{}
	}
}

// exitTest finds the loop's exit test on a counter and fills l's fields
// for it (l.iv false: none), and hoistSkip for it (see dominates).
func (c *compiler) exitTest(l *hoistLoop, moving uint16, steps *[11]int64) {
	n := l.slots()
	// hoistBack[i]: a path from slot i returns to the entry. Jumps go
	// forward in the iteration's order, so one backward pass finds all.
	c.hoistBack = slices.Grow(c.hoistBack[:0], n)[:n]
	for i := n - 1; i >= 0; i-- {
		next, jump := c.successors(l.slot(i))
		c.hoistBack[i] = c.returns(l, next) || c.returns(l, jump)
	}
	for i := range n {
		pc := l.slot(i)
		if c.hoistReached[i] && c.counterTest(l, pc, moving, steps) {
			if c.dominates(l, pc) {
				return
			}
			l.iv = false
		}
	}
}

// returns reports whether slot t is the loop's entry or a slot from which
// a path returns to it.
func (c *compiler) returns(l *hoistLoop, t int) bool {
	return t >= 0 && l.inside(t) && (l.index(t) == 0 || c.hoistBack[l.index(t)])
}

// dominates reports whether every path from the loop's entry back to it
// takes the staying edge of the exit test at slot test, and fills
// hoistSkip, by index, with the slots that a path from the entry reaches
// without taking that edge: the others run only on iterations that stay.
func (c *compiler) dominates(l *hoistLoop, test int) bool {
	n := l.slots()
	skip := slices.Grow(c.hoistSkip[:0], n)[:n]
	c.hoistSkip = skip
	clear(skip)
	skip[0] = test != int(l.entry)
	// The test's leaving edge: what it leads to runs on the last
	// iteration, whether a path reaches the test without it or not.
	next, jump := c.successors(test)
	for _, t := range [2]int{next, jump} {
		if l.inside(t) && !c.returns(l, t) {
			skip[l.index(t)] = true
		}
	}
	for i := range n {
		pc := l.slot(i)
		if !skip[i] || pc == test {
			continue
		}
		next, jump := c.successors(pc)
		for _, t := range [2]int{next, jump} {
			switch {
			case t < 0 || !l.inside(t):
			case l.index(t) == 0:
				return false // an iteration that skips the test
			default:
				skip[l.index(t)] = true
			}
		}
	}
	return true
}

// counterTest reports whether the conditional jump at slot pc is an exit
// test on a counter, one of whose edges returns to the entry and the
// other never does, and fills l's fields for it.
func (c *compiler) counterTest(l *hoistLoop, pc int, moving uint16, steps *[11]int64) bool {
	ins := &c.insns[pc]
	if ins.Class() != asm.ClassJMP || ins.Opcode&asm.SourceX != 0 || ins.Imm < 0 {
		return false
	}
	v := c.hoistState[l.index(pc)][ins.Dst]
	if !v.ok || bits.OnesCount16(v.bases) != 1 || moving&v.bases == 0 || v.d != int64(int32(v.d)) {
		return false
	}
	r := bits.TrailingZeros16(v.bases)
	step := steps[r]
	if step <= 0 || step >= 1<<24 {
		return false
	}
	op := ins.Opcode & 0xf0
	next, jump := c.successors(pc)
	switch stayNext, stayJump := c.returns(l, next), c.returns(l, jump); {
	case stayNext && !stayJump: // taken, it leaves: the loop stays on the negation
		op = negated[op>>4]
	case stayJump && !stayNext:
	default:
		return false
	}
	bound, divisible := int64(ins.Imm), false
	switch op {
	case asm.JmpJLT, asm.JmpJSLT:
	case asm.JmpJLE, asm.JmpJSLE:
		bound++
	case asm.JmpJNE:
		if step&(step-1) != 0 {
			return false // the guard tests divisibility by a power of two
		}
		divisible = step > 1
	default:
		return false
	}
	// Signed and unsigned comparisons agree: the values compared go from
	// below bound (the guard's test) to below bound+step, all under 2^31.
	if bound <= 0 || bound >= 1<<30 {
		return false
	}
	l.iv, l.counter, l.dE, l.bound, l.step, l.divisible = true, uint8(r), int32(v.d), int32(bound), step, divisible
	return true
}

// negated maps a conditional jump's operation to the one taken exactly
// when it is not (0: none the exit tests use).
var negated = [16]uint8{
	asm.JmpJEQ >> 4: asm.JmpJNE, asm.JmpJNE >> 4: asm.JmpJEQ,
	asm.JmpJGE >> 4: asm.JmpJLT, asm.JmpJLT >> 4: asm.JmpJGE,
	asm.JmpJGT >> 4: asm.JmpJLE, asm.JmpJLE >> 4: asm.JmpJGT,
	asm.JmpJSGE >> 4: asm.JmpJSLT, asm.JmpJSLT >> 4: asm.JmpJSGE,
	asm.JmpJSGT >> 4: asm.JmpJSLE, asm.JmpJSLE >> 4: asm.JmpJSGT,
}

// hoistAccess hoists the check of the access at index i of loop l, if it
// is one whose addresses the loop bounds, into the loop's ranges (from
// first on).
func (c *compiler) hoistAccess(l *hoistLoop, i int, moving uint16, first int) {
	pc := l.slot(i)
	ins := &c.insns[pc]
	var base uint8
	switch ins.Opcode & 0xe7 { // class and mode
	case asm.ClassLDX | asm.ModeMEM, asm.ClassLDX | asm.ModeMEMSX:
		base = ins.Src
	case asm.ClassST | asm.ModeMEM, asm.ClassSTX | asm.ModeMEM:
		base = ins.Dst
	default:
		return
	}
	if !c.hoistReached[i] {
		return
	}
	v := c.hoistState[i][base]
	if !v.ok || v.d >= 1<<40 || v.d <= -1<<40 {
		return
	}
	size := int64(accessSize(ins.Opcode))
	lo := v.d + int64(ins.Offset)
	hiM8 := lo + size - 8
	iv := false
	switch counters := v.bases & moving; {
	case counters == 0:
	case l.iv && counters == 1<<l.counter:
		// The counter, at the start of the iteration, is x-dE for the
		// value x compared with the bound: below bound+step, and below
		// bound where only the test's staying edge leads.
		xmax := int64(l.bound) - 1
		if c.hoistSkip[i] {
			xmax += l.step
		}
		hiM8 += xmax - int64(l.dE)
		iv = true
	default:
		return
	}
	r := hoistRange{bases: v.bases, iv: iv, write: ins.Class() != asm.ClassLDX, lo: lo, hiM8: hiM8}
	if iv {
		r.bases &^= 1 << l.counter
	}
	j := slices.IndexFunc(c.hoistRanges[first:], func(o hoistRange) bool {
		return o.bases == r.bases && o.iv == r.iv && o.write == r.write
	})
	switch {
	case j >= 0:
		o := &c.hoistRanges[first+j]
		o.lo, o.hiM8 = min(o.lo, r.lo), max(o.hiM8, r.hiM8)
	case len(c.hoistRanges)-first == maxHoistRanges:
		return
	default:
		c.hoistRanges = append(c.hoistRanges, r)
	}
	c.hoisted[pc] = true
}

// hoistAt returns the loop with hoisted checks that starts at slot pc.
func (c *compiler) hoistAt(pc int) *hoistLoop {
	for i := range c.hoists {
		if int(c.hoists[i].head) == pc {
			return &c.hoists[i]
		}
	}
	return nil
}

// enterHoisted is called at the head of loop l in the body: a loop
// entered by falling into its head gets its guard here; for one entered by
// the jump right before, that jump goes to the guard, out of line.
func (c *compiler) enterHoisted(l *hoistLoop) {
	if l.inline() {
		c.emitGuard(l)
		return
	}
	// The jump's fixup is the last one: it was the slot before.
	if n := len(c.jumps); n > 0 && c.jumps[n-1].target == l.entry {
		l.entryJump = c.jumps[n-1].pos
		c.jumps = c.jumps[:n-1]
	}
}

// emitLoopTrap makes the checked copy of a loop with hoisted checks fail
// at its entry, slot pc, for tests (Options.trapSlowPaths).
func (c *compiler) emitLoopTrap(pc int) {
	for i := range c.hoists {
		if c.copying == nil && int(c.hoists[i].entry) == pc {
			c.jmpLeavePC(reasonBudget, int32(pc))
		}
	}
}

// emitGuard emits the tests that send the run to the unchecked copy of
// loop l when all of the loop's hoisted accesses are allowed, and to the
// checked copy otherwise.
func (c *compiler) emitGuard(l *hoistLoop) {
	a := c.a
	if l.iv {
		// The counter's first compared value must be below the bound,
		// and for "!=" reach it exactly.
		a.Lea(tmpAddr, x86.M(regMap[l.counter], l.dE))
		a.ALURI(x86.CMP, 8, tmpAddr, l.bound)
		l.fails[0] = int32(a.Jcc(x86.CondAE))
		if l.divisible {
			a.MovRI32(tmpC, uint32(l.bound))
			a.ALURR(x86.SUB, 4, tmpC, tmpAddr)
			a.TestRI(4, tmpC, int32(l.step-1))
			l.fails[1] = int32(a.Jcc(x86.CondNE))
		}
	}
	for i := l.ranges[0]; i < l.ranges[1]; i++ {
		r := &c.hoistRanges[i]
		// r11 = the lowest address - the region's start, rcx = the
		// highest + 1 - 8 - the region's start: allowed if r11 <= rcx <
		// end, where end is the region's size minus 7.
		hot := offHotReadLo
		if r.write {
			hot = offHotWriteLo
		}
		bases := r.bases
		if r.iv {
			bases |= 1 << l.counter
		}
		c.emitSum(tmpAddr, bases, r.lo)
		a.ALURM(x86.SUB, 8, tmpAddr, st(hot))
		first := len(c.stubs)
		if !r.iv && r.hiM8 < r.lo {
			// Fewer than 8 bytes: the hot region's usual test.
			a.ALURM(x86.CMP, 8, tmpAddr, st(hot+8))
			c.toStub(x86.CondAE, stubHoistProbe, int(l.entry)).n = int32(r.hiM8 - r.lo + 8)
		} else {
			c.emitSum(tmpC, r.bases, r.hiM8)
			a.ALURM(x86.SUB, 8, tmpC, st(hot))
			a.ALURM(x86.CMP, 8, tmpC, st(hot+8))
			c.toStub(x86.CondAE, stubHoistProbe, int(l.entry))
			a.ALURR(x86.CMP, 8, tmpAddr, tmpC)
			c.toStub(x86.CondA, stubHoistProbe, int(l.entry))
		}
		for j := first; j < len(c.stubs); j++ {
			s := &c.stubs[j]
			s.write, s.off, s.resume = r.write, hot, int32(a.Len())
		}
	}
	l.guardJump = int32(a.Jmp())
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
	a.JccTo(x86.CondNE, int(c.offsets[s.pc]))
	a.JmpTo(int(s.resume))
}

// emitLoopCopies emits the unchecked copy of each loop with hoisted
// checks, after the body: its jumps within the loop go to the copy, the
// others to the body's code.
func (c *compiler) emitLoopCopies() error {
	if len(c.hoists) == 0 {
		return nil
	}
	c.copyOffsets = slices.Grow(c.copyOffsets[:0], len(c.insns))[:len(c.insns)]
	for i := range c.hoists {
		l := &c.hoists[i]
		head, end, entry := int(l.head), int(l.end), int(l.entry)
		if !l.inline() {
			if l.entryJump == 0 {
				continue // not entered that way after all
			}
			c.a.PatchRel32(int(l.entryJump), c.a.Len())
			c.emitGuard(l)
		}
		for _, f := range l.fails {
			if f != 0 {
				c.a.PatchRel32(int(f), int(c.offsets[entry]))
			}
		}
		c.copying = l
		c.blockStart, c.uncharged = head, true
		jumps := len(c.jumps)
		if err := c.emitSlots(head, end+1, c.copyOffsets); err != nil {
			return err
		}
		if fallsThrough(&c.insns[end]) {
			if c.blockStart < end+1 {
				c.charge(end + 1)
			}
			c.a.JmpTo(int(c.offsets[end+1]))
		}
		c.a.PatchRel32(int(l.guardJump), int(c.copyOffsets[entry]))
		for _, j := range c.jumps[jumps:] {
			c.a.PatchRel32(int(j.pos), int(c.copyOffsets[j.target]))
		}
		c.jumps = c.jumps[:jumps]
		c.copying = nil
	}
	return nil
}

// fallsThrough reports whether the slot after ins runs after it on some
// path.
func fallsThrough(ins *asm.Instruction) bool {
	if ins.Class() != asm.ClassJMP && ins.Class() != asm.ClassJMP32 {
		return true
	}
	op := ins.Opcode & 0xf0
	return op != asm.JmpJA && op != asm.JmpEXIT
}
