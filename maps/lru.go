package maps

import (
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
//     element is deleted (under its key's lock) to make room;
//   - an element inserted into a full map lands wherever its key hashes,
//     maybe just ahead of the hand, so it gets a grace period: the hand
//     skips it until it has gone once round the table since the insert (in
//     a chained table the new element would take the evicted slot, just
//     behind the hand, with the same effect).
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
// than any slot count, so t*lruStride mod slots permutes the slots.
const lruStride = 0x9E3779B1

func lruState(p unsafe.Pointer) *uint32 { return (*uint32)(unsafe.Add(p, 8)) }
func lruDue(p unsafe.Pointer) *uint32   { return (*uint32)(unsafe.Add(p, 12)) }

func lruTouch(p unsafe.Pointer) {
	s := lruState(p)
	if atomic.LoadUint32(s)&lruRef == 0 {
		atomic.OrUint32(s, lruRef)
	}
}

// lruReserve counts one more element, evicting one if the map is full
// (evicted is then true). The caller holds no lock. Two turns of the hand
// always find a victim: the first clears reference bits, and by the second
// every grace period has ended.
func (h *hashMap) lruReserve() (evicted bool, err error) {
	if h.reserve() {
		return false, nil
	}
	n := uint64(h.nslots)
	for range 2*n + 2 {
		t := h.clock.Add(1) - 1
		// The hand visits the slots in a scattered order (a prime
		// multiplier permutes the slots), not one after the
		// other: evicting a stretch of neighbouring slots would leave the
		// stretch ahead of the hand full, and inserts landing there would
		// probe far.
		e := uint32(uint64(t) * lruStride % n)
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
			atomic.AndUint32(s, ^uint32(lruRef))
			continue
		}
		if st&lruGrace != 0 {
			if int32(t-atomic.LoadUint32(lruDue(p))) < 0 {
				continue
			}
			atomic.AndUint32(s, ^uint32(lruGrace))
		}
		h.evict(e, p, c)
		if h.reserve() { // after our eviction, or someone else's delete
			return true, nil
		}
	}
	if h.reserve() {
		return true, nil
	}
	return false, h.errs.noMem
}

// evict deletes the element in slot e (at p) if it is still the one whose
// ctrl word was c, live and unreferenced. It locks the element's key first:
// the stripe of its home, found from its distance (or by hashing the stored
// key when the distance saturated).
func (h *hashMap) evict(e uint32, p unsafe.Pointer, c uint64) bool {
	home := h.back(e, slotDist(c))
	if slotDist(c) == maxDist {
		hv := hashWords(unsafe.Add(p, h.keyOff), h.keySize, h.seed)
		home = h.homeOf(hv)
	}
	mu := h.lock(home)
	mu.Lock()
	defer mu.Unlock()
	// An unchanged ctrl (homeDist aside, which is about other slots) means
	// the element is the one we chose, so we hold its lock.
	if atomic.LoadUint64(ctrlPtr(p))&^homeDistMask != c&^homeDistMask || atomic.LoadUint32(lruState(p)) != lruLive {
		return false
	}
	h.removeLocked(e, p)
	return true
}
