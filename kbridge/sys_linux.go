package kbridge

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// objGetInfoByFD is bpf(BPF_OBJ_GET_INFO_BY_FD) with the attribute at
// attr: cilium/ebpf reads a map's BTF ids only through its own internal
// package.
func objGetInfoByFD(attr unsafe.Pointer, size uintptr) error {
	const bpfObjGetInfoByFD = 15
	if _, _, errno := unix.Syscall(unix.SYS_BPF, bpfObjGetInfoByFD, uintptr(attr), size); errno != 0 {
		return errno
	}
	return nil
}
