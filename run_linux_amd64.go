package uebpf

import (
	"unsafe"

	"github.com/uebpf/uebpf/internal/engine"
	"github.com/uebpf/uebpf/jit"
)

// run is Program.Run with the context's address and length: it jumps to
// the JIT's runRootStackless or runRoot with its arguments in place, or
// continues in runSlowABI (see run_linux_amd64.s).
func run(p *Program, ctx unsafe.Pointer, n uintptr) (r0 uint64, err error)

// runSlowABI is run's path to everything but a run on the JIT's plain
// frame.
func runSlowABI(p *Program, ctx unsafe.Pointer, n uintptr) (uint64, error) {
	return p.runSlow(unsafe.Slice((*byte)(ctx), n))
}

// runDirectABI is run's path to the JIT's direct entry (Program.direct)
// of code that takes neither of its fast paths: one call more than they
// take, and far fewer than runSlowABI's path to the JIT's frame.
func runDirectABI(p *Program, ctx unsafe.Pointer, n uintptr) (uint64, error) {
	return p.direct(unsafe.Slice((*byte)(ctx), n))
}

// The JIT's runRoot reads a Program's jit field at offset 0.
var _ [0]struct{} = [unsafe.Offsetof(Program{}.jit)]struct{}{}

// jitPath says where runs of p go in the JIT: its plain frame (runRoot)
// or its stackless one (runRootStackless); see engine.RootPath.
func jitPath(p *jit.Program) (plain, stackless bool) {
	return engine.RootPath(unsafe.Pointer(p))
}
