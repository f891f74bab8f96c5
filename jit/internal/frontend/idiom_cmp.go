package frontend

import (
	"math/bits"

	"github.com/uebpf/uebpf/asm"
)

// Compare loops (CopyLoop with Compare): clang's strcmp and memcmp loops
// are rotated, a cycle of two blocks with side exits, e.g.
//
//	H:  r2 = r3; r3 = r1; r3 += r2; r4 = *(u8 *)(r3 + 0x1000)
//	    r3 = *(u8 *)(r3 + 0); if w3 == w4 goto T; (mismatch: leave)
//	T:  if w3 == 0 goto out; r3 = r2; r3 += 1; if r2 != 0xfff goto H
//
// The recogniser takes a slot H that starts a block inside a loop and
// follows the only path that comes back to it (at most maxIdiomSlots
// slots). Along it: ALU instructions, two loads of 1, 2, 4 or 8 bytes
// whose addresses grow by that size per iteration, and conditional jumps, each of which is either
// the mismatch test (the two loaded values compared, stay when equal),
// the zero test (a loaded value against 0, stay when not zero; optional)
// or the bound test on a counter (as a copy loop's). An iteration stays
// on the path exactly when its two elements are equal (and not zero) and
// the counter is below the bound, so the back end can find k, the number
// of iterations that stay, by comparing 16 bytes at a time; it runs them
// at once and enters the ordinary code at H, which runs the iteration
// that leaves as the interpreter does. Registers are as for copy loops:
// every register the path writes is a counter or written before it is
// read, and before every exit test (else the leaving iteration would
// leave with a value of an iteration run wide).

//
// Find loops (CopyLoop with Find): the same cycle with one byte load and,
// in place of the mismatch test, one or two needle tests, each the loaded
// value against an immediate byte or a register the path does not write,
// staying while they differ: clang's strlen, memchr and "find c or the
// end of the string" loops, e.g.
//
//	H:  r3 = r1; r3 += r2; r3 = *(u8 *)(r3 + 0)
//	    if w3 == 0 goto out; r2 += 1; if r2 == 0xfa0 goto out; goto H
//
// The back end finds k, the first position equal to a needle, 16 bytes at
// a time, as for a compare loop.

// ldxSizes are the element sizes of the loads compare loops take.
var ldxSizes = map[uint8]uint8{
	asm.ClassLDX | asm.ModeMEM | asm.SizeB:  1,
	asm.ClassLDX | asm.ModeMEM | asm.SizeH:  2,
	asm.ClassLDX | asm.ModeMEM | asm.SizeW:  4,
	asm.ClassLDX | asm.ModeMEM | asm.SizeDW: 8,
}

// compareLoops turns the recognition on (tests of hoisted checks on
// the same loops turn it off: see SetCompareLoops).
var compareLoops = true

// SetCompareLoops turns the recognition of compare loops on or off, for
// tests, and returns a function that restores it.
func SetCompareLoops(on bool) (restore func()) {
	old := compareLoops
	compareLoops = on
	return func() { compareLoops = old }
}

// maxCyclePaths bounds the paths the search follows from one slot.
const maxCyclePaths = 16

// compareLoop reports whether a cycle through slot h inside the loop
// [lo, hi] is a compare loop and describes it.
func (a *Analysis) compareLoop(h, lo, hi int) (CopyLoop, bool) {
	l := CopyLoop{Head: int32(h), Compare: true}
	var path [maxIdiomSlots]int32
	var stay [maxIdiomSlots]bool // at a conditional jump: stay when taken
	n, found, tried := 0, 0, 0
	var best [maxIdiomSlots]int32
	var bestStay [maxIdiomSlots]bool
	bestN := 0
	var walk func(pc int)
	walk = func(pc int) {
		n0 := n
		defer func() { n = n0 }()
		if tried++; tried > maxCyclePaths*maxIdiomSlots || found > 1 {
			return
		}
		for {
			if pc == h && n > 0 {
				found++
				best, bestStay, bestN = path, stay, n
				return
			}
			if pc < lo || pc > hi || n == maxIdiomSlots {
				return
			}
			for _, p := range path[:n] {
				if int(p) == pc {
					return // an inner cycle
				}
			}
			ins := &a.insns[pc]
			path[n] = int32(pc)
			switch {
			case ins.Class() == asm.ClassALU || ins.Class() == asm.ClassALU64 ||
				ins.Class() == asm.ClassLDX:
				n++
				pc++
			case ins.Opcode == asm.ClassJMP|asm.JmpJA:
				n++
				pc = JumpTarget(pc, ins)
			case (ins.Class() == asm.ClassJMP || ins.Class() == asm.ClassJMP32) && IsConditional(ins):
				n++
				stay[n-1] = false
				walk(pc + 1)
				stay[n-1] = true
				walk(JumpTarget(pc, ins))
				return
			default:
				return
			}
		}
	}
	walk(h)
	if found != 1 || bestN < 4 {
		return l, false
	}
	l.Cost, l.End = int32(bestN), best[bestN-1]

	var cur [11]affine
	for r := range cur {
		cur[r] = affine{bases: 1 << r, ok: true}
	}
	var tag [11]uint8 // 1, 2: holds the first or second loaded value
	var written, readFirst uint16
	atExits := uint16(1<<11 - 1) // written before every exit
	read := func(r uint8) { readFirst |= 1 << r &^ written }
	loads := 0
	var addr [2]affine
	var mismatch, bound bool
	var test *asm.Instruction
	var testStay uint8
	for i, pc := range best[:bestN] {
		ins := &a.insns[pc]
		switch ins.Class() {
		case asm.ClassALU, asm.ClassALU64:
			op := ins.Opcode & 0xf0
			if op != asm.AluMOV {
				read(ins.Dst)
			}
			x := ins.Opcode&asm.SourceX != 0
			if x {
				read(ins.Src)
			}
			t := uint8(0)
			if op == asm.AluMOV && x && ins.Offset == 0 && (ins.Class() == asm.ClassALU64 || l.Size < 8) {
				t = tag[ins.Src] // an element up to 4 bytes is the same in 32 and 64 bits
			}
			if ins.Class() == asm.ClassALU64 {
				stepALU64(&cur, ins)
			} else {
				cur[ins.Dst] = affine{}
			}
			tag[ins.Dst] = t
			written |= 1 << ins.Dst
		case asm.ClassLDX:
			size, ok := ldxSizes[ins.Opcode]
			if !ok || loads == 2 || loads == 1 && size != l.Size {
				return l, false
			}
			l.Size = size
			read(ins.Src)
			addr[loads] = cur[ins.Src]
			addr[loads].d += int64(ins.Offset)
			loads++
			cur[ins.Dst], tag[ins.Dst] = affine{}, uint8(loads)
			written |= 1 << ins.Dst
		case asm.ClassJMP, asm.ClassJMP32:
			if ins.Opcode == asm.ClassJMP|asm.JmpJA {
				continue
			}
			atExits &= written
			read(ins.Dst)
			op := ins.Opcode & 0xf0
			if !bestStay[i] {
				op = negated[op>>4]
			}
			if ins.Opcode&asm.SourceX != 0 {
				read(ins.Src)
				if tag[ins.Dst] != 0 && tag[ins.Src] != 0 {
					// The mismatch test: stay while the elements are equal
					// (all 8 bytes of 8-byte elements: not in 32 bits).
					if mismatch || op != asm.JmpJEQ || tag[ins.Dst] == tag[ins.Src] ||
						l.Size == 8 && ins.Class() == asm.ClassJMP32 {
						return l, false
					}
					mismatch = true
					continue
				}
				// A needle in a register the path does not write
				// (checked below): stay while the element differs.
				r := ins.Src
				if tag[ins.Dst] == 0 {
					r = ins.Dst
				}
				if tag[ins.Dst] == 0 && tag[ins.Src] == 0 || op != asm.JmpJNE || l.Needles == 2 {
					return l, false
				}
				l.Needle[l.Needles] = Needle{Reg: int8(r), Wide: ins.Class() == asm.ClassJMP}
				l.Needles++
				continue
			}
			if tag[ins.Dst] != 0 {
				// A needle or the zero test: stay while the element
				// differs from the immediate.
				if op != asm.JmpJNE || ins.Imm < 0 || ins.Imm > 0xff || l.Needles == 2 {
					return l, false
				}
				l.Needle[l.Needles] = Needle{Reg: -1, Imm: uint8(ins.Imm)}
				l.Needles++
				continue
			}
			// The bound test, on a counter (checked below).
			if bound || ins.Imm <= 0 {
				return l, false
			}
			bound, test, testStay = true, ins, op
			l.DE = 0
			v := cur[ins.Dst]
			if !v.ok || bits.OnesCount16(v.bases) != 1 || v.d != int64(int32(v.d)) {
				return l, false
			}
			l.Counter, l.DE = uint8(bits.TrailingZeros16(v.bases)), int32(v.d)
		default:
			return l, false
		}
		if ins.Class() != asm.ClassJMP && ins.Class() != asm.ClassJMP32 && ins.Dst == asm.R10 {
			return l, false
		}
	}
	switch {
	case !bound || loads == 0 || !addr[0].ok || loads == 2 && !addr[1].ok:
		return l, false
	case loads == 2:
		// A compare loop: the mismatch test and at most the zero test
		// (not of 8-byte elements: SSE2 has no 64-bit compare).
		if !mismatch || l.Needles > 1 || l.Needles == 1 && (l.Needle[0].Reg >= 0 || l.Needle[0].Imm != 0 || l.Size == 8) {
			return l, false
		}
		l.Zero, l.Needles, l.Needle = l.Needles == 1, 0, [2]Needle{}
	default:
		// A find loop: one or two needles, in registers the path does
		// not write.
		if mismatch || l.Needles == 0 || l.Size != 1 {
			return l, false
		}
		for _, nd := range l.Needle[:l.Needles] {
			if nd.Reg >= 0 && written&(1<<nd.Reg) != 0 {
				return l, false
			}
		}
		l.Find = true
		addr[1] = addr[0]
	}
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
	if readFirst&written&^l.IVs != 0 {
		return l, false
	}
	// The iteration that leaves, after k at once, must leave with its own
	// temporaries, not those of an iteration the wide code skipped: each
	// is written before every exit.
	if written&^l.IVs&^atExits != 0 {
		return l, false
	}
	for _, v := range addr {
		var s int64
		for r := range 11 {
			if v.bases&(1<<r) == 0 {
				continue
			}
			if l.IVs&(1<<r) != 0 {
				s += int64(l.Steps[r])
			} else if written&(1<<r) != 0 {
				return l, false
			}
		}
		if s != int64(l.Size) || v.d != int64(int32(v.d)) {
			return l, false
		}
	}
	l.SrcBases, l.SrcD = addr[0].bases, int32(addr[0].d)
	if !l.Find {
		l.DstBases, l.DstD = addr[1].bases, int32(addr[1].d)
	}
	// The bound test's counter must be one.
	if l.IVs&(1<<l.Counter) == 0 {
		return l, false
	}
	return l, l.setBound(l.Steps[l.Counter], testStay, test.Imm)
}

// compareIn reports whether a compare loop's head lies in [head, end]:
// that loop's checks are not hoisted, as its entry runs the wide code.
func (a *Analysis) compareIn(head, end int) bool {
	for i := range a.Copies {
		if l := &a.Copies[i]; l.Compare && int(l.Head) >= head && int(l.Head) <= end {
			return true
		}
	}
	return false
}
