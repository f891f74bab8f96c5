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
// inside the string; a piece matched after the first must also end
// before the string's end, so the code first finds its length.
func (g *gen) glob(f *Field, segs [][]byte, match, fail label) {
	const length, pos = asm.R6, asm.R7
	first, last := segs[0], segs[len(segs)-1]
	if len(first)+len(last) > f.Size {
		g.ja(fail)
		return
	}
	for k, c := range first {
		g.load(asm.R0, rCtx, f.Offset+k, 1)
		g.jump(asm.JmpJNE, asm.R0, int32(c), fail)
	}
	middle := segs[1 : len(segs)-1]
	var pieces [][]byte
	for _, s := range middle {
		if len(s) > 0 {
			pieces = append(pieces, s)
		}
	}
	if len(pieces) == 0 && len(last) == 0 {
		g.ja(match)
		return
	}
	// length = the index of the first NUL, or Size.
	g.alu(asm.AluMOV, length, int32(f.Size))
	for k := f.Size - 1; k >= len(first); k-- {
		skip := g.newLabel()
		g.load(asm.R0, rCtx, f.Offset+k, 1)
		g.jump(asm.JmpJNE, asm.R0, 0, skip)
		g.alu(asm.AluMOV, length, int32(k))
		g.place(skip)
	}
	// pos is where the rest of the string starts; lo is its least value.
	lo := len(first)
	g.alu(asm.AluMOV, pos, int32(lo))
	for _, s := range pieces {
		// The leftmost match at or after pos, ending within the string.
		found := g.newLabel()
		for at := lo; at+len(s) <= f.Size; at++ {
			next := g.newLabel()
			g.jump(asm.JmpJGT, pos, int32(at), next)
			g.jump(asm.JmpJLT, length, int32(at+len(s)), fail)
			for j, c := range s {
				g.load(asm.R0, rCtx, f.Offset+at+j, 1)
				g.jump(asm.JmpJNE, asm.R0, int32(c), next)
			}
			g.alu(asm.AluMOV, pos, int32(at+len(s)))
			g.ja(found)
			g.place(next)
		}
		g.ja(fail)
		g.place(found)
		lo += len(s)
	}
	if len(last) == 0 {
		g.ja(match)
		return
	}
	// The last piece ends the string: try each length.
	for n := lo + len(last); n <= f.Size; n++ {
		next := g.newLabel()
		at := n - len(last)
		g.jump(asm.JmpJNE, length, int32(n), next)
		g.jump(asm.JmpJGT, pos, int32(at), fail)
		for j, c := range last {
			g.load(asm.R0, rCtx, f.Offset+at+j, 1)
			g.jump(asm.JmpJNE, asm.R0, int32(c), fail)
		}
		g.ja(match)
		g.place(next)
	}
	g.ja(fail)
}
