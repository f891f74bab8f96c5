package maps

import (
	"sync/atomic"
	"unsafe"
)

// Slots of hash maps: slabs allocated up front (or on demand), claimed by
// inserts with a compare-and-swap of their ctrl word. Slots are never
// returned to the Go allocator.

// ensureChunk allocates the slab holding slot e.
func (h *hashMap) ensureChunk(e uint32) {
	if h.flat != nil {
		return
	}
	c := e >> h.chunkShift
	if atomic.LoadPointer(&h.chunks[c]) != nil {
		return
	}
	h.allocMu.Lock()
	defer h.allocMu.Unlock()
	if h.chunks[c] == nil {
		h.keep[c] = allocWords(h.chunkSize)
		atomic.StorePointer(&h.chunks[c], unsafe.Pointer(&h.keep[c][0]))
	}
}

// reserve counts one more element; false when the map is full.
func (h *hashMap) reserve() bool {
	for {
		n := h.count.Load()
		if n >= h.spec.MaxEntries {
			return false
		}
		if h.count.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// claim takes the first empty or deleted slot from home on and marks it
// busy. It returns the slot, its address, its busy ctrl word and its
// distance from home. The caller has reserved an element, so live and busy
// slots number at most MaxEntries, fewer than the slots: there is a free
// slot.
func (h *hashMap) claim(home uint32) (e uint32, p unsafe.Pointer, busy uint64, d uint32) {
	e = home
	for {
		h.ensureChunk(e)
		p = h.slot(e)
		c := atomic.LoadUint64(ctrlPtr(p))
		if st := slotState(c); st == stEmpty || st == stTomb {
			// A new generation; homeDist stays (it is about other slots).
			busy = (c>>genShift+1)<<genShift | c&homeDistMask | stBusy<<stateShift
			if atomic.CompareAndSwapUint64(ctrlPtr(p), c, busy) {
				return e, p, busy, d
			}
			continue // another insert took it first: look again
		}
		e = h.next(e)
		d++
	}
}
