//go:build !linux

package kbridge

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// objGetInfoByFD fails: only Linux has bpf(2).
func objGetInfoByFD(unsafe.Pointer, uintptr) error { return unix.ENOSYS }
