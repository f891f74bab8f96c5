package maps

import (
	"sync/atomic"
	"unsafe"
)

// Memory helpers. All map storage is allocated as []uint64 so it is 8-byte
// aligned and holds no Go pointers (the garbage collector does not scan it).
// Storage is never returned to the allocator while the map is reachable.

var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

func round8(n uintptr) uintptr { return (n + 7) &^ 7 }

// allocWords returns zeroed, 8-byte aligned memory of at least n bytes.
func allocWords(n uintptr) []uint64 {
	return make([]uint64, (n+7)/8)
}

// wordsBytes views words as bytes.
func wordsBytes(w []uint64) []byte {
	if len(w) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), len(w)*8)
}

// bytesAt views n bytes at p as a slice.
func bytesAt(p unsafe.Pointer, n uintptr) []byte {
	return unsafe.Slice((*byte)(p), n)
}

// memmove copies n bytes from src to dst: the program-side value copy, a
// plain memcpy like the kernel's copy_map_value.
func memmove(dst, src unsafe.Pointer, n uintptr) {
	if n == 8 {
		*(*uint64)(dst) = *(*uint64)(src)
		return
	}
	copy(bytesAt(dst, n), bytesAt(src, n))
}

func memclr(dst unsafe.Pointer, n uintptr) {
	clear(bytesAt(dst, n))
}

// loadPartial loads n (1..8) bytes at p, which need not be aligned, as a word
// whose missing high bytes are zero (in memory order, so the result equals an
// 8-byte load of the same bytes followed by zero padding).
func loadPartial(p unsafe.Pointer, n uintptr) uint64 {
	if n >= 8 {
		return *(*uint64)(p)
	}
	if littleEndian {
		switch n {
		case 4:
			return uint64(*(*uint32)(p))
		case 2:
			return uint64(*(*uint16)(p))
		case 1:
			return uint64(*(*uint8)(p))
		}
	}
	var buf [8]byte
	copy(buf[:], bytesAt(p, n))
	return *(*uint64)(unsafe.Pointer(&buf))
}

// storePartialAtomic stores the n (1..8) bytes at src as one atomic word at
// dst (8-byte aligned storage owned by the map), zeroing the padding.
func storePartialAtomic(dst, src unsafe.Pointer, n uintptr) {
	atomic.StoreUint64((*uint64)(dst), loadPartial(src, n))
}

// atomicCopyOut copies n bytes from map storage at src (8-byte aligned,
// padded to a multiple of 8) to dst, one atomic 8-byte load at a time, so a
// word that programs update with atomic instructions is never torn. This is
// the Go-side read path.
func atomicCopyOut(dst []byte, src unsafe.Pointer, n uintptr) {
	var off uintptr
	for ; off+8 <= n; off += 8 {
		*(*uint64)(unsafe.Pointer(&dst[off])) = atomic.LoadUint64((*uint64)(unsafe.Add(src, off)))
	}
	if off < n {
		w := atomic.LoadUint64((*uint64)(unsafe.Add(src, off)))
		b := (*[8]byte)(unsafe.Pointer(&w))
		copy(dst[off:n], b[:n-off])
	}
}

// atomicCopyIn copies len(src) bytes into map storage at dst (8-byte
// aligned, padded) with atomic 8-byte stores: the Go-side write path.
func atomicCopyIn(dst unsafe.Pointer, src []byte) {
	n := uintptr(len(src))
	var off uintptr
	for ; off+8 <= n; off += 8 {
		atomic.StoreUint64((*uint64)(unsafe.Add(dst, off)), *(*uint64)(unsafe.Pointer(&src[off])))
	}
	if off < n {
		storePartialAtomic(unsafe.Add(dst, off), unsafe.Pointer(&src[off]), n-off)
	}
}

func loadWordAtomic(p unsafe.Pointer) uint64 { return atomic.LoadUint64((*uint64)(p)) }
