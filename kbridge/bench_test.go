//go:build linux

package kbridge_test

import (
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"

	"github.com/uebpf/uebpf/internal/cputime"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/kbridge"
	"github.com/uebpf/uebpf/vm"
)

// VM access to a kernel map value: through the mmap of a BPF_F_MMAPABLE
// array (no syscall) against a hash map through bpf() (one syscall per
// lookup). Each run is a lookup plus one access; compare with
// BenchmarkVMLookupUserArray in package helpers for the VM's own cost.

const benchLookup = `
	stw [%r10-4], 1
	lddw %r1, map_by_fd(0)
	mov %r2, %r10
	add %r2, -4
	call 1
	jeq %r0, 0, out
`

// benchVM runs src on the interpreter and returns the thread's CPU time
// per run: the machines these run on are shared, and CPU time leaves out
// the time other processes ran instead of us.
func benchVM(b *testing.B, src string, m vm.Map) time.Duration {
	return benchEngine(b, vmProgram(b, src, m).Exec)
}

// benchEngine runs exec once per iteration on a reused Env, like benchVM.
func benchEngine(b *testing.B, exec func(*vm.Env) (uint64, error)) time.Duration {
	env := vm.NewEnv()
	b.ReportAllocs()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := cputime.Thread()
	b.ResetTimer()
	for range b.N {
		if _, err := exec(env); err != nil {
			b.Fatal(err)
		}
		env.Reset()
	}
	b.StopTimer()
	cpu := (cputime.Thread() - start) / time.Duration(b.N)
	b.ReportMetric(float64(cpu.Nanoseconds()), "cpu-ns/op")
	return cpu
}

func BenchmarkVMMmapRead(b *testing.B) {
	requireKernel(b)
	a := newMmapArray(b, "bench", 8, 4)
	benchVM(b, benchLookup+"ldxdw %r0, [%r0+0]\nout:\nexit", a)
}

func BenchmarkVMMmapAtomicAdd(b *testing.B) {
	requireKernel(b)
	a := newMmapArray(b, "bench", 8, 4)
	benchVM(b, benchLookup+"mov %r1, 1\nlock add [%r0+0], %r1\nout:\nexit", a)
}

func BenchmarkVMSyscallRead(b *testing.B) {
	requireKernel(b)
	m := newKernelMap(b, &ebpf.MapSpec{Type: ebpf.Hash, KeySize: 4, ValueSize: 8, MaxEntries: 4})
	h := openMap(b, m).(*kbridge.SyscallMap)
	if err := h.Kernel().Put(uint32(1), uint64(5)); err != nil {
		b.Fatal(err)
	}
	benchVM(b, benchLookup+"ldxdw %r0, [%r0+0]\nout:\nexit", h)
}

// BenchmarkVMSyscallAdd is the syscall path's read-modify-write: lookup
// (a copy), add, bpf_map_update_elem. Unlike the mmap path it is not
// atomic against concurrent writers.
func BenchmarkVMSyscallAdd(b *testing.B) {
	requireKernel(b)
	m := newKernelMap(b, &ebpf.MapSpec{Type: ebpf.Hash, KeySize: 4, ValueSize: 8, MaxEntries: 4})
	h := openMap(b, m).(*kbridge.SyscallMap)
	if err := h.Kernel().Put(uint32(1), uint64(5)); err != nil {
		b.Fatal(err)
	}
	benchVM(b, benchLookup+`
		ldxdw %r1, [%r0+0]
		add %r1, 1
		stxdw [%r10-16], %r1
		lddw %r1, map_by_fd(0)
		mov %r2, %r10
		add %r2, -4
		mov %r3, %r10
		add %r3, -16
		mov %r4, 0
		call 2
	out:
		exit`, h)
}

// BenchmarkVMMmapPerAccess separates the cost of one access from the run
// and lookup around it: each run does 100 accesses to the looked-up value,
// on the interpreter and on the JIT (checked: every access is checked
// against the run's regions; unchecked: as for a verified program).
func BenchmarkVMMmapPerAccess(b *testing.B) {
	requireKernel(b)
	for _, bc := range []struct{ name, insn string }{
		{"read", "ldxdw %r3, [%r0+0]\n"},
		{"atomic_add", "lock add [%r0+0], %r1\n"},
	} {
		for _, engine := range []string{"interpreter", "jit", "jit-unchecked"} {
			b.Run(bc.name+"/"+engine, func(b *testing.B) {
				a := newMmapArray(b, "bench", 8, 4)
				p := vmProgram(b, benchLookup+"mov %r1, 1\n"+strings.Repeat(bc.insn, 100)+"out:\nexit", a)
				exec := p.Exec
				if engine != "interpreter" {
					jp, err := jit.Compile(p, &jit.Options{Unchecked: engine == "jit-unchecked"})
					if errors.Is(err, jit.ErrUnsupportedArch) {
						b.Skip("no JIT on this platform")
					}
					if err != nil {
						b.Fatal(err)
					}
					defer jp.Close()
					exec = jp.Exec
				}
				cpu := benchEngine(b, exec)
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/100, "ns/access")
				b.ReportMetric(float64(cpu.Nanoseconds())/100, "cpu-ns/access")
			})
		}
	}
}

// BenchmarkNativeMmapAtomicAdd is the floor under the per-access atomic
// add above: Go's atomic add (a lock-prefixed add, as the interpreter
// issues) on the same mmapped kernel array value, in a loop of 100.
func BenchmarkNativeMmapAtomicAdd(b *testing.B) {
	requireKernel(b)
	a := newMmapArray(b, "bench", 8, 4)
	p := (*uint64)(unsafe.Pointer(&a.Memory()[8]))
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := cputime.Thread()
	b.ResetTimer()
	for range b.N {
		for range 100 {
			atomic.AddUint64(p, 1)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64((cputime.Thread()-start).Nanoseconds())/float64(b.N)/100, "cpu-ns/access")
}
