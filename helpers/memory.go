package helpers

import (
	"bytes"
	"os"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/uebpf/uebpf/vm"
)

// Fault-safe reads of arbitrary addresses, for the probe_read helpers and
// the %s and %pI conversions of the printf helpers. Memory the run may
// read is copied directly. Anything else is read by the kernel on our
// behalf, with process_vm_readv on our own process: an unmapped address
// then fails with EFAULT instead of crashing the process. Where seccomp
// forbids process_vm_readv, pread of /proc/self/mem does the same.

var pageSize = uint64(os.Getpagesize())

// readMem copies len(dst) bytes at addr into dst. It reports whether all
// of them could be read.
func readMem(env *vm.Env, dst []byte, addr uint64) bool {
	if len(dst) == 0 {
		return true
	}
	if src, ok := env.Bytes(addr, uint64(len(dst)), false); ok {
		copy(dst, src)
		return true
	}
	return readProcess(dst, addr)
}

// readString copies the NUL-terminated string at addr into dst, like
// strncpy_from_user_nofault: it returns the number of bytes copied
// including the NUL, or len(dst) with dst[len(dst)-1] = 0 when the string
// does not fit. ok is false when the string runs into unreadable memory;
// dst is then partly written. Bytes of dst after the NUL are untouched.
func readString(env *vm.Env, dst []byte, addr uint64) (n int, ok bool) {
	if len(dst) == 0 {
		return 0, true
	}
	for n < len(dst) {
		a := addr + uint64(n)
		if a < addr {
			return n, false
		}
		// Never read across a page boundary in one go: the string may
		// end just before an unmapped page.
		chunk := min(uint64(len(dst)-n), pageSize-a%pageSize)
		part := dst[n : n+int(chunk)]
		if src, ok := env.Bytes(a, chunk, false); ok {
			if i := bytes.IndexByte(src, 0); i >= 0 {
				copy(part, src[:i+1])
				return n + i + 1, true
			}
			copy(part, src)
		} else {
			var buf [256]byte
			piece := buf[:min(chunk, uint64(len(buf)))]
			if !readMem(env, piece, a) {
				return n, false
			}
			if i := bytes.IndexByte(piece, 0); i >= 0 {
				copy(part, piece[:i+1])
				return n + i + 1, true
			}
			copy(part, piece)
			chunk = uint64(len(piece))
		}
		n += int(chunk)
	}
	dst[len(dst)-1] = 0
	return len(dst), true
}

// Ways readProcess reads.
const (
	viaVMReadv = iota
	viaProcMem
	viaNothing
)

var (
	readVia     atomic.Int32
	procMemOnce sync.Once
	procMem     *os.File
)

// readProcess reads our own memory through the kernel.
func readProcess(dst []byte, addr uint64) bool {
	if addr+uint64(len(dst)) < addr {
		return false
	}
	switch readVia.Load() {
	case viaVMReadv:
		n, err := processVMReadv(dst, addr)
		if err == unix.ENOSYS || err == unix.EPERM {
			readVia.CompareAndSwap(viaVMReadv, viaProcMem)
			return readProcess(dst, addr)
		}
		return err == nil && n == len(dst)
	case viaProcMem:
		procMemOnce.Do(func() { procMem, _ = os.Open("/proc/self/mem") })
		if procMem == nil {
			readVia.Store(viaNothing)
			return false
		}
		if int64(addr) < 0 { // a kernel address
			return false
		}
		n, err := unix.Pread(int(procMem.Fd()), dst, int64(addr))
		return err == nil && n == len(dst)
	}
	return false
}
