package verifier

import (
	"math"
	"slices"
	"sort"

	"github.com/uebpf/uebpf/asm"
)

// Loop invariants. Exploring a loop iteration by iteration costs one pass
// over its body per iteration, so long loops are too complex. When the
// exact exploration gives up (verify.go), the program is explored again
// with widening: after a loop head (the target of a back edge, found with
// dominators) has been reached widenAfter times on one path, the state
// there is joined with the previous one and every number whose bounds
// moved is widened, in the direction it moved, to the next threshold (the
// constants the program compares with, ±1, then the 32-bit and 64-bit
// limits). A later arrival at the head that the widened state subsumes is
// a fixpoint: what was proved from the widened state holds for it, and
// the path is pruned.
//
// Widening alone would accept loops that never end, so a widened loop
// must also be proved to terminate with a ranking function: a register
// that strictly increases (or decreases) as an unsigned 64- or 32-bit
// number, without wrapping, on every path from the widened head back to
// it. Registers carry tags (loop, origin register, delta): the value is
// the origin's value at the widened head plus delta. mov copies tags, adding
// or subtracting a constant moves delta, every other write drops them.
// Each arrival keeps the candidates (register, direction, width) whose
// delta is non-zero in their direction and whose arrival range shows no
// wrap (increasing by d: at least d; decreasing by d: at most max-d). A
// loop whose candidates run out is refused with ErrInfiniteLoop.

const (
	// widenAfter is how many arrivals at a loop head on one path are
	// explored exactly before the state there is widened.
	widenAfter = 3
	// After thresholdWidenings widenings of one loop entry on one path,
	// bounds that move go to the type limits (and one short of them);
	// after limitWidenings, to the extremes, so widening ends.
	thresholdWidenings = 4
	limitWidenings     = 8
	// exactIterations is how many arrivals at a loop head on one path the
	// first, exact pass explores before it gives up in favour of widening.
	exactIterations = 64
	// maxLoopWalk bounds the walk back along the path to a loop head's
	// previous arrival; a longer walk counts as a first arrival (less
	// widening, never less safety).
	maxLoopWalk = 1 << 12
)

// loop is a natural loop: its head and the slots of its body, sorted.
type loop struct {
	head int
	body []int
}

func (l *loop) contains(pc int) bool {
	_, ok := slices.BinarySearch(l.body, pc)
	return ok
}

// findLoops finds the natural loops of the program: edges to an
// instruction that dominates their source. It leaves v.loopOf nil when
// no jump goes backwards.
func (v *verifier) findLoops() {
	n := len(v.insns)
	back := false
	succs := func(pc int, fn func(int)) {
		ins := v.insns[pc]
		switch {
		case ins.IsLDDW():
			fn(pc + 2)
		case ins.Class() == asm.ClassJMP || ins.Class() == asm.ClassJMP32:
			op := ins.Opcode & 0xf0
			switch {
			case ins.Opcode == asm.OpExit:
			case ins.Opcode == asm.OpCall || ins.Opcode == asm.OpCallX:
				fn(pc + 1)
			case op == asm.JmpJA:
				if ins.Class() == asm.ClassJMP32 {
					fn(pc + 1 + int(ins.Imm))
				} else {
					fn(pc + 1 + int(ins.Offset))
				}
			default:
				fn(pc + 1 + int(ins.Offset))
				fn(pc + 1)
			}
		default:
			fn(pc + 1)
		}
	}
	for pc := 0; pc < n; pc++ {
		if pc > 0 && v.insns[pc-1].IsLDDW() {
			continue
		}
		succs(pc, func(to int) {
			if to <= pc {
				back = true
			}
		})
	}
	if !back {
		return
	}
	// Reverse postorder from every function's entry (checkCFG made sure
	// functions do not jump into each other, and every slot is reached).
	root := n
	rpo := make([]int, n+1) // position in reverse postorder
	for i := range rpo {
		rpo[i] = -1
	}
	var post []int
	type item struct{ pc, next int }
	var starts []int
	for pc := range n {
		if pc == 0 || (v.prunePt[pc] && v.funcOf[pc] != v.funcOf[pc-1]) {
			starts = append(starts, pc)
		}
	}
	seen := make([]bool, n)
	for _, s := range starts {
		if seen[s] {
			continue
		}
		seen[s] = true
		stack := []item{{s, 0}}
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			var out []int
			succs(top.pc, func(to int) {
				if to >= 0 && to < n {
					out = append(out, to)
				}
			})
			if top.next < len(out) {
				to := out[top.next]
				top.next++
				if !seen[to] {
					seen[to] = true
					stack = append(stack, item{to, 0})
				}
				continue
			}
			post = append(post, top.pc)
			stack = stack[:len(stack)-1]
		}
	}
	order := make([]int, 0, len(post)+1)
	order = append(order, root)
	for i := len(post) - 1; i >= 0; i-- {
		order = append(order, post[i])
	}
	for i, pc := range order {
		rpo[pc] = i
	}
	preds := make([][]int, n+1)
	for _, pc := range post {
		succs(pc, func(to int) {
			if to >= 0 && to < n {
				preds[to] = append(preds[to], pc)
			}
		})
	}
	for _, s := range starts {
		preds[s] = append(preds[s], root)
	}
	// Dominators (Cooper, Harvey and Kennedy).
	idom := make([]int, n+1)
	for i := range idom {
		idom[i] = -1
	}
	idom[root] = root
	intersect := func(a, b int) int {
		for a != b {
			for rpo[a] > rpo[b] {
				a = idom[a]
			}
			for rpo[b] > rpo[a] {
				b = idom[b]
			}
		}
		return a
	}
	for changed := true; changed; {
		changed = false
		for _, b := range order[1:] {
			d := -1
			for _, p := range preds[b] {
				if idom[p] < 0 {
					continue
				}
				if d < 0 {
					d = p
				} else {
					d = intersect(p, d)
				}
			}
			if d != idom[b] {
				idom[b], changed = d, true
			}
		}
	}
	dominates := func(h, x int) bool {
		for x != root {
			if x == h {
				return true
			}
			x = idom[x]
		}
		return false
	}
	// Natural loops: the head and what reaches a back edge's source
	// without going through the head.
	bodies := map[int]map[int]bool{}
	for _, s := range post {
		succs(s, func(h int) {
			if h < 0 || h >= n || rpo[h] > rpo[s] || !dominates(h, s) {
				return
			}
			body := bodies[h]
			if body == nil {
				body = map[int]bool{h: true}
				bodies[h] = body
			}
			work := []int{s}
			for len(work) > 0 {
				x := work[len(work)-1]
				work = work[:len(work)-1]
				if body[x] {
					continue
				}
				body[x] = true
				for _, p := range preds[x] {
					if p != root && !body[p] {
						work = append(work, p)
					}
				}
			}
		})
	}
	if len(bodies) == 0 {
		return
	}
	v.loopOf = make([]int32, n)
	for i := range v.loopOf {
		v.loopOf[i] = -1
	}
	heads := make([]int, 0, len(bodies))
	for h := range bodies {
		heads = append(heads, h)
	}
	sort.Ints(heads)
	for _, h := range heads {
		l := &loop{head: h}
		for pc := range bodies[h] {
			l.body = append(l.body, pc)
		}
		sort.Ints(l.body)
		v.loopOf[h] = int32(len(v.loops))
		v.loops = append(v.loops, l)
	}
}

// encloses reports whether the loop headed at outer contains the head
// inner of another loop.
func (v *verifier) encloses(outer, inner int) bool {
	if outer == inner || v.loopOf[outer] < 0 {
		return false
	}
	return v.loops[v.loopOf[outer]].contains(inner)
}

// thresholds collects the numbers widening stops at: the constants of
// conditional jumps and moves, ±1, and the limits of the types.
func (v *verifier) thresholds() {
	set := map[uint64]bool{}
	add := func(c uint64) {
		set[c-1], set[c], set[c+1] = true, true, true
	}
	// The limits, and one short of them: a counter compared with an
	// unknown bound stays one short of the limit.
	for _, c := range []uint64{0, math.MaxUint32, math.MaxInt32, math.MaxInt64, math.MaxUint64} {
		add(c)
	}
	for pc, ins := range v.insns {
		if pc > 0 && v.insns[pc-1].IsLDDW() {
			continue
		}
		switch ins.Class() {
		case asm.ClassJMP, asm.ClassJMP32:
			op := ins.Opcode & 0xf0
			if ins.Opcode&asm.SourceX != 0 || op == asm.JmpJA || op == 0x80 || op == 0x90 {
				continue
			}
			if ins.Class() == asm.ClassJMP32 {
				add(uint64(uint32(ins.Imm)))
			} else {
				add(uint64(int64(ins.Imm)))
			}
		case asm.ClassALU64, asm.ClassALU:
			if op := ins.Opcode & 0xf0; (op == asm.AluMOV || op == asm.AluAND) && ins.Opcode&asm.SourceX == 0 {
				add(uint64(int64(ins.Imm)))
			}
		case asm.ClassLD:
			if ins.IsLDDW() && ins.Src == 0 && pc+1 < len(v.insns) {
				add(uint64(uint32(ins.Imm)) | uint64(uint32(v.insns[pc+1].Imm))<<32)
			}
		}
	}
	for c := range set {
		v.uthr = append(v.uthr, c)
		v.sthr = append(v.sthr, int64(c))
	}
	slices.Sort(v.uthr)
	slices.Sort(v.sthr)
}

var (
	extremesU = []uint64{0, math.MaxUint64}
	extremesS = []int64{math.MinInt64, math.MaxInt64}
	limitsU   = []uint64{0, math.MaxUint32 - 1, math.MaxUint32, math.MaxUint64 - 1, math.MaxUint64}
	limitsS   = []int64{math.MinInt64, math.MinInt64 + 1, math.MinInt32, -1, 0, math.MaxInt32 - 1, math.MaxInt32,
		math.MaxUint32 - 1, math.MaxUint32, math.MaxInt64 - 1, math.MaxInt64}
)

// widenScalar joins cur into old and widens every bound that moved to
// the next threshold in its direction.
func widenScalar(old, cur scalar, uthr []uint64, sthr []int64) scalar {
	j := scalar{umin: min(old.umin, cur.umin), umax: max(old.umax, cur.umax),
		smin: min(old.smin, cur.smin), smax: max(old.smax, cur.smax)}
	if cur.umax > old.umax {
		i, _ := slices.BinarySearch(uthr, cur.umax)
		j.umax = math.MaxUint64
		if i < len(uthr) {
			j.umax = uthr[i]
		}
	}
	if cur.umin < old.umin {
		i, ok := slices.BinarySearch(uthr, cur.umin)
		if !ok {
			i--
		}
		j.umin = 0
		if i >= 0 {
			j.umin = uthr[i]
		}
	}
	if cur.smax > old.smax {
		i, _ := slices.BinarySearch(sthr, cur.smax)
		j.smax = math.MaxInt64
		if i < len(sthr) {
			j.smax = sthr[i]
		}
	}
	if cur.smin < old.smin {
		i, ok := slices.BinarySearch(sthr, cur.smin)
		if !ok {
			i--
		}
		j.smin = math.MinInt64
		if i >= 0 {
			j.smin = sthr[i]
		}
	}
	t := tnumJoin(old.t, cur.t)
	if j.umin != min(old.umin, cur.umin) || j.umax != max(old.umax, cur.umax) {
		t = tnumJoin(t, tnumRange(j.umin, j.umax))
	}
	if j.smin != min(old.smin, cur.smin) || j.smax != max(old.smax, cur.smax) {
		// A signed range that crosses 0 wraps around as unsigned.
		if j.smin < 0 && j.smax >= 0 {
			t = tnumUnknown
		} else {
			t = tnumJoin(t, tnumRange(uint64(j.smin), uint64(j.smax)))
		}
	}
	j.t = t
	j.sync()
	return j
}

// tnumJoin is the most precise tnum containing both.
func tnumJoin(a, b tnum) tnum {
	mask := a.mask | b.mask | (a.value ^ b.value)
	return tnum{value: a.value &^ mask, mask: mask}
}

// joinReg is a register that holds every value a and b may hold, widened,
// or false when there is none the verifier can use (different pointers).
func (w *widener) joinReg(a, b *reg) (reg, bool) {
	if a.typ == notInit || b.typ == notInit {
		return reg{}, true
	}
	if a.typ != b.typ {
		return reg{}, false
	}
	if a.typ == scalarValue {
		return scalarReg(widenScalar(a.off, b.off, w.uthr, w.sthr)), true
	}
	if a.size != b.size || a.mapIdx != b.mapIdx || a.readOnly != b.readOnly || a.id != b.id || a.ref != b.ref {
		return reg{}, false
	}
	r := *b
	r.off = widenScalar(a.off, b.off, w.uthr, w.sthr)
	return r, true
}

// widener holds the thresholds of one widening.
type widener struct {
	uthr []uint64
	sthr []int64
}

func (w *widener) joinSlot(a, b *slot) (slot, bool) {
	if a.isSpill() && b.isSpill() {
		r, ok := w.joinReg(&a.spill, &b.spill)
		if ok && r.typ != notInit {
			var s slot
			for i := range s.kind {
				s.kind[i] = stackSpill
			}
			s.spill = r
			return s, true
		}
	}
	kind := func(s *slot, i int) uint8 {
		if s.kind[i] == stackSpill {
			if s.spill.typ == scalarValue {
				return stackMisc
			}
			return stackInvalid
		}
		return s.kind[i]
	}
	var s slot
	for i := range s.kind {
		ka, kb := kind(a, i), kind(b, i)
		switch {
		case ka == stackInvalid || kb == stackInvalid:
			s.kind[i] = stackInvalid
		case ka == stackZero && kb == stackZero:
			s.kind[i] = stackZero
		default:
			s.kind[i] = stackMisc
		}
	}
	return s, true
}

// join is a state holding every concrete state old and cur describe,
// widened, or nil if the verifier cannot join them. In the innermost
// frame only registers in live count; the others keep cur's values.
func (w *widener) join(old, cur *state, live uint16) *state {
	if len(old.frames) != len(cur.frames) || !slices.Equal(old.refs, cur.refs) {
		return nil
	}
	out := cur.clone()
	for i, of := range old.frames {
		f := out.frames[i]
		if of.callsite != f.callsite || of.callback != f.callback || of.cbTarget != f.cbTarget ||
			!slices.Equal(of.cbRefs, f.cbRefs) {
			return nil
		}
		if of.callback && (of.cbArg.typ != f.cbArg.typ || of.cbArg.off != f.cbArg.off || of.cbArg.size != f.cbArg.size ||
			of.cbArg.mapIdx != f.cbArg.mapIdx || of.cbArg.id != f.cbArg.id) {
			return nil
		}
		innermost := i == len(old.frames)-1
		for r := range f.regs {
			if innermost && live&(1<<r) == 0 {
				continue
			}
			j, ok := w.joinReg(&of.regs[r], &f.regs[r])
			if !ok {
				return nil
			}
			f.regs[r] = j
		}
		n := max(len(of.stack), len(f.stack))
		for len(f.stack) < n {
			f.stack = append(f.stack, slot{})
		}
		for s := range n {
			var os slot
			if s < len(of.stack) {
				os = of.stack[s]
			}
			j, ok := w.joinSlot(&os, &f.stack[s])
			if !ok {
				return nil
			}
			f.stack[s] = j
		}
	}
	out.tags = commonTags(old.tags, cur.tags)
	joinRels(out, old, cur, live)
	return out
}

// tag says that a register of frame holds the value its origin register
// had at the widened head of loop, plus d64 (when v64) and, in its low 32
// bits, plus d32 (when v32).
type tag struct {
	loop     uint32 // widening id
	frame    uint8
	reg      uint8
	origin   uint8
	v64, v32 bool
	d64      int64
	d32      int32
}

// maxDelta bounds tracked deltas, far from overflowing.
const maxDelta = 1 << 62

// commonTags keeps the tags a and b both carry.
func commonTags(a, b []tag) []tag {
	var out []tag
	for _, t := range a {
		if slices.Contains(b, t) {
			out = append(out, t)
		}
	}
	return out
}

// tagsCover reports whether cur carries every tag of old, except those of
// loop skip: what was proved from old about loops in progress then holds
// for cur.
func tagsCover(old, cur []tag, skip uint32) bool {
	for _, t := range old {
		if t.loop != skip && !slices.Contains(cur, t) {
			return false
		}
	}
	return true
}

// taggedRegs are the registers of frame that old's tags are on.
func taggedRegs(tags []tag, frame int) uint16 {
	var m uint16
	for _, t := range tags {
		if int(t.frame) == frame {
			m |= 1 << t.reg
		}
	}
	return m
}

// widening is a widened state at a loop head and what remains of its
// ranking candidates: registers (bit masks) increasing in 64 bits,
// decreasing in 64 bits, increasing in 32 bits, decreasing in 32 bits.
type widening struct {
	id    uint32
	head  int
	depth int // frames at the head
	visit *visit
	cands [4]uint16
	n     int // widenings of this loop entry on the path, this one included
	// The range each candidate's values at the head have had so far (at
	// the arrival widened and at every later one) and the smallest step
	// seen, per candidate kind and register: they bound the iterations.
	lo, hi, step [2][11]uint64
	// unproven: the loop has no termination proof and was accepted
	// anyway (Options.LoopsBoundedByBudget).
	unproven bool
}

func (w *widening) candRegs() uint16 { return w.cands[0] | w.cands[1] | w.cands[2] | w.cands[3] }

// loopPrev returns the latest arrival at the loop head pc on the current
// path since the path entered the loop: the walk back stops at a head of
// an enclosing loop, at a slot outside the loop's body (the path entered
// the loop there: a natural loop is re-entered only through its head),
// at a frame the loop's function was called from, and at the start of a
// callback call. Stopping outside the body keeps the walk as short as the
// loop: without it, a program of many loops one after another walked
// back through all of them at every arrival.
func (v *verifier) loopPrev(pc int) *visit {
	depth := len(v.st.frames)
	var l *loop
	if i := v.loopOf[pc]; i >= 0 {
		l = v.loops[i]
	}
	steps := 0
	for c := v.cur; c != nil && steps < maxLoopWalk; c = c.parent {
		steps++
		d := len(c.st.frames)
		if d < depth || (c.reentry > 0 && c.reentry <= depth) {
			return nil
		}
		if d == depth {
			if c.pc == pc {
				return c
			}
			if v.encloses(c.pc, pc) || l != nil && !l.contains(c.pc) {
				return nil
			}
		}
	}
	return nil
}

// loopHead handles an arrival at a loop head in the widening pass. It
// returns pruned when the state is a fixpoint of a widened state, or a
// widened state to store and explore instead of the current one.
func (v *verifier) loopHead(prev *visit) (pruned bool, err error) {
	var w *widening
	if prev != nil {
		w = prev.wid
		if w == nil {
			w = prev.loopW
		}
	}
	pc := v.pc
	if w != nil && w.depth == len(v.st.frames) {
		old := w.visit.st
		rel := v.rel[pc] | w.candRegs() | taggedRegs(old.tags, w.depth-1)
		if tagsCover(old.tags, v.st.tags, w.id) && subsumes(old, v.st, v.live[pc], rel) {
			return true, v.rank(w)
		}
	}
	if prev == nil || (w == nil && prev.loopN+1 < widenAfter) {
		return false, nil
	}
	base := prev.st
	n := 1
	if w != nil {
		base, n = w.visit.st, w.n+1
	}
	wd := &widener{uthr: v.uthr, sthr: v.sthr}
	switch {
	case n > limitWidenings:
		wd.uthr, wd.sthr = extremesU, extremesS
	case n > thresholdWidenings:
		wd.uthr, wd.sthr = limitsU, limitsS
	}
	ws := wd.join(base, v.st, v.live[pc])
	if ws == nil {
		return false, nil
	}
	// Drop the tags of earlier widenings of this head on the path.
	depth := len(ws.frames)
	ws.tags = slices.DeleteFunc(ws.tags, func(t tag) bool {
		x := v.widenings[t.loop-1]
		return x.head == pc && x.depth == depth
	})
	nw := &widening{id: uint32(len(v.widenings) + 1), head: pc, depth: depth, n: n}
	v.widenings = append(v.widenings, nw)
	f := ws.frames[depth-1]
	for r := range f.regs {
		if v.live[pc]&(1<<r) == 0 || f.regs[r].typ != scalarValue {
			continue
		}
		// The values at the arrival being widened.
		c := v.st.frames[depth-1].regs[r].off
		low := c.cast32()
		nw.lo[0][r], nw.hi[0][r], nw.step[0][r] = c.umin, c.umax, math.MaxUint64
		nw.lo[1][r], nw.hi[1][r], nw.step[1][r] = low.umin, low.umax, math.MaxUint64
		nw.cands[0] |= 1 << r
		ws.tags = append(ws.tags, tag{loop: nw.id, frame: uint8(depth - 1), reg: uint8(r), origin: uint8(r), v64: true, v32: true})
	}
	nw.cands[1], nw.cands[2], nw.cands[3] = nw.cands[0], nw.cands[0], nw.cands[0]
	v.st = ws
	v.widenedNow = nw
	v.widened++
	return false, nil
}

// rank checks the arrival of the current path at the head of w, which
// subsumes it: the ranking candidates that did not move towards an exit
// without wrapping are dropped, and none left is an error.
func (v *verifier) rank(w *widening) error {
	f := v.st.frames[w.depth-1]
	// A candidate whose values at the head stay in [lo, hi] and that
	// moves by d at least returns there (hi-lo)/d+1 times at most.
	short := func(i int, r uint8, d uint64, arrival scalar) bool {
		k := i / 2
		lo, hi := min(w.lo[k][r], arrival.umin), max(w.hi[k][r], arrival.umax)
		step := min(d, w.step[k][r]) // d > 0 and step[k][r] > 0
		return (hi-lo)/step < v.maxIter
	}
	var ok, unbounded [4]uint16
	for _, t := range v.st.tags {
		if t.loop != w.id || t.reg != t.origin || int(t.frame) != w.depth-1 {
			continue
		}
		r := &f.regs[t.reg]
		if r.typ != scalarValue {
			continue
		}
		bit := uint16(1) << t.reg
		mark := func(i int, d uint64, arrival scalar) {
			if short(i, t.reg, d, arrival) {
				ok[i] |= bit
			} else {
				unbounded[i] |= bit
			}
		}
		low := r.off.cast32()
		if t.v64 && t.d64 > 0 && r.off.umin >= uint64(t.d64) {
			mark(0, uint64(t.d64), r.off)
		}
		if t.v64 && t.d64 < 0 && r.off.umax <= math.MaxUint64-uint64(-t.d64) {
			mark(1, uint64(-t.d64), r.off)
		}
		if t.v32 && t.d32 > 0 && low.umin >= uint64(t.d32) {
			mark(2, uint64(t.d32), low)
		}
		if t.v32 && t.d32 < 0 && low.umax <= math.MaxUint32-uint64(-int64(t.d32)) {
			mark(3, uint64(-int64(t.d32)), low)
		}
	}
	left, long := false, false
	for i := range w.cands {
		long = long || w.cands[i]&unbounded[i] != 0
		w.cands[i] &= ok[i]
		left = left || w.cands[i] != 0
	}
	if left {
		// Record this arrival's values and steps for the candidates
		// left (a register's tag is the same for all its kinds).
		for _, t := range v.st.tags {
			if t.loop != w.id || t.reg != t.origin || int(t.frame) != w.depth-1 {
				continue
			}
			r := f.regs[t.reg].off
			low := r.cast32()
			w.lo[0][t.reg], w.hi[0][t.reg] = min(w.lo[0][t.reg], r.umin), max(w.hi[0][t.reg], r.umax)
			w.lo[1][t.reg], w.hi[1][t.reg] = min(w.lo[1][t.reg], low.umin), max(w.hi[1][t.reg], low.umax)
			if t.v64 && t.d64 != 0 {
				w.step[0][t.reg] = min(w.step[0][t.reg], absDelta(t.d64))
			}
			if t.v32 && t.d32 != 0 {
				w.step[1][t.reg] = min(w.step[1][t.reg], absDelta(int64(t.d32)))
			}
		}
		return nil
	}
	if v.opts.LoopsBoundedByBudget {
		if !w.unproven {
			w.unproven = true
			v.unproven++
		}
		return nil
	}
	save := v.pc
	v.pc = w.head
	var err error
	if long {
		err = v.fail(ErrTooComplex, "loop at %d may run %d times or more per entry (Options.MaxLoopIterations); bound its counter with a constant", w.head, v.maxIter)
	} else {
		err = v.fail(ErrInfiniteLoop, "loop at %d: no value moves towards an exit on every iteration (a counter must strictly increase or decrease, without wrapping, on every path back to the loop's start)", w.head)
	}
	v.pc = save
	v.loopErr = err
	return err
}

func absDelta(d int64) uint64 {
	if d < 0 {
		return uint64(-d)
	}
	return uint64(d)
}

// dropStaleTags forgets the tags of loops the path has left.
func (v *verifier) dropStaleTags() {
	depth := len(v.st.frames)
	v.st.tags = slices.DeleteFunc(v.st.tags, func(t tag) bool {
		w := v.widenings[t.loop-1]
		return int(t.frame) >= depth || (w.depth == depth && !v.loops[v.loopOf[w.head]].contains(v.pc))
	})
}

// retag updates the tags of st after ins ran (st is the current state or
// one the instruction queued).
func retag(st *state, ins asm.Instruction, ri *stepInfo) {
	if len(st.tags) == 0 {
		return
	}
	fr := uint8(ri.depth - 1)
	drop := func(regs uint16) {
		st.tags = slices.DeleteFunc(st.tags, func(t tag) bool { return t.frame == fr && regs&(1<<t.reg) != 0 })
	}
	dst := uint16(1) << (ins.Dst & 15)
	switch ins.Class() {
	case asm.ClassALU, asm.ClassALU64:
		is64 := ins.Class() == asm.ClassALU64
		op := ins.Opcode & 0xf0
		x := ins.Opcode&asm.SourceX != 0
		switch {
		case (op == asm.AluADD || op == asm.AluSUB) && (!x || ri.srcConst):
			k := uint64(int64(ins.Imm))
			if x {
				k = ri.src
			}
			if !is64 {
				k = uint64(uint32(k))
			}
			if op == asm.AluSUB {
				k = -k
			}
			out := st.tags[:0]
			for _, t := range st.tags {
				if t.frame == fr && t.reg == ins.Dst {
					t.d32 += int32(uint32(k))
					if is64 {
						d := t.d64 + int64(k)
						t.v64 = t.v64 && d < maxDelta && d > -maxDelta && int64(k) < maxDelta && int64(k) > -maxDelta
						t.d64 = d
					} else {
						t.v64, t.d64 = false, 0
					}
					if !t.v64 && !t.v32 {
						continue
					}
				}
				out = append(out, t)
			}
			st.tags = out
		case op == asm.AluMOV && x && ins.Offset == 0 && ins.Src != ins.Dst:
			drop(dst)
			for _, t := range st.tags {
				if t.frame == fr && t.reg == ins.Src {
					t.reg = ins.Dst
					if !is64 {
						t.v64, t.d64 = false, 0
					}
					if t.v64 || t.v32 {
						st.tags = append(st.tags, t)
					}
				}
			}
		case op == asm.AluMOV && x && ins.Offset == 0:
			// mov r, r: nothing changes; w = w keeps the low 32 bits.
			if !is64 {
				for i := range st.tags {
					if st.tags[i].frame == fr && st.tags[i].reg == ins.Dst {
						st.tags[i].v64, st.tags[i].d64 = false, 0
					}
				}
				st.tags = slices.DeleteFunc(st.tags, func(t tag) bool { return !t.v64 && !t.v32 })
			}
		default:
			drop(dst)
		}
	default:
		regs, exit := writes(ins)
		if !exit {
			drop(regs)
			break
		}
		// The frame that returned, and the caller's r0-r5.
		st.tags = slices.DeleteFunc(st.tags, func(t tag) bool {
			return t.frame >= fr || (t.frame+1 == fr && regsR0R5&(1<<t.reg) != 0)
		})
	}
}
