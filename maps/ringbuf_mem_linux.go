package maps

import (
	"errors"

	"golang.org/x/sys/unix"
)

// ringHeapMax is unused on Linux, where large rings are always mapped.
const ringHeapMax = ^uintptr(0)

var errNoMmap = errors.New("no mmap")

// mmapRing maps n bytes of anonymous memory. MAP_NORESERVE: a ring is
// sized for bursts, and pages it never writes need no swap reservation.
func mmapRing(n uintptr) ([]byte, error) {
	if uint64(n) > 1<<62 {
		return nil, unix.ENOMEM
	}
	return unix.Mmap(-1, 0, int(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
}

func munmapRing(b []byte) error { return unix.Munmap(b) }
