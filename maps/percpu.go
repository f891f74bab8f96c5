package maps

import (
	"unsafe"
)

// Per-CPU storage. Each element has one value slot per possible CPU (the
// kernel's layout as seen through bpf(2): PossibleCPUs() slots of ValueSize
// rounded up to 8). In memory the slots are grouped by CPU — all of CPU 0's
// slots, then all of CPU 1's, each group starting on its own cache line — so
// programs running on different CPUs never share a cache line, which is the
// point of per-CPU maps.

const cacheLine = 128 // covers adjacent-line prefetch on x86-64

func roundCacheLine(n uintptr) uintptr { return (n + cacheLine - 1) &^ (cacheLine - 1) }

// percpuArrayMap is BPF_MAP_TYPE_PERCPU_ARRAY.
type percpuArrayMap struct {
	base
	keep      []uint64
	data      unsafe.Pointer
	stride    uintptr // value stride
	cpuStride uintptr // bytes between the slots of one element on CPU c and c+1
	n         uint32
}

func newPerCPUArray(spec *Spec, ncpu int) *percpuArrayMap {
	a := &percpuArrayMap{stride: round8(uintptr(spec.ValueSize)), n: spec.MaxEntries}
	a.init(spec, a, ncpu)
	a.cpuStride = roundCacheLine(a.stride * uintptr(a.n))
	a.keep = allocWords(a.cpuStride * uintptr(a.ncpu))
	a.data = unsafe.Pointer(&a.keep[0])
	return a
}

func (a *percpuArrayMap) slot(idx uint32, cpu int) unsafe.Pointer {
	return unsafe.Add(a.data, uintptr(cpu)*a.cpuStride+uintptr(idx)*a.stride)
}

func (a *percpuArrayMap) LookupElem(key unsafe.Pointer, cpu int) unsafe.Pointer {
	idx := *(*uint32)(key)
	if idx >= a.n || uint(cpu) >= uint(a.ncpu) {
		return nil
	}
	return a.slot(idx, cpu)
}

func (a *percpuArrayMap) UpdateElem(key, value unsafe.Pointer, flags uint64, cpu int) error {
	idx := *(*uint32)(key)
	if err := arrayUpdateCheck(a.errs, idx, a.n, flags); err != nil {
		return err
	}
	if uint(cpu) >= uint(a.ncpu) {
		return a.errs.invalid
	}
	memmove(a.slot(idx, cpu), value, uintptr(a.spec.ValueSize))
	return nil
}

func (a *percpuArrayMap) DeleteElem(unsafe.Pointer) error { return a.errs.invalid }

func (a *percpuArrayMap) goLookup(key, out []byte) error {
	idx := nativeEndian.Uint32(key)
	if idx >= a.n {
		return a.errs.notExist
	}
	for c := range a.ncpu {
		atomicCopyOut(out[uintptr(c)*a.stride:], a.slot(idx, c), a.stride)
	}
	return nil
}

func (a *percpuArrayMap) goLookupAndDelete(_, _ []byte) error { return a.errs.notSupp }

func (a *percpuArrayMap) goUpdate(key, value []byte, flags uint64) error {
	idx := nativeEndian.Uint32(key)
	if err := goUpdateCheck(a.errs, idx, a.n, flags); err != nil {
		return err
	}
	for c := range a.ncpu {
		atomicCopyIn(a.slot(idx, c), value[uintptr(c)*a.stride:][:a.stride])
	}
	return nil
}

func (a *percpuArrayMap) goDelete([]byte) error { return a.errs.invalid }

func (a *percpuArrayMap) goNextKey(key, next []byte) error {
	return arrayNextKey(key, next, a.n, a.errs)
}

func (a *percpuArrayMap) iterKeys(cursor uint64, dst []byte) ([]byte, uint64, bool, error) {
	return arrayIterKeys(cursor, dst, a.n)
}
