package frontend

import (
	"slices"

	"github.com/uebpf/uebpf/asm"
)

// Two questions need which registers a path may read before writing them:
// which registers a run's start must set up (findLiveIn) and whether an
// instruction may drop a value nothing reads (DeadAfter). Both are
// backward liveness problems over the slots, solved by solveLiveness in
// time linear in the program: a program may have a million slots and
// hundreds of thousands of loops, nested or overlapping, so neither a pass
// per loop nesting nor a walk per question is affordable.

// liveMode selects the transfer function of solveLiveness.
type liveMode uint8

const (
	// liveStart: what a run's start must set up. An exit reads r0, a
	// (local) call every register.
	liveStart liveMode = iota
	// liveDead: DeadAfter's conservative reading (regUse): exits, calls
	// and packet loads read every register, since a caller, a helper or
	// a tail-called program may look at any.
	liveDead
)

const allRegs = 1<<11 - 1

// findLiveIn sets LiveIn, the registers whose value at the start of a run
// the program may read on some path before writing them, which a run's
// start must set up; the others may be left as they are.
// Clang's code reads no register but r1 and r10 before writing it, so its
// runs set up nothing else. With helper calls everything is live (helpers
// read r1-r5, tail-call targets any register); a local call reads every
// register (the callee sees them all) and writes none, conservatively.
func (a *Analysis) findLiveIn() {
	if a.Calls {
		a.LiveIn = allRegs
		return
	}
	a.live = a.solveLiveness(a.live, liveStart)
	a.LiveIn = a.live[0]
	if a.Local {
		a.LiveIn |= 1 << asm.R10 // the call limit
	}
}

// DeadAfter reports whether no path from slot from reads reg before it
// writes it: a back end may then leave a different value there (an
// address folded into an access, a register clobbered by a division). It is conservative: exits, calls and packet loads
// count as reading every register (see liveDead). The liveness of every
// slot is computed at the first question, once per compile: a walk per
// question would be quadratic in a program of many divisions.
func (a *Analysis) DeadAfter(from int, reg uint8) bool {
	if !a.deadReady {
		a.dead = a.solveLiveness(a.dead, liveDead)
		a.deadReady = true
	}
	return from >= len(a.dead) || a.dead[from]&(1<<reg) == 0
}

// transfer returns the registers live at the start of slot pc given those
// live at the start of each slot (live), for mode.
func (a *Analysis) transfer(pc int, mode liveMode, live []uint16) uint16 {
	ins := &a.insns[pc]
	next := func(q int) uint16 {
		if q < len(live) {
			return live[q]
		}
		return 0
	}
	if mode == liveDead {
		reads, writes := regUse(ins)
		if reads == allRegs {
			return allRegs
		}
		var out uint16
		switch ins.Class() {
		case asm.ClassJMP, asm.ClassJMP32:
			if ins.Opcode&0xf0 == asm.JmpJA {
				out = next(JumpTarget(pc, ins))
			} else { // conditional: calls and exits read every register
				out = next(pc+1) | next(JumpTarget(pc, ins))
			}
		case asm.ClassLD: // an lddw: packet loads read every register
			out = next(pc + 2)
		default:
			out = next(pc + 1)
		}
		return reads | out&^writes
	}
	var in uint16
	dst, src := uint16(1)<<ins.Dst, uint16(1)<<ins.Src
	switch ins.Class() {
	case asm.ClassALU, asm.ClassALU64:
		in = next(pc + 1)
		op := ins.Opcode & 0xf0
		if op != asm.AluMOV {
			in |= dst // read, then written
		} else {
			in &^= dst
		}
		if ins.Opcode&asm.SourceX != 0 && op != asm.AluEND && op != asm.AluNEG {
			in |= src
		}
	case asm.ClassLDX:
		in = next(pc+1)&^dst | src
	case asm.ClassST:
		in = next(pc+1) | dst
	case asm.ClassSTX:
		in = next(pc+1) | dst | src
		if ins.Opcode&0xe0 == asm.ModeATOMIC {
			in |= 1 << asm.R0 // cmpxchg; fetches write, which kills nothing here
		}
	case asm.ClassLD:
		if ins.Opcode == asm.OpLDDW {
			in = next(pc+2) &^ dst
		} else { // packet loads read r6 (and src), and may end the run
			in = next(pc+1) | 1<<asm.R6 | src
		}
	default: // jumps, local calls and exits
		switch {
		case ins.Opcode == asm.OpExit:
			in = 1 << asm.R0
		case ins.Opcode == asm.OpCall:
			in = allRegs
		case ins.Opcode&0xf0 == asm.JmpJA:
			in = next(JumpTarget(pc, ins))
		default:
			in = next(pc+1) | next(JumpTarget(pc, ins)) | dst
			if ins.Opcode&asm.SourceX != 0 {
				in |= src
			}
		}
	}
	return in
}

// jumpsTo returns the target of the jump at slot pc, or -1 when ins is
// not a jump (calls and exits are not).
func jumpsTo(pc int, ins *asm.Instruction) int {
	switch ins.Class() {
	case asm.ClassJMP, asm.ClassJMP32:
		if op := ins.Opcode & 0xf0; op != asm.JmpCALL && op != asm.JmpEXIT {
			return JumpTarget(pc, ins)
		}
	}
	return -1
}

// secondSlot reports whether slot pc is the second slot of an lddw.
func (a *Analysis) secondSlot(pc int) bool {
	return pc > 0 && a.insns[pc-1].Opcode == asm.OpLDDW
}

// solveLiveness returns, in live (reused), the registers live at the start
// of each slot for mode: the least fixed point of transfer. One backward
// pass over the slots finds it when no jump goes backward; otherwise the
// sources of backward jumps, whose targets were not known yet, start a
// worklist, and a slot whose set grows puts its predecessors back on it.
// A set grows at most 11 times, so the work is linear in the slots and
// jumps, however the loops nest.
func (a *Analysis) solveLiveness(live []uint16, mode liveMode) []uint16 {
	n := len(a.insns)
	live = slices.Grow(live[:0], n)[:n]
	clear(live)
	work := a.liveWork[:0]
	for pc := n - 1; pc >= 0; pc-- {
		if a.secondSlot(pc) {
			continue
		}
		live[pc] = a.transfer(pc, mode, live)
		if t := jumpsTo(pc, &a.insns[pc]); t >= 0 && t <= pc {
			work = append(work, int32(pc))
		}
	}
	if len(work) == 0 {
		a.liveWork = work
		return live
	}
	// The predecessors of each slot by jump, as ranges of preds indexed
	// by predStart; falling through, slot pc's is the slot before it.
	predStart := slices.Grow(a.livePredStart[:0], n+1)[:n+1]
	clear(predStart)
	for pc := range n {
		if t := jumpsTo(pc, &a.insns[pc]); t >= 0 && t < n && !a.secondSlot(pc) {
			predStart[t]++
		}
	}
	for i := 1; i <= n; i++ {
		predStart[i] += predStart[i-1] // the end of slot i's range
	}
	preds := slices.Grow(a.livePreds[:0], int(predStart[n]))[:predStart[n]]
	for pc := range n {
		if t := jumpsTo(pc, &a.insns[pc]); t >= 0 && t < n && !a.secondSlot(pc) {
			predStart[t]--
			preds[predStart[t]] = int32(pc)
		}
	}
	queued := slices.Grow(a.liveQueued[:0], n)[:n]
	clear(queued)
	for _, pc := range work {
		queued[pc] = true
	}
	push := func(pc int) {
		if pc >= 0 && !queued[pc] {
			queued[pc] = true
			work = append(work, int32(pc))
		}
	}
	for len(work) > 0 {
		pc := int(work[len(work)-1])
		work = work[:len(work)-1]
		queued[pc] = false
		in := a.transfer(pc, mode, live)
		if in|live[pc] == live[pc] {
			continue
		}
		live[pc] |= in
		prev := pc - 1
		if a.secondSlot(prev) {
			prev--
		}
		push(prev)
		for _, q := range preds[predStart[pc]:predStart[pc+1]] {
			push(int(q))
		}
	}
	a.liveWork, a.liveQueued, a.livePreds, a.livePredStart = work, queued, preds, predStart
	return live
}

// regUse returns the registers ins reads and those it writes without
// reading them first, for DeadAfter: reads are over-approximated, writes
// under-approximated.
func regUse(ins *asm.Instruction) (reads, writes uint16) {
	const all = 1<<11 - 1
	dst, src := uint16(1)<<(ins.Dst&15), uint16(1)<<(ins.Src&15)
	switch ins.Class() {
	case asm.ClassALU, asm.ClassALU64:
		if ins.Opcode&asm.SourceX != 0 && ins.Opcode&0xf0 != asm.AluNEG && ins.Opcode&0xf0 != asm.AluEND {
			reads |= src
		}
		if ins.Opcode&0xf0 == asm.AluMOV {
			return reads, dst
		}
		return reads | dst, 0
	case asm.ClassLDX:
		return src, dst
	case asm.ClassST:
		return dst, 0
	case asm.ClassSTX: // atomics included: r0 for cmpxchg
		return dst | src | 1, 0
	case asm.ClassLD:
		if ins.Opcode == asm.OpLDDW {
			return 0, dst
		}
		return all, 0 // packet loads
	}
	switch ins.Opcode & 0xf0 { // jumps
	case asm.JmpCALL, asm.JmpEXIT:
		return all, 0
	case asm.JmpJA:
		return 0, 0
	}
	if ins.Opcode&asm.SourceX != 0 {
		reads |= src
	}
	return reads | dst, 0
}
