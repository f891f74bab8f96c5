//go:build linux

package channel

import (
	"os"

	"golang.org/x/sys/unix"
)

func mapWritableData(f *os.File) ([]byte, error) {
	return unix.Mmap(int(f.Fd()), 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
}
