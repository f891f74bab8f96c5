package helpers

import (
	"sync/atomic"
	"unsafe"

	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/vm"
)

// A mapView caches what the map helpers ask of a map on every call: its
// sizes and flags, and for arrays the memory block, so that a lookup makes
// one interface call (LookupElem) instead of five, and an array lookup
// none: it indexes the block directly, as the JIT's inline lookups do.
// Everything cached is fixed when the map is created.
type mapView struct {
	obj       unsafe.Pointer // the map object: the key of the cache
	m         maps.Map
	keySize   uint64
	valueSize uint64
	writable  bool // by programs: not BPF_F_RDONLY_PROG
	// valuesWritable: programs may write the values lookups return (not
	// for read-only maps, nor for maps that hand out copies).
	valuesWritable bool

	// Arrays (maps.Array with its documented layout): element i is at
	// mem[i*stride:]; the whole block is one region.
	mem    []byte
	stride uint64
	n      uint64
}

// views is a direct-mapped cache of map views, shared by all helper sets.
// A view keeps its map reachable until another map takes its slot, so
// the cache pins at most len(views) maps.
var views [256]atomic.Pointer[mapView]

// view resolves a map pointer argument to its view; nil if ptr is not a
// map of the running program or not a map of package maps.
func view(env *vm.Env, ptr uint64) *mapView {
	v, ok := env.Map(ptr)
	if !ok {
		return nil
	}
	obj := dataPointer(v)
	slot := &views[(uint64(uintptr(obj))*0x9E3779B97F4A7C15)>>56]
	if w := slot.Load(); w != nil && w.obj == obj {
		return w
	}
	m, ok := v.(maps.Map)
	if !ok {
		return nil
	}
	w := newView(obj, m)
	slot.Store(w)
	return w
}

func newView(obj unsafe.Pointer, m maps.Map) *mapView {
	w := &mapView{
		obj:       obj,
		m:         m,
		keySize:   uint64(m.KeySize()),
		valueSize: uint64(m.ValueSize()),
		writable:  !m.ReadOnlyProg(),
	}
	w.valuesWritable = w.writable && !lookupCopies(m)
	if a, ok := m.(maps.MemoryMap); ok && m.Type() == maps.Array && m.KeySize() == 4 {
		w.mem = a.Memory()
		w.stride = (w.valueSize + 7) &^ 7
		w.n = uint64(m.MaxEntries())
		if w.stride*w.n > uint64(len(w.mem)) {
			w.mem = nil // not the documented layout: use LookupElem
		}
	}
	return w
}

// dataPointer is the data word of an interface value: for the pointer
// types that implement maps, the map object itself.
func dataPointer(v any) unsafe.Pointer {
	return (*[2]unsafe.Pointer)(unsafe.Pointer(&v))[1]
}

// lookup returns the address of the value under the key at keyAddr and
// lets the run access it; 0 when there is none or the key is not
// readable.
func (w *mapView) lookup(env *vm.Env, keyAddr uint64, cpu int) uint64 {
	key, ok := env.Pointer(keyAddr, w.keySize, false)
	if !ok {
		return 0
	}
	if w.mem != nil {
		i := uint64(*(*uint32)(key))
		if i >= w.n {
			return 0
		}
		// The whole block is one region: a program walking an array adds
		// one region, not one per element, and the block holds nothing
		// but values, so reaching a neighbouring element cannot hurt the
		// map.
		env.AddBytes(w.mem, w.valuesWritable)
		return uint64(uintptr(unsafe.Pointer(&w.mem[i*w.stride])))
	}
	v := w.m.LookupElem(key, cpu)
	if v == nil {
		return 0
	}
	// Other maps expose exactly the value: elements sit next to the
	// map's own bookkeeping.
	env.AddRegion(v, uintptr(w.valueSize), w.valuesWritable)
	return uint64(uintptr(v))
}

// lookupCopies reports whether m hands out copies of its values (kernel
// hash maps reached through the bpf() syscall). A program's write into a
// copy would be lost, so such values are read-only to programs: the write
// fails loudly and the program must use bpf_map_update_elem.
func lookupCopies(m maps.Map) bool {
	c, ok := m.(interface{ LookupCopies() bool })
	return ok && c.LookupCopies()
}
