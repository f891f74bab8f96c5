package maps

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"unsafe"
)

func TestHashFlags(t *testing.T) {
	for _, typ := range []Type{Hash, PerCPUHash, LRUHash, LRUCPUHash} {
		t.Run(typ.String(), func(t *testing.T) {
			m := mustNew(t, &Spec{Name: "h", Type: typ, KeySize: 4, ValueSize: 8, MaxEntries: 2})
			steps := []struct {
				op    string
				key   uint32
				flags uint64
				want  error
			}{
				{"update", 1, uint64(UpdateExist), ErrKeyNotExist},
				{"update", 1, uint64(UpdateNoExist), nil},
				{"update", 1, uint64(UpdateNoExist), ErrKeyExist},
				{"update", 1, uint64(UpdateExist), nil},
				{"update", 1, uint64(UpdateAny), nil},
				{"update", 2, uint64(UpdateAny), nil},
				{"update", 1, uint64(UpdateLock), ErrInvalid},
				{"update", 1, 3, ErrInvalid},
				{"update", 1, 1 << 40, ErrInvalid},
				{"delete", 1, 0, nil},
				{"delete", 1, 0, ErrKeyNotExist},
				{"update", 1, uint64(UpdateAny), nil},
			}
			for i, s := range steps {
				v := uint64(s.key) * 100
				var err error
				if s.op == "update" {
					err = m.UpdateElem(unsafe.Pointer(&s.key), unsafe.Pointer(&v), s.flags, 0)
				} else {
					err = m.DeleteElem(unsafe.Pointer(&s.key))
				}
				if !errors.Is(err, s.want) || (s.want == nil) != (err == nil) {
					t.Fatalf("step %d: %s(%d, %#x) = %v, want %v", i, s.op, s.key, s.flags, err, s.want)
				}
			}
			// Full: the third key does not fit, except in an LRU map.
			k, v := uint32(3), uint64(300)
			err := m.UpdateElem(unsafe.Pointer(&k), unsafe.Pointer(&v), 0, 0)
			lru := typ == LRUHash || typ == LRUCPUHash
			if lru && err != nil || !lru && !errors.Is(err, ErrMapFull) {
				t.Fatalf("update of a full map: %v", err)
			}
			if !lru {
				if Errno(err) != -7 {
					t.Errorf("Errno(full) = %d, want -E2BIG", Errno(err))
				}
				// Existing keys can still be updated.
				k = 2
				if err := m.UpdateElem(unsafe.Pointer(&k), unsafe.Pointer(&v), 0, 0); err != nil {
					t.Errorf("update of existing key in full map: %v", err)
				}
			}
		})
	}
}

func TestHashProgramSide(t *testing.T) {
	m := mustNew(t, &Spec{Name: "h", Type: Hash, KeySize: 8, ValueSize: 12, MaxEntries: 100})
	for i := range uint64(100) {
		v := [3]uint32{uint32(i), uint32(i * 2), uint32(i * 3)}
		if err := m.UpdateElem(unsafe.Pointer(&i), unsafe.Pointer(&v), 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	for i := range uint64(100) {
		p := m.LookupElem(unsafe.Pointer(&i), 0)
		if p == nil {
			t.Fatalf("key %d missing", i)
		}
		if uintptr(p)%8 != 0 {
			t.Fatal("value not 8-byte aligned")
		}
		if v := *(*[3]uint32)(p); v != [3]uint32{uint32(i), uint32(i * 2), uint32(i * 3)} {
			t.Fatalf("key %d: value %v", i, v)
		}
	}
	missing := uint64(1000)
	if m.LookupElem(unsafe.Pointer(&missing), 0) != nil {
		t.Error("missing key found")
	}
	// In-place update: a pointer obtained earlier sees the new value.
	k := uint64(5)
	p := m.LookupElem(unsafe.Pointer(&k), 0)
	nv := [3]uint32{9, 9, 9}
	if err := m.UpdateElem(unsafe.Pointer(&k), unsafe.Pointer(&nv), uint64(UpdateExist), 0); err != nil {
		t.Fatal(err)
	}
	if *(*[3]uint32)(p) != nv {
		t.Error("update was not in place")
	}
	// A deleted element's memory stays valid and is recycled.
	if err := m.DeleteElem(unsafe.Pointer(&k)); err != nil {
		t.Fatal(err)
	}
	_ = *(*[3]uint32)(p)
	k2 := uint64(5000)
	if err := m.UpdateElem(unsafe.Pointer(&k2), unsafe.Pointer(&nv), 0, 0); err != nil {
		t.Fatalf("insert after delete in full map: %v", err)
	}
	if err := m.DeleteElem(unsafe.Pointer(&k2)); err != nil {
		t.Fatal(err)
	}
	// The key's old slot is the first free one from its home again.
	if err := m.UpdateElem(unsafe.Pointer(&k), unsafe.Pointer(&nv), 0, 0); err != nil {
		t.Fatal(err)
	}
	if m.LookupElem(unsafe.Pointer(&k), 0) != p {
		t.Error("deleted slot was not reused")
	}
}

// TestHashKeySizes exercises keys that are not a multiple of 8 bytes and
// unaligned caller keys.
func TestHashKeySizes(t *testing.T) {
	for _, ks := range []uint32{1, 3, 4, 7, 8, 9, 12, 16, 20, 64} {
		t.Run(fmt.Sprint(ks), func(t *testing.T) {
			m := mustNew(t, &Spec{Name: "h", Type: Hash, KeySize: ks, ValueSize: 4, MaxEntries: 64})
			buf := make([]byte, ks+1)
			n := min(64, 1<<(8*min(ks, 2))) // 1-byte keys: at most 64 anyway
			for i := range n {
				key := buf[1:] // unaligned
				clear(key)
				key[0] = byte(i)
				if ks > 1 {
					key[ks-1] ^= byte(i * 7)
				}
				v := uint32(i)
				if err := m.UpdateElem(unsafe.Pointer(&key[0]), unsafe.Pointer(&v), uint64(UpdateNoExist), 0); err != nil {
					t.Fatalf("key %d: %v", i, err)
				}
			}
			for i := range n {
				key := buf[1:]
				clear(key)
				key[0] = byte(i)
				if ks > 1 {
					key[ks-1] ^= byte(i * 7)
				}
				p := m.LookupElem(unsafe.Pointer(&key[0]), 0)
				if p == nil || *(*uint32)(p) != uint32(i) {
					t.Fatalf("key %d not found", i)
				}
			}
			count := 0
			it := m.Iterate()
			for it.Next(nil, nil) {
				count++
			}
			if count != n || it.Err() != nil {
				t.Errorf("iterated %d of %d: %v", count, n, it.Err())
			}
		})
	}
}

func TestHashGoSide(t *testing.T) {
	type key struct {
		A uint32
		B uint16
		C [2]byte
	}
	m := mustNew(t, &Spec{Name: "h", Type: Hash, KeySize: 8, ValueSize: 8, MaxEntries: 1000})
	want := map[key]uint64{}
	for i := range 500 {
		k := key{uint32(i), uint16(i * 3), [2]byte{1, 2}}
		if err := m.Update(k, uint64(i*i), UpdateNoExist); err != nil {
			t.Fatal(err)
		}
		want[k] = uint64(i * i)
	}
	got := map[key]uint64{}
	var k key
	var v uint64
	it := m.Iterate()
	for it.Next(&k, &v) {
		if _, dup := got[k]; dup {
			t.Fatalf("key %v returned twice", k)
		}
		got[k] = v
	}
	if it.Err() != nil || len(got) != len(want) {
		t.Fatalf("iterated %d, want %d: %v", len(got), len(want), it.Err())
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("key %v = %d, want %d", k, got[k], v)
		}
	}
	// NextKey walks all keys.
	seen := 0
	var cur, next key
	err := m.NextKey(nil, &next)
	for err == nil {
		seen++
		cur = next
		err = m.NextKey(cur, &next)
	}
	if !errors.Is(err, ErrKeyNotExist) || seen != 500 {
		t.Errorf("NextKey walk: %d keys, %v", seen, err)
	}
	// A missing key restarts from the first key.
	var first key
	_ = m.NextKey(nil, &first)
	if err := m.NextKey(key{A: 99999}, &next); err != nil || next != first {
		t.Errorf("NextKey(missing) = %v, %v; want first %v", next, err, first)
	}
	k0 := key{0, 0, [2]byte{1, 2}}
	if err := m.LookupAndDelete(k0, &v); err != nil || v != 0 {
		t.Errorf("LookupAndDelete: %d, %v", v, err)
	}
	if err := m.Lookup(k0, &v); !errors.Is(err, ErrKeyNotExist) {
		t.Errorf("Lookup after LookupAndDelete: %v", err)
	}
	if err := m.Delete(k0); !errors.Is(err, ErrKeyNotExist) {
		t.Errorf("Delete missing: %v", err)
	}
	if err := m.Lookup(uint32(1), &v); !errors.Is(err, ErrInvalid) {
		t.Errorf("Lookup with 4-byte key: %v", err)
	} else if s := err.Error(); s != `map "h": lookup: key: uint32 is 4 bytes, want 8: invalid argument` {
		t.Errorf("error message %q", s)
	}
	// Deleting everything while iterating neither aborts nor repeats.
	it = m.Iterate()
	n := 0
	for it.Next(&k, nil) {
		if err := m.Delete(k); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if it.Err() != nil || n != 499 {
		t.Errorf("delete during iteration: %d, %v", n, it.Err())
	}
	if err := m.NextKey(nil, &next); !errors.Is(err, ErrKeyNotExist) {
		t.Errorf("NextKey on empty map: %v", err)
	}
}

func TestPerCPUHash(t *testing.T) {
	const ncpu = 4
	for _, typ := range []Type{PerCPUHash, LRUCPUHash} {
		t.Run(typ.String(), func(t *testing.T) {
			mm, err := newMap(&Spec{Name: "ph", Type: typ, KeySize: 4, ValueSize: 4, MaxEntries: 16}, ncpu)
			if err != nil {
				t.Fatal(err)
			}
			m := mm.(*hashMap)
			k, v := uint32(1), uint32(11)
			if err := m.UpdateElem(unsafe.Pointer(&k), unsafe.Pointer(&v), 0, 2); err != nil {
				t.Fatal(err)
			}
			var vals []uint32
			if err := m.Lookup(k, &vals); err != nil || !slices.Equal(vals, []uint32{0, 0, 11, 0}) {
				t.Fatalf("after program update on CPU 2: %v, %v", vals, err)
			}
			v = 22
			if err := m.UpdateElem(unsafe.Pointer(&k), unsafe.Pointer(&v), 0, 0); err != nil {
				t.Fatal(err)
			}
			if err := m.Lookup(k, &vals); err != nil || !slices.Equal(vals, []uint32{22, 0, 11, 0}) {
				t.Fatalf("after program update on CPU 0: %v, %v", vals, err)
			}
			if err := m.UpdateElem(unsafe.Pointer(&k), unsafe.Pointer(&v), 0, ncpu); !errors.Is(err, ErrInvalid) {
				t.Errorf("UpdateElem on a bad cpu: %v", err)
			}
			if p := m.LookupElem(unsafe.Pointer(&k), 2); p == nil || *(*uint32)(p) != 11 {
				t.Error("LookupElem(cpu 2)")
			}
			if m.LookupElem(unsafe.Pointer(&k), ncpu) != nil {
				t.Error("LookupElem(bad cpu) not nil")
			}
			p0, p1 := m.LookupElem(unsafe.Pointer(&k), 0), m.LookupElem(unsafe.Pointer(&k), 1)
			if d := uintptr(p1) - uintptr(p0); d < cacheLine {
				t.Errorf("CPU slots %d bytes apart", d)
			}
			if err := m.Update(uint32(2), []uint32{1, 2, 3, 4}, UpdateAny); err != nil {
				t.Fatal(err)
			}
			k = 2
			for c := range ncpu {
				if p := m.LookupElem(unsafe.Pointer(&k), c); *(*uint32)(p) != uint32(c+1) {
					t.Errorf("cpu %d: %d", c, *(*uint32)(p))
				}
			}
			if err := m.Update(uint32(2), uint32(1), UpdateAny); !errors.Is(err, ErrInvalid) {
				t.Errorf("Update with a scalar: %v", err)
			}
			var arr [ncpu]uint32
			if err := m.Lookup(uint32(2), &arr); err != nil || arr != [ncpu]uint32{1, 2, 3, 4} {
				t.Errorf("Lookup into *array: %v %v", arr, err)
			}
			if err := m.LookupAndDelete(uint32(2), &vals); err != nil || !slices.Equal(vals, []uint32{1, 2, 3, 4}) {
				t.Errorf("LookupAndDelete: %v %v", vals, err)
			}
		})
	}
}

func TestHashNoPreallocAndLarge(t *testing.T) {
	m := mustNew(t, &Spec{Name: "np", Type: Hash, KeySize: 4, ValueSize: 4, MaxEntries: 100000, Flags: FlagNoPrealloc})
	h := m.(*hashMap)
	if h.chunks[len(h.chunks)-1] != nil {
		t.Error("BPF_F_NO_PREALLOC map preallocated its slabs")
	}
	for i := range uint32(100000) {
		if err := m.UpdateElem(unsafe.Pointer(&i), unsafe.Pointer(&i), 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	k := uint32(100000)
	if err := m.UpdateElem(unsafe.Pointer(&k), unsafe.Pointer(&k), 0, 0); !errors.Is(err, ErrMapFull) {
		t.Errorf("insert into full map: %v", err)
	}
	for i := uint32(0); i < 100000; i += 997 {
		if p := m.LookupElem(unsafe.Pointer(&i), 0); p == nil || *(*uint32)(p) != i {
			t.Fatalf("key %d", i)
		}
	}
}

func TestHashZeroSeedDeterministic(t *testing.T) {
	order := func() []uint32 {
		m := mustNew(t, &Spec{Name: "z", Type: Hash, KeySize: 4, ValueSize: 4, MaxEntries: 64, Flags: FlagZeroSeed})
		for i := range uint32(50) {
			_ = m.Update(i, i, UpdateAny)
		}
		var keys []uint32
		var k uint32
		for it := m.Iterate(); it.Next(&k, nil); {
			keys = append(keys, k)
		}
		return keys
	}
	if a, b := order(), order(); !slices.Equal(a, b) {
		t.Error("BPF_F_ZERO_SEED maps iterate in different orders")
	}
}

func TestHashFunctionsAgree(t *testing.T) {
	for _, seed := range []uint64{0, 1, randomSeed()} {
		for _, k := range []uint64{0, 1, 0xdeadbeef, ^uint64(0)} {
			words := [1]uint64{k}
			a := hashKey(unsafe.Pointer(&k), 8, seed)
			if b := hashSmall(k, 8, seed); a != b {
				t.Errorf("hashSmall(%#x, 8) = %#x, hashKey = %#x", k, b, a)
			}
			if c := hashWords(unsafe.Pointer(&words), 8, seed); a != c {
				t.Errorf("hashWords(%#x) = %#x, hashKey = %#x", k, c, a)
			}
		}
		key := [3]byte{1, 2, 3}
		words := [1]uint64{uint64(1) | 2<<8 | 3<<16}
		if hashKey(unsafe.Pointer(&key), 3, seed) != hashWords(unsafe.Pointer(&words), 3, seed) {
			t.Error("hashKey and hashWords disagree on a 3-byte key")
		}
		for size := uintptr(1); size <= 8; size++ {
			k := uint64(0x0807060504030201)
			w := loadPartial(unsafe.Pointer(&k), size)
			if a, b := hashKey(unsafe.Pointer(&k), size, seed), hashSmall(w, size, seed); a != b {
				t.Errorf("%d-byte key: hashSmall = %#x, hashKey = %#x", size, b, a)
			}
		}
	}
}

func TestHashUpdateElemIgnoresCPU(t *testing.T) {
	m := mustNew(t, &Spec{Name: "h", Type: Hash, KeySize: 4, ValueSize: 4, MaxEntries: 4})
	k, v := uint32(1), uint32(42)
	for _, cpu := range []int{-1, 0, 1 << 20} {
		if err := m.UpdateElem(unsafe.Pointer(&k), unsafe.Pointer(&v), 0, cpu); err != nil {
			t.Errorf("cpu %d: %v", cpu, err)
		}
		if p := m.LookupElem(unsafe.Pointer(&k), cpu); p == nil || *(*uint32)(p) != 42 {
			t.Errorf("cpu %d: lookup failed", cpu)
		}
	}
}

// TestHashLargeSlab: a map large enough for the huge-page slab works like
// any other, and its memory goes away with it.
func TestHashLargeSlab(t *testing.T) {
	const n = 70000 // 2^18 slots of 32 bytes: 8 MiB
	m := mustNew(t, &Spec{Name: "big", Type: Hash, KeySize: 8, ValueSize: 8, MaxEntries: n})
	for i := range uint64(n) {
		k, v := i*0x9E3779B97F4A7C15, i
		if err := m.UpdateElem(unsafe.Pointer(&k), unsafe.Pointer(&v), uint64(UpdateNoExist), 0); err != nil {
			t.Fatalf("insert %d: %v", i, err)
		}
	}
	k := uint64(1)
	if err := m.UpdateElem(unsafe.Pointer(&k), unsafe.Pointer(&k), 0, 0); !errors.Is(err, ErrMapFull) {
		t.Fatalf("insert into a full map: %v", err)
	}
	for i := uint64(0); i < n; i += 2 {
		k := i * 0x9E3779B97F4A7C15
		if err := m.DeleteElem(unsafe.Pointer(&k)); err != nil {
			t.Fatalf("delete %d: %v", i, err)
		}
	}
	for i := range uint64(n) {
		k := i * 0x9E3779B97F4A7C15
		p := m.LookupElem(unsafe.Pointer(&k), 0)
		switch {
		case i%2 == 0 && p != nil:
			t.Fatalf("deleted key %d found", i)
		case i%2 == 1 && (p == nil || *(*uint64)(p) != i || uintptr(p)%8 != 0):
			t.Fatalf("key %d: %p", i, p)
		}
	}
	m = nil
	runtime.GC()
	runtime.GC()
}

// TestHashChurnInvariants deletes and inserts at random until every free
// slot has been used, then checks the table: each key is found, and each
// home slot's homeDist is exactly the distance of its farthest element, so
// misses stay short however many tombstones there are.
func TestHashChurnInvariants(t *testing.T) {
	const n = 512
	m := mustNew(t, &Spec{Name: "churn", Type: Hash, KeySize: 8, ValueSize: 8, MaxEntries: n})
	h := m.(*hashMap)
	rng := rand.New(rand.NewPCG(3, 4))
	live := map[uint64]bool{}
	for range 50 * n {
		if len(live) == n || (len(live) > 0 && rng.IntN(2) == 0) {
			for k := range live {
				if err := m.DeleteElem(unsafe.Pointer(&k)); err != nil {
					t.Fatal(err)
				}
				delete(live, k)
				break
			}
			continue
		}
		k := rng.Uint64()
		if err := m.UpdateElem(unsafe.Pointer(&k), unsafe.Pointer(&k), uint64(UpdateNoExist), 0); err != nil {
			t.Fatal(err)
		}
		live[k] = true
	}
	for k := range live {
		if p := m.LookupElem(unsafe.Pointer(&k), 0); p == nil || *(*uint64)(p) != k {
			t.Fatalf("key %#x lost", k)
		}
	}
	need := make([]uint32, h.nslots)
	var empty, tombs int
	for e := range h.nslots {
		c := atomic.LoadUint64(ctrlPtr(h.slot(e)))
		switch slotState(c) {
		case stEmpty:
			empty++
		case stTomb:
			tombs++
		case stLive:
			d := slotDist(c)
			home := h.back(e, d)
			need[home] = max(need[home], d)
		}
	}
	for e := range h.nslots {
		if got := homeDist(atomic.LoadUint64(ctrlPtr(h.slot(e)))); got != need[e] {
			t.Errorf("slot %d: homeDist %d, its elements need %d", e, got, need[e])
		}
	}
	t.Logf("%d live, %d tombstones, %d empty, maxDisp %d", len(live), tombs, empty, h.maxDisp.Load())
}

// BenchmarkHashUpdateSmall updates the existing u32 keys of a 1024-entry
// map in turn, as the benchmark set's map_hash_update does: the table,
// its locks and the keys stay in cache, so this is the cost of an update
// itself.
func BenchmarkHashUpdateSmall(b *testing.B) {
	m := mustNew(b, &Spec{Name: "h", Type: Hash, KeySize: 4, ValueSize: 8, MaxEntries: 1024})
	keys, vals := make([]uint32, 1024), make([]uint64, 1024)
	for k := range keys {
		keys[k], vals[k] = uint32(k), uint64(k)
		if err := m.UpdateElem(unsafe.Pointer(&keys[k]), unsafe.Pointer(&vals[k]), 0, 0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	defer cpuTime(b)()
	i := 0
	for b.Loop() {
		if err := m.UpdateElem(unsafe.Pointer(&keys[i&1023]), unsafe.Pointer(&vals[(i+1)&1023]), 0, 0); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
