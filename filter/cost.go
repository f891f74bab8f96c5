package filter

import "github.com/uebpf/uebpf/asm"

// The cost model follows generate path by path and counts, from the tree
// alone, at most the instructions it would emit: string comparisons and
// globs by arithmetic on the field's size and the pattern's pieces, so
// that an expression whose code would take gigabytes is refused before
// any is generated. The tests check that no compiled filter exceeds it.

// The fixed sequences, counted once by emitting them.
var (
	costWiden       = emitted(func(g *gen) { g.widen(asm.R9) })
	costCmpFloat    = emitted(func(g *gen) { g.cmpFloat() })
	costCmpIntFloat = emitted(func(g *gen) { g.cmpIntFloat() })
	costTail        = emitted(func(g *gen) { g.threeWayTail(g.newLabel(), g.newLabel(), g.newLabel(), g.newLabel()) })
)

func emitted(f func(g *gen)) int {
	g := &gen{}
	f(g)
	return len(g.code)
}

// coster sums the costs and remembers the comparison that costs most by
// itself, to point the error at.
type coster struct {
	worst     *node
	worstCost int
	hint      string
}

func (c *coster) own(n *node, cost int, hint string) int {
	if cost > c.worstCost {
		c.worst, c.worstCost, c.hint = n, cost, hint
	}
	return cost
}

// spill is what reading or writing slot d costs beyond the register
// case: a load or a store once it lives on the stack.
func spill(d int) int {
	if d >= nRegSlots {
		return 1
	}
	return 0
}

// estimate bounds the instructions of generate(n).
func estimate(n *node) (int, *coster) {
	c := &coster{}
	return c.jumpIf(n, 0) + 4, c // 4: the two exits
}

// checkCost returns the estimate of n's code, or refuses n when it
// could exceed max instructions.
func checkCost(n *node, max int) (int, error) {
	total, c := estimate(n)
	if total <= max {
		return total, nil
	}
	col, hint := 1, "use fewer comparisons"
	if c.worst != nil {
		col, hint = c.worst.col, c.hint
	}
	return 0, limitf(col, "the filter would generate about %d instructions (at most %d: filter.Limits.MaxInstructions): %s", total, max, hint)
}

// value bounds gen.value.
func (c *coster) value(n *node, d int) int {
	sp := spill(d)
	switch {
	case n.konst:
		return 2 + sp
	case n.op == opField && n.field.Kind == Float && n.field.Size == 4:
		return costWiden + 6
	case n.op == opField:
		return 3 + sp
	case n.op == opPos:
		return c.value(n.l, d)
	case n.op == opNeg || n.op == opBitNot:
		return c.value(n.l, d) + 3 + 2*sp
	case n.op >= opShl && n.op <= opOr:
		return c.value(n.l, d) + c.value(n.r, d+1) + 2 + 2*sp + spill(d+1)
	}
	return c.jumpIf(n, d) + 3 + 2*sp
}

// jumpIf bounds gen.jumpIf.
func (c *coster) jumpIf(n *node, d int) int {
	sp := spill(d)
	switch {
	case n.konst:
		return 1
	case n.op == opNot:
		return c.jumpIf(n.l, d)
	case n.op == opLAnd || n.op == opLOr:
		return c.jumpIf(n.l, d) + c.jumpIf(n.r, d)
	case n.op.isCompare():
		return c.compare(n, d)
	case n.ty == tyFloat:
		return c.value(n, d) + 2 + sp
	}
	return c.value(n, d) + 1 + sp
}

// compare bounds gen.compare, making the same choices.
func (c *coster) compare(n *node, d int) int {
	a, b := n.l, n.r
	sp, sp1 := spill(d), spill(d+1)
	if a.ty == tyStr {
		if a.op == opStr {
			a, b = b, a
		}
		return c.compareString(a, b) + 1
	}
	if a.ty == tyFloat && b.ty == tyInt || a.konst && !b.konst && a.ty == b.ty {
		a, b = b, a
	}
	switch {
	case a.ty == tyInt && b.ty == tyInt:
		if b.op == opInt && b.i == int64(int32(b.i)) {
			return c.value(a, d) + 1 + sp
		}
		return c.value(a, d) + c.value(b, d+1) + 1 + sp + sp1
	case a.ty == tyInt && b.konst:
		return c.value(a, d) + 3 + sp + 2*sp1
	case a.ty == tyInt:
		return c.value(a, d) + c.value(b, d+1) + 3 + c.own(n, costCmpIntFloat, "use fewer comparisons of floats")
	}
	return c.value(a, d) + c.value(b, d+1) + 3 + c.own(n, costCmpFloat, "use fewer comparisons of floats")
}

// compareString bounds gen.compareString of field a with b.
func (c *coster) compareString(a, b *node) int {
	f := a.field
	switch {
	case b.op == opField:
		return c.own(b, 5*max(f.Size, b.field.Size)+1+costTail, "compare shorter string fields")
	case b.s.glob():
		return c.own(b, globCost(f.Size, b.s.segs)+costTail, "simplify the glob or compare a shorter field")
	}
	cost := 3*f.Size + 1
	if s := b.s.plain(); len(s) < f.Size {
		cost = 3*len(s) + 3
	}
	return c.own(b, cost+costTail, "use fewer comparisons")
}

// globCost counts gen.glob's instructions for a field of size bytes: a
// block per piece and starting position where the piece fits.
func globCost(size int, segs [][]byte) int {
	first, last := segs[0], segs[len(segs)-1]
	need := len(first) + len(last)
	for _, s := range segs[1 : len(segs)-1] {
		need += len(s)
	}
	if need > size {
		return 1
	}
	cost := 2*len(first) + 1
	lo := len(first) // the first position the piece may start at
	for i, s := range segs[1:] {
		end := i == len(segs)-2
		m := len(s)
		if m == 0 {
			continue // an empty middle piece is dropped; an empty last one matches
		}
		count := size - m - lo + 1
		if count > 0 {
			cost += count*(2*m+1) + 1 // the blocks, and a jump after the last
			if end {
				cost += 3*(count-1) + 1 // the last piece checks the string ends
			} else {
				cost += count
			}
		}
		lo += m
	}
	return cost
}
