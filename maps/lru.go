package maps

import (
	"errors"
	"sync/atomic"
	"unsafe"
)

// LRU hash maps (BPF_MAP_TYPE_LRU_HASH, LRU_PERCPU_HASH) are hash maps that
// evict an element instead of failing when full. Recency is approximated with
// the CLOCK algorithm, in the spirit of the kernel's reference bits:
//
//   - every element has a state word: live (in the table) and ref (used
//     since the clock hand last passed);
//   - program-side lookups and all updates of an existing key set ref, with a
//     load first so hot elements do not bounce their cache line;
//   - when the map is full, the clock hand sweeps the slots: a referenced
//     element loses its ref bit and is skipped, the first unreferenced live
//     element is deleted (under its key's lock) to make room; the insert
//     that needs the room keeps its own key's lock meanwhile and only
//     try-locks the victim's (falling back to making room without its lock
//     when that is busy), so a new key costs one lock round;
//   - an element inserted into a full map lands wherever its key hashes,
//     maybe just ahead of the hand, so it gets a grace period: the hand
//     skips it until it has gone once round the table since the insert (in
//     a chained table the new element would take the evicted slot, just
//     behind the hand, with the same effect). Clearing a ref bit ends the
//     grace period too: the hand's next visit is a round later anyway.
//
// So a full map evicts, in the hand's order, elements that were not
// used since the hand last passed them, and not new ones first. Go-side lookups do not count as use
// (like the kernel's syscall lookups). BPF_F_NO_COMMON_LRU is accepted and
// has no effect: there is one clock per map.

const (
	lruLive  = 1 << 0
	lruRef   = 1 << 1
	lruGrace = 1 << 2 // not evictable before the clock reaches lruDue
)

// lruStride is the clock hand's step through the slots: a prime larger
// than any slot count, so t*lruStride mod slots permutes the slots (and,
// being odd, permutes any power of two of slot groups).
const lruStride = 0x9E3779B1

// lruStateOff is the offset of an LRU slot's state word.
const lruStateOff = 8

func lruState(p unsafe.Pointer) *uint32 { return (*uint32)(unsafe.Add(p, lruStateOff)) }
func lruDue(p unsafe.Pointer) *uint32   { return (*uint32)(unsafe.Add(p, 12)) }

// lruInit sets the state and due words of a new element with one store.
func lruInit(p unsafe.Pointer, st, due uint32) {
	w := uint64(st) | uint64(due)<<32
	if !littleEndian {
		w = uint64(due) | uint64(st)<<32
	}
	atomic.StoreUint64((*uint64)(unsafe.Add(p, 8)), w)
}

// lruGroup is how many neighbouring slots the hand looks at in a row in a
// table of a power of two of slots (two cache lines of the smallest LRU
// slots): a few evictions side by side do not lengthen probes, and the
// neighbours cost no further cache miss.
const lruGroup = 4

// handSlot is the slot the clock hand is on at time t. Over any nslots
// consecutive times it visits every slot once (in a table whose size is
// not a power of two, not across the wrap-around of the 32-bit clock).
func (h *hashMap) handSlot(t uint32) uint32 {
	if h.grouped() {
		groups := h.nslots / lruGroup
		return (t/lruGroup*lruStride)&(groups-1)*lruGroup + t%lruGroup
	}
	return uint32(uint64(t) * lruStride % uint64(h.nslots))
}

// grouped reports whether the hand visits slots lruGroup neighbours at a
// time.
func (h *hashMap) grouped() bool { return h.pow2 && h.nslots >= 4*lruGroup }

func lruTouch(p unsafe.Pointer) {
	s := lruState(p)
	if atomic.LoadUint32(s)&lruRef == 0 {
		atomic.OrUint32(s, lruRef)
	}
}

// lruReserve counts one more element, evicting one if the map is full
// (evicted is then true). The caller holds no lock, or held: then the hand
// only try-locks victims' homes and gives up with errBusy when one is
// busy (waiting could deadlock with another evictor). Two turns of the
// hand always find a victim: the first clears reference bits, and by the
// second every grace period has ended.
func (h *hashMap) lruReserve(held *stripeLock) (evicted bool, err error) {
	if h.reserve() {
		return false, nil
	}
	// The hand visits the slots in a scattered order (a prime multiplier
	// permutes groups of lruGroup slots), not one after the other:
	// evicting a stretch of neighbouring slots would leave the stretch
	// ahead of the hand full, and inserts landing there would probe far.
	// An evictor reads the hand, sweeps from there and moves the hand past
	// its victim only then: one atomic operation per eviction. Evictors
	// running at the same time may sweep the same slots; evict tells them
	// apart.
	t := h.clock.Load()
	for range 2*uint64(h.nslots) + 2 {
		e := h.handSlot(t)
		t++
		p := h.slot(e)
		if p == nil {
			continue
		}
		c := atomic.LoadUint64(ctrlPtr(p))
		if slotState(c) != stLive {
			continue
		}
		s := lruState(p)
		st := atomic.LoadUint32(s)
		if st&lruRef != 0 {
			// A used element's next turn comes a round later, when
			// any grace period has ended anyway.
			atomic.AndUint32(s, ^uint32(lruRef|lruGrace))
			continue
		}
		if st&lruGrace != 0 && int32(t-1-atomic.LoadUint32(lruDue(p))) < 0 {
			continue
		}
		// Our eviction hands its count on to us; if it lost a race,
		// someone else's delete may have made room.
		done, busy := h.evict(e, p, c, held)
		if busy {
			h.moveHand(t - 1) // the victim's turn is still to come
			return false, errBusy
		}
		if done || h.reserve() {
			h.moveHand(t)
			return true, nil
		}
	}
	h.moveHand(t)
	if h.reserve() {
		return true, nil
	}
	return false, h.errs.noMem
}

// evict deletes the element in slot e (at p) if it is still the one whose
// ctrl word was c, live and unreferenced. It locks the element's key first:
// the stripe of its home, found from its distance (or by hashing the stored
// key when the distance saturated).
func (h *hashMap) evict(e uint32, p unsafe.Pointer, c uint64, held *stripeLock) (done, busy bool) {
	home := h.back(e, slotDist(c))
	if slotDist(c) == maxDist {
		hv := hashWords(unsafe.Add(p, h.keyOff), h.keySize, h.seed)
		home = h.homeOf(hv)
	}
	mu := h.lock(home)
	switch {
	case mu == held:
		mu = nil // ours already
	case held == nil:
		mu.Lock()
	case !mu.TryLock():
		return false, true
	}
	// An unchanged ctrl (homeDist aside, which is about other slots) means
	// the element is the one we chose, so we hold its lock.
	done = atomic.LoadUint64(ctrlPtr(p))&^homeDistMask == c&^homeDistMask && atomic.LoadUint32(lruState(p))&^lruGrace == lruLive
	if done {
		h.removeLocked(e, p)
	}
	if mu != nil {
		mu.Unlock()
	}
	return done, false
}

// moveHand moves the clock hand forward to t, unless another evictor
// moved it further already.
func (h *hashMap) moveHand(t uint32) {
	for {
		c := h.clock.Load()
		if int32(t-c) <= 0 || h.clock.CompareAndSwap(c, t) {
			return
		}
	}
}

// errBusy is lruReserve's answer when a victim's lock was taken.
var errBusy = errors.New("victim's lock busy")
