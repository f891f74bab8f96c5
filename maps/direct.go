package maps

import (
	"unsafe"

	"github.com/uebpf/uebpf/internal/engine"
)

// Direct access to the hash maps for engines (package engine): they answer
// bpf_map_lookup_elem and bpf_map_update_elem without a helper and the
// Map interface, and update the values of existing keys in generated code
// by the recipe of engine.HashLayout. engine.HashLookup and HashUpdate
// are (*hashMap).LookupElem and UpdateElem themselves (//go:linkname in
// package engine), so that they cost what a call of the method costs.

func init() {
	engine.HashOf = func(m any) unsafe.Pointer {
		if h, ok := m.(*hashMap); ok {
			return unsafe.Pointer(h)
		}
		return nil
	}
	engine.HashLayoutOf = func(h unsafe.Pointer) (engine.HashLayout, bool) { return (*hashMap)(h).layout() }
	engine.HashSmall = func(start, k uint64) uint64 { return hashSmallFrom(k, start) }
}

// layout returns the map's engine.HashLayout, if it has one.
func (h *hashMap) layout() (engine.HashLayout, bool) {
	if h.percpu || h.keySize > 8 || h.flat == nil {
		return engine.HashLayout{}, false
	}
	l := engine.HashLayout{
		Slots:      uintptr(h.flat),
		NumSlots:   h.nslots,
		SlotSize:   uint32(h.elemSize),
		KeyOff:     uint32(h.keyOff),
		ValueOff:   uint32(h.valOff),
		Locks:      uintptr(unsafe.Pointer(&h.locks[0])),
		LockStride: uint32(unsafe.Sizeof(stripeLock{})),
		LockMask:   h.lockMask,
		HashStart:  h.smallStart,
	}
	if h.lru {
		l.RefOff, l.RefBit = lruStateOff, lruRef
	}
	return l, true
}

// The recipe's numbers are this package's.
var (
	_ [0]struct{} = [tagMask - engine.CtrlTagMask]struct{}{}
	_ [0]struct{} = [engine.CtrlTagMask - tagMask]struct{}{}
	_ [0]struct{} = [stateMask - engine.CtrlStateMask]struct{}{}
	_ [0]struct{} = [engine.CtrlStateMask - stateMask]struct{}{}
	_ [0]struct{} = [stLive<<stateShift - engine.CtrlLive]struct{}{}
	_ [0]struct{} = [engine.CtrlLive - stLive<<stateShift]struct{}{}
	_ [0]struct{} = [homeDistShift - engine.CtrlHomeDistShift]struct{}{}
	_ [0]struct{} = [engine.CtrlHomeDistShift - homeDistShift]struct{}{}
	_ [0]struct{} = [maxDist - engine.CtrlMaxDist]struct{}{}
	_ [0]struct{} = [engine.CtrlMaxDist - maxDist]struct{}{}
	_ [0]struct{} = [hp0 - engine.HashP0]struct{}{}
	_ [0]struct{} = [engine.HashP0 - hp0]struct{}{}
	_ [0]struct{} = [hp1 - engine.HashP1]struct{}{}
	_ [0]struct{} = [engine.HashP1 - hp1]struct{}{}
	_ [0]struct{} = [hp2 - engine.HashP2]struct{}{}
	_ [0]struct{} = [engine.HashP2 - hp2]struct{}{}
)
