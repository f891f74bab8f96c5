package filter

import "github.com/uebpf/uebpf/asm"

// String comparisons are unrolled over the field's bytes: every load has
// a constant offset inside the field, which the verifier checks at once,
// and there is no loop to prove bounded. They leave their result in r0
// and use r0, r6 and r7 only.

// compareString compares string field a with b (a field or a literal):
// r0 = -1, 0 or 1 as strcmp, or for a wildcard pattern 0 when a matches
// and 1 when it does not.
func (g *gen) compareString(a, b *node) {
	lt, eq, gt := g.newLabel(), g.newLabel(), g.newLabel()
	switch {
	case b.op == opField:
		g.strcmpFields(a.field, b.field, lt, eq, gt)
	case b.s.glob():
		g.glob(a.field, b.s.segs, eq, gt)
	default:
		g.strcmpLiteral(a.field, b.s.plain(), lt, eq, gt)
	}
	g.threeWayTail(lt, eq, gt, g.newLabel())
}

// strcmpLiteral compares field f with literal s, which holds no NUL.
func (g *gen) strcmpLiteral(f *Field, s []byte, lt, eq, gt label) {
	for k := 0; k < f.Size; k++ {
		g.load(asm.R0, rCtx, f.Offset+k, 1)
		if k == len(s) {
			// The literal ends: equal if the field does too.
			g.jump(asm.JmpJEQ, asm.R0, 0, eq)
			g.ja(gt)
			return
		}
		g.jump(asm.JmpJLT, asm.R0, int32(s[k]), lt)
		g.jump(asm.JmpJGT, asm.R0, int32(s[k]), gt)
	}
	// The field is full and a prefix of the literal.
	if f.Size < len(s) {
		g.ja(lt)
	} else {
		g.ja(eq)
	}
}

// strcmpFields compares two string fields; a field that ends before the
// other reads as NUL bytes.
func (g *gen) strcmpFields(a, b *Field, lt, eq, gt label) {
	for k := 0; k < max(a.Size, b.Size); k++ {
		for _, x := range []struct {
			f *Field
			r uint8
		}{{a, asm.R0}, {b, asm.R6}} {
			if k < x.f.Size {
				g.load(x.r, rCtx, x.f.Offset+k, 1)
			} else {
				g.alu(asm.AluMOV, x.r, 0)
			}
		}
		g.jumpReg(asm.JmpJLT, asm.R0, asm.R6, lt)
		g.jumpReg(asm.JmpJGT, asm.R0, asm.R6, gt)
		g.jump(asm.JmpJEQ, asm.R0, 0, eq)
	}
	g.ja(eq)
}

// glob matches field f against the pieces of a pattern (at least two:
// a star between each). Pieces hold no NUL, so bytes equal to a piece are
// inside the string. The position reached in the field is in the program
// counter, not in a register: the code is a block per piece and starting
// position, a match jumping to the next piece's block at the position
// after it. Every path through a block then has the same state, which
// the verifier explores once.
func (g *gen) glob(f *Field, segs [][]byte, match, fail label) {
	first, last := segs[0], segs[len(segs)-1]
	var pieces [][]byte // the middle pieces, empty ones dropped
	for _, s := range segs[1 : len(segs)-1] {
		if len(s) > 0 {
			pieces = append(pieces, s)
		}
	}
	need := len(first) + len(last)
	for _, s := range pieces {
		need += len(s)
	}
	if need > f.Size {
		g.ja(fail)
		return
	}
	byteAt := func(k int) { g.load(asm.R0, rCtx, f.Offset+k, 1) }
	for k, c := range first {
		byteAt(k)
		g.jump(asm.JmpJNE, asm.R0, int32(c), fail)
	}
	// from[i][p] searches pieces[i] (or, for i = len(pieces), the last
	// piece) in the field from position p; nil where nothing can match.
	from := make([]map[int]label, len(pieces)+1)
	lo := len(first)
	for i := range from {
		from[i] = map[int]label{}
		m := len(last)
		if i < len(pieces) {
			m = len(pieces[i])
		}
		for p := lo; p+m <= f.Size; p++ {
			from[i][p] = g.newLabel()
		}
		if i < len(pieces) {
			lo += m
		}
	}
	goTo := func(i, p int) {
		if i == len(pieces) && len(last) == 0 {
			g.ja(match)
		} else if l, ok := from[i][p]; ok {
			g.ja(l)
		} else {
			g.ja(fail)
		}
	}
	goTo(0, len(first))
	for i := range from {
		s, end := last, true
		if i < len(pieces) {
			s, end = pieces[i], false
		}
		if end && len(s) == 0 {
			break
		}
		for p := 0; p <= f.Size; p++ {
			l, ok := from[i][p]
			if !ok {
				continue
			}
			next := g.newLabel()
			g.place(l)
			byteAt(p)
			g.jump(asm.JmpJEQ, asm.R0, 0, fail) // the string ended
			g.jump(asm.JmpJNE, asm.R0, int32(s[0]), next)
			for j := 1; j < len(s); j++ {
				byteAt(p + j)
				g.jump(asm.JmpJNE, asm.R0, int32(s[j]), next)
			}
			switch {
			case !end:
				goTo(i+1, p+len(s))
			case p+len(s) < f.Size:
				// The last piece must end the string.
				byteAt(p + len(s))
				g.jump(asm.JmpJEQ, asm.R0, 0, match)
				g.ja(next)
			default:
				g.ja(match)
			}
			g.place(next)
			if _, ok := from[i][p+1]; !ok {
				g.ja(fail)
			}
		}
	}
}
