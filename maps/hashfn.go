package maps

import (
	"crypto/rand"
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// Key hashing for hash maps: a multiply-fold ("mum") hash over the key's
// 8-byte words, seeded per map like the kernel's jhash seed (BPF_F_ZERO_SEED
// gives seed 0). A key is hashed from the caller's bytes (any alignment) or
// from the zero-padded words stored in an element; both give the same value.

const (
	hp0 = 0xa0761d6478bd642f
	hp1 = 0xe7037ed1a0b428db
	hp2 = 0x8ebc6af09c88c6e3
)

func mum(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

func randomSeed() uint64 {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return hp2
	}
	return binary.LittleEndian.Uint64(b[:])
}

// hashWord mixes one 8-byte word into the state.
func hashWord(h, w uint64) uint64 { return mum(h^w^hp0, w^hp1) }

// hashKey hashes size bytes at key (caller memory, any alignment).
func hashKey(key unsafe.Pointer, size uintptr, seed uint64) uint64 {
	h := seed ^ uint64(size)*hp2
	var off uintptr
	for ; off+8 <= size; off += 8 {
		h = hashWord(h, *(*uint64)(unsafe.Add(key, off)))
	}
	if off < size {
		h = hashWord(h, loadPartial(unsafe.Add(key, off), size-off))
	}
	return mum(h, hp2^h)
}

// hashSmall is hashKey for a key of size 1 to 8 bytes read as one
// zero-padded word k (loadPartial), which it must equal.
func hashSmall(k uint64, size uintptr, seed uint64) uint64 {
	return hashSmallFrom(k, smallStart(size, seed))
}

// smallStart is the state hashSmall starts from, which a map computes once.
func smallStart(size uintptr, seed uint64) uint64 { return seed ^ uint64(size)*hp2 }

// hashSmallFrom is hashSmall from the state smallStart returned.
func hashSmallFrom(k, start uint64) uint64 {
	h := hashWord(start, k)
	return mum(h, hp2^h)
}

// hashWords hashes a key stored as zero-padded words, reading them with
// atomic loads (see loadWordAtomic).
func hashWords(p unsafe.Pointer, size uintptr, seed uint64) uint64 {
	h := seed ^ uint64(size)*hp2
	for off := uintptr(0); off < size; off += 8 {
		h = hashWord(h, loadWordAtomic(unsafe.Add(p, off)))
	}
	return mum(h, hp2^h)
}
