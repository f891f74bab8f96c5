//go:build linux

package kbridge_test

import (
	"errors"
	"os"
	"sync"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"

	uasm "github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/helpers"
	"github.com/uebpf/uebpf/kbridge"
	uemaps "github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/vm"
)

// Shared test support: privilege detection, kernel maps and programs built
// with cilium/ebpf's asm package, VM programs built with uebpf's assembler.

var (
	kernelOnce sync.Once
	kernelErr  error
)

// requireKernel skips the test unless this process may create BPF maps
// and load programs: it tries once, for real.
func requireKernel(tb testing.TB) {
	tb.Helper()
	kernelOnce.Do(func() {
		m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: 4, MaxEntries: 1})
		if err != nil {
			kernelErr = err
			return
		}
		m.Close()
	})
	if kernelErr != nil {
		if errors.Is(kernelErr, unix.EPERM) || errors.Is(kernelErr, unix.EACCES) ||
			errors.Is(kernelErr, ebpf.ErrNotSupported) || errors.Is(kernelErr, unix.ENOSYS) {
			tb.Skipf("kernel BPF not available (needs root or CAP_BPF): %v", kernelErr)
		}
		tb.Fatalf("creating a probe map: %v", kernelErr)
	}
}

func newKernelMap(tb testing.TB, spec *ebpf.MapSpec) *ebpf.Map {
	tb.Helper()
	m, err := ebpf.NewMap(spec)
	if err != nil {
		tb.Fatalf("create %s: %v", spec.Name, err)
	}
	return m
}

func openMap(tb testing.TB, m *ebpf.Map) kbridge.Map {
	tb.Helper()
	km, err := kbridge.Open(m)
	if err != nil {
		m.Close()
		tb.Fatal(err)
	}
	tb.Cleanup(func() { km.Close() })
	return km
}

// newMmapArray creates and opens a BPF_F_MMAPABLE array.
func newMmapArray(tb testing.TB, name string, valueSize, entries uint32) *kbridge.Array {
	tb.Helper()
	m := newKernelMap(tb, &ebpf.MapSpec{Name: name, Type: ebpf.Array, KeySize: 4,
		ValueSize: valueSize, MaxEntries: entries, Flags: uemaps.FlagMmapable})
	a, ok := openMap(tb, m).(*kbridge.Array)
	if !ok {
		tb.Fatalf("Open of an mmapable array did not return *kbridge.Array")
	}
	return a
}

// lookupPrologue looks up key in m (r0 = value or 0; jumps to "miss" on 0).
func lookupPrologue(m *ebpf.Map, key int32) asm.Instructions {
	return asm.Instructions{
		asm.StoreImm(asm.RFP, -4, int64(key), asm.Word),
		asm.LoadMapPtr(asm.R1, m.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -4),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "miss"),
	}
}

var missEpilogue = asm.Instructions{
	asm.Mov.Imm(asm.R0, -1).WithSymbol("miss"),
	asm.Return(),
}

// kernelProgram loads a socket filter; run it with runKernel.
func kernelProgram(tb testing.TB, name string, insns asm.Instructions) *ebpf.Program {
	tb.Helper()
	p, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: name, Type: ebpf.SocketFilter,
		License: "GPL", Instructions: insns})
	if err != nil {
		tb.Fatalf("load kernel program %s: %v", name, err)
	}
	tb.Cleanup(func() { p.Close() })
	return p
}

// runKernel runs p through BPF_PROG_TEST_RUN repeat times and returns r0.
func runKernel(tb testing.TB, p *ebpf.Program, repeat int) uint32 {
	tb.Helper()
	r0, err := p.Run(&ebpf.RunOptions{Data: make([]byte, 64), Repeat: uint32(repeat)})
	if err != nil {
		tb.Fatalf("BPF_PROG_TEST_RUN: %v", err)
	}
	return r0
}

// vmHelpers is the helper set of VM test programs.
var vmHelpers = helpers.Standard(nil)

// vmProgram assembles src (uebpf's dialect) with ms as map_by_fd(0..).
func vmProgram(tb testing.TB, src string, ms ...vm.Map) *vm.Program {
	tb.Helper()
	insns, err := uasm.Assemble(src)
	if err != nil {
		tb.Fatalf("assemble: %v", err)
	}
	p, err := vm.Load(&vm.ProgramSpec{Name: tb.Name(), Instructions: insns, Maps: ms},
		&vm.Options{Helpers: vmHelpers})
	if err != nil {
		tb.Fatalf("load VM program: %v", err)
	}
	return p
}

func TestMain(m *testing.M) {
	if path := os.Getenv(childEnv); path != "" {
		os.Exit(childMain(path))
	}
	os.Exit(m.Run())
}
