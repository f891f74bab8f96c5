package frontend

import (
	"math/bits"
	"slices"

	"github.com/uebpf/uebpf/asm"
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
//
// The front end finds the loops, their hoisted accesses and the ranges
// those reach; a back end emits the guard and the two copies.

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

// HoistRange is the span of addresses that the hoisted accesses of one
// kind (read or write) through the same registers reach: from the sum of
// the registers in Bases (and the counter's entry value, if IV) plus Lo,
// to the sum of Bases plus HiM8 plus 8 (exclusive).
type HoistRange struct {
	Bases    uint16
	IV       bool
	Write    bool
	Lo, HiM8 int64
}

// Hoist is a loop with hoisted checks.
type Hoist struct {
	Head, End, Entry int32
	// The exit test, when IV: stay while Counter+DE < Bound, with the
	// counter growing by Step. Divisible: the test is "!=", which needs
	// Bound-(Counter+DE) to be a multiple of Step at entry.
	IV        bool
	Counter   uint8
	Divisible bool
	DE, Bound int32
	Step      int64
	// Ranges is the loop's part of HoistRanges.
	Ranges [2]int32
}

func (l *Hoist) slots() int         { return int(l.End-l.Head) + 1 }
func (l *Hoist) inside(pc int) bool { return pc >= int(l.Head) && pc <= int(l.End) }
func (l *Hoist) index(pc int) int   { return (pc - int(l.Entry) + l.slots()) % l.slots() }
func (l *Hoist) slot(index int) int { return int(l.Head) + (int(l.Entry-l.Head)+index)%l.slots() }

// Inline reports whether the code before the loop falls into its head,
// its entry; else the jump right before the head goes to the entry.
func (l *Hoist) Inline() bool { return l.Entry == l.Head }

// findHoists finds the loops whose checks can be hoisted, marks their
// hoisted accesses and makes the slot after each such loop the start of a
// block, where the unchecked copy rejoins the code.
func (a *Analysis) findHoists() {
	if !a.Loops || !a.HotUsed {
		return
	}
	a.Hoisted = slices.Grow(a.Hoisted, len(a.insns))[:len(a.insns)]
	clear(a.Hoisted)
	// The first backward jumps only: finding each one's loop is linear in
	// their number, which the program controls.
	edges := a.BackEdges[:min(len(a.BackEdges), maxHoistEdges)]
	for i, e := range edges {
		head, end := int(e[0]), int(e[1])
		if len(a.Hoists) == maxHoistLoops || slices.ContainsFunc(edges[:i], func(o [2]int32) bool { return int(o[0]) == head }) {
			continue
		}
		for _, o := range edges[i+1:] { // the loop ends at its last back edge
			if int(o[0]) == head {
				end = max(end, int(o[1]))
			}
		}
		if a.compareIn(head, end) {
			continue // entered at the compare loop's wide code instead
		}
		a.findHoist(head, end)
	}
}

// findHoist analyses the loop [head, end] and records it when some of its
// checks can be hoisted.
func (a *Analysis) findHoist(head, end int) {
	if head == 0 || end-head >= maxHoistSlots {
		return
	}
	l := Hoist{Head: int32(head), End: int32(end), Entry: int32(head)}
	prev := head - 1
	if head >= 2 && a.insns[head-2].Opcode == asm.OpLDDW {
		prev = head - 2
	}
	if ins := &a.insns[prev]; !FallsThrough(ins) {
		if ins.Opcode&0xf0 != asm.JmpJA || ins.Opcode&0x07 != asm.ClassJMP && ins.Opcode&0x07 != asm.ClassJMP32 {
			return // entered some other way
		}
		t := JumpTarget(prev, ins)
		if t <= head || t > end {
			return
		}
		l.Entry = int32(t)
	}
	var defined uint16 // the registers the loop writes
	for pc := head; pc <= end; pc++ {
		ins := &a.insns[pc]
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
	for _, s := range a.Switches {
		if l.inside(int(s.Root)) {
			return // its table jumps to the body's code
		}
	}

	// Counters: assume every register the loop writes is one, and drop
	// those that do not come back to the entry grown by a constant.
	var steps [11]int64
	ivs := defined
	for {
		if a.hoistWork += l.slots(); a.hoistWork > maxHoistWork {
			return
		}
		kept, ok := a.interpretLoop(&l, defined, ivs, &steps)
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
	a.exitTest(&l, moving, &steps)
	first := len(a.HoistRanges)
	for i := range l.slots() {
		a.hoistAccess(&l, i, moving, first)
	}
	if len(a.HoistRanges) == first {
		return
	}
	l.Ranges = [2]int32{int32(first), int32(len(a.HoistRanges))}
	a.Hoists = append(a.Hoists, l)
	if end+1 < len(a.insns) {
		a.Starts[end+1] = true
	}
}

// successors returns the slots that may run after slot pc of a loop, the
// next one and a jump's target (-1: none).
func (a *Analysis) successors(pc int) (next, jump int) {
	ins := &a.insns[pc]
	switch ins.Class() {
	case asm.ClassLD:
		return pc + 2, -1 // lddw
	case asm.ClassJMP, asm.ClassJMP32:
		switch ins.Opcode & 0xf0 {
		case asm.JmpEXIT:
			return -1, -1
		case asm.JmpJA:
			return -1, JumpTarget(pc, ins)
		}
		return pc + 1, JumpTarget(pc, ins)
	}
	return pc + 1, -1
}

// interpretLoop runs one iteration of loop l abstractly, assuming the
// registers in ivs hold counters at its entry, and returns those that do:
// on every path back to the entry, grown by the same constant, which it
// stores in steps. It leaves in hoistState the registers at the start of
// each slot, by index (hoistReached false: no path reaches the slot). ok
// false: a jump goes backwards in the iteration's order, not to the entry.
func (a *Analysis) interpretLoop(l *Hoist, defined, ivs uint16, steps *[11]int64) (_ uint16, ok bool) {
	n := l.slots()
	a.hoistState = slices.Grow(a.hoistState[:0], n)[:n]
	a.hoistReached = slices.Grow(a.hoistReached[:0], n)[:n]
	clear(a.hoistReached)
	var seen uint16 // counters whose step is known
	var cur [11]affine
	for r := range cur {
		if defined&(1<<r) == 0 || ivs&(1<<r) != 0 {
			cur[r] = affine{bases: 1 << r, ok: true}
		}
	}
	a.hoistState[0], a.hoistReached[0] = cur, true
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
		case !a.hoistReached[i]:
			a.hoistState[i], a.hoistReached[i] = *cur, true
		default:
			s := &a.hoistState[i]
			for r := range s {
				if s[r] != cur[r] {
					s[r] = affine{}
				}
			}
		}
	}
	for i := range n {
		if !a.hoistReached[i] {
			continue
		}
		pc := l.slot(i)
		cur = a.hoistState[i]
		ins := &a.insns[pc]
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
		next, jump := a.successors(pc)
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
// for it (l.IV false: none), and hoistSkip for it (see dominates).
func (a *Analysis) exitTest(l *Hoist, moving uint16, steps *[11]int64) {
	n := l.slots()
	// hoistBack[i]: a path from slot i returns to the entry. Jumps go
	// forward in the iteration's order, so one backward pass finds all.
	a.hoistBack = slices.Grow(a.hoistBack[:0], n)[:n]
	for i := n - 1; i >= 0; i-- {
		next, jump := a.successors(l.slot(i))
		a.hoistBack[i] = a.returns(l, next) || a.returns(l, jump)
	}
	for i := range n {
		pc := l.slot(i)
		if a.hoistReached[i] && a.counterTest(l, pc, moving, steps) {
			if a.dominates(l, pc) {
				return
			}
			l.IV = false
		}
	}
}

// returns reports whether slot t is the loop's entry or a slot from which
// a path returns to it.
func (a *Analysis) returns(l *Hoist, t int) bool {
	return t >= 0 && l.inside(t) && (l.index(t) == 0 || a.hoistBack[l.index(t)])
}

// dominates reports whether every path from the loop's entry back to it
// takes the staying edge of the exit test at slot test, and fills
// hoistSkip, by index, with the slots that a path from the entry reaches
// without taking that edge: the others run only on iterations that stay.
func (a *Analysis) dominates(l *Hoist, test int) bool {
	n := l.slots()
	skip := slices.Grow(a.hoistSkip[:0], n)[:n]
	a.hoistSkip = skip
	clear(skip)
	skip[0] = test != int(l.Entry)
	// The test's leaving edge: what it leads to runs on the last
	// iteration, whether a path reaches the test without it or not.
	next, jump := a.successors(test)
	for _, t := range [2]int{next, jump} {
		if l.inside(t) && !a.returns(l, t) {
			skip[l.index(t)] = true
		}
	}
	for i := range n {
		pc := l.slot(i)
		if !skip[i] || pc == test {
			continue
		}
		next, jump := a.successors(pc)
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
func (a *Analysis) counterTest(l *Hoist, pc int, moving uint16, steps *[11]int64) bool {
	ins := &a.insns[pc]
	if ins.Class() != asm.ClassJMP || ins.Opcode&asm.SourceX != 0 || ins.Imm < 0 {
		return false
	}
	v := a.hoistState[l.index(pc)][ins.Dst]
	if !v.ok || bits.OnesCount16(v.bases) != 1 || moving&v.bases == 0 || v.d != int64(int32(v.d)) {
		return false
	}
	r := bits.TrailingZeros16(v.bases)
	step := steps[r]
	if step <= 0 || step >= 1<<24 {
		return false
	}
	op := ins.Opcode & 0xf0
	next, jump := a.successors(pc)
	switch stayNext, stayJump := a.returns(l, next), a.returns(l, jump); {
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
	l.IV, l.Counter, l.DE, l.Bound, l.Step, l.Divisible = true, uint8(r), int32(v.d), int32(bound), step, divisible
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
func (a *Analysis) hoistAccess(l *Hoist, i int, moving uint16, first int) {
	pc := l.slot(i)
	ins := &a.insns[pc]
	var base uint8
	switch ins.Opcode & 0xe7 { // class and mode
	case asm.ClassLDX | asm.ModeMEM, asm.ClassLDX | asm.ModeMEMSX:
		base = ins.Src
	case asm.ClassST | asm.ModeMEM, asm.ClassSTX | asm.ModeMEM:
		base = ins.Dst
	default:
		return
	}
	if !a.hoistReached[i] {
		return
	}
	v := a.hoistState[i][base]
	if !v.ok || v.d >= 1<<40 || v.d <= -1<<40 {
		return
	}
	size := int64(AccessSize(ins.Opcode))
	lo := v.d + int64(ins.Offset)
	hiM8 := lo + size - 8
	iv := false
	switch counters := v.bases & moving; {
	case counters == 0:
	case l.IV && counters == 1<<l.Counter:
		// The counter, at the start of the iteration, is x-dE for the
		// value x compared with the bound: below bound+step, and below
		// bound where only the test's staying edge leads.
		xmax := int64(l.Bound) - 1
		if a.hoistSkip[i] {
			xmax += l.Step
		}
		hiM8 += xmax - int64(l.DE)
		iv = true
	default:
		return
	}
	r := HoistRange{Bases: v.bases, IV: iv, Write: ins.Class() != asm.ClassLDX, Lo: lo, HiM8: hiM8}
	if iv {
		r.Bases &^= 1 << l.Counter
	}
	j := slices.IndexFunc(a.HoistRanges[first:], func(o HoistRange) bool {
		return o.Bases == r.Bases && o.IV == r.IV && o.Write == r.Write
	})
	switch {
	case j >= 0:
		o := &a.HoistRanges[first+j]
		o.Lo, o.HiM8 = min(o.Lo, r.Lo), max(o.HiM8, r.HiM8)
	case len(a.HoistRanges)-first == maxHoistRanges:
		return
	default:
		a.HoistRanges = append(a.HoistRanges, r)
	}
	a.Hoisted[pc] = true
}

// FallsThrough reports whether the slot after ins runs after it on some
// path.
func FallsThrough(ins *asm.Instruction) bool {
	if ins.Class() != asm.ClassJMP && ins.Class() != asm.ClassJMP32 {
		return true
	}
	op := ins.Opcode & 0xf0
	return op != asm.JmpJA && op != asm.JmpEXIT
}

// AccessSize returns the size in bytes of a load or store of opcode.
func AccessSize(opcode uint8) int {
	switch opcode & 0x18 {
	case asm.SizeB:
		return 1
	case asm.SizeH:
		return 2
	case asm.SizeW:
		return 4
	}
	return 8
}
