//go:build linux

package kbridge_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"

	"github.com/uebpf/uebpf/kbridge"
	"github.com/uebpf/uebpf/maps"
)

// pattern is the 32-bit word that tests store at byte off of element i.
func pattern(i, off uint32) uint32 { return 0xa0000000 | i<<16 | off }

// TestArrayStride writes every element from one side and reads it from the
// other, for value sizes that are and are not multiples of 8: the
// kernel's stride is round_up(value_size, 8).
func TestArrayStride(t *testing.T) {
	requireKernel(t)
	const entries = 5
	for _, vs := range []uint32{4, 8, 12, 64} {
		t.Run(fmt.Sprintf("value%d", vs), func(t *testing.T) {
			a := newMmapArray(t, fmt.Sprintf("stride%d", vs), vs, entries)
			stride := (vs + 7) &^ 7
			if got, want := len(a.Memory()), int(stride*entries); got != want {
				t.Fatalf("Memory() is %d bytes, want %d", got, want)
			}

			// Go side writes, kernel program reads the first and last word.
			for i := uint32(0); i < entries; i++ {
				val := make([]byte, vs)
				for off := uint32(0); off < vs; off += 4 {
					binary.NativeEndian.PutUint32(val[off:], pattern(i, off))
				}
				if err := a.Update(i, val, maps.UpdateAny); err != nil {
					t.Fatal(err)
				}
			}
			for i := uint32(0); i < entries; i++ {
				for _, off := range []uint32{0, vs - 4} {
					insns := append(lookupPrologue(a.Kernel(), int32(i)),
						asm.LoadMem(asm.R0, asm.R0, int16(off), asm.Word),
						asm.Return())
					p := kernelProgram(t, "read", append(insns, missEpilogue...))
					if got, want := runKernel(t, p, 1), pattern(i, off); got != want {
						t.Errorf("kernel reads element %d +%d = %#x, want %#x", i, off, got, want)
					}
				}
			}

			// Kernel program writes, Go (Memory, Lookup) and the VM read.
			for i := uint32(0); i < entries; i++ {
				off := vs - 4
				insns := append(lookupPrologue(a.Kernel(), int32(i)),
					asm.StoreImm(asm.R0, int16(off), int64(0x5000+i), asm.Word),
					asm.Mov.Imm(asm.R0, 0),
					asm.Return())
				runKernel(t, kernelProgram(t, "write", append(insns, missEpilogue...)), 1)

				mem := binary.NativeEndian.Uint32(a.Memory()[i*stride+off:])
				if mem != 0x5000+i {
					t.Errorf("Memory() element %d +%d = %#x, want %#x", i, off, mem, 0x5000+i)
				}
				val := make([]byte, vs)
				if err := a.Lookup(i, val); err != nil {
					t.Fatal(err)
				}
				if got := binary.NativeEndian.Uint32(val[off:]); got != 0x5000+i {
					t.Errorf("Lookup element %d +%d = %#x, want %#x", i, off, got, 0x5000+i)
				}
				p := vmProgram(t, fmt.Sprintf(`
					stw [%%r10-4], %d
					lddw %%r1, map_by_fd(0)
					mov %%r2, %%r10
					add %%r2, -4
					call 1
					jeq %%r0, 0, miss
					ldxw %%r0, [%%r0+%d]
					exit
				miss:
					mov %%r0, -1
					exit`, i, off), a)
				r0, err := p.Run(nil)
				if err != nil {
					t.Fatal(err)
				}
				if r0 != uint64(0x5000+i) {
					t.Errorf("VM reads element %d +%d = %#x, want %#x", i, off, r0, 0x5000+i)
				}
			}
		})
	}
}

// TestArrayAtomics adds to one counter concurrently from VM programs on
// several goroutines and from a kernel program (BPF_PROG_TEST_RUN with
// repeat): no update may be lost.
func TestArrayAtomics(t *testing.T) {
	requireKernel(t)
	a := newMmapArray(t, "atomics", 8, 2)
	vmAdd := vmProgram(t, `
		stw [%r10-4], 1
		lddw %r1, map_by_fd(0)
		mov %r2, %r10
		add %r2, -4
		call 1
		jeq %r0, 0, out
		mov %r1, 1
		lock add [%r0+0], %r1
	out:
		mov %r0, 0
		exit`, a)
	kAdd := kernelProgram(t, "add", append(lookupPrologue(a.Kernel(), 1),
		asm.Mov.Imm(asm.R1, 1),
		asm.StoreXAdd(asm.R0, asm.R1, asm.DWord),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("miss"),
		asm.Return()))

	const (
		goroutines = 3
		vmRuns     = 20000
		kRuns      = 4
		kRepeat    = 20000
	)
	var wg sync.WaitGroup
	var failed atomic.Bool
	for range goroutines {
		wg.Go(func() {
			for range vmRuns {
				if _, err := vmAdd.Run(nil); err != nil {
					failed.Store(true)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for range kRuns {
			if _, err := kAdd.Run(&ebpf.RunOptions{Data: make([]byte, 64), Repeat: kRepeat}); err != nil {
				failed.Store(true)
				return
			}
		}
	})
	wg.Wait()
	if failed.Load() {
		t.Fatal("a run failed")
	}
	var got uint64
	if err := a.Kernel().Lookup(uint32(1), &got); err != nil {
		t.Fatal(err)
	}
	if want := uint64(goroutines*vmRuns + kRuns*kRepeat); got != want {
		t.Fatalf("counter = %d, want %d (lost %d updates)", got, want, want-got)
	}
}

// TestArrayClose checks that a closed Array fails on the Go side but stays
// addressable memory.
func TestArrayClose(t *testing.T) {
	requireKernel(t)
	a := newMmapArray(t, "closing", 8, 4)
	mem := a.Memory()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Update(uint32(0), uint64(1), maps.UpdateAny); !errors.Is(err, maps.ErrClosed) {
		t.Fatalf("Update after Close: %v, want ErrClosed", err)
	}
	atomic.AddUint64((*uint64)(unsafe.Pointer(&mem[8])), 1) // must not fault
	if err := a.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

const childEnv = "UEBPF_KBRIDGE_CHILD_PIN"

// childMain is the other process of TestPinnedReopen: it opens the pinned
// array, checks the parent's value and adds 1000 to it.
func childMain(path string) int {
	m, err := kbridge.OpenPinned(path, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer m.Close()
	a, ok := m.(*kbridge.Array)
	if !ok {
		fmt.Fprintf(os.Stderr, "OpenPinned returned %T\n", m)
		return 3
	}
	p := (*uint64)(unsafe.Pointer(&a.Memory()[8]))
	if v := atomic.LoadUint64(p); v != 42 {
		fmt.Fprintf(os.Stderr, "child sees %d, want 42\n", v)
		return 4
	}
	atomic.AddUint64(p, 1000)
	return 0
}

// TestPinnedReopen pins an mmapped array, reopens it by path in another
// process (this test binary, re-executed), and sees that process's write.
func TestPinnedReopen(t *testing.T) {
	requireKernel(t)
	path := filepath.Join(bpffsDir(t), "pinned")

	a := newMmapArray(t, "pinned", 8, 4)
	if err := a.Kernel().Pin(path); err != nil {
		t.Fatal(err)
	}
	defer a.Kernel().Unpin()
	if err := a.Update(uint32(1), uint64(42), maps.UpdateAny); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+path)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v: %s", err, out)
	}
	var got uint64
	if err := a.Lookup(uint32(1), &got); err != nil {
		t.Fatal(err)
	}
	if got != 1042 {
		t.Fatalf("after the child's add: %d, want 1042", got)
	}

	// By ID too.
	info, err := a.Kernel().Info()
	if err != nil {
		t.Fatal(err)
	}
	id, _ := info.ID()
	b, err := kbridge.OpenID(id)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Lookup(uint32(1), &got); err != nil || got != 1042 {
		t.Fatalf("by ID: %d, %v", got, err)
	}
}

// bpffsDir returns an empty directory on a bpffs: under /sys/fs/bpf when
// it is mounted there, else a private mount of its own.
func bpffsDir(t *testing.T) string {
	var st unix.Statfs_t
	if err := unix.Statfs("/sys/fs/bpf", &st); err == nil && st.Type == unix.BPF_FS_MAGIC {
		dir, err := os.MkdirTemp("/sys/fs/bpf", "uebpf-test-")
		if err != nil {
			t.Skipf("cannot create a directory in /sys/fs/bpf: %v", err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		return dir
	}
	dir := t.TempDir()
	if err := unix.Mount("bpf", dir, "bpf", 0, ""); err != nil {
		t.Skipf("no bpffs at /sys/fs/bpf and mounting one failed: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	return dir
}
