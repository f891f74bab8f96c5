package maps

import (
	"math/bits"
	"testing"
	"unsafe"

	"github.com/uebpf/uebpf/internal/engine"
)

// findByLayout follows engine.HashLayout's recipe for key k (in Go, with the
// exported names only; slots is l.Slots as a pointer) and returns the
// value's address, the lock's, and whether the recipe answers (false: left
// to UpdateElem).
func findByLayout(l engine.HashLayout, slots unsafe.Pointer, k uint64) (value unsafe.Pointer, lock uintptr, ok bool) {
	mum := func(a, b uint64) uint64 { hi, lo := bits.Mul64(a, b); return hi ^ lo }
	h := mum(l.HashStart^k^engine.HashP0, k^engine.HashP1)
	hv := mum(h, h^engine.HashP2)
	if hv != engine.HashSmall(l.HashStart, k) {
		panic("engine.HashSmall does not follow its documentation")
	}
	home := uint32((hv >> 32) * uint64(l.NumSlots) >> 32)
	tag := uint64(hv & engine.CtrlTagMask)
	lock = l.Locks + uintptr(home&l.LockMask)*uintptr(l.LockStride)
	slot := func(i uint32) unsafe.Pointer { return unsafe.Add(slots, uintptr(i)*uintptr(l.SlotSize)) }
	ctrl := func(i uint32) uint64 { return *(*uint64)(slot(i)) }
	limit := ctrl(home) >> engine.CtrlHomeDistShift & engine.CtrlMaxDist
	if limit == engine.CtrlMaxDist {
		return nil, lock, false
	}
	for i, d := home, uint64(0); d <= limit; d++ {
		c := ctrl(i)
		if c&(engine.CtrlTagMask|engine.CtrlStateMask) == tag|engine.CtrlLive && *(*uint64)(unsafe.Add(slot(i), l.KeyOff)) == k {
			return unsafe.Add(slot(i), l.ValueOff), lock, true
		}
		if c&engine.CtrlStateMask == 0 {
			break
		}
		if i++; i == l.NumSlots {
			i = 0
		}
	}
	return nil, lock, false
}

// TestHashLayout: the recipe engine.HashLayout documents finds every key where
// the map keeps it, under the lock the map's own update takes, and finds
// no deleted key.
func TestHashLayout(t *testing.T) {
	for _, tc := range []struct {
		typ     Type
		keySize uint32
	}{{Hash, 1}, {Hash, 2}, {Hash, 4}, {Hash, 8}, {LRUHash, 4}} {
		keySize := tc.keySize
		m := mustNew(t, &Spec{Name: "h", Type: tc.typ, KeySize: keySize, ValueSize: 12, MaxEntries: 256})
		h := m.(*hashMap)
		l, ok := engine.HashLayoutOf(engine.HashOf(m))
		if !ok || l.Slots != uintptr(h.flat) || (l.RefBit != 0) != h.lru {
			t.Fatalf("%v, key size %d: layout %+v, %v", tc.typ, keySize, l, ok)
		}
		n := 200
		if keySize == 1 {
			n = 255
		}
		key := func(i int) (uint64, []byte) {
			b := make([]byte, keySize)
			k := uint64(i) * 0x9e3779b97f4a7c15 >> (64 - 8*keySize)
			if keySize == 1 {
				k = uint64(i)
			}
			for j := range b {
				b[j] = byte(k >> (8 * j))
			}
			return k, b
		}
		for i := range n {
			_, kb := key(i)
			if err := m.Update(kb, make([]byte, 12), UpdateAny); err != nil {
				t.Fatal(err)
			}
		}
		for i := range n {
			if i%3 == 0 {
				_, kb := key(i)
				if err := m.Delete(kb); err != nil {
					t.Fatal(err)
				}
			}
		}
		found := 0
		for i := range n {
			k, kb := key(i)
			v, lock, ok := findByLayout(l, h.flat, k)
			home, _ := h.hashOf(unsafe.Pointer(&kb[0]))
			if want := uintptr(unsafe.Pointer(h.lock(home))); lock != want {
				t.Fatalf("key size %d, key %#x: lock %#x, the map's %#x", keySize, k, lock, want)
			}
			want := h.LookupElem(unsafe.Pointer(&kb[0]), 0)
			if direct := engine.HashLookup(unsafe.Pointer(h), unsafe.Pointer(&kb[0]), 0); direct != want {
				t.Fatalf("key %#x: engine.HashLookup %p, LookupElem %p", k, direct, want)
			}
			if v != want || ok != (want != nil) {
				t.Fatalf("key size %d, key %#x: value at %#x, the map's at %#x", keySize, k, v, want)
			}
			if ok {
				found++
				if l.RefBit != 0 {
					// Step 6 touches the word lruTouch does.
					ref := (*uint32)(unsafe.Add(v, int(l.RefOff)-int(l.ValueOff)))
					if ref != lruState(unsafe.Add(v, -int(l.ValueOff))) || l.RefBit != lruRef {
						t.Fatalf("key %#x: reference bit %#x at %p", k, l.RefBit, ref)
					}
				}
			}
		}
		if live := n - (n+2)/3; found != live || found == 0 {
			t.Errorf("key size %d: the recipe found %d of %d keys", keySize, found, live)
		}
	}
	for _, s := range []*Spec{
		{Name: "percpu", Type: PerCPUHash, KeySize: 4, ValueSize: 8, MaxEntries: 8},
		{Name: "big key", Type: Hash, KeySize: 12, ValueSize: 8, MaxEntries: 8},
		{Name: "lazy", Type: Hash, KeySize: 4, ValueSize: 8, MaxEntries: 8, Flags: FlagNoPrealloc},
	} {
		if _, ok := engine.HashLayoutOf(engine.HashOf(mustNew(t, s))); ok {
			t.Errorf("%s: has a layout", s.Name)
		}
	}
}
