package uebpf

import (
	"unsafe"

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

// The JIT's runRoot reads a Program's jit field at offset 0.
var _ [0]struct{} = [unsafe.Offsetof(Program{}.jit)]struct{}{}

// jitPath says where runs of p go in the JIT: the first byte of a
// jit.Program, where 2 is its plain frame (runRoot) and 3 its stackless
// one (runRootStackless); package jit asserts both when it compiles.
func jitPath(p *jit.Program) (plain, stackless bool) {
	if p == nil {
		return false, false
	}
	path := *(*uint8)(unsafe.Pointer(p))
	return path >= 2, path == 3
}
