package maps

import "unsafe"

// DirectHash is the program-side access to one of this package's hash maps
// (hash, per-CPU hash, LRU hash, LRU per-CPU hash), for engines that answer
// bpf_map_lookup_elem and bpf_map_update_elem without going through a
// helper and the Map interface. Its methods behave exactly like the map's
// LookupElem and UpdateElem.
type DirectHash struct{ h *hashMap }

// DirectHashOf returns the direct access to m, if m is a hash map of this
// package.
func DirectHashOf(m Map) (DirectHash, bool) {
	h, ok := m.(*hashMap)
	return DirectHash{h}, ok
}

// Lookup is LookupElem: the address of the value under key (KeySize
// readable bytes), or nil.
func (d DirectHash) Lookup(key unsafe.Pointer, cpu int) unsafe.Pointer {
	return d.h.LookupElem(key, cpu)
}

// Update is UpdateElem: it stores the ValueSize bytes at value under key
// (KeySize bytes), as flags allow.
func (d DirectHash) Update(key, value unsafe.Pointer, flags uint64, cpu int) error {
	return d.h.UpdateElem(key, value, flags, cpu)
}

// HashLayout describes a hash map's memory to engines that update the
// values of existing keys in generated code. Such an update does what
// UpdateElem does for that case, under the same lock:
//
//  1. k is the key's KeySize bytes, zero-extended to a word.
//  2. hv = HashSmall(HashStart, k); the key's home slot is
//     uint32((hv>>32) * NumSlots >> 32) and its tag hv & CtrlTagMask.
//  3. The home slot's stripe lock, a uint32 at
//     Locks + (home & LockMask) * LockStride, is taken by exchanging 1 into
//     it (0 comes back: taken) and released by storing 0.
//  4. Slot i is at Slots + i*SlotSize, its control word (a uint64) first.
//     From the home slot on, wrapping after NumSlots, at most limit+1 slots
//     are looked at, where limit is (home's control word >> CtrlHomeDistShift)
//     & CtrlMaxDist (CtrlMaxDist itself: no bound is known here). A slot
//     holds k when its control word & (CtrlTagMask|CtrlStateMask) is
//     tag|CtrlLive and the word at KeyOff is k; a control word whose state
//     bits are 0 (empty) ends the search.
//  5. The value's ValueSize bytes are at slot+ValueOff.
//  6. In an LRU map (RefBit not 0) the update is a use: the uint32 at
//     slot+RefOff gets RefBit, by an atomic or when it does not have it.
//
// Whatever falls outside this (a busy lock, a key that is not there, no
// bound, flags other than UpdateAny and UpdateExist) is left to
// UpdateElem.
type HashLayout struct {
	Slots      uintptr
	NumSlots   uint32
	SlotSize   uint32
	KeyOff     uint32
	ValueOff   uint32
	Locks      uintptr
	LockStride uint32
	LockMask   uint32
	HashStart  uint64
	RefOff     uint32
	RefBit     uint32
}

// Fields of a hash map slot's control word, and the multipliers of
// HashSmall (see HashLayout).
const (
	CtrlTagMask       = tagMask
	CtrlStateMask     = stateMask
	CtrlLive          = stLive << stateShift
	CtrlHomeDistShift = homeDistShift
	CtrlMaxDist       = maxDist

	HashP0, HashP1, HashP2 = hp0, hp1, hp2
)

// HashSmall hashes a key of at most 8 bytes, zero-extended to k, from the
// start a HashLayout gives: mum(h, h^HashP2) with h = mum(start^k^HashP0,
// k^HashP1), where mum(a, b) is the xor of the two halves of the 128-bit
// product a*b.
func HashSmall(start, k uint64) uint64 { return hashSmallFrom(k, start) }

// Layout returns the map's HashLayout, if it has one: a hash or LRU hash
// map (not per-CPU) with keys of at most 8 bytes whose slots were
// allocated in one block when it was made.
func (d DirectHash) Layout() (HashLayout, bool) {
	h := d.h
	if h.percpu || h.keySize > 8 || h.flat == nil {
		return HashLayout{}, false
	}
	l := HashLayout{
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
