package verifier

import (
	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/vm"
)

// Register sets are bit masks: bit r is register r.
const (
	regsR0R5 = 1<<6 - 1
	regsR1R5 = regsR0R5 &^ 1
)

// liveness computes, for every instruction, which registers of the current
// frame may still be read (live) and which of those may still have their
// value matter (rel): flow into an address, a helper or call argument, a
// comparison, a store, the return value of a function. A number in a
// register that is live but not relevant can only flow into other such
// registers, so when states are compared at a pruning point only its type
// counts; a dead register does not count at all. This is a static,
// coarser form of Linux's liveness and precision tracking.
func (v *verifier) liveness() {
	n := len(v.insns)
	v.live = v.arena.words.take(n + 1)
	v.rel = v.arena.words.take(n + 1)
	for changed := true; changed; {
		changed = false
		for pc := n - 1; pc >= 0; pc-- {
			if pc > 0 && v.insns[pc-1].IsLDDW() {
				continue // second slot of an lddw
			}
			live, rel := v.transfer(pc)
			if live != v.live[pc] || rel != v.rel[pc] {
				v.live[pc], v.rel[pc] = live, rel
				changed = true
			}
		}
	}
}

// transfer computes the sets before the instruction at pc from the sets
// of its successors.
func (v *verifier) transfer(pc int) (live, rel uint16) {
	ins := v.insns[pc]
	out := func(to int) {
		if to >= 0 && to < len(v.insns) {
			live |= v.live[to]
			rel |= v.rel[to]
		}
	}
	dst, src := uint16(1)<<(ins.Dst&15), uint16(1)<<(ins.Src&15)
	use := func(m uint16) { live, rel = live|m, rel|m }
	kill := func(m uint16) { live, rel = live&^m, rel&^m }
	switch ins.Class() {
	case asm.ClassALU, asm.ClassALU64:
		out(pc + 1)
		op := ins.Opcode & 0xf0
		x := ins.Opcode&asm.SourceX != 0 && op != asm.AluEND
		if op == asm.AluMOV {
			matters := rel&dst != 0
			kill(dst)
			if x {
				live |= src
				if matters {
					rel |= src
				}
			}
			break
		}
		if rel&dst != 0 && x {
			rel |= src
		}
		live |= dst
		if x {
			live |= src
		}
	case asm.ClassLD:
		if ins.IsLDDW() {
			out(pc + 2)
			kill(dst)
			break
		}
		out(pc + 1)
		kill(regsR0R5)
		if ins.Opcode&0xe0 == asm.ModeIND {
			use(src)
		}
	case asm.ClassLDX:
		out(pc + 1)
		kill(dst)
		use(src)
	case asm.ClassST:
		out(pc + 1)
		use(dst)
	case asm.ClassSTX:
		out(pc + 1)
		if ins.Opcode&0xe0 == asm.ModeATOMIC && ins.Imm == asm.AtomicCMPXCHG {
			use(1)
		}
		use(dst | src)
	default:
		op := ins.Opcode & 0xf0
		switch {
		case ins.Opcode == asm.OpExit:
			live = 1
			if v.funcOf[pc] != 0 {
				rel = 1 // callees' and callbacks' results
			}
		case ins.Opcode == asm.OpCall && ins.Src == asm.PseudoCall:
			out(pc + 1)
			kill(regsR0R5)
			use(regsR1R5)
		case ins.Opcode == asm.OpCall:
			out(pc + 1)
			kill(regsR0R5)
			use(v.helperArgs(ins.Imm))
		case ins.Opcode == asm.OpCallX:
			out(pc + 1)
			kill(regsR0R5)
			use(regsR1R5 | dst)
		case op == asm.JmpJA:
			if ins.Class() == asm.ClassJMP32 {
				out(pc + 1 + int(ins.Imm))
			} else {
				out(pc + 1 + int(ins.Offset))
			}
		default:
			out(pc + 1)
			out(pc + 1 + int(ins.Offset))
			use(dst)
			if ins.Opcode&asm.SourceX != 0 {
				use(src)
			}
		}
	}
	return live | 1<<asm.R10, rel | 1<<asm.R10
}

// helperArgs is the set of registers a helper reads.
func (v *verifier) helperArgs(id int32) uint16 {
	h, ok := v.prog.Helpers()[id]
	if !ok || h.Proto == nil {
		return regsR1R5
	}
	var m uint16
	for i, k := range h.Proto.Args {
		if k == vm.ArgNone {
			break
		}
		m |= 1 << (i + 1)
	}
	return m
}
