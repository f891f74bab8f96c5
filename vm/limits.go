package vm

// Limits of the execution model, the same as the kernel's.
const (
	StackFrameSize = 512 // bytes of stack per frame
	MaxCallDepth   = 8   // frames, the entry function included
	MaxTailCalls   = 33  // tail calls per run, as in Linux
	StackSize      = StackFrameSize * MaxCallDepth
)
