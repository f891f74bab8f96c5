package jit

import (
	"fmt"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Executable memory comes in whole pages, so that making one program's code
// writable never touches another's. Small spans come from a pool: fresh
// ones are carved out of populated read-write reserves, and a closed
// program's span is flipped back to read-write and kept for the next
// compile. A compile then costs one mprotect instead of an mmap, page
// faults on first touch, an mprotect and (at Close) an munmap. No page is
// ever writable and executable at once (W^X): spans are filled while
// read-write, then flipped to read-execute.
const (
	pageSize       = 4096
	reserveBytes   = 256 << 10 // mapped (and populated) at once
	maxPooledPages = 16        // larger spans are mapped and unmapped on their own
	maxFreeBytes   = 2 << 20   // free spans beyond this are unmapped
)

var codePages struct {
	mu        sync.Mutex
	free      [maxPooledPages + 1][]unsafe.Pointer // read-write spans by page count
	freeBytes int
	reserve   unsafe.Pointer // read-write pages not handed out yet
	left      uintptr        // bytes left at reserve
}

// mapCode copies code into executable memory: read-write pages, filled,
// then flipped to read-execute.
func mapCode(code []byte) ([]byte, error) {
	size := (uintptr(len(code)) + pageSize - 1) &^ (pageSize - 1)
	p, err := getPages(size)
	if err != nil {
		return nil, err
	}
	mem := unsafe.Slice((*byte)(p), size)
	for n := copy(mem, code); n < len(mem); {
		n += copy(mem[n:], int3Page[:]) // int3 in the unused tail
	}
	if err := unix.Mprotect(mem, unix.PROT_READ|unix.PROT_EXEC); err != nil {
		unix.MunmapPtr(p, size)
		return nil, fmt.Errorf("jit: mprotect: %w", err)
	}
	return mem, nil
}

// unmapCode takes back memory mapCode returned: it is no longer executable
// when unmapCode returns.
func unmapCode(mem []byte) {
	p, size := unsafe.Pointer(unsafe.SliceData(mem)), uintptr(len(mem))
	pages := int(size / pageSize)
	if pages > maxPooledPages || unix.Mprotect(mem, unix.PROT_READ|unix.PROT_WRITE) != nil {
		unix.MunmapPtr(p, size)
		return
	}
	c := &codePages
	c.mu.Lock()
	if c.freeBytes+int(size) > maxFreeBytes {
		c.mu.Unlock()
		unix.MunmapPtr(p, size)
		return
	}
	c.free[pages] = append(c.free[pages], p)
	c.freeBytes += int(size)
	c.mu.Unlock()
}

// getPages returns size bytes of read-write pages.
func getPages(size uintptr) (unsafe.Pointer, error) {
	pages := int(size / pageSize)
	if pages > maxPooledPages {
		return mmapPages(size, 0)
	}
	c := &codePages
	c.mu.Lock()
	defer c.mu.Unlock()
	if l := c.free[pages]; len(l) != 0 {
		p := l[len(l)-1]
		c.free[pages] = l[:len(l)-1]
		c.freeBytes -= int(size)
		return p, nil
	}
	if c.left < size {
		// The rest of the old reserve stays mapped: it is at most
		// maxPooledPages pages, and handing it out piecemeal is not
		// worth the bookkeeping.
		p, err := mmapPages(reserveBytes, unix.MAP_POPULATE)
		if err != nil {
			return nil, err
		}
		c.reserve, c.left = p, reserveBytes
	}
	p := c.reserve
	c.reserve = unsafe.Add(c.reserve, size)
	c.left -= size
	return p, nil
}

func mmapPages(size uintptr, flags int) (unsafe.Pointer, error) {
	p, err := unix.MmapPtr(-1, 0, nil, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|flags)
	if err != nil {
		return nil, fmt.Errorf("jit: mmap %d bytes: %w", size, err)
	}
	return p, nil
}

var int3Page = func() (b [pageSize]byte) {
	for i := range b {
		b[i] = 0xcc
	}
	return b
}()
