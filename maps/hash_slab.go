package maps

import (
	"sync/atomic"
	"unsafe"
)

// Element slots of hash maps: slabs allocated up front (or on demand), a
// bump counter for never-used slots and a lock-free free list for recycled
// ones. Slots are never returned to the Go allocator.

// ensureChunk allocates the slab holding element e.
func (h *hashMap) ensureChunk(e uint32) {
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

// alloc takes a free element slot.
func (h *hashMap) alloc() (uint32, bool) {
	for {
		head := h.free.Load()
		if uint32(head) == 0 {
			break
		}
		e := uint32(head) - 1
		next := atomic.LoadUint32(tagPtr(h.elem(e)))
		if h.free.CompareAndSwap(head, (head>>32+1)<<32|uint64(next)) {
			return e, true
		}
	}
	for {
		n := h.bump.Load()
		if n >= h.spec.MaxEntries {
			return 0, false
		}
		if h.bump.CompareAndSwap(n, n+1) {
			h.ensureChunk(n)
			return n, true
		}
	}
}

// freeElem puts an unlinked element on the free list. Its tag word becomes
// the list link; key and value stay as they were until it is reused.
func (h *hashMap) freeElem(e uint32) {
	p := tagPtr(h.elem(e))
	for {
		head := h.free.Load()
		atomic.StoreUint32(p, uint32(head))
		if h.free.CompareAndSwap(head, (head>>32+1)<<32|uint64(e+1)) {
			return
		}
	}
}
