package uebpf

import (
	"unsafe"

	"github.com/uebpf/uebpf/jit"
)

// run is Program.Run with the context's address and length: it jumps to
// the JIT's runRoot with its arguments in place, or continues in
// runSlowABI (see run_linux_amd64.s).
func run(p *Program, ctx unsafe.Pointer, n uintptr) (r0 uint64, err error)

// runSlowABI is run's path to everything but a run on the JIT's plain
// frame.
func runSlowABI(p *Program, ctx unsafe.Pointer, n uintptr) (uint64, error) {
	return p.runSlow(unsafe.Slice((*byte)(ctx), n))
}

// The JIT's runRoot reads a Program's jit field at offset 0.
var _ [0]struct{} = [unsafe.Offsetof(Program{}.jit)]struct{}{}

// jitPlain reports whether p runs on the JIT's runFramePlain: the first
// byte of a jit.Program says where its runs go, and 2 is runFramePlain
// (package jit asserts both when it compiles).
func jitPlain(p *jit.Program) bool {
	return p != nil && *(*uint8)(unsafe.Pointer(p)) == 2
}
