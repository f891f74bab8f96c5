package maps

import (
	"fmt"
	"sync"
	"unsafe"
)

// ringMmapMin is the data area size (twice the ring size) from which a ring
// buffer's data comes from an anonymous mapping rather than the Go heap:
// the heap would zero, and the garbage collector account for, all of it at
// once, where a mapping costs nothing until a page is written. A ring of
// 2 GiB would otherwise take 4 GiB the moment it is created.
const ringMmapMin = 1 << 20

// ringMem is a ring buffer's data area.
type ringMem struct {
	addr   unsafe.Pointer
	keep   []uint64 // Go heap memory (small rings, or no mmap)
	isMap  bool     // addr is the start of mapped
	mu     sync.Mutex
	mapped []byte // the mapping, nil once unmapped
}

// newRingMem returns n zeroed, 8-byte aligned bytes. Large areas are
// mapped (mmapRing); where mapping is not available, areas larger than
// ringHeapMax are refused with ErrTooBig rather than taken from the heap.
func newRingMem(n uintptr) (*ringMem, error) {
	if n < ringMmapMin {
		keep := allocWords(n)
		return &ringMem{addr: unsafe.Pointer(&keep[0]), keep: keep}, nil
	}
	b, err := mmapRing(n)
	switch {
	case err == errNoMmap:
		if n > ringHeapMax {
			return nil, fmt.Errorf("data area of %d bytes exceeds %d bytes without mmap on this platform: %w", n, uintptr(ringHeapMax), ErrTooBig)
		}
		keep := allocWords(n)
		return &ringMem{addr: unsafe.Pointer(&keep[0]), keep: keep}, nil
	case err != nil:
		return nil, fmt.Errorf("mmap data area of %d bytes: %w: %w", n, ErrNoMemory, err)
	}
	return &ringMem{addr: unsafe.Pointer(unsafe.SliceData(b)), isMap: true, mapped: b}, nil
}

// unmap releases a mapped area, once: both Close and the ring's cleanup
// call it, and the system may hand the addresses out again afterwards.
func (m *ringMem) unmap() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mapped != nil {
		_ = munmapRing(m.mapped)
		m.mapped = nil
	}
}
