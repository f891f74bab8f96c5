package uebpf

import (
	"unsafe"

	"github.com/uebpf/uebpf/jit"
)

// run is Program.Run: it checks the context's length and jumps to the
// JIT's run with its arguments in place, or continues in runSlowABI (see
// run_linux_amd64.s).
func run(p *Program, ctx []byte) (r0 uint64, err error)

// runSlowABI is run's path to everything but a JIT run with a long
// enough context.
func runSlowABI(p *Program, ctx []byte) (uint64, error) { return p.runSlow(ctx) }

// jitPlain reports whether p runs on the JIT's runFramePlain: the first
// byte of a jit.Program says where its runs go, and 2 is runFramePlain
// (package jit asserts both when it compiles).
func jitPlain(p *jit.Program) bool {
	return p != nil && *(*uint8)(unsafe.Pointer(p)) == 2
}
