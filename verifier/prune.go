package verifier

import "slices"

// checkpoint runs at pruning points. If a state already explored to the
// end subsumes the current one, the current path is pruned. If an
// unfinished state on the current path equals it, the program can loop
// forever. Otherwise the current state is stored.
func (v *verifier) checkpoint() (pruned bool, err error) {
	head := v.loopOf != nil && v.loopOf[v.pc] >= 0
	if len(v.st.tags) > 0 {
		v.dropStaleTags()
	}
	v.st.atCheckpoint(v.live[v.pc])
	h := stateHash(v.st)
	list := v.visits[v.pc]
	var equal *visit // an unfinished state equal to the current one
	for i := len(list) - 1; i >= 0; i-- {
		old := list[i]
		if old.branches == 0 {
			rel := v.rel[v.pc]
			if len(old.st.tags) > 0 {
				// What was proved from old about the loops in
				// progress needs the same relations, and the exact
				// ranges of the registers they are about.
				if !tagsCover(old.st.tags, v.st.tags, 0) {
					old.misses++
					continue
				}
				rel |= taggedRegs(old.st.tags, len(old.st.frames)-1)
			}
			if subsumes(old.st, v.st, v.live[v.pc], rel) {
				old.hits++
				return true, nil
			}
			old.misses++
			continue
		}
		if equal == nil && old.hash == h && statesEqual(old.st, v.st) && tagsCover(old.st.tags, v.st.tags, 0) &&
			tagsCover(v.st.tags, old.st.tags, 0) && v.pathTo(old) != offPath {
			equal = old
			if !(head && v.widen) {
				break // acted on at once, as without widening
			}
		}
	}
	var prev *visit
	v.widenedNow = nil
	if head {
		prev = v.loopPrev(v.pc)
		if v.abortEarly && prev != nil && prev.loopN+1 >= exactIterations {
			return false, errWiden
		}
		if v.widen {
			pruned, err := v.loopHead(prev)
			if err != nil || pruned {
				return pruned, err
			}
			if v.widenedNow != nil {
				equal = nil // the state changed
			}
		}
	}
	if equal != nil {
		switch v.pathTo(equal) {
		case onPath:
			return false, v.fail(ErrInfiniteLoop, "the program returns to this instruction in the same state: an infinite loop (loops need a bound the verifier can see)")
		case acrossCallback:
			// The same state in a later call of a callback:
			// bpf_loop bounds the calls, what follows is
			// being explored.
			equal.hits++
			return true, nil
		}
	}
	if len(list) >= maxStatesPerInsn {
		list = compact(list)
	}
	nv := v.arena.newVisit()
	*nv = visit{st: v.st.clone(), parent: v.cur, branches: 1, hash: h, pc: v.pc}
	if v.widenedNow != nil {
		nv.hash = stateHash(v.st)
		nv.wid = v.widenedNow
		v.widenedNow.visit = nv
	}
	if head {
		nv.loopPrev, nv.loopN = prev, 1
		if prev != nil {
			nv.loopN = prev.loopN + 1
			nv.loopW = prev.wid
			if nv.loopW == nil {
				nv.loopW = prev.loopW
			}
		}
	}
	if v.reentry {
		nv.reentry = len(v.st.frames)
		v.reentry = false
	}
	v.visits[v.pc] = append(list, nv)
	v.stored++
	v.cur = nv
	return false, nil
}

// maxStatesPerInsn bounds the states kept at one instruction, so that
// long loops cost linear, not quadratic, time. Dropping a state never
// makes the verifier accept more: it only prunes less.
const maxStatesPerInsn = 128

// compact drops the states least worth keeping: unfinished ones (only
// used to report infinite loops, which the complexity limit catches too)
// but the newest, and finished ones that rarely prune anything.
func compact(list []*visit) []*visit {
	out := make([]*visit, 0, len(list)/2)
	keepOpen := 16
	for i := len(list) - 1; i >= 0; i-- {
		x := list[i]
		if x.branches > 0 {
			if keepOpen > 0 {
				keepOpen--
				out = append(out, x)
			}
			continue
		}
		if x.misses > 16*(x.hits+1) {
			continue
		}
		out = append(out, x)
	}
	// out is newest first; restore the order.
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// How a stored state relates to the current path.
const (
	offPath        = iota
	onPath         // an ancestor
	acrossCallback // an ancestor in an earlier call of a callback it is in
)

func (v *verifier) pathTo(x *visit) int {
	across := false
	for c := v.cur; c != nil; c = c.parent {
		if c == x {
			if across {
				return acrossCallback
			}
			return onPath
		}
		if c.reentry > 0 && len(x.st.frames) >= c.reentry {
			across = true
		}
	}
	return offPath
}

func (v *verifier) onPath(x *visit) bool {
	for c := v.cur; c != nil; c = c.parent {
		if c == x {
			return true
		}
	}
	return false
}

// idmap matches the ids of one state with those of another.
type idmap struct{ pairs [][2]uint32 }

func (m *idmap) match(old, cur uint32) bool {
	if old == 0 || cur == 0 {
		return old == cur
	}
	for _, p := range m.pairs {
		if p[0] == old || p[1] == cur {
			return p[0] == old && p[1] == cur
		}
	}
	m.pairs = append(m.pairs, [2]uint32{old, cur})
	return true
}

// subsumes reports whether every concrete state cur describes is also
// described by old, so that what was proved from old holds for cur. In
// the current frame only the registers in live count, and for those not
// in rel, only whether they are numbers (liveness.go).
func subsumes(old, cur *state, live, rel uint16) bool {
	if len(old.frames) != len(cur.frames) || len(old.refs) != len(cur.refs) || !relsHold(old, cur) {
		return false
	}
	// What old proved may rest on its relations, and on the exact ranges
	// of the registers they name.
	rel |= relRegs(old.rels, len(old.frames)-1)
	var m idmap
	for i, of := range old.frames {
		cf := cur.frames[i]
		if of.callsite != cf.callsite || of.callback != cf.callback || of.cbTarget != cf.cbTarget {
			return false
		}
		if of.callback && (!regSubsumes(&of.cbArg, &cf.cbArg, &m) || !slices.Equal(of.cbRefs, cf.cbRefs)) {
			return false
		}
		innermost := i == len(old.frames)-1
		for r := range of.regs {
			if innermost {
				if live&(1<<r) == 0 {
					continue
				}
				if rel&(1<<r) == 0 && of.regs[r].typ == scalarValue && cf.regs[r].typ == scalarValue {
					continue
				}
			}
			if !regSubsumes(&of.regs[r], &cf.regs[r], &m) {
				return false
			}
		}
		for s := range of.stack {
			os := &of.stack[s]
			var cs slot
			if s < len(cf.stack) {
				cs = cf.stack[s]
			}
			if !slotSubsumes(os, &cs, &m) {
				return false
			}
		}
	}
	for i := range old.refs {
		if !m.match(old.refs[i], cur.refs[i]) {
			return false
		}
	}
	return true
}

func regSubsumes(old, cur *reg, m *idmap) bool {
	if old.typ == notInit {
		return true // the old path never read it
	}
	if old.typ != cur.typ {
		return false
	}
	if old.typ == scalarValue {
		return old.off.contains(cur.off)
	}
	return old.size == cur.size && old.mapIdx == cur.mapIdx && old.readOnly == cur.readOnly &&
		old.off.contains(cur.off) && m.match(old.id, cur.id) && m.match(old.ref, cur.ref)
}

func slotSubsumes(old, cur *slot, m *idmap) bool {
	if old.isSpill() {
		return cur.isSpill() && regSubsumes(&old.spill, &cur.spill, m)
	}
	for b, k := range old.kind {
		switch k {
		case stackInvalid:
		case stackMisc:
			switch cur.kind[b] {
			case stackMisc, stackZero:
			case stackSpill:
				if cur.spill.typ != scalarValue {
					return false
				}
			default:
				return false
			}
		case stackZero:
			switch cur.kind[b] {
			case stackZero:
			case stackSpill:
				if cur.spill.typ != scalarValue || !cur.spill.off.isConst() || cur.spill.off.value() != 0 {
					return false
				}
			default:
				return false
			}
		}
	}
	return true
}

// statesEqual reports whether two states are the same, ids matched.
func statesEqual(a, b *state) bool {
	if len(a.frames) != len(b.frames) || len(a.refs) != len(b.refs) || !relsHold(a, b) || !relsHold(b, a) {
		return false
	}
	var m idmap
	for i, af := range a.frames {
		bf := b.frames[i]
		if af.callsite != bf.callsite {
			return false
		}
		for r := range af.regs {
			x, y := &af.regs[r], &bf.regs[r]
			if x.typ != y.typ || x.off != y.off || x.size != y.size || x.mapIdx != y.mapIdx ||
				x.readOnly != y.readOnly || !m.match(x.id, y.id) || !m.match(x.ref, y.ref) {
				return false
			}
		}
		n := max(len(af.stack), len(bf.stack))
		for s := range n {
			var x, y slot
			if s < len(af.stack) {
				x = af.stack[s]
			}
			if s < len(bf.stack) {
				y = bf.stack[s]
			}
			if x.kind != y.kind {
				return false
			}
			if x.isSpill() {
				p, q := &x.spill, &y.spill
				if p.typ != q.typ || p.off != q.off || p.size != q.size || p.mapIdx != q.mapIdx ||
					!m.match(p.id, q.id) || !m.match(p.ref, q.ref) {
					return false
				}
			}
		}
	}
	return true
}

// stateHash hashes what statesEqual compares, ids left out, so that most
// unequal states are told apart without comparing them.
func stateHash(st *state) uint64 {
	h := uint64(len(st.frames))*0x9e3779b97f4a7c15 + uint64(len(st.refs))
	mix := func(x uint64) { h = (h ^ x) * 0x100000001b3 }
	regHash := func(r *reg) {
		mix(uint64(r.typ) | uint64(r.mapIdx)<<8 | uint64(r.size)<<32)
		mix(r.off.t.value)
		mix(r.off.t.mask)
		mix(r.off.umin)
		mix(r.off.umax)
		mix(uint64(r.off.smin))
		mix(uint64(r.off.smax))
	}
	for _, f := range st.frames {
		mix(uint64(f.callsite))
		for i := range f.regs {
			regHash(&f.regs[i])
		}
		for i := range f.stack {
			sl := &f.stack[i]
			if sl.kind == [8]uint8{} {
				continue
			}
			mix(uint64(i))
			for _, k := range sl.kind {
				mix(uint64(k))
			}
			if sl.isSpill() {
				regHash(&sl.spill)
			}
		}
	}
	return h
}
