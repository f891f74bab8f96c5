package verifier

import (
	"math"
	"slices"

	"github.com/uebpf/uebpf/asm"
)

// Relations between registers. Ranges say what each register may hold
// on its own; they lose that one register stays below another. A loop
// like
//
//	for (d = 2; d * d <= i; d++)
//		if (i % d == 0)
//			break;
//
// ends because d never passes i (at d == i the remainder is 0), which no
// range of d shows when i is unknown. The state therefore keeps a few
// facts between registers of one frame, all as unsigned 64-bit numbers:
//
//   - a < b and a <= b, learned from comparisons of two registers (and
//     32-bit comparisons of numbers that fit in 32 bits), and kept
//     through adding or subtracting constants that cannot wrap;
//   - a holds b % c (any width, signed or not), learned when a copy of b
//     is divided by c: a != 0 then means b != c, which turns b <= c or
//     c <= b into a strict relation. "a is a copy of b" is kept from a
//     move to the next pruning point only: it serves this rule alone,
//     and would otherwise make stored states prune less.
//
// Learning a relation narrows the ranges of both registers at once
// (a < b: a's maximum below b's maximum, b's minimum above a's minimum),
// so everything downstream sees it in plain ranges. A write to a
// register forgets its relations unless the rules above carry them.
//
// Relations restrict the concrete states a state describes, so a stored
// state with relations prunes only states that satisfy them (recorded, or
// implied by their ranges), and the registers they name count with their
// exact ranges (prune.go). At pruning points relations naming a dead
// register are dropped: a pruning comparison ignores dead registers, so
// nothing may be derived from them later. Widening keeps the relations
// both joined states satisfy.

type relKind uint8

const (
	relLess   relKind = iota // a < b
	relLessEq                // a <= b
	relRem                   // a holds b % c
	relCopy                  // a == b since a move (until the next pruning point)
)

type relation struct {
	kind    relKind
	frame   uint8
	a, b, c uint8
}

func (r relation) regs() uint16 {
	m := uint16(1)<<r.a | uint16(1)<<r.b
	if r.kind == relRem {
		m |= 1 << r.c
	}
	return m
}

// maxRelations bounds the relations a state keeps; more are not
// recorded (knowing less is always safe).
const maxRelations = 16

// scalars returns the registers a and b of frame fr when both hold numbers.
func (s *state) scalars(fr, a, b uint8) (*scalar, *scalar, bool) {
	if int(fr) >= len(s.frames) {
		return nil, nil, false
	}
	f := s.frames[fr]
	x, y := &f.regs[a], &f.regs[b]
	if x.typ != scalarValue || y.typ != scalarValue {
		return nil, nil, false
	}
	return &x.off, &y.off, true
}

// recorded reports whether s records r or a stronger relation.
func (s *state) recorded(r relation) bool {
	for _, x := range s.rels {
		if x == r || (r.kind == relLessEq && x.kind == relLess && x.frame == r.frame && x.a == r.a && x.b == r.b) {
			return true
		}
	}
	return false
}

// holds reports whether every concrete state s describes satisfies r:
// it is recorded, or follows from the ranges.
func (s *state) holds(r relation) bool {
	if s.recorded(r) {
		return true
	}
	if r.kind == relRem || r.kind == relCopy {
		return false
	}
	a, b, ok := s.scalars(r.frame, r.a, r.b)
	if !ok {
		return false
	}
	if r.kind == relLess {
		return a.umax < b.umin
	}
	return r.a == r.b || a.umax <= b.umin
}

// assume records r, which holds on the current path, and narrows the
// ranges it bounds. It reports false when the ranges contradict r: no
// concrete state satisfies it.
func (s *state) assume(r relation) bool {
	if r.kind == relLess || r.kind == relLessEq {
		a, b, ok := s.scalars(r.frame, r.a, r.b)
		if !ok {
			return true
		}
		if r.a == r.b {
			return r.kind == relLessEq
		}
		if !narrowRel(r.kind, a, b) {
			return false
		}
	}
	// Recorded even when the ranges imply it: ranges widen at loop
	// heads, and the relation may be what survives.
	if s.recorded(r) {
		return true
	}
	if r.kind == relLess {
		// The strict relation replaces the weaker one.
		weak := relation{kind: relLessEq, frame: r.frame, a: r.a, b: r.b}
		s.rels = slices.DeleteFunc(s.rels, func(x relation) bool { return x == weak })
	}
	if len(s.rels) < maxRelations {
		s.rels = append(s.rels, r)
	}
	return true
}

// narrowRel narrows a and b to the numbers for which the relation holds.
func narrowRel(k relKind, a, b *scalar) bool {
	op := uint8(asm.JmpJLT)
	if k == relLessEq {
		op = asm.JmpJLE
	}
	return refine(op, true, a, b)
}

// assumeNotEqual uses a != b: a <= b becomes a < b, and b <= a, b < a.
func (s *state) assumeNotEqual(fr, a, b uint8) bool {
	if s.holds(relation{kind: relLessEq, frame: fr, a: a, b: b}) && !s.assume(relation{kind: relLess, frame: fr, a: a, b: b}) {
		return false
	}
	if s.holds(relation{kind: relLessEq, frame: fr, a: b, b: a}) && !s.assume(relation{kind: relLess, frame: fr, a: b, b: a}) {
		return false
	}
	return true
}

// assumeNonZero uses that register a of frame fr is not 0: if it holds a
// remainder b % c, then b != c (c % c is 0, and so is 0 % 0).
func (s *state) assumeNonZero(fr, a uint8) bool {
	for _, x := range s.rels {
		if x.kind == relRem && x.frame == fr && x.a == a {
			if !s.assumeNotEqual(fr, x.b, x.c) {
				return false
			}
		}
	}
	return true
}

// branchRels records what a conditional jump of two registers (or of a
// register and 0) teaches on the edge taken or not. The comparison is
// a 64-bit one, or a 32-bit one of numbers that fit in 32 bits. It
// reports false when the edge cannot be taken.
func (s *state) branchRels(ins asm.Instruction, taken bool) bool {
	fr := uint8(len(s.frames) - 1)
	op := ins.Opcode & 0xf0
	a := ins.Dst
	if ins.Opcode&asm.SourceX == 0 {
		// Only "!= 0" facts about remainders come from constants.
		nonZero := ins.Imm == 0 && ((op == asm.JmpJNE && taken) || (op == asm.JmpJEQ && !taken) || (op == asm.JmpJGT && taken))
		return !nonZero || s.assumeNonZero(fr, a)
	}
	b := ins.Src
	if a == b {
		return true
	}
	if signedJump(op) {
		// Signed and unsigned order agree on non-negative numbers.
		x, y, ok := s.scalars(fr, a, b)
		if !ok || x.smin < 0 || y.smin < 0 {
			return true
		}
		switch op {
		case asm.JmpJSLT:
			op = asm.JmpJLT
		case asm.JmpJSLE:
			op = asm.JmpJLE
		case asm.JmpJSGT:
			op = asm.JmpJGT
		case asm.JmpJSGE:
			op = asm.JmpJGE
		}
	}
	rel := func(k relKind, x, y uint8) bool { return s.assume(relation{kind: k, frame: fr, a: x, b: y}) }
	switch {
	case op == asm.JmpJLT && taken, op == asm.JmpJGE && !taken:
		return rel(relLess, a, b)
	case op == asm.JmpJLT && !taken, op == asm.JmpJGE && taken:
		return rel(relLessEq, b, a)
	case op == asm.JmpJLE && taken, op == asm.JmpJGT && !taken:
		return rel(relLessEq, a, b)
	case op == asm.JmpJLE && !taken, op == asm.JmpJGT && taken:
		return rel(relLess, b, a)
	case op == asm.JmpJEQ && taken, op == asm.JmpJNE && !taken:
		return rel(relLessEq, a, b) && rel(relLessEq, b, a)
	case op == asm.JmpJEQ && !taken, op == asm.JmpJNE && taken:
		return s.assumeNotEqual(fr, a, b)
	}
	return true
}

// decideByRels decides a comparison of two registers from recorded
// relations, or returns unknownOutcome.
func (s *state) decideByRels(ins asm.Instruction) int {
	if ins.Opcode&asm.SourceX == 0 || len(s.rels) == 0 || ins.Dst == ins.Src {
		return unknownOutcome
	}
	fr := uint8(len(s.frames) - 1)
	lt := func(x, y uint8) bool { return s.holds(relation{kind: relLess, frame: fr, a: x, b: y}) }
	le := func(x, y uint8) bool { return s.holds(relation{kind: relLessEq, frame: fr, a: x, b: y}) }
	a, b := ins.Dst, ins.Src
	switch ins.Opcode & 0xf0 {
	case asm.JmpJLT:
		return decide(lt(a, b), le(b, a))
	case asm.JmpJLE:
		return decide(le(a, b), lt(b, a))
	case asm.JmpJGT:
		return decide(lt(b, a), le(a, b))
	case asm.JmpJGE:
		return decide(le(b, a), lt(a, b))
	case asm.JmpJEQ:
		return decide(false, lt(a, b) || lt(b, a))
	case asm.JmpJNE:
		return decide(lt(a, b) || lt(b, a), false)
	}
	return unknownOutcome
}

// dropRels forgets the relations naming registers regs of frame fr.
func (s *state) dropRels(fr uint8, regs uint16) {
	s.rels = slices.DeleteFunc(s.rels, func(r relation) bool { return r.frame == fr && r.regs()&regs != 0 })
}

// rerel updates the relations of st after ins ran (st is the current
// state or one the instruction queued), as tags are by retag.
func rerel(st *state, ins asm.Instruction, ri *stepInfo) {
	fr := uint8(ri.depth - 1)
	if c := ins.Class(); c == asm.ClassALU || c == asm.ClassALU64 {
		aluRels(st, ins, ri, fr)
		return
	}
	if len(st.rels) == 0 {
		return
	}
	regs, exit := writes(ins)
	if !exit {
		st.dropRels(fr, regs)
		return
	}
	// The frame that returned, and the caller's r0-r5.
	st.rels = slices.DeleteFunc(st.rels, func(r relation) bool {
		return r.frame >= fr || (r.frame+1 == fr && r.regs()&regsR0R5 != 0)
	})
}

// aluRels carries the relations of an ALU instruction's destination
// through it, or forgets them.
func aluRels(st *state, ins asm.Instruction, ri *stepInfo, fr uint8) {
	is64 := ins.Class() == asm.ClassALU64
	op := ins.Opcode & 0xf0
	x := ins.Opcode&asm.SourceX != 0
	d, s := ins.Dst&15, ins.Src&15
	dst := uint16(1) << d
	f := st.frames[fr]
	// fits: the destination was a number that fits in 32 bits, so a
	// 32-bit operation that does not wrap computes the 64-bit result.
	fits := ri.dstOK && ri.dst.umax <= math.MaxUint32
	switch {
	case op == asm.AluMOV && x && ins.Offset == 0 && s != d:
		st.dropRels(fr, dst)
		if f.regs[s].typ == scalarValue && !f.regs[s].off.isConst() && (is64 || f.regs[s].off.umax <= math.MaxUint32) {
			st.assume(relation{kind: relCopy, frame: fr, a: d, b: s})
		}
	case op == asm.AluMOV && x && ins.Offset == 0:
		if !is64 && !fits {
			st.dropRels(fr, dst)
		}
	case (op == asm.AluADD || op == asm.AluSUB) && (!x || ri.srcConst) && ri.dstOK && (is64 || fits):
		k := uint64(int64(ins.Imm))
		if x {
			k = ri.src
		}
		var delta int64
		limit := uint64(math.MaxUint64)
		if is64 {
			delta = int64(k)
		} else {
			delta, limit = int64(int32(uint32(k))), math.MaxUint32
		}
		if op == asm.AluSUB {
			if delta == math.MinInt64 {
				st.dropRels(fr, dst)
				return
			}
			delta = -delta
		}
		noWrap := (delta >= 0 && ri.dst.umax <= limit-uint64(delta)) || (delta < 0 && ri.dst.umin >= uint64(-delta))
		out := st.rels[:0]
		for _, r := range st.rels {
			if r.frame != fr || r.regs()&dst == 0 {
				out = append(out, r)
				continue
			}
			switch {
			case r.kind == relRem || r.kind == relCopy:
				continue
			case r.a == d: // d < b or d <= b
				other := f.regs[r.b].off
				switch {
				case delta <= 0 && noWrap:
				case delta == 1 && r.kind == relLess && (is64 || other.umax <= math.MaxUint32):
					// d < b <= max: d+1 <= b without wrapping.
					r.kind = relLessEq
				default:
					continue
				}
			default: // c < d or c <= d
				switch {
				case delta >= 0 && noWrap:
				case delta == -1 && r.kind == relLess:
					// d > c >= 0, so d-1 >= c without wrapping.
					r.kind = relLessEq
				default:
					continue
				}
			}
			out = append(out, r)
		}
		st.rels = out
	case op == asm.AluMOD && x && s != d:
		// d was a copy of register b (a move drops d's relations, so
		// there is one copy at most): d now holds b % s.
		from := -1
		for _, r := range st.rels {
			if r.frame == fr && r.kind == relCopy && r.a == d && r.b != s {
				from = int(r.b)
			}
		}
		st.dropRels(fr, dst)
		if from >= 0 {
			st.assume(relation{kind: relRem, frame: fr, a: d, b: uint8(from), c: s})
		}
	default:
		st.dropRels(fr, dst)
	}
}

// atCheckpoint forgets, at a pruning point, the copies and the relations
// naming registers of the innermost frame that are not live.
func (s *state) atCheckpoint(live uint16) {
	if len(s.rels) == 0 {
		return
	}
	fr := uint8(len(s.frames) - 1)
	s.rels = slices.DeleteFunc(s.rels, func(r relation) bool {
		return r.kind == relCopy || (r.frame == fr && r.regs()&^live != 0)
	})
}

// relRegs are the registers of frame fr that the relations of s name.
func relRegs(rels []relation, fr int) uint16 {
	var m uint16
	for _, r := range rels {
		if int(r.frame) == fr {
			m |= r.regs()
		}
	}
	return m
}

// relsHold reports whether cur satisfies every relation of old.
func relsHold(old, cur *state) bool {
	for _, r := range old.rels {
		if !cur.holds(r) {
			return false
		}
	}
	return true
}

// joinRels gives out, the join of old and cur, the relations both
// satisfy, and narrows its ranges by them.
func joinRels(out, old, cur *state, live uint16) {
	out.rels = nil
	fr := uint8(len(out.frames) - 1)
	for _, src := range [][]relation{old.rels, cur.rels} {
		for _, r := range src {
			if (r.frame != fr || r.regs()&^live == 0) && old.holds(r) && cur.holds(r) &&
				!slices.Contains(out.rels, r) && len(out.rels) < maxRelations {
				out.rels = append(out.rels, r)
			}
		}
	}
	for _, r := range out.rels {
		if r.kind == relRem || r.kind == relCopy {
			continue
		}
		if a, b, ok := out.scalars(r.frame, r.a, r.b); ok {
			// Both joined states satisfy r, so the narrowed ranges
			// still hold all their values; empty cannot happen, but
			// keep the wider ranges if it did.
			na, nb := *a, *b
			if narrowRel(r.kind, &na, &nb) {
				*a, *b = na, nb
			}
		}
	}
}
