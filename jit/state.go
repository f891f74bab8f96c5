package jit

import (
	"unsafe"

	"github.com/uebpf/uebpf/internal/engine"
	"github.com/uebpf/uebpf/jit/internal/backend"
	"github.com/uebpf/uebpf/vm"
)

// runState is the block that generated code and the Go side share during
// one run. Generated code addresses it through a register (stateReg) and
// the offsets below; the trampoline through go_asm.h. It holds no Go
// pointers (addresses are plain integers), so generated code may write it
// without write barriers and the GC has nothing to scan in it.
//
// The state lives in the Env's engine scratch space (engine.Env.Scratch),
// so a run neither allocates it nor zeroes it: the start stub sets what a
// run needs. Generated code reads the arguments, the stack, the region
// list and the packet straight from the Env, at engine.*Offset from the
// state. The Env moves only if it is on a goroutine stack, and only while
// Go code runs (between two entries into generated code, e.g. during a
// helper call); generated code therefore keeps no address of the state
// or of the native stack across a return to Go.
type runState struct {
	regs      [11]uint64 // r0..r10 while Go has control
	budget    int64      // instructions left (rdx in generated code)
	callLimit uint64     // r10 at which a local call would exceed the depth
	// The regions that allowed the last out-of-line read and write check:
	// an access of up to 8 bytes at addr is allowed if addr - lo < end.
	// end is the region's size minus 7, or 0 (no region) at the start.
	hotReadLo, hotReadEnd   uint64
	hotWriteLo, hotWriteEnd uint64
	resumePC                uint64 // where the enter stub jumps to
	// live is how many bytes of native stack (return addresses and saved
	// r6-r9 of local calls) were saved to saveArea when generated code
	// last returned to Go to be resumed.
	live       uint64
	saveArea   uint64 // a Go buffer of saveAreaBytes, 0 if the run has none
	nativeBase uint64 // set by the trampoline: the stack pointer at the enter stub
	exitPC     uint64 // eBPF pc of the instruction that returned to Go
	exitAddr   uint64 // faulting address
	exitSize   uint64 // faulting access size
	reason     uint64 // why generated code returned (reason* constants)
	progTag    uint64 // tag of the program whose code runs now
}

// The state must fit the Env's scratch space.
var _ [engine.ScratchWords*8 - unsafe.Sizeof(runState{})]byte

// stateOf returns e's run state.
func stateOf(e *vm.Env) *runState { return (*runState)(unsafe.Pointer(&envOf(e).Scratch)) }

// envOf returns the engines' part of e (engine.Env, its first field).
func envOf(e *vm.Env) *engine.Env[engine.Region] { return engine.EnvOf(unsafe.Pointer(e)) }

// nativeStackBytes is the part of the trampoline's frame that generated
// code uses as its machine stack. Its worst case is the trampoline's return
// address, 7 nested local calls of 5 words each and the slow path of a
// checked access, 5 words (its call, the saved budget register, the call
// of the region check and its two saved registers): 8 + 7*40 + 40 = 328
// bytes.
const nativeStackBytes = 336

// saveAreaBytes holds the live native stack at a resumable exit: at most 7
// nested local calls of 5 words.
const saveAreaBytes = 7 * 40

// reasonPC returns the pc of a reason that carries one, given exitPC.
func reasonPC(reason, exitPC uint64) int {
	if pc := reason >> 8 & backend.PCInExitPC; pc != backend.PCInExitPC {
		return int(pc)
	}
	return int(exitPC)
}

// The back ends address the state at the offsets of backend.Off*: they
// must be runState's.
var (
	_ [unsafe.Sizeof(runState{}) - backend.StateSize]struct{}
	_ [backend.StateSize - unsafe.Sizeof(runState{})]struct{}
	_ = [1]struct{}{}[unsafe.Offsetof(runState{}.regs)-uintptr(backend.OffRegs)]
	_ = [1]struct{}{}[unsafe.Offsetof(runState{}.budget)-uintptr(backend.OffBudget)]
	_ = [1]struct{}{}[unsafe.Offsetof(runState{}.callLimit)-uintptr(backend.OffCallLimit)]
	_ = [1]struct{}{}[unsafe.Offsetof(runState{}.hotReadLo)-uintptr(backend.OffHotReadLo)]
	_ = [1]struct{}{}[unsafe.Offsetof(runState{}.hotReadEnd)-uintptr(backend.OffHotReadLo+8)]
	_ = [1]struct{}{}[unsafe.Offsetof(runState{}.hotWriteLo)-uintptr(backend.OffHotWriteLo)]
	_ = [1]struct{}{}[unsafe.Offsetof(runState{}.hotWriteEnd)-uintptr(backend.OffHotWriteLo+8)]
	_ = [1]struct{}{}[unsafe.Offsetof(runState{}.resumePC)-uintptr(backend.OffResumePC)]
	_ = [1]struct{}{}[unsafe.Offsetof(runState{}.live)-uintptr(backend.OffLive)]
	_ = [1]struct{}{}[unsafe.Offsetof(runState{}.saveArea)-uintptr(backend.OffSaveArea)]
	_ = [1]struct{}{}[unsafe.Offsetof(runState{}.nativeBase)-uintptr(backend.OffNativeBase)]
	_ = [1]struct{}{}[unsafe.Offsetof(runState{}.exitPC)-uintptr(backend.OffExitPC)]
	_ = [1]struct{}{}[unsafe.Offsetof(runState{}.exitAddr)-uintptr(backend.OffExitAddr)]
	_ = [1]struct{}{}[unsafe.Offsetof(runState{}.exitSize)-uintptr(backend.OffExitSize)]
	_ = [1]struct{}{}[unsafe.Offsetof(runState{}.reason)-uintptr(backend.OffReason)]
	_ = [1]struct{}{}[unsafe.Offsetof(runState{}.progTag)-uintptr(backend.OffProgTag)]
)

// Layout of the frame of runFrame (trampoline_linux_amd64.s), which runs
// a program without an Env: the frame holds a copy of the Env fields that
// generated code reads at engine.*Offset from the state, the state, a
// region list of one entry (the context) and the eBPF stack. Offsets are
// from the bottom of the frame. The frame holds no Go pointers, and
// nothing in it outlives the call. The native stack of generated code is
// below the frame: runFrame calls the code without moving the stack
// pointer. The stack check of runFrame's prologue leaves at least
// StackLimit (800) bytes free below it, the room Go's NOSPLIT functions
// count on, more than the nativeStackBytes the code may use.
const (
	frameState  = -int(engine.ArgsOffset) // the Env copy starts at 0
	frameRegion = (frameState + int(unsafe.Sizeof(runState{})) + 7) &^ 7
	frameStack  = (frameRegion + int(engine.RegionSize) + 15) &^ 15
	frameBytes  = frameStack + vm.StackSize

	// Offsets in the frame of the Env fields generated code reads.
	frameArgs    = frameState + int(engine.ArgsOffset)
	frameStackLo = frameState + int(engine.StackLoOffset)
	frameRegions = frameState + int(engine.RegionsOffset)
	frameNRegion = frameState + int(engine.RegionsLenOffset)
	framePacket  = frameState + int(engine.PacketOffset)
	framePktLen  = frameState + int(engine.PacketLenOffset)

	frameRegionLo       = frameRegion + int(engine.RegionLoOffset)
	frameRegionHi       = frameRegion + int(engine.RegionHiOffset)
	frameRegionWritable = frameRegion + int(engine.RegionWritableOffset)
)

// The Env fields generated code reads lie below the state (the Env puts
// them before its engine space) and after the arguments, so that their
// copies fit under the state in the frame; the frame stays small enough
// for a goroutine stack.
var (
	_ [engine.StackLoOffset - engine.ArgsOffset]byte
	_ [engine.RegionsOffset - engine.ArgsOffset]byte
	_ [engine.PacketOffset - engine.ArgsOffset]byte
	_ [-int(engine.StackLoOffset) - 8]byte
	_ [-int(engine.RegionsLenOffset) - 8]byte
	_ [-int(engine.PacketLenOffset) - 8]byte
	// runFrame's TEXT line has the frame size as a number.
	// The native stack of runFrame's code fits in the room below its
	// frame (StackLimit on linux/amd64, which the race detector doubles).
	_ [800 - nativeStackBytes]byte
	_ [frameBytes - 4464]byte
	_ [4464 - frameBytes]byte
	// runRootStackless's TEXT line has frameRegion as a number.
	_ [frameRegion - 336]byte
	_ [336 - frameRegion]byte
)
