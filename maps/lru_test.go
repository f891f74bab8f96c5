package maps

import (
	"errors"
	"testing"
	"unsafe"
)

func lruKeys(t *testing.T, m Map) map[uint32]bool {
	t.Helper()
	keys := map[uint32]bool{}
	var k uint32
	it := m.Iterate()
	for it.Next(&k, nil) {
		keys[k] = true
	}
	if it.Err() != nil {
		t.Fatal(it.Err())
	}
	return keys
}

func TestLRUEviction(t *testing.T) {
	for _, typ := range []Type{LRUHash, LRUCPUHash} {
		t.Run(typ.String(), func(t *testing.T) {
			const n = 8
			m := mustNew(t, &Spec{Name: "lru", Type: typ, KeySize: 4, ValueSize: 8, MaxEntries: n})
			put := func(k uint32) {
				t.Helper()
				v := uint64(k)
				if err := m.UpdateElem(unsafe.Pointer(&k), unsafe.Pointer(&v), 0, 0); err != nil {
					t.Fatalf("update %d: %v", k, err)
				}
			}
			get := func(k uint32) bool { return m.LookupElem(unsafe.Pointer(&k), 0) != nil }
			for k := range uint32(n) {
				put(k)
			}
			// Use the first half; the unused half goes first.
			for k := range uint32(n / 2) {
				if !get(k) {
					t.Fatalf("key %d missing", k)
				}
			}
			for k := uint32(100); k < 100+n/2; k++ {
				put(k)
			}
			keys := lruKeys(t, m)
			if len(keys) != n {
				t.Fatalf("%d keys after eviction, want %d", len(keys), n)
			}
			for k := range uint32(n / 2) {
				if !keys[k] {
					t.Errorf("recently used key %d was evicted", k)
				}
				if keys[k+n/2] {
					t.Errorf("unused key %d survived", k+n/2)
				}
			}
			for k := uint32(100); k < 100+n/2; k++ {
				if !keys[k] {
					t.Errorf("new key %d missing", k)
				}
			}
			// Keep inserting: the map stays full and keeps working.
			for k := uint32(1000); k < 1100; k++ {
				put(k)
				if !get(k) {
					t.Fatalf("just inserted key %d missing", k)
				}
			}
			if got := len(lruKeys(t, m)); got != n {
				t.Errorf("%d keys, want %d", got, n)
			}
			// Flags still apply.
			k, v := uint32(1099), uint64(0)
			if err := m.UpdateElem(unsafe.Pointer(&k), unsafe.Pointer(&v), uint64(UpdateNoExist), 0); !errors.Is(err, ErrKeyExist) {
				t.Errorf("NoExist on existing key: %v", err)
			}
			k = 5000
			if err := m.UpdateElem(unsafe.Pointer(&k), unsafe.Pointer(&v), uint64(UpdateExist), 0); !errors.Is(err, ErrKeyNotExist) {
				t.Errorf("Exist on missing key: %v", err)
			}
			// Deleted slots are reused before anything is evicted.
			k = 1099
			if err := m.DeleteElem(unsafe.Pointer(&k)); err != nil {
				t.Fatal(err)
			}
			before := lruKeys(t, m)
			put(7777)
			after := lruKeys(t, m)
			for k := range before {
				if !after[k] {
					t.Errorf("key %d evicted although a slot was free", k)
				}
			}
		})
	}
}

func TestLRUGoSideDoesNotTouch(t *testing.T) {
	m := mustNew(t, &Spec{Name: "lru", Type: LRUHash, KeySize: 4, ValueSize: 4, MaxEntries: 2})
	_ = m.Update(uint32(1), uint32(1), UpdateAny)
	_ = m.Update(uint32(2), uint32(2), UpdateAny)
	var v uint32
	_ = m.Lookup(uint32(1), &v) // does not count as use
	k := uint32(2)
	m.LookupElem(unsafe.Pointer(&k), 0) // does
	if err := m.Update(uint32(3), uint32(3), UpdateAny); err != nil {
		t.Fatal(err)
	}
	keys := lruKeys(t, m)
	if keys[1] || !keys[2] || !keys[3] {
		t.Errorf("keys %v, want 2 and 3", keys)
	}
}

// TestLRUHandVisitsEverySlot checks that any nslots consecutive clock
// times put the hand on every slot once, for sparse (grouped) and dense
// tables and across the clock's wrap-around.
func TestLRUHandVisitsEverySlot(t *testing.T) {
	for _, max := range []uint32{1, 2, 7, 8, 100, 4096, 5000} {
		for _, start := range []uint32{0, 3, 1<<32 - 5} {
			m := mustNew(t, &Spec{Name: "lru", Type: LRUHash, KeySize: 8, ValueSize: 8, MaxEntries: max})
			h := m.(*hashMap)
			if h.nslots <= max {
				t.Fatalf("max %d: %d slots", max, h.nslots)
			}
			if !h.pow2 && start+h.nslots < start {
				continue // a dense table's order restarts at the wrap
			}
			seen := make([]bool, h.nslots)
			for i := range h.nslots {
				e := h.handSlot(start + i)
				if e >= h.nslots || seen[e] {
					t.Fatalf("max %d, start %d: time %d puts the hand on slot %d again or out of range", max, start, start+i, e)
				}
				seen[e] = true
			}
		}
	}
}
