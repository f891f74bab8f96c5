// Package backend is the seam between package jit and its back ends, one
// package per architecture (backend/amd64, backend/arm64): what a back
// end is given (the program, Options) and what it returns (Code), and the
// run protocol its code follows (state.go: the run state's layout and the
// reasons code returns to Go with). In the spirit of Go's
// cmd/internal/obj LinkArch, a back end is a struct of functions (Arch);
// package jit picks the one of its GOARCH (compile_linux_<arch>.go) and
// does the rest, the same for every architecture: mapping the code,
// filling the Program, the run loop.
//
// The architecture-neutral analyses a back end reads while emitting are
// the front end's (jit/internal/frontend); the encoders are
// jit/internal/x86 and jit/internal/arm64. The trampolines that enter
// generated code stay in package jit (see ARCHITECTURE.md).
package backend

import (
	"unsafe"

	"github.com/uebpf/uebpf/internal/engine"
	"github.com/uebpf/uebpf/jit/internal/frontend"
	"github.com/uebpf/uebpf/vm"
)

// Arch is one architecture's back end.
type Arch struct {
	// Compile translates p to machine code. The Code belongs to the
	// back end until the caller calls its Release. (o is a value: a
	// pointer passed through a func value would escape, an allocation
	// per compile.)
	Compile func(p *vm.Program, o Options) (*Code, error)
	// AppendDirect, when not nil, returns c's code with a direct entry
	// (jit.Program.Direct: Go's internal register ABI, for code that
	// needs nothing from a run but r1 and, if checked, the context as its
	// only region, and that stores nothing if it can fail) and the
	// entry's offset: see Direct.
	AppendDirect func(c *Code, p *vm.Program, d Direct) ([]byte, int)
}

// Direct is what a direct entry needs besides the code.
type Direct struct {
	// Budget is what the entry gives the code: for code that is not
	// resumable, more than it can use.
	Budget int64
	// A context shorter than MinContext returns the error whose two
	// interface words are ShortErr.
	MinContext int
	ShortErr   [2]uintptr
	// Resumable code that did not end within Budget, or checked code
	// that failed (its reason is not ReasonExit), continues in Fallback,
	// the internal-ABI code of a Go
	// func(arg uintptr, ctx []byte) (uint64, error), with FallbackArg.
	Fallback, FallbackArg uintptr
	// Checked: the code checks its memory accesses (and stores
	// nothing). The entry gives it the context as its only region and
	// NoStack, vm.StackSize bytes of zeros no one writes, as its stack:
	// the code never names r10, but a checked access's slow path tests
	// the stack before the region list.
	Checked bool
	NoStack uintptr
}

// Options are jit.Options as package jit resolved them for one program.
type Options struct {
	// Checked: memory accesses are checked (neither jit.Options.Unchecked
	// nor a proof of the program).
	Checked bool
	// Blind: immediates are XORed with Key, which is never 0 in its low
	// word (jit.Options.Blind).
	Blind bool
	Key   uint64
	// Tag identifies the program's code to the run-time tag checks.
	Tag uint32
	// TrapSlowPaths (tests only): the checked copy of a loop whose checks
	// are hoisted fails where it is entered, a hash update answered
	// inline fails where it would leave for Go, and the guard of a budget
	// loop fails where it would not run the loop's copy.
	TrapSlowPaths bool
	// DirectBudget and DirectMinContext are the budget and minimum context
	// of the direct entry the code may get (Arch.AppendDirect), so that
	// the back end can leave room for exactly that entry; DirectSlice is
	// the budget of that entry for resumable code, one slice.
	DirectBudget     int64
	DirectSlice      int64
	DirectMinContext int

	// The architectures' own options (jit.AMD64Options, ARM64Options).
	AMD64 AMD64Options
	ARM64 ARM64Options
}

// AMD64Options is jit.AMD64Options.
type AMD64Options struct {
	DisableBMI2  bool
	DisableMOVBE bool
}

// ARM64Options is jit.ARM64Options.
type ARM64Options struct {
	ForceLLSC bool
}

// Code is a compiled program: its machine code and what package jit needs
// to run it.
type Code struct {
	Bytes []byte
	// Offsets in Bytes of the first instruction of the body, of the start
	// stub (where a run enters) and of the enter stub (where a run that
	// returned to Go resumes).
	Body, Start, Enter int
	// DirectRoom, when not 0, is the offset of int3 padding that ends at
	// the body, where Arch.AppendDirect may write a direct entry that
	// falls into the body.
	DirectRoom int
	// DirectLeave, when not 0, is the offset of the rel32 of the jump
	// through which resumable code that may get a direct entry leaves
	// that entry's runs for anything but a normal exit; it jumps to the
	// ret that follows it until Arch.AppendDirect points it at the entry's
	// fallback.
	DirectLeave int
	// HelperExits are the slots of the helper calls the code leaves to
	// Go, by the index its exits put in the reason's upper bits.
	HelperExits []int32
	// Offsets are the code offsets of the slots' first instructions in
	// Bytes, and BodyEnd the end of the last slot's: what the body spends
	// on each eBPF instruction, for reports of code density (until
	// Release).
	Offsets []int32
	BodyEnd int
	// Analysis is the front end's analysis of the program (what it does:
	// Calls, Local, Memory, Packet, LiveIn...).
	*frontend.Analysis

	// Resumable: the code can run long (a backward jump or a local call),
	// so it takes its budget in slices (ReasonSlice).
	Resumable bool
	// NeedsSave: helper exits may happen inside local calls, so a run
	// needs a save area for the native stack.
	NeedsSave bool
	// Frame: the code can run without an Env, on the frame of package
	// jit's runFrame (lean runs; amd64 only). Flat: it makes no local
	// call, no checked access and no packet load, so every exit leaves
	// from the base of its native stack.
	Frame, Flat bool
	// ArrayLookups: Go answers the code's array lookups
	// (ReasonArrayLookup), with the program's map table.
	ArrayLookups bool

	// Release gives the back end its buffers back: Bytes, HelperExits,
	// Offsets and Analysis must not be used afterwards.
	Release func()
}

// Constant returns the value that the lddw at slot i of p loads, map
// references resolved.
func Constant(p *vm.Program, i int) uint64 { return engine.Constant(unsafe.Pointer(p), i) }
