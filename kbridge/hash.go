package kbridge

import (
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/cilium/ebpf"

	"github.com/uebpf/uebpf/maps"
)

// SyscallMap is a kernel map reached through the bpf() syscall: hash, LRU
// hash, LPM trie, arrays without BPF_F_MMAPABLE, and per-CPU maps (Go side
// only for now). Every access is one syscall (about a microsecond).
//
// Values are copies. LookupElem returns a pointer to a fresh copy of the
// kernel's value, made for that call; writing through it does not change the
// kernel map. So that such a write is never silently lost, the copy is
// handed to programs read-only (see Helpers and LookupCopies): a program
// that stores through it fails with a run error naming the pc, and must
// write with bpf_map_update_elem instead.
type SyscallMap struct {
	km     *ebpf.Map
	spec   maps.Spec
	errs   rawErrors
	words  int // value buffer size in 8-byte words
	closed atomic.Bool
}

func newSyscallMap(m *ebpf.Map, name string) (*SyscallMap, error) {
	s := &SyscallMap{km: m, spec: *specOf(m, name), errs: newRawErrors(name)}
	s.words = (int(s.spec.ValueSize) + 7) / 8
	return s, nil
}

// Kernel returns the underlying cilium/ebpf map.
func (s *SyscallMap) Kernel() *ebpf.Map { return s.km }

func (s *SyscallMap) Name() string        { return s.spec.Name }
func (s *SyscallMap) Type() maps.Type     { return s.spec.Type }
func (s *SyscallMap) KeySize() uint32     { return s.spec.KeySize }
func (s *SyscallMap) ValueSize() uint32   { return s.spec.ValueSize }
func (s *SyscallMap) MaxEntries() uint32  { return s.spec.MaxEntries }
func (s *SyscallMap) Flags() uint32       { return s.spec.Flags }
func (s *SyscallMap) ReadOnlyProg() bool  { return s.spec.Flags&maps.FlagRdOnlyProg != 0 }
func (s *SyscallMap) WriteOnlyProg() bool { return s.spec.Flags&maps.FlagWrOnlyProg != 0 }
func (s *SyscallMap) Spec() *maps.Spec    { c := s.spec; return &c }

func (s *SyscallMap) String() string {
	return fmt.Sprintf("kernel %s(%s)#key=%d,value=%d,max=%d", s.spec.Type, s.spec.Name,
		s.spec.KeySize, s.spec.ValueSize, s.spec.MaxEntries)
}

// LookupCopies reports that LookupElem returns a copy of the value, not the
// value itself: whoever hands the pointer to a program must make it
// read-only (Helpers does).
func (s *SyscallMap) LookupCopies() bool { return true }

// LookupElem copies the value under key out of the kernel into memory
// allocated for this call and returns a pointer to it (nil if there is no
// such key or on any error). The copy stays valid for as long as something
// references it (the run's region list does) and never changes.
//
// Per-CPU kernel maps are not supported by the raw API yet (nil).
func (s *SyscallMap) LookupElem(key unsafe.Pointer, _ int) unsafe.Pointer {
	if s.spec.Type.HasPerCPUValue() || s.closed.Load() {
		return nil
	}
	buf := make([]uint64, s.words)
	v := unsafe.Pointer(unsafe.SliceData(buf))
	if err := s.km.Lookup(key, v); err != nil {
		return nil
	}
	return v
}

// UpdateElem stores ValueSize bytes from value under key with one
// BPF_MAP_UPDATE_ELEM.
func (s *SyscallMap) UpdateElem(key, value unsafe.Pointer, flags uint64, _ int) error {
	if s.spec.Type.HasPerCPUValue() {
		return s.errs[maps.ErrNotSupported]
	}
	if s.closed.Load() {
		return s.errs[maps.ErrClosed]
	}
	return s.errs.of(s.km.Update(key, value, ebpf.MapUpdateFlags(flags)))
}

// DeleteElem removes key with one BPF_MAP_DELETE_ELEM.
func (s *SyscallMap) DeleteElem(key unsafe.Pointer) error {
	if s.closed.Load() {
		return s.errs[maps.ErrClosed]
	}
	return s.errs.of(s.km.Delete(key))
}

func (s *SyscallMap) check(op string) error {
	if s.closed.Load() {
		return fmt.Errorf("map %q: %s: %w", s.spec.Name, op, maps.ErrClosed)
	}
	return nil
}

// Lookup copies the value under key into valueOut (cilium/ebpf encoding).
func (s *SyscallMap) Lookup(key, valueOut any) error {
	if err := s.check("lookup"); err != nil {
		return err
	}
	return wrap(s.spec.Name, "lookup", s.km.Lookup(key, valueOut))
}

// LookupAndDelete copies the value under key into valueOut and deletes it.
func (s *SyscallMap) LookupAndDelete(key, valueOut any) error {
	if err := s.check("lookup and delete"); err != nil {
		return err
	}
	return wrap(s.spec.Name, "lookup and delete", s.km.LookupAndDelete(key, valueOut))
}

// Update stores value under key.
func (s *SyscallMap) Update(key, value any, flags maps.UpdateFlags) error {
	if err := s.check("update"); err != nil {
		return err
	}
	return wrap(s.spec.Name, "update", s.km.Update(key, value, ebpf.MapUpdateFlags(flags)))
}

// Delete removes key.
func (s *SyscallMap) Delete(key any) error {
	if err := s.check("delete"); err != nil {
		return err
	}
	return wrap(s.spec.Name, "delete", s.km.Delete(key))
}

// NextKey stores the key after key (nil: the first key) into nextKeyOut.
func (s *SyscallMap) NextKey(key, nextKeyOut any) error {
	if err := s.check("next key"); err != nil {
		return err
	}
	return wrap(s.spec.Name, "next key", s.km.NextKey(key, nextKeyOut))
}

// Iterate returns an iterator over a snapshot of the map: the keys and
// values are read from the kernel when Iterate is called (one syscall per
// element) into a userspace map of the same shape. Use Kernel().Iterate()
// to iterate the kernel map live.
func (s *SyscallMap) Iterate() *maps.Iterator {
	snap, err := s.snapshot()
	if err != nil {
		// maps.Iterator can only be built by a map of package maps: report
		// the error through a closed map's iterator.
		return failedIterator(s.spec.Name)
	}
	return snap.Iterate()
}

// snapshot copies the kernel map into a userspace map.
func (s *SyscallMap) snapshot() (maps.Map, error) {
	spec := s.spec
	spec.Flags = 0
	switch spec.Type {
	case maps.Hash, maps.LRUHash:
		spec.Type, spec.Flags = maps.Hash, maps.FlagNoPrealloc
	case maps.LPMTrie:
		spec.Flags = maps.FlagNoPrealloc
	case maps.Array:
	default:
		return nil, fmt.Errorf("map %q: iterate %s: %w", s.spec.Name, s.spec.Type, maps.ErrNotSupported)
	}
	snap, err := maps.New(&spec)
	if err != nil {
		return nil, err
	}
	key := make([]byte, s.spec.KeySize)
	val := make([]byte, s.spec.ValueSize)
	it := s.km.Iterate()
	for it.Next(&key, &val) {
		if err := snap.Update(key, val, maps.UpdateAny); err != nil {
			return nil, err
		}
	}
	if err := it.Err(); err != nil {
		return nil, wrap(s.spec.Name, "iterate", err)
	}
	return snap, nil
}

func failedIterator(name string) *maps.Iterator {
	m, err := maps.New(&maps.Spec{Name: name, Type: maps.Array, KeySize: 4, ValueSize: 8, MaxEntries: 1})
	if err != nil {
		panic(err)
	}
	m.Close()
	return m.Iterate()
}

// Freeze makes the kernel map read-only for the syscall side
// (BPF_MAP_FREEZE).
func (s *SyscallMap) Freeze() error {
	if err := s.check("freeze"); err != nil {
		return err
	}
	return wrap(s.spec.Name, "freeze", s.km.Freeze())
}

// Close closes the map's file descriptor. Copies programs still hold stay
// valid.
func (s *SyscallMap) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	if err := s.km.Close(); err != nil && !errors.Is(err, maps.ErrClosed) {
		return fmt.Errorf("map %q: close: %w", s.spec.Name, err)
	}
	return nil
}
