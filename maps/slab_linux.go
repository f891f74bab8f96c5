package maps

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugeSlabMin is the size from which a hash map's slots come from their own
// mapping with transparent huge pages: a lookup in a large map misses the
// TLB on almost every call with 4 KiB pages, and Linux gives the Go heap
// huge pages only when the system's THP mode is "always".
const (
	hugeSlabMin = 4 << 20
	hugePage    = 2 << 20
)

// allocHugeSlab returns n zeroed bytes, 2 MiB aligned, from an anonymous
// mapping advised to use huge pages, which is unmapped once owner is
// garbage. It returns nil if the mapping fails; the caller then uses the Go
// heap.
func allocHugeSlab(owner *hashMap, n uintptr) unsafe.Pointer {
	mem, err := unix.Mmap(-1, 0, int(n+hugePage), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil
	}
	off := -uintptr(unsafe.Pointer(unsafe.SliceData(mem))) & (hugePage - 1)
	// Without THP the advice fails and the mapping is still good memory.
	_ = unix.Madvise(mem[off:off+n], unix.MADV_HUGEPAGE)
	runtime.AddCleanup(owner, func(m []byte) { _ = unix.Munmap(m) }, mem)
	return unsafe.Pointer(&mem[off])
}
