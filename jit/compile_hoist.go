package jit

import (
	"math/bits"
	"slices"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/jit/internal/x86"
	"github.com/uebpf/uebpf/vm"
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
// same budget, and either may jump into the other's code after the loop.
//
// A loop qualifies when it is a range of slots [head, end] entered only
// at head, whose backward jumps all go to head, with no calls, packet
// loads or switch tables. An abstract interpretation of one iteration
// finds its induction variables (registers that grow by the same
// constant on every path back to head) and, at each access, the address
// as a sum of register values at the start of the iteration plus a
// constant. The range of the counter iv comes from the loop's exit test,
// a comparison of iv (plus a constant) with an immediate that every
// iteration runs: for "stay while iv+dE < bound" and a step k > 0, iv+dE
// goes from its value at entry, which the guard requires below bound, to
// at most bound-1+k at the test (bound-1 after it). Accesses whose
// address is iv plus invariant registers, or invariant registers alone,
// are hoisted; the others keep their checks.

// Limits that keep the analysis cheap and the guard short.
const (
	maxHoistLoops  = 8
	maxHoistSlots  = 256
	maxHoistRanges = 4
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
	head, end int32
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
	// those of its jumps to the checked copy (0: none).
	guardJump int32
	fails     [2]int32
}

// findHoists finds the loops whose checks can be hoisted, marks their
// hoisted accesses and makes the slot after each such loop the start of a
// block, where the unchecked copy rejoins the code.
func (c *compiler) findHoists() {
	c.hoists, c.hoistRanges, c.hoisted = c.hoists[:0], c.hoistRanges[:0], c.hoisted[:0]
	if !c.checked || c.blind || !c.loops || !c.hotUsed {
		return
	}
	c.hoisted = slices.Grow(c.hoisted[:0], len(c.insns))[:len(c.insns)]
	clear(c.hoisted)
	for i, e := range c.backEdges {
		head, end := int(e[0]), int(e[1])
		if len(c.hoists) == maxHoistLoops || slices.ContainsFunc(c.backEdges[:i], func(o [2]int32) bool { return int(o[0]) == head }) {
			continue
		}
		for _, o := range c.backEdges[i+1:] { // the loop ends at its last back edge
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
	if head == 0 || end-head >= maxHoistSlots || !c.singleEntry(head, end) {
		return
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
			op := ins.Opcode & 0xf0
			if op == asm.JmpCALL {
				return
			}
			if t := jumpTarget(pc, ins); op != asm.JmpEXIT && t <= pc && t != head {
				return // an inner loop
			}
		}
	}
	for _, s := range c.switches {
		if int(s.root) >= head && int(s.root) <= end {
			return // its table jumps to the body's code
		}
	}

	// Induction variables: assume every register the loop writes is one,
	// and drop those that do not come back to head grown by a constant.
	var steps [11]int64
	ivs := defined
	for {
		kept := c.interpretLoop(head, end, defined, ivs, &steps)
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
	l := hoistLoop{head: int32(head), end: int32(end)}
	exit := c.exitTest(&l, head, end, moving, &steps)
	first := len(c.hoistRanges)
	for pc := head; pc <= end; pc++ {
		c.hoistAccess(&l, pc, exit, moving, first)
	}
	if len(c.hoistRanges) == first {
		return
	}
	l.ranges = [2]int32{int32(first), int32(len(c.hoistRanges))}
	c.hoists = append(c.hoists, l)
	if end+1 < len(c.insns) {
		c.starts[end+1] = true
	}
}

// jumpTarget returns the slot a jump at pc goes to.
func jumpTarget(pc int, ins *asm.Instruction) int {
	if ins.Opcode == asm.ClassJMP32|asm.JmpJA {
		return pc + 1 + int(ins.Imm)
	}
	return pc + 1 + int(ins.Offset)
}

// singleEntry reports whether no jump or call from outside [head, end]
// goes into it after head.
func (c *compiler) singleEntry(head, end int) bool {
	for pc := 0; pc < len(c.insns); pc++ {
		ins := &c.insns[pc]
		if ins.Opcode == asm.OpLDDW {
			pc++
			continue
		}
		if pc >= head && pc <= end {
			continue
		}
		class := ins.Class()
		if class != asm.ClassJMP && class != asm.ClassJMP32 {
			continue
		}
		op := ins.Opcode & 0xf0
		localCall := ins.Opcode == asm.OpCall && ins.Src == asm.PseudoCall
		if op == asm.JmpEXIT || op == asm.JmpCALL && !localCall {
			continue
		}
		var t int
		if localCall {
			t = pc + 1 + int(ins.Imm)
		} else {
			t = jumpTarget(pc, ins)
		}
		if t > head && t <= end {
			return false
		}
	}
	return true
}

// interpretLoop runs one iteration of the loop abstractly, assuming the
// registers in ivs hold counters at head, and returns those that are: on
// every path back to head, grown by the same constant, which it stores in
// steps. It leaves in hoistState the registers at the start of each slot
// (hoistReached false: no path reaches the slot).
func (c *compiler) interpretLoop(head, end int, defined, ivs uint16, steps *[11]int64) uint16 {
	n := end - head + 1
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
	flow := func(t int, cur *[11]affine) {
		switch {
		case t == head:
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
		case t < head || t > end: // leaves the loop
		case !c.hoistReached[t-head]:
			c.hoistState[t-head], c.hoistReached[t-head] = *cur, true
		default:
			s := &c.hoistState[t-head]
			for r := range s {
				if s[r] != cur[r] {
					s[r] = affine{}
				}
			}
		}
	}
	for pc := head; pc <= end; pc++ {
		if !c.hoistReached[pc-head] {
			continue
		}
		cur = c.hoistState[pc-head]
		ins := &c.insns[pc]
		next := pc + 1
		switch ins.Class() {
		case asm.ClassALU64:
			stepALU64(&cur, ins)
		case asm.ClassALU, asm.ClassLDX:
			cur[ins.Dst] = affine{}
		case asm.ClassSTX:
			if ins.Opcode&0xe0 == asm.ModeATOMIC {
				cur[ins.Src], cur[0] = affine{}, affine{}
			}
		case asm.ClassLD: // lddw
			cur[ins.Dst] = affine{}
			next++
		case asm.ClassJMP, asm.ClassJMP32:
			if ins.Opcode&0xf0 == asm.JmpEXIT {
				continue
			}
			flow(jumpTarget(pc, ins), &cur)
			if ins.Opcode&0xf0 == asm.JmpJA {
				continue
			}
		}
		flow(next, &cur)
	}
	return ivs
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
// for it; it returns its slot (-1: none). The test must run on every
// iteration: no jump before it goes past it or back to head.
func (c *compiler) exitTest(l *hoistLoop, head, end int, moving uint16, steps *[11]int64) int {
	reach := head // the furthest slot a jump so far lands on
	for pc := head; pc <= end; pc++ {
		ins := &c.insns[pc]
		class := ins.Class()
		if class != asm.ClassJMP && class != asm.ClassJMP32 {
			if ins.Opcode == asm.OpLDDW {
				pc++
			}
			continue
		}
		if pc < reach || !c.hoistReached[pc-head] {
			return -1 // a jump may skip this slot
		}
		switch op := ins.Opcode & 0xf0; {
		case op == asm.JmpEXIT:
			continue
		case op == asm.JmpJA:
			return -1 // what follows is reached some other way, or never
		}
		t := jumpTarget(pc, ins)
		if c.counterTest(l, pc, t, head, end, moving, steps) {
			return pc
		}
		if t == head {
			return -1
		}
		if t <= end {
			reach = max(reach, t)
		}
	}
	return -1
}

// counterTest reports whether the conditional jump at pc, to t, is an
// exit test on a counter, and fills l's fields for it.
func (c *compiler) counterTest(l *hoistLoop, pc, t, head, end int, moving uint16, steps *[11]int64) bool {
	ins := &c.insns[pc]
	if ins.Class() != asm.ClassJMP || ins.Opcode&asm.SourceX != 0 || ins.Imm < 0 {
		return false
	}
	v := c.hoistState[pc-head][ins.Dst]
	if !v.ok || bits.OnesCount16(v.bases) != 1 || moving&v.bases == 0 || v.d != int64(int32(v.d)) {
		return false
	}
	r := bits.TrailingZeros16(v.bases)
	step := steps[r]
	if step <= 0 || step >= 1<<24 {
		return false
	}
	op := ins.Opcode & 0xf0
	switch {
	case t < head || t > end: // taken: leaves; the loop stays on the negation
		op = negated[op>>4]
	case pc == end && t == head: // taken: stays; falling through leaves
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
	// below bound (the guard's test) to below bound+step, all under 2^62.
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

// hoistAccess hoists the check of the access at slot pc, if it is one
// whose addresses the loop l bounds, into the loop's ranges (from first
// on). exit is the slot of the exit test (-1: none).
func (c *compiler) hoistAccess(l *hoistLoop, pc, exit int, moving uint16, first int) {
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
	if !c.hoistReached[pc-int(l.head)] {
		return
	}
	v := c.hoistState[pc-int(l.head)][base]
	if !v.ok || v.bases&(1<<asm.R10) != 0 || v.d >= 1<<40 || v.d <= -1<<40 {
		return // r10's accesses have their own test, short or none
	}
	size := int64(accessSize(ins.Opcode))
	lo := v.d + int64(ins.Offset)
	hiM8 := lo + size - 8
	iv := false
	switch counters := v.bases & moving; {
	case counters == 0:
	case l.iv && counters == 1<<l.counter:
		// The counter, at the start of the iteration, is x-dE for the
		// value x compared with the bound.
		xmax := int64(l.bound) - 1
		if pc < exit {
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
	i := slices.IndexFunc(c.hoistRanges[first:], func(o hoistRange) bool {
		return o.bases == r.bases && o.iv == r.iv && o.write == r.write
	})
	switch {
	case i >= 0:
		o := &c.hoistRanges[first+i]
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

// emitGuard emits, before the checked copy of loop l, the tests that send
// the run to the unchecked copy when all of the loop's hoisted accesses
// are allowed. It falls through to the checked copy otherwise.
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
			c.toStub(x86.CondAE, stubHoistProbe, int(l.head)).n = int32(r.hiM8 - r.lo + 8)
		} else {
			c.emitSum(tmpC, r.bases, r.hiM8)
			a.ALURM(x86.SUB, 8, tmpC, st(hot))
			a.ALURM(x86.CMP, 8, tmpC, st(hot+8))
			c.toStub(x86.CondAE, stubHoistProbe, int(l.head))
			a.ALURR(x86.CMP, 8, tmpAddr, tmpC)
			c.toStub(x86.CondA, stubHoistProbe, int(l.head))
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
// hot region failed, so it asks the region list (which makes the region
// that allows the range hot) and goes on with the guard if a region
// allows the range, or runs the checked copy. In: r11 = the range's start
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
	// The stack, which is not in the region list: allowed if the range's
	// start is inside and its size at most what is left (sizes here are
	// below 2^33: no overflow).
	a.MovRR(8, tmpC, tmpAddr)
	a.ALURM(x86.SUB, 8, tmpC, st(offStackLo))
	a.ALURI(x86.CMP, 8, tmpC, vm.StackSize)
	a.JccShort(x86.CondAE, 0)
	notStack := a.Len()
	a.ALURR(x86.ADD, 8, tmpC, tmpD)
	a.ALURI(x86.CMP, 8, tmpC, vm.StackSize)
	a.JccShort(x86.CondA, 0)
	notStack2 := a.Len()
	a.Pop(budgetReg)
	a.JmpTo(int(s.resume))
	a.Bytes()[notStack-1] = byte(a.Len() - notStack)
	a.Bytes()[notStack2-1] = byte(a.Len() - notStack2)
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
		head, end := int(l.head), int(l.end)
		for _, f := range l.fails {
			if f != 0 {
				c.a.PatchRel32(int(f), int(c.offsets[head]))
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
		c.a.PatchRel32(int(l.guardJump), int(c.copyOffsets[head]))
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
