package engine

import (
	"unsafe"
)

// Direct access to the hash maps of package maps (hash, per-CPU hash, LRU
// hash, LRU per-CPU hash), for engines that answer bpf_map_lookup_elem
// and bpf_map_update_elem without the helper and the maps.Map interface.
// h is a map's handle, from HashOf: its *hashMap.

// HashLookup is the map's LookupElem: the address of the value under key
// (KeySize readable bytes), or nil. It is that method itself, so that a
// lookup costs one direct call, as the method did.
//
//go:linkname HashLookup github.com/uebpf/uebpf/maps.(*hashMap).LookupElem
func HashLookup(h, key unsafe.Pointer, cpu int) unsafe.Pointer

// HashUpdate is the map's UpdateElem: it stores the ValueSize bytes at
// value under key, as flags allow. An update that fails changes nothing.
//
//go:linkname HashUpdate github.com/uebpf/uebpf/maps.(*hashMap).UpdateElem
func HashUpdate(h, key, value unsafe.Pointer, flags uint64, cpu int) error

// Set by package maps when it initialises; called when programs load
// and compile.
var (
	// HashOf returns the handle of m (a maps.Map), or nil if m is not a
	// hash map of package maps.
	HashOf func(m any) (h unsafe.Pointer)
	// HashLayoutOf returns the HashLayout of the map whose handle is h,
	// if it has one: a hash or LRU hash map (not per-CPU) with keys of at
	// most 8 bytes whose slots were allocated in one block.
	HashLayoutOf func(h unsafe.Pointer) (HashLayout, bool)
	// HashSmall hashes a key of at most 8 bytes, zero-extended to k, from
	// the start a HashLayout gives: mum(x, x^HashP2) with x =
	// mum(start^k^HashP0, k^HashP1), where mum(a, b) is the xor of the two
	// halves of the 128-bit product a*b.
	HashSmall func(start, k uint64) uint64
)

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
// bound, flags other than BPF_ANY and BPF_EXIST) is left to UpdateElem.
// maps/direct_test.go follows the recipe in Go against the map's own
// lookups and locks.
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
// HashSmall (see HashLayout); package maps asserts them.
const (
	CtrlTagMask       = 1<<24 - 1
	CtrlStateMask     = 3 << 24
	CtrlLive          = 2 << 24
	CtrlHomeDistShift = 34
	CtrlMaxDist       = 0xff

	HashP0 = 0xa0761d6478bd642f
	HashP1 = 0xe7037ed1a0b428db
	HashP2 = 0x8ebc6af09c88c6e3
)
