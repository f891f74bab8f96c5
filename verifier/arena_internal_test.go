package verifier

import (
	"slices"
	"testing"
)

// TestArenaReset checks that an arena a big program used keeps no more
// than the pool may hold, and nothing that points out of it.
func TestArenaReset(t *testing.T) {
	a := new(arena)
	for i := range 10 * pooledStates {
		b := a.newState()
		b.st.frames = b.frames[:]
		b.frames[0] = &b.f
		b.f.stack = make([]slot, 1+i%(2*pooledSlots))
		b.st.refs = make([]uint32, 1+i%(2*pooledEntries))
		if i%3 == 0 { // a state that made a bpf-to-bpf call
			b.st.frames = []*frame{&b.f, {}}
		}
	}
	for range 10 * pooledVisits {
		a.newVisit().st = &state{}
	}
	a.free = append(a.free, &a.ones[0][0])
	work := make([]pending, 3, 100)
	work[0].st = &state{}
	small := make([][]*visit, 100)
	small[7] = []*visit{{}, {}}
	small[9] = make([]*visit, 1, 2*pooledList)
	small[9][0] = &visit{}
	a.reset(small, work[:1])

	if a.nOnes != 0 || a.nVisits != 0 || len(a.free) != 0 {
		t.Fatalf("states %d, visits %d, free %d handed out after reset", a.nOnes, a.nVisits, len(a.free))
	}
	if n := len(a.ones) * arenaChunk; n > pooledStates {
		t.Errorf("%d states kept, more than %d", n, pooledStates)
	}
	if n := len(a.visits) * arenaChunk; n > pooledVisits {
		t.Errorf("%d visits kept, more than %d", n, pooledVisits)
	}
	for _, c := range a.ones {
		for i := range c {
			b := &c[i]
			if cap(b.f.stack) > pooledSlots || cap(b.st.refs) > pooledEntries {
				t.Errorf("a kept state has %d stack slots and %d references", cap(b.f.stack), cap(b.st.refs))
			}
			if b.st.frames != nil && &b.st.frames[0] != &b.frames[0] {
				t.Error("a kept state points at frames outside it")
			}
		}
	}
	for _, c := range a.visits {
		for i := range c {
			if c[i] != (visit{}) {
				t.Fatal("a kept visit is not cleared")
			}
		}
	}
	if len(a.lists) != 0 || cap(a.lists) != 100 {
		t.Fatalf("visit lists: len %d cap %d, want the last call's, empty", len(a.lists), cap(a.lists))
	}
	lists := a.lists[:100]
	if len(lists[7]) != 0 || cap(lists[7]) != 2 || slices.ContainsFunc(lists[7][:2], func(x *visit) bool { return x != nil }) {
		t.Error("a small visit list is not kept empty")
	}
	if lists[9] != nil {
		t.Error("a big visit list is kept")
	}
	if len(a.work) != 0 || work[0].st != nil {
		t.Error("the worklist keeps a state")
	}

	// The buffers of a program longer than the pool keeps are dropped.
	big := make([][]*visit, pooledInsns+1)
	a.bools.take(2*pooledInsns + 2)
	a.reset(big, nil)
	if a.lists != nil || a.bools.buf != nil {
		t.Error("the buffers of a long program are kept")
	}
}

// TestArenaCloneIntoReleased checks that a clone made in a released
// state's block shares nothing with the state it copies, and keeps
// nothing of the block's earlier contents.
func TestArenaCloneIntoReleased(t *testing.T) {
	a := new(arena)
	mk := func(frames int, slots int, refs ...uint32) *state {
		b := a.newState()
		s := &b.st
		s.frames = b.frames[:]
		b.frames[0] = &b.f
		b.f = frame{callsite: -1, stack: make([]slot, slots)}
		for i := 1; i < frames; i++ {
			s.frames = append(s.frames, &frame{callsite: i, stack: make([]slot, slots)})
		}
		s.refs = refs
		s.tags = []tag{{loop: 1}}
		return s
	}
	for _, c := range []struct{ oldFrames, newFrames int }{{1, 1}, {3, 1}, {1, 3}, {3, 2}, {2, 3}} {
		src := mk(c.newFrames, 2, 9)
		src.tags = nil
		old := mk(c.oldFrames, 4, 1, 2, 3)
		a.release(old)
		cl := src.clone()
		if cl != old {
			t.Fatalf("%+v: the clone is not in the released block", c)
		}
		if len(cl.frames) != c.newFrames || !slices.Equal(cl.refs, []uint32{9}) || len(cl.tags) != 0 {
			t.Fatalf("%+v: clone has %d frames, refs %v, tags %v", c, len(cl.frames), cl.refs, cl.tags)
		}
		for i, f := range cl.frames {
			if f == src.frames[i] || len(f.stack) != 2 || f.callsite != src.frames[i].callsite {
				t.Fatalf("%+v: frame %d: shared %v, %d slots, callsite %d", c, i, f == src.frames[i], len(f.stack), f.callsite)
			}
			f.stack[0].kind[0] = stackMisc
			if src.frames[i].stack[0].kind[0] != stackInvalid {
				t.Fatalf("%+v: frame %d shares its stack", c, i)
			}
		}
		cl.refs[0] = 7
		if src.refs[0] != 9 {
			t.Fatalf("%+v: the clone shares its references", c)
		}
	}
}
