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
// So a full map evicts, in slot order from the hand, elements that were not
// used since the hand last passed them, and not new ones first. Go-side lookups do not count as use
// (like the kernel's syscall lookups). BPF_F_NO_COMMON_LRU is accepted and
// has no effect: there is one clock per map.

const (
	lruLive  = 1 << 0
	lruRef   = 1 << 1
	lruGrace = 1 << 2 // not evictable before the clock reaches lruDue
)

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
	n := uint64(h.slotMask) + 1
	for range 2*n + 2 {
		t := h.clock.Add(1) - 1
		e := t & h.slotMask
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
		h.evict(p, c)
		if h.reserve() { // after our eviction, or someone else's delete
			return true, nil
		}
	}
	if h.reserve() {
		return true, nil
	}
	return false, h.errs.noMem
}

// evict deletes the element in the slot at p if it is still the one whose
// ctrl word was c, live and unreferenced. It locks the element's key (found
// by hashing the stored key) first.
func (h *hashMap) evict(p unsafe.Pointer, c uint64) bool {
	hv := hashWords(unsafe.Add(p, h.keyOff), h.keySize, h.seed)
	mu := h.lock(uint32(hv>>32) & h.slotMask)
	mu.Lock()
	defer mu.Unlock()
	// An unchanged ctrl means the key hashed above was this element's, so
	// we hold its lock.
	if atomic.LoadUint64(ctrlPtr(p)) != c || atomic.LoadUint32(lruState(p)) != lruLive {
		return false
	}
	h.removeLocked(p, c)
	return true
}
