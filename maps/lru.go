package maps

import (
	"sync/atomic"
	"unsafe"
)

// LRU hash maps (BPF_MAP_TYPE_LRU_HASH, LRU_PERCPU_HASH) are hash maps that
// evict an element instead of failing when full. Recency is approximated with
// the CLOCK algorithm, in the spirit of the kernel's reference bits:
//
//   - every element has a state word: live (linked in a bucket) and ref
//     (used since the clock hand last passed);
//   - program-side lookups and all updates of an existing key set ref, with a
//     load first so hot elements do not bounce their cache line;
//   - when no slot is free, the clock hand sweeps the element slots: a
//     referenced element loses its ref bit and is skipped, the first
//     unreferenced live element is unlinked (under its bucket's lock) and its
//     slot reused.
//
// New elements start unreferenced, so a full map evicts, in slot order from
// the hand, elements that were never looked up since the last sweep before
// ones that were. Go-side lookups do not count as use (like the kernel's
// syscall lookups). BPF_F_NO_COMMON_LRU is accepted and has no effect: there
// is one clock per map.

const (
	lruLive = 1 << 0
	lruRef  = 1 << 1
)

func lruState(p unsafe.Pointer) *uint32 { return (*uint32)(unsafe.Add(p, 8)) }

func lruTouch(p unsafe.Pointer) {
	s := lruState(p)
	if atomic.LoadUint32(s)&lruRef == 0 {
		atomic.OrUint32(s, lruRef)
	}
}

// lruAlloc returns a free slot, evicting an element if there is none. The
// caller holds no bucket lock.
func (h *hashMap) lruAlloc() (uint32, error) {
	if e, ok := h.alloc(); ok {
		return e, nil
	}
	n := h.spec.MaxEntries
	for range 2*uint64(n) + 2 {
		e := (h.clock.Add(1) - 1) % n
		s := lruState(h.elem(e))
		st := atomic.LoadUint32(s)
		switch {
		case st&lruLive == 0:
			continue
		case st&lruRef != 0:
			atomic.AndUint32(s, ^uint32(lruRef))
			continue
		}
		if h.evict(e) {
			return e, nil
		}
		if e, ok := h.alloc(); ok { // someone freed a slot meanwhile
			return e, nil
		}
	}
	if e, ok := h.alloc(); ok {
		return e, nil
	}
	return 0, h.errs.noMem
}

// evict unlinks element e if it is still live and unreferenced. It locks e's
// bucket (found by hashing the stored key) and checks that e is really there:
// the element may have been deleted and reused since the clock looked at it.
func (h *hashMap) evict(e uint32) bool {
	p := h.elem(e)
	hv := hashWords(unsafe.Add(p, h.keyOff), h.keySize, h.seed)
	b := uint32(hv>>32) & h.bucketMask
	mu := h.lock(b)
	mu.Lock()
	defer mu.Unlock()
	prev := &h.buckets[b]
	x := atomic.LoadUint32(prev)
	for x&chainEnd == 0 && x != e {
		prev = nextPtr(h.elem(x))
		x = atomic.LoadUint32(prev)
	}
	if x != e || atomic.LoadUint32(lruState(p)) != lruLive {
		return false
	}
	atomic.StoreUint32(prev, atomic.LoadUint32(nextPtr(p)))
	atomic.StoreUint32(lruState(p), 0)
	return true
}
