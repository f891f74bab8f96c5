package frontend

import (
	"math/bits"

	"github.com/uebpf/uebpf/asm"
)

// Byte-loop idioms: a loop that copies a buffer an element at a time runs
// one element per iteration, where a wide copy moves 16 or more bytes per
// cycle. The front end recognises such copy loops; a back end that opts in
// (Options.Idioms) emits, at the loop's head, code that runs as many whole
// iterations as it can at once and then falls into the ordinary loop, which
// runs the rest (at least the last iteration, which leaves the loop).
//
// The recognised shape is a single block [Head, End]: straight-line code
// with one load and one store of the loaded value (or, for a fill, one
// store of an immediate or of a register the loop does not write), then
// either "if exit
// goto out; goto Head" or "if stay goto Head". Every register the body
// writes is a counter (it comes back to the head grown by a constant) or a
// temporary written before it is read, so that after k iterations at once
// the counters have grown by k steps and the temporaries are recomputed by
// the ordinary iteration that follows: the registers end exactly as the
// loop leaves them. The exit test compares a counter plus a constant with an
// immediate, and both addresses grow by the element's size per iteration,
// so k iterations move k*Size contiguous bytes. The back end runs them at
// once only when the source and destination do not overlap (a forward
// copy into its own source replicates bytes), when, in checked mode, both
// spans lie in regions that allow them, and only as many as the budget
// pays for: otherwise the ordinary loop runs, which faults and stops where
// the interpreter does.

// Limits of the recognition.
const (
	maxIdioms     = 8
	maxIdiomSlots = 32
)

// CopyLoop is a recognised copy loop.
type CopyLoop struct {
	Head, End int32
	// Cost is what an iteration that stays charges the budget: its slots.
	Cost int32
	// Size is the element's size in bytes.
	Size uint8
	// The exit test: stay while Counter+DE < Bound (unsigned, with Bound
	// below 2^30), with Counter growing by Steps[Counter], a power of two.
	// Divisible: the test is "!=", which needs Bound-(Counter+DE) to be a
	// multiple of that step.
	Counter   uint8
	Divisible bool
	DE, Bound int32
	// The addresses of an iteration's load and store are the sums of the
	// registers in SrcBases, DstBases (as the iteration starts) plus
	// SrcD, DstD.
	SrcBases, DstBases uint16
	SrcD, DstD         int32
	// IVs are the registers the loop grows by Steps per iteration.
	IVs   uint16
	Steps [11]int32
	// Fill: the loop stores Imm (Value -1) or register Value, which it
	// does not write, rather than what it loads; Src* are unused.
	Fill  bool
	Value int8
	Imm   int32
	// Compare: a compare loop (idiom_cmp.go) of Size-byte elements at the
	// addresses Src* and Dst*, whose path from Head back to it has Cost
	// slots and ends with the jump at End; Zero: it also leaves at a zero
	// element.
	Compare, Zero bool
	// Find: a find loop (idiom_cmp.go, with Compare set too) of byte
	// elements at Src*, which leaves at an element equal to one of its
	// Needles (Dst* are unused).
	Find    bool
	Needles uint8
	Needle  [2]Needle
}

// Needle is what a find loop's element is tested against: the byte Imm
// (Reg -1) or register Reg, compared in 64 bits (Wide) or in its low 32
// (a value from 256 on matches no element).
type Needle struct {
	Reg  int8
	Imm  uint8
	Wide bool
}

// IdiomAt returns the index of the copy loop whose head is slot pc, or -1.
func (a *Analysis) IdiomAt(pc int) int {
	for i := range a.Copies {
		if int(a.Copies[i].Head) == pc {
			return i
		}
	}
	return -1
}

// findIdioms finds the copy loops.
func (a *Analysis) findIdioms() {
	if !a.Loops {
		return
	}
	edges := a.BackEdges[:min(len(a.BackEdges), maxHoistEdges)]
	for i, e := range edges {
		if len(a.Copies) == maxIdioms {
			return
		}
		head, end := int(e[0]), int(e[1])
		// Only loops with a single back edge.
		if countHead(a.BackEdges, head) != 1 || i > 0 && edges[i-1][0] == e[0] {
			continue
		}
		if l, ok := a.copyLoop(head, end); ok {
			a.Copies = append(a.Copies, l)
			continue
		}
		if !compareLoops || end-head >= 2*maxIdiomSlots {
			continue
		}
		for h := head; h <= end; h++ {
			if a.Starts[h] && a.IdiomAt(h) < 0 {
				if l, ok := a.compareLoop(h, head, end); ok {
					a.Copies = append(a.Copies, l)
					break
				}
			}
		}
	}
}

func countHead(edges [][2]int32, head int) int {
	n := 0
	for _, e := range edges {
		if int(e[0]) == head {
			n++
		}
	}
	return n
}

// copyLoop reports whether [head, end] is a copy loop and describes it.
func (a *Analysis) copyLoop(head, end int) (CopyLoop, bool) {
	l := CopyLoop{Head: int32(head), End: int32(end), Cost: int32(end - head + 1)}
	if end-head+1 > maxIdiomSlots || end-head < 3 {
		return l, false
	}
	for pc := head + 1; pc <= end; pc++ {
		if a.Starts[pc] {
			return l, false
		}
	}
	// The exit test and the way back.
	back := &a.insns[end]
	var test *asm.Instruction
	var stay uint8
	bodyEnd := end // first slot after the straight-line body
	switch {
	case back.Opcode == asm.ClassJMP|asm.JmpJA && JumpTarget(end, back) == head:
		test, bodyEnd = &a.insns[end-1], end-1
		if test.Class() != asm.ClassJMP || !IsConditional(test) {
			return l, false
		}
		if t := JumpTarget(end-1, test); t >= head && t <= end {
			return l, false
		}
		stay = negated[test.Opcode>>4]
	case back.Class() == asm.ClassJMP && IsConditional(back) && JumpTarget(end, back) == head:
		test, stay = back, back.Opcode&0xf0
	default:
		return l, false
	}
	if test.Opcode&asm.SourceX != 0 || test.Imm <= 0 {
		return l, false
	}

	// One pass over the body, with every register as it was at the head.
	var cur [11]affine
	for r := range cur {
		cur[r] = affine{bases: 1 << r, ok: true}
	}
	var written, readFirst uint16 // written so far; read before written
	read := func(r uint8) { readFirst |= 1 << r &^ written }
	var load, store int = -1, -1
	var val uint8 // the loaded register
	var srcAddr, dstAddr affine
	for pc := head; pc < bodyEnd; pc++ {
		ins := &a.insns[pc]
		switch ins.Class() {
		case asm.ClassALU, asm.ClassALU64:
			op := ins.Opcode & 0xf0
			if op != asm.AluMOV {
				read(ins.Dst)
			}
			if ins.Opcode&asm.SourceX != 0 {
				read(ins.Src)
			}
			if ins.Class() == asm.ClassALU64 {
				stepALU64(&cur, ins)
			} else {
				cur[ins.Dst] = affine{}
			}
			written |= 1 << ins.Dst
		case asm.ClassLDX:
			if ins.Opcode&0xe0 != asm.ModeMEM || load >= 0 || store >= 0 {
				return l, false
			}
			read(ins.Src)
			load, val, l.Size = pc, ins.Dst, uint8(AccessSize(ins.Opcode))
			srcAddr = cur[ins.Src]
			srcAddr.d += int64(ins.Offset)
			cur[ins.Dst] = affine{}
			written |= 1 << ins.Dst
		case asm.ClassSTX, asm.ClassST:
			if ins.Opcode&0xe0 != asm.ModeMEM || store >= 0 {
				return l, false
			}
			if load >= 0 {
				// A copy: the loaded value, at the same size.
				if ins.Class() != asm.ClassSTX || ins.Src != val || AccessSize(ins.Opcode) != int(l.Size) {
					return l, false
				}
			} else {
				// A fill: an immediate or a register the loop does not
				// write (checked below).
				l.Fill, l.Size, l.Value, l.Imm = true, uint8(AccessSize(ins.Opcode)), -1, ins.Imm
				if ins.Class() == asm.ClassSTX {
					l.Value, l.Imm = int8(ins.Src), 0
				}
			}
			read(ins.Dst)
			if ins.Class() == asm.ClassSTX {
				read(ins.Src)
			}
			store = pc
			dstAddr = cur[ins.Dst]
			dstAddr.d += int64(ins.Offset)
		default:
			return l, false
		}
		if ins.Dst == asm.R10 && ins.Class() != asm.ClassSTX && ins.Class() != asm.ClassST {
			return l, false
		}
		// The stored value must be the loaded one.
		if load >= 0 && store < 0 && pc != load && ins.Class() != asm.ClassSTX && ins.Class() != asm.ClassST && ins.Dst == val {
			return l, false
		}
	}
	if store < 0 || !dstAddr.ok || !l.Fill && !srcAddr.ok {
		return l, false
	}
	if l.Fill && l.Value >= 0 && written&(1<<l.Value) != 0 {
		return l, false // the value changes
	}
	read(test.Dst)
	// Counters: written registers that come back grown by a constant.
	for r := range 11 {
		if written&(1<<r) == 0 {
			continue
		}
		v := cur[r]
		if v.ok && v.bases == 1<<r && v.d == int64(int32(v.d)) {
			l.IVs |= 1 << r
			l.Steps[r] = int32(v.d)
		}
	}
	// A register read before it is written carries a value from the last
	// iteration: only counters may.
	if readFirst&written&^l.IVs != 0 {
		return l, false
	}
	// Addresses: invariant registers and counters, growing by the size.
	advance := func(v affine) (int64, bool) {
		var s int64
		for r := range 11 {
			if v.bases&(1<<r) == 0 {
				continue
			}
			if l.IVs&(1<<r) != 0 {
				s += int64(l.Steps[r])
			} else if written&(1<<r) != 0 {
				return 0, false
			}
		}
		return s, v.d == int64(int32(v.d))
	}
	if s, ok := advance(srcAddr); !l.Fill && (!ok || s != int64(l.Size)) {
		return l, false
	}
	if s, ok := advance(dstAddr); !ok || s != int64(l.Size) {
		return l, false
	}
	l.SrcBases, l.SrcD = srcAddr.bases, int32(srcAddr.d)
	l.DstBases, l.DstD = dstAddr.bases, int32(dstAddr.d)

	// The exit test, on a counter.
	v := cur[test.Dst]
	if !v.ok || bits.OnesCount16(v.bases) != 1 || v.bases&l.IVs == 0 || v.d != int64(int32(v.d)) {
		return l, false
	}
	r := uint8(bits.TrailingZeros16(v.bases))
	if !l.setBound(l.Steps[r], stay, test.Imm) {
		return l, false
	}
	l.Counter, l.DE = r, int32(v.d)
	return l, true
}

// setBound sets Bound (and Divisible) from the exit test of a counter that
// steps by step: the loop stays while counter+DE compares with imm as the
// jump stay says. It reports false for what the back ends cannot take: a
// step that is not a power of two up to 64 KiB, another comparison, or a
// bound from 2^30 (the back end requires Counter+DE below it, where signed
// and unsigned comparisons agree).
func (l *CopyLoop) setBound(step int32, stay uint8, imm int32) bool {
	if step <= 0 || step > 1<<16 || step&(step-1) != 0 {
		return false
	}
	bound := int64(imm)
	switch stay {
	case asm.JmpJLT, asm.JmpJSLT:
	case asm.JmpJLE, asm.JmpJSLE:
		bound++
	case asm.JmpJNE:
		l.Divisible = step > 1
	default:
		return false
	}
	if bound >= 1<<30 {
		return false
	}
	l.Bound = int32(bound)
	return true
}
