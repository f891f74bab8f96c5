package helpers

import (
	"testing"
	"unsafe"
)

// The /proc/self/mem fallback, used where seccomp forbids
// process_vm_readv, reads and fails like process_vm_readv.
func TestReadProcessFallback(t *testing.T) {
	old := readVia.Load()
	defer readVia.Store(old)
	readVia.Store(viaProcMem)
	src := []byte("hello")
	buf := make([]byte, 5)
	if !readProcess(buf, uint64(uintptr(unsafe.Pointer(&src[0])))) || string(buf) != "hello" {
		t.Errorf("read %q", buf)
	}
	for _, addr := range []uint64{0, 8, 0xffff_8000_0000_0000, ^uint64(0) - 2} {
		if readProcess(buf, addr) {
			t.Errorf("read at %#x succeeded", addr)
		}
	}
	if readVia.Load() != viaProcMem {
		t.Error("a failed read gave up on /proc/self/mem")
	}
}
