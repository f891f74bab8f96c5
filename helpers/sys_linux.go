package helpers

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The system calls behind the helpers that only Linux has; sys_other.go
// has what other systems do instead.

// Clocks the Go runtime does not expose.
const (
	clockBoottime        = unix.CLOCK_BOOTTIME
	clockMonotonicCoarse = unix.CLOCK_MONOTONIC_COARSE
	clockTAI             = unix.CLOCK_TAI
)

// gettid is the calling OS thread's id.
func gettid() int { return unix.Gettid() }

// processVMReadv reads len(dst) bytes at addr of this process.
func processVMReadv(dst []byte, addr uint64) (int, error) {
	local := []unix.Iovec{{Base: &dst[0]}}
	local[0].SetLen(len(dst))
	remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(dst)}}
	return unix.ProcessVMReadv(pid, local, remote, 0)
}

// threadName reads the calling thread's name (prctl PR_GET_NAME).
func threadName(buf *[taskCommLen]byte) error {
	return unix.Prctl(unix.PR_GET_NAME, uintptr(unsafe.Pointer(&buf[0])), 0, 0, 0)
}
