package frontend

import (
	"slices"

	"github.com/uebpf/uebpf/asm"
)

// BPF has no indirect jump a compiler can use for a dense C switch, so
// clang lowers one to a tree of conditional jumps that compare a register
// with constants: a binary search whose every level is a branch and a
// budget charge. A back end compiles such a tree a second time, as a jump
// table over the range of its constants, emitted in front of the tree:
// for each value, the table holds the slot the tree would go to and the
// slots it would execute on the way there. A dispatch is a bounds check,
// one charge of the budget and one indirect jump. Values outside the
// range go through the tree, and so does a value whose charge the budget
// cannot pay, which then fails at the slot where the interpreter fails.

// Switch is a compare tree found in the program, and the jump table a
// back end emits for it: by value v, entry v-Lo.
type Switch struct {
	Root int32 // slot of the first comparison
	Reg  uint8 // the eBPF register compared
	Wide bool  // 64-bit comparisons (JMP); else 32-bit (JMP32)
	Lo   int64 // value of entry 0
	// By entry: the slot the tree goes to, and the comparisons it
	// executes on the way, which a dispatch charges.
	Leaves, Slots []int32
}

const (
	switchMaxDepth   = 12  // comparisons on a path through a tree
	switchMaxEntries = 256 // entries of a table
	switchMinNodes   = 4   // comparisons in a tree worth a table
)

// maxSwitchWork bounds the tree nodes findSwitches visits in a program of
// n slots. A tree's comparisons are not roots of their own, so a program
// of trees visits each about once; but a walk that stops at
// switchMaxEntries leaves the comparisons it did not reach to be roots of
// walks as long, and a program of long chains of comparisons would cost
// switchMaxEntries visits per slot. Past the bound no more trees are
// looked for.
func maxSwitchWork(n int) int { return 8*n + 1<<16 }

// findSwitches finds the compare trees worth a table, in slot order, and
// makes every slot a tree leads to the start of a block, so that a
// dispatch can jump there with the budget charged.
func (a *Analysis) findSwitches() {
	a.inSwitch = slices.Grow(a.inSwitch[:0], len(a.insns))[:len(a.insns)]
	clear(a.inSwitch)
	a.switchSeen = slices.Grow(a.switchSeen[:0], len(a.insns))[:len(a.insns)]
	clear(a.switchSeen)
	work, limit := 0, maxSwitchWork(len(a.insns))
	// The roots are the comparisons with an immediate among the
	// conditional jumps findBlocks listed: no second pass over every slot.
	for _, root := range a.condJumps {
		if work >= limit {
			break
		}
		pc := int(root)
		if a.insns[pc].Opcode&asm.SourceX != 0 || a.inSwitch[pc] || (pc > 0 && a.insns[pc-1].Opcode == asm.OpCall) {
			// A comparison after a call may be the null test an inline
			// lookup answers (see Lookups).
			continue
		}
		if !a.mayBeTree(pc) {
			work++ // the walk's one node, as switchAt would count it
			continue
		}
		s, ok := a.switchAt(pc)
		work += len(a.switchNodes)
		// The tree's other comparisons are not roots of their own, even
		// when it is not worth a table: that keeps the search linear.
		for _, n := range a.switchNodes {
			a.inSwitch[n] = true
		}
		if !ok {
			continue
		}
		for _, leaf := range s.Leaves {
			a.Starts[leaf] = true
		}
		a.Switches = append(a.Switches, s)
	}
}

// mayBeTree reports whether the comparison at root leads to another node
// of its tree: most comparisons do not, and are no tree worth a table
// (switchMinNodes > 1) without a walk.
func (a *Analysis) mayBeTree(root int) bool {
	ins := &a.insns[root]
	reg, class := ins.Dst, ins.Class()
	t := root + 1 + int(ins.Offset)
	return a.isNode(root+1, reg, class) || (t > root && a.isNode(t, reg, class))
}

// isCompareK reports whether ins is a conditional jump on an immediate.
func isCompareK(ins *asm.Instruction) bool {
	class := ins.Class()
	return (class == asm.ClassJMP || class == asm.ClassJMP32) &&
		ins.Opcode&asm.SourceX == 0 && IsConditional(ins)
}

// isNode reports whether slot pc continues the tree of register reg in
// class class.
func (a *Analysis) isNode(pc int, reg uint8, class uint8) bool {
	ins := &a.insns[pc]
	return isCompareK(ins) && ins.Dst == reg && ins.Class() == class
}

// next returns where the tree node at pc goes for value v.
func (a *Analysis) next(pc int, v uint64, wide bool) int {
	ins := &a.insns[pc]
	if asm.JumpTaken(ins.Opcode, v, uint64(int64(ins.Imm)), wide) {
		return JumpTarget(pc, ins)
	}
	return pc + 1
}

// switchAt returns the tree at root, if there is one worth a table.
func (a *Analysis) switchAt(root int) (Switch, bool) {
	ins := &a.insns[root]
	reg, class := ins.Dst, ins.Class()
	wide := class == asm.ClassJMP
	// Walk every node (depth-first, forward jumps only) for the range of
	// the constants.
	stack := append(a.switchStack[:0], int32(root))
	nodes := a.switchNodes[:0]
	defer func() { a.switchStack, a.switchNodes = stack, nodes }()
	// seen marks the nodes of this walk: root+1, since roots only grow.
	seen, stamp := a.switchSeen, int32(root)+1
	lo, hi := int64(1<<63-1), int64(-1<<63)
	for len(stack) > 0 {
		pc := int(stack[len(stack)-1])
		stack = stack[:len(stack)-1]
		if seen[pc] == stamp {
			continue // two nodes go there
		}
		seen[pc] = stamp
		if len(nodes) == switchMaxEntries {
			return Switch{}, false
		}
		nodes = append(nodes, int32(pc))
		k := int64(a.insns[pc].Imm)
		lo, hi = min(lo, k), max(hi, k)
		for _, n := range [2]int{pc + 1, pc + 1 + int(a.insns[pc].Offset)} {
			if n > pc && a.isNode(n, reg, class) {
				stack = append(stack, int32(n))
			}
		}
	}
	// One past the largest constant is where a "greater than" test sends
	// the values above it.
	hi++
	n := int(hi - lo + 1)
	if len(nodes) < switchMinNodes || n > switchMaxEntries || n > 8*len(nodes) {
		return Switch{}, false
	}
	s := Switch{Root: int32(root), Reg: reg, Wide: wide, Lo: lo}
	// The tables share one buffer per Analysis: compiling allocates
	// nothing in the steady state.
	start := len(a.switchData)
	a.switchData = slices.Grow(a.switchData, 2*n)[:start+2*n]
	s.Leaves, s.Slots = a.switchData[start:start+n:start+n], a.switchData[start+n:start+2*n]
	for i := range n {
		v := uint64(lo) + uint64(i)
		pc, slots := root, 1
		next := a.next(pc, v, wide)
		for next > pc && a.isNode(next, reg, class) {
			if slots++; slots > switchMaxDepth {
				return Switch{}, false
			}
			pc, next = next, a.next(next, v, wide)
		}
		s.Leaves[i], s.Slots[i] = int32(next), int32(slots)
	}
	return s, true
}
