package maps

import (
	"sync/atomic"
	"unsafe"
)

// Go-side operations of hash maps: they go through the bucket locks so that
// what they copy is consistent with the key.

func keyPtr(key []byte) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(key)) }

// goLookup copies the value under the bucket lock, so that the Go side never
// sees the value of an element that was deleted and recycled meanwhile.
func (h *hashMap) goLookup(key, out []byte) error {
	b, tag := h.hashOf(keyPtr(key))
	mu := h.lock(b)
	mu.Lock()
	defer mu.Unlock()
	e, p, _ := h.findLocked(b, tag, keyPtr(key))
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

// appendKey appends the key of the element at p.
func (h *hashMap) appendKey(dst []byte, p unsafe.Pointer) []byte {
	n := len(dst)
	dst = append(dst, make([]byte, h.keySize)...)
	atomicCopyOut(dst[n:], unsafe.Add(p, h.keyOff), h.keySize)
	return dst
}

// goNextKey is htab_map_get_next_key: the next element in key's chain, else
// the first element of the next non-empty bucket; a key that is not in the
// map restarts from the first bucket.
func (h *hashMap) goNextKey(key, next []byte) error {
	start := uint32(0)
	if key != nil {
		b, tag := h.hashOf(keyPtr(key))
		mu := h.lock(b)
		mu.Lock()
		if _, p, _ := h.findLocked(b, tag, keyPtr(key)); p != nil {
			if x := atomic.LoadUint32(nextPtr(p)); x&chainEnd == 0 {
				h.appendKey(next[:0], h.elem(x))
				mu.Unlock()
				return nil
			}
			start = b + 1
		}
		mu.Unlock()
	}
	for b := uint64(start); b <= uint64(h.bucketMask); b++ {
		if atomic.LoadUint32(&h.buckets[b])&chainEnd != 0 {
			continue
		}
		mu := h.lock(uint32(b))
		mu.Lock()
		if x := atomic.LoadUint32(&h.buckets[b]); x&chainEnd == 0 {
			h.appendKey(next[:0], h.elem(x))
			mu.Unlock()
			return nil
		}
		mu.Unlock()
	}
	return h.errs.notExist
}

// iterKeys collects the keys of whole buckets, starting at bucket cursor.
func (h *hashMap) iterKeys(cursor uint64, dst []byte) ([]byte, uint64, bool, error) {
	b := cursor
	for ; b <= uint64(h.bucketMask) && len(dst) < iterBatch*int(h.keySize); b++ {
		if atomic.LoadUint32(&h.buckets[b])&chainEnd != 0 {
			continue
		}
		mu := h.lock(uint32(b))
		mu.Lock()
		for x := atomic.LoadUint32(&h.buckets[b]); x&chainEnd == 0; {
			p := h.elem(x)
			dst = h.appendKey(dst, p)
			x = atomic.LoadUint32(nextPtr(p))
		}
		mu.Unlock()
	}
	return dst, b, b > uint64(h.bucketMask), nil
}
