package frontend

import (
	"slices"

	"github.com/uebpf/uebpf/asm"
)

// Budget loops: small loops whose iterations a back end may run with one
// budget test each (Options.LoopBudget). Every charging instruction tests
// the budget so that a run stops exactly where the interpreter does; in a
// loop that is a few tests and branches per iteration. A back end that
// opts in emits a second copy of such a loop in which the charges are
// plain subtractions, and at the loop's head a guard that runs that copy
// when the budget register covers Cost, the most an iteration can charge
// from the head until it comes back to it or leaves the copy; otherwise
// the ordinary code runs and fails where the interpreter does. The charges
// stay exact, so Executed does too, and the budget register holds the
// current slice, so a slice's end falls to the ordinary code as well.
//
// A loop whose iteration makes fewer than budgetLoopMinTests tests is
// not worth it. The copy covers the slots [Head, End], End the last backward jump to
// Head. A jump from a slot of the copy to Head goes back to the guard; one
// to any other slot of the range goes forward (a backward one, an inner
// loop, disqualifies the loop), and one out of the range goes to the
// ordinary code. So no slot of the copy runs twice between two guards,
// and an iteration charges at most the range's length. The loop must make
// no call (helpers and local calls leave with the budget) and no packet
// load, and share no slot with a switch table, a copy or compare loop or
// a loop with hoisted checks, which have code of their own at their
// heads.

// BudgetLoop is a loop run with one budget test per iteration.
type BudgetLoop struct {
	Head, End int32
	// Cost is the most an iteration charges from Head: End-Head+1.
	Cost int32
}

const (
	budgetLoopMaxSlots = 64 // code size: the copy doubles the loop
	budgetLoopMaxHeads = 64 // loop heads examined per program
)

// budgetLoopMinTests is the fewest budget tests an iteration of the
// ordinary code must make for a loop to be worth a copy: the copy's guard
// is a test too, and entering and leaving the copy cost a taken jump
// each. prime's two loops (one and three tests) ran 0.5-1.5 % slower
// with copies, log2_int's (six) 8 % faster. SetBudgetLoopMinTests changes
// it for tests.
var budgetLoopMinTests = 4

// SetBudgetLoopMinTests sets budgetLoopMinTests, for tests, and returns
// a function that restores it.
func SetBudgetLoopMinTests(n int) (restore func()) {
	old := budgetLoopMinTests
	budgetLoopMinTests = n
	return func() { budgetLoopMinTests = old }
}

// BudgetLoopAt returns the index of the budget loop whose head is slot
// pc, or -1.
func (a *Analysis) BudgetLoopAt(pc int) int {
	i, ok := slices.BinarySearchFunc(a.BudgetLoops, int32(pc), func(l BudgetLoop, pc int32) int { return int(l.Head - pc) })
	if !ok {
		return -1
	}
	return i
}

// findBudgetLoops fills BudgetLoops, in the order of their heads. It
// looks at most at budgetLoopMaxHeads heads, each over at most
// budgetLoopMaxSlots slots.
func (a *Analysis) findBudgetLoops() {
	if !a.Loops {
		return
	}
	// The last backward jump to each head (BackEdges are in the order of
	// their sources).
	n := len(a.insns)
	a.budgetEnd = slices.Grow(a.budgetEnd[:0], n)[:n]
	clear(a.budgetEnd)
	for _, e := range a.BackEdges {
		a.budgetEnd[e[0]] = e[1]
	}
	heads := 0
	for pc, isHead := range a.LoopHead {
		if !isHead {
			continue
		}
		if heads++; heads > budgetLoopMaxHeads {
			return
		}
		end := int(a.budgetEnd[pc])
		if end-pc+1 > budgetLoopMaxSlots || !a.budgetLoopBody(pc, end) || a.sharesSlots(pc, end) || a.budgetTests(pc, end) < budgetLoopMinTests {
			continue
		}
		a.BudgetLoops = append(a.BudgetLoops, BudgetLoop{Head: int32(pc), End: int32(end), Cost: int32(end - pc + 1)})
	}
}

// budgetLoopBody reports whether the slots [head, end] may be a budget
// loop's: no calls, packet loads or backward jumps inside the range but
// to head.
func (a *Analysis) budgetLoopBody(head, end int) bool {
	for pc := head; pc <= end; pc++ {
		ins := &a.insns[pc]
		switch ins.Class() {
		case asm.ClassLD:
			if ins.Opcode != asm.OpLDDW {
				return false
			}
			pc++
		case asm.ClassJMP, asm.ClassJMP32:
			if ins.Opcode == asm.OpCall || ins.Opcode == asm.OpCallX {
				return false
			}
			if !isJump(ins) {
				continue
			}
			if t := JumpTarget(pc, ins); t <= pc && t >= head && t != head {
				return false // an inner loop
			}
		}
	}
	return true
}

// budgetTests returns how many budget tests an iteration of the ordinary
// code of [head, end] makes at most: one at each exit and jump, but for a
// conditional jump out of the loop or to the end of the run, which charges
// only when taken, out of line.
func (a *Analysis) budgetTests(head, end int) int {
	n := 0
	for pc := head; pc <= end; pc++ {
		ins := &a.insns[pc]
		switch c := ins.Class(); {
		case c == asm.ClassLD && ins.Opcode == asm.OpLDDW:
			pc++
		case c != asm.ClassJMP && c != asm.ClassJMP32:
		case ins.Opcode == asm.OpExit:
			n++
		case !isJump(ins):
		case IsConditional(ins):
			if t := JumpTarget(pc, ins); t > pc+1 && (a.LeavesLoop(pc, t) || a.EndsRun(t)) {
				continue
			}
			n++
		default:
			n++
		}
	}
	return n
}

// isJump reports whether ins, of a JMP class, is a goto or a conditional
// jump.
func isJump(ins *asm.Instruction) bool {
	switch ins.Opcode & 0xf0 {
	case asm.JmpCALL, asm.JmpEXIT, 0xe0, 0xf0:
		return false
	}
	return true
}

// sharesSlots reports whether [head, end] overlaps a switch tree's root,
// a copy or compare loop, or a loop with hoisted checks.
func (a *Analysis) sharesSlots(head, end int) bool {
	overlaps := func(lo, hi int32) bool { return int(max(lo, hi)) >= head && int(min(lo, hi)) <= end }
	for i := range a.Switches {
		if r := a.Switches[i].Root; overlaps(r, r) {
			return true
		}
	}
	for i := range a.Copies {
		if overlaps(a.Copies[i].Head, a.Copies[i].End) {
			return true
		}
	}
	for i := range a.Hoists {
		if overlaps(a.Hoists[i].Head, a.Hoists[i].End) {
			return true
		}
	}
	return false
}
