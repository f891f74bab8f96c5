package maps

import (
	"fmt"
	"unsafe"
)

// arrayMap is BPF_MAP_TYPE_ARRAY: MaxEntries values of ValueSize bytes at a
// stride of ValueSize rounded up to 8, in one block of memory exactly like the
// kernel's (and like the mmap of a BPF_F_MMAPABLE kernel array).
type arrayMap struct {
	base
	mem    []byte
	keep   []uint64 // owns mem when the map allocated it
	data   unsafe.Pointer
	stride uintptr
	n      uint32
}

var _ MemoryMap = (*arrayMap)(nil)

func newArray(spec *Spec, mem []byte) (*arrayMap, error) {
	a := &arrayMap{stride: round8(uintptr(spec.ValueSize)), n: spec.MaxEntries}
	a.init(spec, a, 1)
	size := a.stride * uintptr(a.n)
	if mem == nil {
		a.keep = allocWords(size)
		mem = wordsBytes(a.keep)
	}
	a.mem = mem[:size:size]
	a.data = unsafe.Pointer(&a.mem[0])
	return a, nil
}

// NewArrayOn creates an array map (BPF_MAP_TYPE_ARRAY) on caller-supplied
// memory without copying it, e.g. the mmap of a kernel BPF_F_MMAPABLE array
// or a global data section. mem must be 8-byte aligned and at least
// MaxEntries * round_up(ValueSize, 8) bytes long (an mmap is page-rounded);
// the caller keeps it mapped for as long as the map or any pointer into it is
// in use.
func NewArrayOn(spec *Spec, mem []byte) (Map, error) {
	if err := validate(spec); err != nil {
		return nil, err
	}
	if spec.Type != Array {
		return nil, fmt.Errorf("map %q: NewArrayOn needs an array map, not %s: %w", spec.Name, spec.Type, ErrInvalid)
	}
	need := uint64(round8(uintptr(spec.ValueSize))) * uint64(spec.MaxEntries)
	if uint64(len(mem)) < need {
		return nil, fmt.Errorf("map %q: memory is %d bytes, %d entries of %d bytes need %d: %w",
			spec.Name, len(mem), spec.MaxEntries, round8(uintptr(spec.ValueSize)), need, ErrInvalid)
	}
	if uintptr(unsafe.Pointer(&mem[0]))%8 != 0 {
		return nil, fmt.Errorf("map %q: memory at %p is not 8-byte aligned: %w", spec.Name, &mem[0], ErrInvalid)
	}
	return newArray(spec, mem)
}

// Memory returns the map's whole backing memory: element i is at
// i*round_up(ValueSize, 8).
func (a *arrayMap) Memory() []byte { return a.mem }

func (a *arrayMap) LookupElem(key unsafe.Pointer, _ int) unsafe.Pointer {
	idx := *(*uint32)(key)
	if idx >= a.n {
		return nil
	}
	return unsafe.Add(a.data, uintptr(idx)*a.stride)
}

func (a *arrayMap) UpdateElem(key, value unsafe.Pointer, flags uint64, _ int) error {
	idx := *(*uint32)(key)
	if err := arrayUpdateCheck(a.errs, idx, a.n, flags); err != nil {
		return err
	}
	memmove(unsafe.Add(a.data, uintptr(idx)*a.stride), value, uintptr(a.spec.ValueSize))
	return nil
}

// arrayUpdateCheck applies array_map_update_elem's rules (arrays and
// per-CPU arrays) in Linux's order, which decides the errno when several
// fail: unknown flags, the index, BPF_NOEXIST (every element exists),
// BPF_F_LOCK (no value has a bpf_spin_lock).
func arrayUpdateCheck(errs *errSet, idx, n uint32, flags uint64) error {
	switch {
	case flags&^uint64(UpdateLock) > uint64(UpdateExist):
		return errs.invalid
	case idx >= n:
		return errs.tooBig
	case flags&uint64(UpdateNoExist) != 0:
		return errs.exist
	case flags&uint64(UpdateLock) != 0:
		return errs.invalid
	}
	return nil
}

// goUpdateCheck is arrayUpdateCheck behind the bpf() syscall, which
// refuses BPF_F_LOCK before the map sees the update.
func goUpdateCheck(errs *errSet, idx, n uint32, flags uint64) error {
	if flags&uint64(UpdateLock) != 0 {
		return errs.invalid
	}
	return arrayUpdateCheck(errs, idx, n, flags)
}

// DeleteElem fails: array elements cannot be deleted (EINVAL, like Linux).
func (a *arrayMap) DeleteElem(unsafe.Pointer) error { return a.errs.invalid }

func (a *arrayMap) index(key []byte) uint32 { return nativeEndian.Uint32(key) }

func (a *arrayMap) goLookup(key, out []byte) error {
	idx := a.index(key)
	if idx >= a.n {
		return a.errs.notExist
	}
	atomicCopyOut(out, unsafe.Add(a.data, uintptr(idx)*a.stride), a.stride)
	return nil
}

// goLookupAndDelete: not supported for arrays (ENOTSUPP, like Linux).
func (a *arrayMap) goLookupAndDelete(_, _ []byte) error { return a.errs.notSupp }

func (a *arrayMap) goUpdate(key, value []byte, flags uint64) error {
	idx := a.index(key)
	if err := goUpdateCheck(a.errs, idx, a.n, flags); err != nil {
		return err
	}
	atomicCopyIn(unsafe.Add(a.data, uintptr(idx)*a.stride), value[:a.spec.ValueSize])
	return nil
}

func (a *arrayMap) goDelete([]byte) error { return a.errs.invalid }

func (a *arrayMap) goNextKey(key, next []byte) error {
	return arrayNextKey(key, next, a.n, a.errs)
}

func (a *arrayMap) iterKeys(cursor uint64, dst []byte) ([]byte, uint64, bool, error) {
	return arrayIterKeys(cursor, dst, a.n)
}

// arrayNextKey is array_map_get_next_key: a missing or out-of-range key
// restarts at 0, the last index ends iteration.
func arrayNextKey(key, next []byte, n uint32, errs *errSet) error {
	idx := uint32(0)
	if key != nil {
		if k := nativeEndian.Uint32(key); k < n {
			if k == n-1 {
				return errs.notExist
			}
			idx = k + 1
		}
	}
	nativeEndian.PutUint32(next, idx)
	return nil
}

const iterBatch = 64

func arrayIterKeys(cursor uint64, dst []byte, n uint32) ([]byte, uint64, bool, error) {
	end := min(cursor+iterBatch, uint64(n))
	for i := cursor; i < end; i++ {
		dst = nativeEndian.AppendUint32(dst, uint32(i))
	}
	return dst, end, end >= uint64(n), nil
}
