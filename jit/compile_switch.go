package jit

import (
	"slices"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/jit/internal/x86"
)

// BPF has no indirect jump a compiler can use for a dense C switch, so
// clang lowers one to a tree of conditional jumps that compare a register
// with constants: a binary search whose every level is a branch and a
// budget charge. The JIT compiles such a tree a second time, as a jump
// table over the range of its constants, emitted in front of the tree:
// for each value, the table holds the slot the tree would go to and the
// slots it would execute on the way there. A dispatch is a bounds check,
// one charge of the budget and one indirect jump. Values outside the
// range go through the tree, and so does a value whose charge the budget
// cannot pay, which then fails at the slot where the interpreter fails.

// switchTree is a compare tree found in the program, and its table.
type switchTree struct {
	root int32 // slot of the first comparison
	reg  uint8 // the eBPF register compared
	wide bool  // 64-bit comparisons (JMP); else 32-bit (JMP32)
	lo   int64 // value of entry 0
	// By entry: the slot the tree goes to, and the comparisons it
	// executes on the way (the table's charge adds pre).
	leaves, slots []int32
	tablePatch    int32 // the rel32 of the dispatch's lea of the table
	pre           int32 // slots of the block before the root, not yet charged
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
func (c *compiler) findSwitches() {
	if c.blind {
		return // the table's bounds would be unblinded immediates
	}
	c.inSwitch = slices.Grow(c.inSwitch[:0], len(c.insns))[:len(c.insns)]
	clear(c.inSwitch)
	c.switchSeen = slices.Grow(c.switchSeen[:0], len(c.insns))[:len(c.insns)]
	clear(c.switchSeen)
	work, limit := 0, maxSwitchWork(len(c.insns))
	for pc := 0; pc < len(c.insns) && work < limit; pc++ {
		ins := &c.insns[pc]
		if !isCompareK(ins) || c.inSwitch[pc] || (pc > 0 && c.insns[pc-1].Opcode == asm.OpCall) {
			// A comparison after a call may be the null test an inline
			// lookup answers (see emitArrayLookup).
			continue
		}
		s, ok := c.switchAt(pc)
		work += len(c.switchNodes)
		// The tree's other comparisons are not roots of their own, even
		// when it is not worth a table: that keeps the search linear.
		for _, n := range c.switchNodes {
			c.inSwitch[n] = true
		}
		if !ok {
			continue
		}
		for _, leaf := range s.leaves {
			c.starts[leaf] = true
		}
		c.switches = append(c.switches, s)
	}
}

// isCompareK reports whether ins is a conditional jump on an immediate.
func isCompareK(ins *asm.Instruction) bool {
	class := ins.Class()
	return (class == asm.ClassJMP || class == asm.ClassJMP32) &&
		ins.Opcode&asm.SourceX == 0 && jumpConds[ins.Opcode>>4] != 0xff
}

// isNode reports whether slot pc continues the tree of register reg in
// class class.
func (c *compiler) isNode(pc int, reg uint8, class uint8) bool {
	ins := &c.insns[pc]
	return isCompareK(ins) && ins.Dst == reg && ins.Class() == class
}

// next returns where the tree node at pc goes for value v.
func (c *compiler) next(pc int, v uint64, wide bool) int {
	ins := &c.insns[pc]
	if asm.JumpTaken(ins.Opcode, v, uint64(int64(ins.Imm)), wide) {
		return jumpTarget(pc, ins)
	}
	return pc + 1
}

// switchAt returns the tree at root, if there is one worth a table.
func (c *compiler) switchAt(root int) (switchTree, bool) {
	ins := &c.insns[root]
	reg, class := ins.Dst, ins.Class()
	wide := class == asm.ClassJMP
	// Walk every node (depth-first, forward jumps only) for the range of
	// the constants.
	stack := append(c.foldStack[:0], int32(root))
	nodes := c.switchNodes[:0]
	defer func() { c.foldStack, c.switchNodes = stack, nodes }()
	// seen marks the nodes of this walk: root+1, since roots only grow.
	seen, stamp := c.switchSeen, int32(root)+1
	lo, hi := int64(1<<63-1), int64(-1<<63)
	for len(stack) > 0 {
		pc := int(stack[len(stack)-1])
		stack = stack[:len(stack)-1]
		if seen[pc] == stamp {
			continue // two nodes go there
		}
		seen[pc] = stamp
		if len(nodes) == switchMaxEntries {
			return switchTree{}, false
		}
		nodes = append(nodes, int32(pc))
		k := int64(c.insns[pc].Imm)
		lo, hi = min(lo, k), max(hi, k)
		for _, n := range [2]int{pc + 1, pc + 1 + int(c.insns[pc].Offset)} {
			if n > pc && c.isNode(n, reg, class) {
				stack = append(stack, int32(n))
			}
		}
	}
	// One past the largest constant is where a "greater than" test sends
	// the values above it.
	hi++
	n := int(hi - lo + 1)
	if len(nodes) < switchMinNodes || n > switchMaxEntries || n > 8*len(nodes) {
		return switchTree{}, false
	}
	s := switchTree{root: int32(root), reg: reg, wide: wide, lo: lo}
	// The tables share one buffer per compiler: compiling allocates
	// nothing in the steady state.
	start := len(c.switchData)
	c.switchData = slices.Grow(c.switchData, 2*n)[:start+2*n]
	s.leaves, s.slots = c.switchData[start:start+n:start+n], c.switchData[start+n:start+2*n]
	for i := range n {
		v := uint64(lo) + uint64(i)
		pc, slots := root, 1
		next := c.next(pc, v, wide)
		for next > pc && c.isNode(next, reg, class) {
			if slots++; slots > switchMaxDepth {
				return switchTree{}, false
			}
			pc, next = next, c.next(next, v, wide)
		}
		s.leaves[i], s.slots[i] = int32(next), int32(slots)
	}
	return s, true
}

// emitSwitch emits the dispatch of s in front of its root's code, which
// follows it:
//
//	mov r11, reg; sub r11, lo
//	cmp r11, entries-1; ja tree
//	lea rcx, [rip+table]
//	sub rdx, [rcx+r11*8]   ; the charge
//	js refund              ; add it back, jmp tree
//	movsxd r11, [rcx+r11*4+charges]
//	add r11, rcx
//	jmp r11
//	tree:
func (c *compiler) emitSwitch(s *switchTree) {
	a := c.a
	size := 4
	if s.wide {
		size = 8
	}
	s.pre = int32(c.pc - c.blockStart)
	a.MovRR(size, tmpAddr, regMap[s.reg])
	if s.lo != 0 {
		a.ALURI(x86.SUB, size, tmpAddr, int32(s.lo))
	}
	a.ALURI(x86.CMP, size, tmpAddr, int32(len(s.leaves)-1))
	outside := a.Jcc(x86.CondA)
	s.tablePatch = int32(a.LeaRIP(tmpC))
	a.ALURM(x86.SUB, 8, budgetReg, x86.MIndex(tmpC, tmpAddr, 8, 0))
	refund := c.addStub(a.Jcc(x86.CondS), stubSwitchRefund, c.pc)
	a.LoadSX(4, tmpAddr, x86.MIndex(tmpC, tmpAddr, 4, int32(8*len(s.leaves))))
	a.ALURR(x86.ADD, 8, tmpAddr, tmpC)
	a.JmpReg(tmpAddr)
	a.PatchRel32(outside, a.Len())
	refund.resume = int32(a.Len())
}

// emitRefund emits a stubSwitchRefund: the budget cannot pay a
// dispatch's charge, so it gets it back and the tree runs.
func (c *compiler) emitRefund(s *stub) {
	c.a.ALURM(x86.ADD, 8, budgetReg, x86.MIndex(tmpC, tmpAddr, 8, 0))
	c.a.JmpTo(int(s.resume))
}

// emitSwitchTables emits the tables of the dispatches, once the code of
// every slot is in place: for each, the charges (8 bytes each), then the
// offsets of the leaves from the table (4 bytes each).
func (c *compiler) emitSwitchTables() {
	a := c.a
	for i := range c.switches {
		s := &c.switches[i]
		for a.Len()%8 != 0 {
			a.Int3()
		}
		table := a.Len()
		a.PatchRel32(int(s.tablePatch), table)
		for _, n := range s.slots {
			a.Quad(uint64(s.pre + n))
		}
		for _, leaf := range s.leaves {
			a.Dword(c.offsets[leaf] - int32(table))
		}
	}
}
