package jit

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/uebpf/uebpf/jit/internal/arm64"
)

// Executable memory on arm64: each program gets its own pages, mapped
// read-write, filled, flipped to read-execute (W^X) and made visible to
// instruction fetch, which on arm64 is not coherent with data writes.
const pageSize = 4096

// mapCode copies code into executable memory.
func mapCode(code []byte) ([]byte, error) {
	size := (len(code) + pageSize - 1) &^ (pageSize - 1)
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("jit: mmap %d bytes: %w", size, err)
	}
	copy(mem, code)
	// The unused tail is zero, a permanently undefined instruction.
	if err := unix.Mprotect(mem, unix.PROT_READ|unix.PROT_EXEC); err != nil {
		unix.Munmap(mem)
		return nil, fmt.Errorf("jit: mprotect: %w", err)
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(mem)))
	arm64.SyncICache(start, start+uintptr(len(code)))
	return mem, nil
}

// unmapCode takes back memory mapCode returned.
func unmapCode(mem []byte) {
	unix.Munmap(mem)
}
