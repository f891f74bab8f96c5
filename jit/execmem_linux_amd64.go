package jit

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// mapCode copies code into fresh anonymous memory and makes it executable:
// mapped read-write, filled, then flipped to read-execute, so no page is
// ever writable and executable at once (W^X).
func mapCode(code []byte) ([]byte, error) {
	size := (len(code) + unix.Getpagesize() - 1) &^ (unix.Getpagesize() - 1)
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("jit: mmap %d bytes: %w", size, err)
	}
	for n := copy(mem, code); n < len(mem); {
		n += copy(mem[n:], int3Page[:]) // int3 in the unused tail
	}
	if err := unix.Mprotect(mem, unix.PROT_READ|unix.PROT_EXEC); err != nil {
		unix.Munmap(mem)
		return nil, fmt.Errorf("jit: mprotect: %w", err)
	}
	return mem, nil
}

var int3Page = func() (b [4096]byte) {
	for i := range b {
		b[i] = 0xcc
	}
	return b
}()

func unmapCode(mem []byte) { unix.Munmap(mem) }
