package jit

import (
	"unsafe"

	"github.com/uebpf/uebpf/vm"
)

// enter runs generated code with state s until it returns to Go (see
// trampoline_linux_arm64.s).
//
//go:noescape
func enter(s *runState, stub uintptr)

// run runs the program with ctx as its context (r1 = 0 if it is empty),
// refusing one shorter than the program was verified for (Program.Run
// leaves the check to run, which on amd64 makes it in assembly). The
// arm64 back end has no lean paths: every run has an Env from the
// program's pools.
func run(p *Program, ctx []byte) (uint64, error) {
	if len(ctx) < p.minContext {
		return 0, p.shortContext(uint64(len(ctx)))
	}
	if len(ctx) == 0 {
		return p.runEnv(nil, 0)
	}
	return p.runEnv(unsafe.Pointer(unsafe.SliceData(ctx)), uintptr(len(ctx)))
}

// runPointer is run with the size bytes at ctx as the context.
func runPointer(p *Program, ctx unsafe.Pointer, size, _ uintptr) (uint64, error) {
	if size == 0 {
		ctx = nil
	}
	return p.runEnv(ctx, size)
}

// Exec runs the program with the arguments, regions and budget set on e
// and returns r0, exactly as vm.Program.Exec does. Errors are
// *vm.RunError values. A program compiled with Options.Verified refuses
// an Env whose r2 is shorter than the context it was verified for.
func (p *Program) Exec(e *vm.Env) (uint64, error) {
	if n := envOf(e).Args[1]; n < uint64(p.minContext) {
		return 0, p.shortContext(n)
	}
	return p.execFull(e)
}
