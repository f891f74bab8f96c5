package engine

import "unsafe"

// Env is the start of every vm.Env, its first field: the fields that
// generated code reads at fixed offsets from Scratch, and those that Go
// engines read and set without a call. R is vm's region type, laid out as
// Region (vm asserts both). Hit and Fixed are the interpreter's; they sit
// among the others because the offsets below are part of the generated
// code and must not change.
type Env[R any] struct {
	Args    [5]uint64      // r1..r5 of the next run
	Stack   unsafe.Pointer // keeps the StackSize bytes at StackLo alive
	StackLo uint64         // the stack's lowest address
	Regions []R            // what checked accesses outside the stack may touch
	Hit     uint           // index in Regions of the last successful check
	Fixed   int            // Regions[:Fixed] are those the run started with
	Packet  []byte         // of LD_ABS/LD_IND
	Budget  uint64         // of the next run (0: the program's)
	// Scratch is another engine's run state (package jit), here so that
	// a run needs neither an allocation nor a zeroed frame. It holds no Go
	// pointers; it follows the fields generated code reads, close to them,
	// so that an engine can lay out a copy of those fields and a state in
	// a small frame.
	Scratch    [ScratchWords]uint64
	Executed   uint64 // instructions the last run executed
	BudgetLeft uint64 // the run's budget while a helper runs (vm.Env.Charge)
	Status     uint8  // set by helpers: stop, fail, tail call (0: none)
}

// ScratchWords is the size of Env.Scratch in 8-byte words.
const ScratchWords = 40

// StackSize is the size of the stack at Env.StackLo: vm.StackSize.
const StackSize = 8 * 512

// Region is the layout of an entry of Env.Regions, which generated code
// walks: [Lo, Hi) may be accessed, written if Writable (0 or 1). Keep
// holds the memory's Go object for the garbage collector.
type Region struct {
	Lo, Hi   uint64
	Writable bool
	Keep     unsafe.Pointer
}

// Layout of Region for generated code.
const (
	RegionSize           = unsafe.Sizeof(Region{})
	RegionLoOffset       = unsafe.Offsetof(Region{}.Lo)
	RegionHiOffset       = unsafe.Offsetof(Region{}.Hi)
	RegionWritableOffset = unsafe.Offsetof(Region{}.Writable)
)

// Offsets of Env fields from Scratch, where generated code holds the
// address of its state: the arguments r1..r5 (five words), the stack's
// lowest address, the data pointer and length of Regions and of Packet,
// and Executed (for an engine whose run loop is assembly).
const (
	ArgsOffset       = int32(unsafe.Offsetof(layout{}.Args)) - scratchOffset
	StackLoOffset    = int32(unsafe.Offsetof(layout{}.StackLo)) - scratchOffset
	RegionsOffset    = int32(unsafe.Offsetof(layout{}.Regions)) - scratchOffset
	RegionsLenOffset = RegionsOffset + 8
	PacketOffset     = int32(unsafe.Offsetof(layout{}.Packet)) - scratchOffset
	PacketLenOffset  = PacketOffset + 8
	ExecutedOffset   = int32(unsafe.Offsetof(layout{}.Executed)) - scratchOffset

	scratchOffset = int32(unsafe.Offsetof(layout{}.Scratch))
)

type layout = Env[Region]

// EnvOf returns the engine's view of a *vm.Env, whose first field is an
// Env of vm's region type.
func EnvOf(env unsafe.Pointer) *Env[Region] { return (*Env[Region])(env) }

// SetOnlyContext makes the size bytes at p the run's context (r1 = p, r2 =
// size) and its only region, replacing the regions of an earlier run, in
// place. It is for an engine that keeps an Env between runs of programs
// that call no helpers, where a run changes nothing else that Reset would
// clear: r3..r5, the packet, the budget, Data and the helper status stay
// as the first run found them (Reset, the zero Env).
func (e *Env[R]) SetOnlyContext(p unsafe.Pointer, size uintptr, writable bool) {
	lo := uint64(uintptr(p))
	e.Args[0], e.Args[1] = lo, uint64(size)
	if size == 0 || lo+uint64(size) < lo {
		clear(e.Regions)
		e.Regions = e.Regions[:0]
		return
	}
	if cap(e.Regions) == 0 {
		e.Regions = make([]R, 0, 4)
	}
	e.Regions = append(e.Regions[:0], *(*R)(unsafe.Pointer(&Region{Lo: lo, Hi: lo + uint64(size), Writable: writable, Keep: p})))
}
