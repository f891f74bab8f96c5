package maps

import (
	"sync/atomic"
	"unsafe"
)

// Go-side operations of hash maps. Lookups copy the value under the key's
// lock so that what they copy is consistent with the key; walks (NextKey,
// iteration) read keys without locks and check the slot's ctrl word
// around each read.

func keyPtr(key []byte) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(key)) }

// goLookup copies the value under the key's lock, so that the Go side never
// sees the value of an element that was deleted and reused meanwhile.
func (h *hashMap) goLookup(key, out []byte) error {
	home, tag := h.hashOf(keyPtr(key))
	mu := h.lock(home)
	mu.Lock()
	defer mu.Unlock()
	e, p, _ := h.find(home, tag, keyPtr(key))
	if p == nil {
		return h.errs.notExist
	}
	h.readValue(e, p, out)
	return nil
}

func (h *hashMap) goLookupAndDelete(key, out []byte) error {
	return h.delete(keyPtr(key), out)
}

func (h *hashMap) goUpdate(key, value []byte, flags uint64) error {
	return h.update(keyPtr(key), keyPtr(value), flags, allCPUs)
}

func (h *hashMap) goDelete(key []byte) error { return h.delete(keyPtr(key), nil) }

// appendKey appends the key of slot e if it is live, read consistently
// (ctrl unchanged around the copy).
func (h *hashMap) appendKey(dst []byte, e uint32) ([]byte, bool) {
	p := h.slot(e)
	if p == nil {
		return dst, false
	}
	for {
		c := atomic.LoadUint64(ctrlPtr(p))
		if slotState(c) != stLive {
			return dst, false
		}
		n := len(dst)
		dst = append(dst, make([]byte, h.keySize)...)
		atomicCopyOut(dst[n:], unsafe.Add(p, h.keyOff), h.keySize)
		if atomic.LoadUint64(ctrlPtr(p)) == c {
			return dst, true
		}
		dst = dst[:n]
	}
}

// goNextKey returns the key of the next live slot after key's; a key that
// is not in the map restarts from the first slot (as the kernel restarts
// from the first bucket).
func (h *hashMap) goNextKey(key, next []byte) error {
	start := uint64(0)
	if key != nil {
		home, tag := h.hashOf(keyPtr(key))
		if e, p, _ := h.find(home, tag, keyPtr(key)); p != nil {
			start = uint64(e) + 1
		}
	}
	for e := start; e < uint64(h.nslots); e++ {
		if atomic.LoadPointer(&h.chunks[e>>h.chunkShift]) == nil {
			e |= uint64(h.chunkMask) // skip the unallocated chunk
			continue
		}
		if _, ok := h.appendKey(next[:0], uint32(e)); ok {
			return nil
		}
	}
	return h.errs.notExist
}

// iterKeys collects the keys of live slots, starting at slot cursor.
func (h *hashMap) iterKeys(cursor uint64, dst []byte) ([]byte, uint64, bool, error) {
	e := cursor
	for ; e < uint64(h.nslots) && len(dst) < iterBatch*int(h.keySize); e++ {
		if atomic.LoadPointer(&h.chunks[e>>h.chunkShift]) == nil {
			e |= uint64(h.chunkMask)
			continue
		}
		dst, _ = h.appendKey(dst, uint32(e))
	}
	return dst, e, e >= uint64(h.nslots), nil
}
