package maps

import (
	"errors"
	"slices"
	"testing"
	"unsafe"
)

func TestArrayProgramSide(t *testing.T) {
	m := mustNew(t, &Spec{Name: "a", Type: Array, KeySize: 4, ValueSize: 12, MaxEntries: 4})
	mem := m.(MemoryMap).Memory()
	if len(mem) != 4*16 {
		t.Fatalf("Memory() is %d bytes, want 64 (stride 16)", len(mem))
	}
	val := [12]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	tests := []struct {
		name  string
		key   uint32
		flags uint64
		want  error
	}{
		{"any", 1, uint64(UpdateAny), nil},
		{"exist", 2, uint64(UpdateExist), nil},
		{"noexist", 1, uint64(UpdateNoExist), ErrKeyExist},
		{"bad flags", 1, 3, ErrInvalid},
		{"lock", 1, uint64(UpdateLock), ErrInvalid},
		{"out of range", 4, uint64(UpdateAny), ErrTooBig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := m.UpdateElem(unsafe.Pointer(&tt.key), unsafe.Pointer(&val), tt.flags, 0)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("UpdateElem: %v, want %v", err, tt.want)
			}
			if err == nil {
				p := m.LookupElem(unsafe.Pointer(&tt.key), 0)
				if p == nil || *(*[12]byte)(p) != val {
					t.Fatal("LookupElem does not see the update")
				}
				if uintptr(p)%8 != 0 {
					t.Error("value not 8-byte aligned")
				}
				if off := uintptr(p) - uintptr(unsafe.Pointer(&mem[0])); off != uintptr(tt.key)*16 {
					t.Errorf("value at offset %d, want %d", off, tt.key*16)
				}
			}
		})
	}
	k := uint32(4)
	if m.LookupElem(unsafe.Pointer(&k), 0) != nil {
		t.Error("LookupElem out of range is not nil")
	}
	if err := m.DeleteElem(unsafe.Pointer(&k)); !errors.Is(err, ErrInvalid) {
		t.Errorf("DeleteElem: %v", err)
	}
}

func TestArrayGoSide(t *testing.T) {
	m := mustNew(t, &Spec{Name: "a", Type: Array, KeySize: 4, ValueSize: 8, MaxEntries: 3})
	for i := range uint32(3) {
		if err := m.Update(i, uint64(i*10), UpdateAny); err != nil {
			t.Fatal(err)
		}
	}
	var v uint64
	if err := m.Lookup(uint32(2), &v); err != nil || v != 20 {
		t.Fatalf("Lookup: %d, %v", v, err)
	}
	if err := m.Lookup(uint32(3), &v); !errors.Is(err, ErrKeyNotExist) {
		t.Errorf("Lookup out of range: %v", err)
	}
	if err := m.Update(uint32(3), uint64(1), UpdateAny); !errors.Is(err, ErrTooBig) {
		t.Errorf("Update out of range: %v", err)
	}
	if err := m.Update(uint32(0), uint64(1), UpdateNoExist); !errors.Is(err, ErrKeyExist) {
		t.Errorf("Update NoExist: %v", err)
	}
	if err := m.Delete(uint32(0)); !errors.Is(err, ErrInvalid) {
		t.Errorf("Delete: %v", err)
	}
	if err := m.Update(uint32(0), uint32(1), UpdateAny); !errors.Is(err, ErrInvalid) {
		t.Errorf("Update with a 4-byte value: %v", err)
	}
	var next uint32
	if err := m.NextKey(nil, &next); err != nil || next != 0 {
		t.Errorf("NextKey(nil) = %d, %v", next, err)
	}
	if err := m.NextKey(uint32(1), &next); err != nil || next != 2 {
		t.Errorf("NextKey(1) = %d, %v", next, err)
	}
	if err := m.NextKey(uint32(2), &next); !errors.Is(err, ErrKeyNotExist) {
		t.Errorf("NextKey(last): %v", err)
	}
	if err := m.NextKey(uint32(99), &next); err != nil || next != 0 {
		t.Errorf("NextKey(out of range) = %d, %v", next, err)
	}
	var keys []uint32
	var vals []uint64
	var k uint32
	it := m.Iterate()
	for it.Next(&k, &v) {
		keys = append(keys, k)
		vals = append(vals, v)
	}
	if it.Err() != nil || !slices.Equal(keys, []uint32{0, 1, 2}) || !slices.Equal(vals, []uint64{0, 10, 20}) {
		t.Errorf("Iterate: %v %v %v", keys, vals, it.Err())
	}
}

func TestArrayIterateLarge(t *testing.T) {
	m := mustNew(t, &Spec{Name: "a", Type: Array, KeySize: 4, ValueSize: 4, MaxEntries: 200})
	n := 0
	it := m.Iterate()
	var k, v uint32
	for it.Next(&k, &v) {
		if k != uint32(n) {
			t.Fatalf("key %d at position %d", k, n)
		}
		n++
	}
	if n != 200 || it.Err() != nil {
		t.Errorf("iterated %d keys, err %v", n, it.Err())
	}
}

func TestNewArrayOn(t *testing.T) {
	spec := &Spec{Name: "mm", Type: Array, KeySize: 4, ValueSize: 4, MaxEntries: 4, Flags: FlagMmapable}
	backing := make([]uint64, 512) // a "page"
	mem := unsafe.Slice((*byte)(unsafe.Pointer(&backing[0])), 4096)
	m, err := NewArrayOn(spec, mem)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Update(uint32(3), uint32(0xdeadbeef), UpdateAny); err != nil {
		t.Fatal(err)
	}
	if got := nativeEndian.Uint32(mem[3*8:]); got != 0xdeadbeef {
		t.Errorf("memory not shared: %#x", got)
	}
	nativeEndian.PutUint32(mem[8:], 42)
	k := uint32(1)
	if p := m.LookupElem(unsafe.Pointer(&k), 0); p == nil || *(*uint32)(p) != 42 {
		t.Error("LookupElem does not see external writes")
	}
	if got := len(m.(MemoryMap).Memory()); got != 32 {
		t.Errorf("Memory() is %d bytes, want 32", got)
	}
	if _, err := NewArrayOn(spec, mem[:31]); !errors.Is(err, ErrInvalid) {
		t.Errorf("short memory: %v", err)
	}
	if _, err := NewArrayOn(spec, mem[1:]); !errors.Is(err, ErrInvalid) {
		t.Errorf("misaligned memory: %v", err)
	}
	if _, err := NewArrayOn(&Spec{Name: "h", Type: Hash, KeySize: 4, ValueSize: 4, MaxEntries: 1}, mem); !errors.Is(err, ErrInvalid) {
		t.Errorf("hash spec: %v", err)
	}
}

func TestPerCPUArray(t *testing.T) {
	const ncpu = 3
	mm, err := newMap(&Spec{Name: "pa", Type: PerCPUArray, KeySize: 4, ValueSize: 4, MaxEntries: 5}, ncpu)
	if err != nil {
		t.Fatal(err)
	}
	m := mm.(*percpuArrayMap)
	k := uint32(2)
	for c := range ncpu {
		v := uint32(100 + c)
		if err := m.UpdateElem(unsafe.Pointer(&k), unsafe.Pointer(&v), 0, c); err != nil {
			t.Fatal(err)
		}
	}
	v := uint32(1)
	if err := m.UpdateElem(unsafe.Pointer(&k), unsafe.Pointer(&v), 0, ncpu); !errors.Is(err, ErrInvalid) {
		t.Errorf("UpdateElem on cpu %d: %v", ncpu, err)
	}
	if m.LookupElem(unsafe.Pointer(&k), ncpu) != nil || m.LookupElem(unsafe.Pointer(&k), -1) != nil {
		t.Error("LookupElem with a bad cpu is not nil")
	}
	p0, p1 := m.LookupElem(unsafe.Pointer(&k), 0), m.LookupElem(unsafe.Pointer(&k), 1)
	if *(*uint32)(p0) != 100 || *(*uint32)(p1) != 101 {
		t.Error("per-CPU slots mixed up")
	}
	if d := uintptr(p1) - uintptr(p0); d < cacheLine {
		t.Errorf("CPU slots %d bytes apart, want a cache line at least", d)
	}
	var vals []uint32
	if err := m.Lookup(uint32(2), &vals); err != nil || !slices.Equal(vals, []uint32{100, 101, 102}) {
		t.Fatalf("Lookup: %v, %v", vals, err)
	}
	fixed := make([]uint32, ncpu)
	if err := m.Update(uint32(4), []uint32{7, 8, 9}, UpdateAny); err != nil {
		t.Fatal(err)
	}
	if err := m.Lookup(uint32(4), fixed); err != nil || !slices.Equal(fixed, []uint32{7, 8, 9}) {
		t.Fatalf("Lookup into slice: %v, %v", fixed, err)
	}
	raw := make([]byte, ncpu*8)
	if err := m.Lookup(uint32(4), raw); err != nil || nativeEndian.Uint32(raw[8:]) != 8 {
		t.Fatalf("Lookup raw: %v, %v", raw, err)
	}
	if err := m.Update(uint32(4), []uint32{1, 2}, UpdateAny); !errors.Is(err, ErrInvalid) {
		t.Errorf("Update with 2 CPUs: %v", err)
	}
	if err := m.Update(uint32(4), uint32(1), UpdateAny); !errors.Is(err, ErrInvalid) {
		t.Errorf("Update with a scalar: %v", err)
	}
	if err := m.Lookup(uint32(4), make([]uint32, 2)); !errors.Is(err, ErrInvalid) {
		t.Errorf("Lookup into short slice: %v", err)
	}
	if err := m.Update(uint32(4), []uint32{1, 2, 3}, UpdateNoExist); !errors.Is(err, ErrKeyExist) {
		t.Errorf("Update NoExist: %v", err)
	}
	if err := m.Delete(uint32(4)); !errors.Is(err, ErrInvalid) {
		t.Errorf("Delete: %v", err)
	}
	n := 0
	var kk uint32
	it := m.Iterate()
	for it.Next(&kk, &vals) {
		n++
	}
	if n != 5 || it.Err() != nil {
		t.Errorf("Iterate: %d keys, %v", n, it.Err())
	}
}

func TestLookupAndDeleteNotSupported(t *testing.T) {
	for _, spec := range []Spec{
		{Type: Array, KeySize: 4, ValueSize: 4, MaxEntries: 1},
		{Type: PerCPUArray, KeySize: 4, ValueSize: 4, MaxEntries: 1},
		{Type: LPMTrie, KeySize: 8, ValueSize: 4, MaxEntries: 1, Flags: FlagNoPrealloc},
		{Type: ProgramArray, KeySize: 4, ValueSize: 4, MaxEntries: 1},
	} {
		m := mustNew(t, &spec)
		key := make([]byte, spec.KeySize)
		if err := m.LookupAndDelete(key, nil); !errors.Is(err, ErrNotSupported) || Errno(err) != -524 {
			t.Errorf("%s: LookupAndDelete: %v", spec.Type, err)
		}
	}
}
