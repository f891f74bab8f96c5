package backend

import "github.com/uebpf/uebpf/internal/engine"

// The run state is the block that generated code and Go share during one
// run (package jit's runState, which asserts these offsets): generated
// code addresses it through a register and the offsets below. It lives in
// the Env's engine scratch space (engine.Env.Scratch); the Env fields
// generated code reads (arguments, stack, regions, packet) are at
// engine.*Offset from it.
const (
	OffRegs       int32 = 0   // [11]uint64: r0..r10 while Go has control
	OffBudget     int32 = 88  // int64: instructions left
	OffCallLimit  int32 = 96  // r10 at which a local call would exceed the depth
	OffHotReadLo  int32 = 104 // the hot read region: lo, then end at +8
	OffHotWriteLo int32 = 120 // the hot write region: lo, then end at +8
	OffResumePC   int32 = 136 // where the enter stub jumps to
	OffLive       int32 = 144 // bytes of native stack saved to the save area
	OffSaveArea   int32 = 152 // the save area's address, 0 if the run has none
	OffNativeBase int32 = 160 // the stack pointer at the enter stub
	OffExitPC     int32 = 168 // eBPF pc of the instruction that returned to Go
	OffExitAddr   int32 = 176 // faulting address
	OffExitSize   int32 = 184 // faulting access size
	OffReason     int32 = 192 // why generated code returned (Reason*)
	OffProgTag    int32 = 200 // tag of the program whose code runs now
	StateSize           = 208
)

// Offsets from the state of the Env fields generated code reads.
const (
	OffArgs     = engine.ArgsOffset
	OffStackLo  = engine.StackLoOffset
	OffRegions  = engine.RegionsOffset
	OffNRegions = engine.RegionsLenOffset
	OffPktPtr   = engine.PacketOffset
	OffPktLen   = engine.PacketLenOffset
)

// PCInExitPC in the upper bits of a reason means the pc is in the state's
// exitPC: it does not fit in 24 bits.
const PCInExitPC = 1<<24 - 1

// Why generated code returned to Go (the reason's low byte).
const (
	ReasonExit       = 0 // normal exit: r0 in regs[0]
	ReasonHelper     = 1 // call helper at exitPC (index in Code.HelperExits << 8), then resume
	ReasonCallX      = 2 // callx at exitPC, then resume
	ReasonFault      = 3 // memory access outside the regions
	ReasonMisaligned = 4 // misaligned atomic
	ReasonBudget     = 5 // budget exceeded at the jump, call or exit at the reason's pc
	ReasonCallDepth  = 6 // local call at the reason's pc exceeds the depth
	ReasonReturn     = 7 // returned into another program's code after a tail call
	// Helper calls that Go may answer without the helper (vm.Env.CallHash),
	// with the helper's index as in ReasonHelper for
	// the calls it cannot.
	ReasonHashLookup = 8
	ReasonHashUpdate = 9
	// ReasonSlice: the slice of the budget that Go handed out ran out at
	// the jump, call or exit at the reason's pc (Code.Resumable); Go
	// resumes at resumePC with the next slice, or ends the run.
	ReasonSlice = 10
	// Calls of an ArrayLookup helper that Go answers for arrays as the
	// interpreter does (Code.ArrayLookups), then with HashLookup as
	// ReasonHashLookup, then with the helper.
	ReasonArrayLookup     = 11
	ReasonArrayHashLookup = 12
)
