package verifier

import "sync"

// arena holds the memory one Verify call explores with: its states, the
// visits stored at pruning points, the per-instruction slices and the
// worklist. None of it outlives the call (a Result and an Error hold no
// state), so after the call the arena goes back to a pool and the next
// call reuses it: verifying a small program, as every tracepoint filter
// attached is, then allocates almost nothing, and the garbage collector,
// which was most of the cost of attaching one, has little to do.
//
// States and visits are handed out from chunks and not given back to
// them before Verify returns, because Verify's widening pass keeps a copy
// of the paused exact exploration (its states, worklist and visits) to
// resume it. The only reuse within a call is the free list: the states of
// paths that ended, which nothing references any more (release).
//
// The pool gives each Verify call its own arena.
type arena struct {
	ones    []*[arenaChunk]stateOne
	nOnes   int // states handed out from ones
	free    []*stateOne
	visits  []*[arenaChunk]visit
	nVisits int

	// The visit lists and worklist of the last call, for the next one's
	// first pass (a second, widening, pass makes its own: the paused
	// first pass keeps these).
	lists [][]*visit
	work  []pending

	// The slices the passes that run once per call use (CFG, liveness).
	bools buffer[bool]
	words buffer[uint16]
	ints  buffer[int]
}

// arenaChunk is the number of states (and of visits) per chunk: a small
// filter needs about ten states.
const arenaChunk = 16

// What a pooled arena keeps at most, so that verifying a big program does
// not pin its memory in the pool: states and visits, the instructions
// its per-instruction slices cover, and the capacity of a kept state's
// slices.
const (
	pooledStates  = 4 * arenaChunk
	pooledVisits  = 4 * arenaChunk
	pooledInsns   = 4096
	pooledList    = 8  // visits per instruction
	pooledSlots   = 8  // stack slots per frame
	pooledEntries = 16 // references, tags, relations
)

var arenas = sync.Pool{New: func() any { return new(arena) }}

// newState returns a state for the caller to overwrite completely: it may
// be one used before, whose slices keep their capacity. A nil arena
// allocates one.
func (a *arena) newState() *stateOne {
	if a == nil {
		b := &stateOne{}
		b.st.home = b
		return b
	}
	if n := len(a.free); n > 0 {
		b := a.free[n-1]
		a.free[n-1] = nil
		a.free = a.free[:n-1]
		return b
	}
	i := a.nOnes / arenaChunk
	if i == len(a.ones) {
		a.ones = append(a.ones, new([arenaChunk]stateOne))
	}
	b := &a.ones[i][a.nOnes%arenaChunk]
	a.nOnes++
	b.st.home, b.arena = b, a
	return b
}

// release gives back a state that nothing references any more.
func (a *arena) release(s *state) {
	if a != nil && s.home != nil && s.home.arena == a {
		a.free = append(a.free, s.home)
	}
}

// newVisit returns a zero visit.
func (a *arena) newVisit() *visit {
	i := a.nVisits / arenaChunk
	if i == len(a.visits) {
		a.visits = append(a.visits, new([arenaChunk]visit))
	}
	x := &a.visits[i][a.nVisits%arenaChunk]
	a.nVisits++
	return x
}

// takeLists returns n empty visit lists: the last call's, the first time.
func (a *arena) takeLists(n int) [][]*visit {
	if cap(a.lists) < n {
		a.lists = nil
		return make([][]*visit, n)
	}
	l := a.lists[:n]
	a.lists = nil
	return l
}

// takeWork returns an empty worklist: the last call's, the first time.
func (a *arena) takeWork() []pending {
	w := a.work
	a.work = nil
	return w
}

// reset empties the arena for the next call, dropping what a big
// program made it hold. lists and work are the last pass's.
func (a *arena) reset(lists [][]*visit, work []pending) {
	keep := min(a.nOnes, pooledStates)
	for i := range keep {
		a.ones[i/arenaChunk][i%arenaChunk].forget()
	}
	// States past keep are in chunks that go.
	clear(a.ones[(keep+arenaChunk-1)/arenaChunk:])
	a.ones = a.ones[:(keep+arenaChunk-1)/arenaChunk]
	a.nOnes = 0
	clear(a.free)
	a.free = a.free[:0]

	keep = min(a.nVisits, pooledVisits)
	for i := range keep {
		a.visits[i/arenaChunk][i%arenaChunk] = visit{}
	}
	clear(a.visits[(keep+arenaChunk-1)/arenaChunk:])
	a.visits = a.visits[:(keep+arenaChunk-1)/arenaChunk]
	a.nVisits = 0

	if lists == nil { // the call ended before its first pass
		lists = a.lists
	}
	a.lists = nil
	if len(lists) <= pooledInsns {
		for i, l := range lists {
			clear(l)
			if cap(l) > pooledList {
				l = nil
			}
			lists[i] = l[:0]
		}
		a.lists = lists[:0]
	}
	if work == nil {
		work = a.work
	}
	a.work = nil
	if cap(work) <= pooledInsns {
		clear(work[:cap(work)])
		a.work = work[:0]
	}
	a.bools.reset(2*pooledInsns + 1)
	a.words.reset(2*pooledInsns + 2)
	a.ints.reset(2 * pooledInsns)
}

// forget drops what a pooled state must not keep: frames outside it and
// big slices.
func (b *stateOne) forget() {
	if len(b.st.frames) != 1 || &b.st.frames[0] != &b.frames[0] {
		b.st.frames = nil
	}
	b.f.stack = small(b.f.stack, pooledSlots)
	b.f.cbRefs = small(b.f.cbRefs, pooledEntries)
	b.st.refs = small(b.st.refs, pooledEntries)
	b.st.tags = small(b.st.tags, pooledEntries)
	b.st.rels = small(b.st.rels, pooledEntries)
}

func small[T any](s []T, n int) []T {
	if cap(s) > n {
		return nil
	}
	return s[:0]
}

// buffer hands out pieces of one slice that grows, between calls, to
// what a call asks for.
type buffer[T any] struct {
	buf  []T
	want int // elements asked for since reset
}

// take returns n zero elements.
func (b *buffer[T]) take(n int) []T {
	b.want += n
	l := len(b.buf)
	if cap(b.buf)-l < n {
		return make([]T, n)
	}
	b.buf = b.buf[:l+n]
	s := b.buf[l : l+n : l+n]
	clear(s)
	return s
}

// spare returns room for n elements, empty, or nil if there is none this
// call: for a slice that may grow to n but rarely does.
func (b *buffer[T]) spare(n int) []T {
	b.want += n
	l := len(b.buf)
	if cap(b.buf)-l < n {
		return nil
	}
	b.buf = b.buf[:l+n]
	return b.buf[l : l : l+n]
}

// reset makes the buffer as big as the last call needed, up to limit
// elements.
func (b *buffer[T]) reset(limit int) {
	switch {
	case b.want > limit:
		b.buf = nil
	case b.want > cap(b.buf):
		b.buf = make([]T, 0, b.want)
	}
	b.buf, b.want = b.buf[:0], 0
}
